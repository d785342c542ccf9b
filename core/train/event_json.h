#pragma once
// Training events as JSON objects, one per line of a JSON-lines file: what `plexus-cli train
// --metrics FILE` appends and what a run folder's metrics.jsonl holds after its header
// (session/run_log.h). docs/training.md lists the keys:
//
//   {"event":"batch","epoch":1,"batch":10,"batches":600,"loss":..,"running_loss":..,
//    "running_accuracy":..,"samples_per_second":..,"gflops":..,"peak_gflops":..,"eta_seconds":..,"lr":..}
//   {"event":"epoch","epoch":1,"train_loss":..,"train_accuracy":..,"lr":..,"seconds":..,
//    "train_seconds":..,"data_wait_seconds":..,"samples_per_second":..,"gflops":..,
//    "peak_gflops":..,"eval_loss":..,"eval_accuracy":..,"eval_top5":..,
//    "per_class_accuracy":[..],"confusion":[..],"samples":["..",..]}
//   {"event":"test", "eval_loss":.., ...}          the final model on the test split
//   {"event":"finished","cancelled":false,"epochs":5,"seconds":..}
//   {"event":"failed","message":"..."}
//   {"event":"notice","text":"the training step runs as a CUDA graph (...)"}
//   {"event":"node_stats","epoch":1,"batch":20,"step":20,"nodes":[{"node":"fc1","mean":..,"std":..,
//    "zero_fraction":..,"dead_fraction":..,"min":..,"max":..,"histogram":[..],"finite":true,
//    "weight_norm":..,"grad_norm":..,"update_ratio":..},..],"health":[{"node":"relu1",
//    "kind":"dead_units","reason":".."}]}   (train/node_stats.h; norms only for nodes with parameters)
//   {"event":"edit","epoch":2,"batch":14,"batches":27,"changes":["Linear 'fc1': out_features 32 → 48"],
//    "kept":2,"reset":2,"carried":"kept 2 tensors (optimizer state of 2); reset fc1.weight ..."}
//    (the graph was edited while paused and training went on after batch 14 of epoch 2)
//
// A graph with several loss nodes adds each one's own loss, in graph order, beside the total:
// "losses" to a batch, "train_losses" and "eval_losses" to an epoch, "eval_losses" to a test:
//   "train_losses":[{"node":"classify","loss":0.31},{"node":"reconstruct","loss":0.052}]
// "samples" (text projects only) is the text the model generated after the epoch;
// "reconstructions" (a model scored against its input) some validation examples and the model's
// output for each, in raw units to 1/1000: {"shape":[1,28,28],"inputs":[..],"outputs":[..]}.
// Accuracies are classification figures: a regression run writes losses only. gflops and
// peak_gflops are left out when not known (a model whose products were not counted, a peak not
// measured). A number that is
// not finite is written as null (JSON has no NaN) and read back as NaN.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "train/events.h"

namespace plexus::train {

nlohmann::json to_json(const Event& event, bool classification);

// Reads back what to_json wrote. Strict: an unknown event, a missing key or a value of the
// wrong type is a DataError that starts with `where` (a file and line: "run/metrics.jsonl:7")
// and names the key ("key 'epoch' must be a whole number, got \"two\""). Keys the event does
// not have are refused too, so a misspelt key is not silently ignored.
Event event_from_json(const nlohmann::json& j, const std::string& where);

// One line of a JSON-lines file as a JSON object; a DataError starting with `where` when it
// is not one.
nlohmann::json parse_json_line(std::string_view line, const std::string& where);

// The keys of one JSON object, read strictly, for readers of JSON lines (events, a run log's
// header): each getter throws a DataError naming `where` and the key when the key is missing
// or its value has another type; finish() refuses the keys no getter asked for.
class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string where);

  bool has(const std::string& key) const { return object_.contains(key); }
  int64_t integer(const std::string& key);
  double number(const std::string& key);  // null reads as NaN
  bool boolean(const std::string& key);
  std::string text(const std::string& key);
  std::optional<std::string> text_or_null(const std::string& key);  // present, null or a string
  const nlohmann::json& array(const std::string& key);
  const nlohmann::json& object(const std::string& key);
  void finish() const;

  const std::string& where() const { return where_; }
  [[noreturn]] void fail(const std::string& key, const std::string& expected) const;

 private:
  const nlohmann::json& get(const std::string& key);

  const nlohmann::json& object_;
  std::string where_;
  std::set<std::string> read_;
};

}  // namespace plexus::train
