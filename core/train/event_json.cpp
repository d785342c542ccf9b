#include "train/event_json.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "util/error.h"

namespace plexus::train {
namespace {

using nlohmann::json;

const char* const kHealthKinds[] = {"dead_units", "vanishing_gradient", "exploding_gradient", "update_ratio",
                                    "non_finite"};

// A number JSON can hold: null for NaN and infinities (nlohmann would write null anyway; this
// says so where it happens).
json real(double v) { return std::isfinite(v) ? json(v) : json(); }

// Several loss nodes' losses, in graph order: [{"node":"recon","loss":0.12},..]; left out for one.
void add_parts(json& j, const char* key, const std::vector<LossPart>& parts) {
  if (parts.empty()) return;
  json a = json::array();
  for (const LossPart& p : parts) a.push_back({{"node", p.node}, {"loss", real(p.value)}});
  j[key] = std::move(a);
}

void add_evaluation(json& j, const EpochEnd& e, bool classification) {
  if (!e.has_eval) return;
  j["eval_loss"] = real(e.eval_loss);
  add_parts(j, "eval_losses", e.eval_losses);
  if (!classification) return;
  j["eval_accuracy"] = real(e.eval_accuracy);
  j["eval_top5"] = real(e.eval_top5);
  json per = json::array();
  for (double v : e.per_class_accuracy) per.push_back(real(v));  // NaN: a class with no examples
  j["per_class_accuracy"] = per;
  j["confusion"] = e.confusion;
}

json node_stats_json(const NodeStats& e) {
  json nodes = json::array();
  for (const NodeStat& n : e.nodes) {
    json o{{"node", n.node},        {"mean", real(n.mean)}, {"std", real(n.std)},
           {"zero_fraction", real(n.zero_fraction)}, {"dead_fraction", real(n.dead_fraction)},
           {"min", real(n.min)},    {"max", real(n.max)},   {"histogram", n.histogram},
           {"finite", n.finite}};
    if (n.has_params) {
      o["weight_norm"] = real(n.weight_norm);
      o["grad_norm"] = real(n.grad_norm);
      o["update_ratio"] = real(n.update_ratio);
    }
    nodes.push_back(std::move(o));
  }
  json health = json::array();
  for (const HealthIssue& h : e.health)
    health.push_back({{"node", h.node}, {"kind", kHealthKinds[int(h.kind)]}, {"reason", h.reason}});
  return {{"event", "node_stats"}, {"epoch", e.epoch}, {"batch", e.batch}, {"step", e.step},
          {"nodes", nodes},        {"health", health}};
}

// "got 3", "got \"two\"", for messages: the value as JSON, cut short.
std::string shown(const json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

double real_of(const json& v) { return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>(); }

std::vector<LossPart> read_parts(JsonFields& f, const std::string& key) {
  std::vector<LossPart> out;
  if (!f.has(key)) return out;
  size_t i = 0;
  for (const json& v : f.array(key)) {
    JsonFields p(v, f.where() + ": " + key + "[" + std::to_string(i++) + "]");
    out.push_back({p.text("node"), p.number("loss")});
    p.finish();
  }
  return out;
}

// The eval_* keys, when there are any, into `e` (has_eval set).
void read_evaluation(JsonFields& f, EpochEnd& e) {
  if (!f.has("eval_loss")) return;
  e.has_eval = true;
  e.eval_loss = f.number("eval_loss");
  e.eval_losses = read_parts(f, "eval_losses");
  if (!f.has("eval_accuracy")) return;
  e.eval_accuracy = f.number("eval_accuracy");
  e.eval_top5 = f.number("eval_top5");
  for (const json& v : f.array("per_class_accuracy")) {
    if (!v.is_number() && !v.is_null()) f.fail("per_class_accuracy", "an array of numbers");
    e.per_class_accuracy.push_back(real_of(v));
  }
  e.classes = int64_t(e.per_class_accuracy.size());
  const json& confusion = f.array("confusion");
  if (confusion.size() != size_t(e.classes * e.classes))
    f.fail("confusion", "an array of " + std::to_string(e.classes * e.classes) + " counts (classes x classes)");
  for (const json& v : confusion) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0) f.fail("confusion", "an array of counts");
    e.confusion.push_back(v.get<int64_t>());
  }
}

// Pixels kept to 1/1000 of the range: what a picture shows, at a fifth of the text.
json reconstructions_json(const Reconstructions& r) {
  const auto rounded = [](const std::vector<float>& v) {
    json a = json::array();
    for (float x : v) a.push_back(std::round(double(x) * 1000) / 1000);
    return a;
  };
  return {{"shape", r.example}, {"inputs", rounded(r.inputs)}, {"outputs", rounded(r.outputs)}};
}

Reconstructions read_reconstructions(JsonFields& epoch) {
  JsonFields f(epoch.object("reconstructions"), epoch.where() + ": reconstructions");
  Reconstructions r;
  int64_t size = 1;
  for (const json& d : f.array("shape")) {
    if (!d.is_number_integer() || d.get<int64_t>() < 1) f.fail("shape", "an array of sizes");
    r.example.push_back(d.get<int64_t>());
    size *= r.example.back();
  }
  for (const char* key : {"inputs", "outputs"}) {
    std::vector<float>& values = std::string(key) == "inputs" ? r.inputs : r.outputs;
    for (const json& v : f.array(key)) {
      if (!v.is_number()) f.fail(key, "an array of numbers");
      values.push_back(v.get<float>());
    }
    if (r.example.empty() || values.size() % size_t(size) != 0) f.fail(key, "whole examples of the shape given");
  }
  if (r.inputs.size() != r.outputs.size()) f.fail("outputs", "as many values as inputs");
  f.finish();
  return r;
}

// The speed figures that are known: gflops and peak_gflops are 0 (left out) when the run's
// products were not counted or its device's peak not measured.
void add_speed(json& j, double gflops, double peak_gflops) {
  if (gflops > 0) j["gflops"] = real(gflops);
  if (peak_gflops > 0) j["peak_gflops"] = real(peak_gflops);
}
void read_speed(JsonFields& f, double& gflops, double& peak_gflops) {
  if (f.has("gflops")) gflops = f.number("gflops");
  if (f.has("peak_gflops")) peak_gflops = f.number("peak_gflops");
}

int to_int(JsonFields& f, const std::string& key) {
  const int64_t v = f.integer(key);
  if (v < 0 || v > std::numeric_limits<int>::max()) f.fail(key, "a count");
  return int(v);
}

}  // namespace

json to_json(const Event& event, bool classification) {
  return std::visit(
      [classification](const auto& e) -> json {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, BatchEnd>) {
          json j{{"event", "batch"}, {"epoch", e.epoch}, {"batch", e.batch}, {"batches", e.batches},
                 {"loss", real(e.loss)}, {"running_loss", real(e.running_loss)}};
          add_parts(j, "losses", e.losses);
          if (classification) j["running_accuracy"] = real(e.running_accuracy);
          j["samples_per_second"] = real(e.samples_per_second);
          add_speed(j, e.gflops, e.peak_gflops);
          j["eta_seconds"] = real(e.eta_seconds);
          j["lr"] = real(e.lr);
          return j;
        } else if constexpr (std::is_same_v<T, EpochEnd>) {
          json j{{"event", "epoch"}, {"epoch", e.epoch}, {"train_loss", real(e.train_loss)}};
          add_parts(j, "train_losses", e.train_losses);
          if (classification) j["train_accuracy"] = real(e.train_accuracy);
          j["lr"] = real(e.lr);
          j["seconds"] = real(e.seconds);
          j["train_seconds"] = real(e.train_seconds);
          j["data_wait_seconds"] = real(e.data_wait_seconds);
          j["samples_per_second"] = real(e.samples_per_second);
          add_speed(j, e.gflops, e.peak_gflops);
          add_evaluation(j, e, classification);
          if (!e.samples.empty()) j["samples"] = e.samples;
          if (!e.reconstructions.empty()) j["reconstructions"] = reconstructions_json(e.reconstructions);
          return j;
        } else if constexpr (std::is_same_v<T, TestEnd>) {
          json j{{"event", "test"}};
          add_evaluation(j, e.figures, classification);
          return j;
        } else if constexpr (std::is_same_v<T, Finished>) {
          json j{{"event", "finished"}, {"cancelled", e.cancelled}, {"epochs", e.epochs_completed},
                 {"seconds", real(e.seconds)}};
          if (e.stopped_early) {  // only then: the lines of other runs keep their bytes
            j["stopped_early"] = true;
            j["best_epoch"] = e.best_epoch;
          }
          return j;
        } else if constexpr (std::is_same_v<T, Failed>) {
          return {{"event", "failed"}, {"message", e.message}};
        } else if constexpr (std::is_same_v<T, Notice>) {
          return {{"event", "notice"}, {"text", e.text}};
        } else if constexpr (std::is_same_v<T, GraphEdit>) {
          return {{"event", "edit"}, {"epoch", e.epoch}, {"batch", e.batch},   {"batches", e.batches},
                  {"changes", e.changes}, {"kept", e.kept}, {"reset", e.reset}, {"carried", e.carried}};
        } else {
          return node_stats_json(e);
        }
      },
      event);
}

static NodeStats read_node_stats(JsonFields& f, const std::string& where) {
  NodeStats e;
  e.epoch = to_int(f, "epoch");
  e.batch = f.integer("batch");
  e.step = f.integer("step");
  size_t i = 0;
  for (const json& v : f.array("nodes")) {
    JsonFields n(v, where + ": nodes[" + std::to_string(i++) + "]");
    NodeStat s;
    s.node = n.text("node");
    s.mean = n.number("mean");
    s.std = n.number("std");
    s.zero_fraction = n.number("zero_fraction");
    s.dead_fraction = n.number("dead_fraction");
    s.min = n.number("min");
    s.max = n.number("max");
    for (const json& b : n.array("histogram")) {
      if (!b.is_number()) n.fail("histogram", "an array of numbers");
      s.histogram.push_back(b.get<float>());
    }
    s.finite = n.boolean("finite");
    s.has_params = n.has("grad_norm");
    if (s.has_params) {
      s.weight_norm = n.number("weight_norm");
      s.grad_norm = n.number("grad_norm");
      s.update_ratio = n.number("update_ratio");
    }
    n.finish();
    e.nodes.push_back(std::move(s));
  }
  i = 0;
  for (const json& v : f.array("health")) {
    JsonFields h(v, where + ": health[" + std::to_string(i++) + "]");
    HealthIssue issue{h.text("node"), HealthKind::DeadUnits, ""};
    const std::string kind = h.text("kind");
    const auto* known = std::find(std::begin(kHealthKinds), std::end(kHealthKinds), kind);
    if (known == std::end(kHealthKinds)) h.fail("kind", "a kind of health issue (dead_units, vanishing_gradient, ...)");
    issue.kind = HealthKind(known - std::begin(kHealthKinds));
    issue.reason = h.text("reason");
    h.finish();
    e.health.push_back(std::move(issue));
  }
  return e;
}

Event event_from_json(const json& j, const std::string& where) {
  JsonFields f(j, where);
  const std::string kind = f.text("event");
  Event out;
  if (kind == "batch") {
    BatchEnd b;
    b.epoch = to_int(f, "epoch");
    b.batch = f.integer("batch");
    b.batches = f.integer("batches");
    b.loss = f.number("loss");
    b.running_loss = f.number("running_loss");
    b.losses = read_parts(f, "losses");
    if (f.has("running_accuracy")) b.running_accuracy = f.number("running_accuracy");
    b.samples_per_second = f.number("samples_per_second");
    read_speed(f, b.gflops, b.peak_gflops);  // absent before they were kept, and when not known
    if (f.has("eta_seconds")) b.eta_seconds = f.number("eta_seconds");  // absent before it was kept
    b.lr = f.number("lr");
    out = b;
  } else if (kind == "epoch") {
    EpochEnd e;
    e.epoch = to_int(f, "epoch");
    e.train_loss = f.number("train_loss");
    e.train_losses = read_parts(f, "train_losses");
    if (f.has("train_accuracy")) e.train_accuracy = f.number("train_accuracy");
    e.lr = f.number("lr");
    e.seconds = f.number("seconds");
    // Absent before they were kept.
    if (f.has("train_seconds")) e.train_seconds = f.number("train_seconds");
    if (f.has("data_wait_seconds")) e.data_wait_seconds = f.number("data_wait_seconds");
    if (f.has("samples_per_second")) e.samples_per_second = f.number("samples_per_second");
    read_speed(f, e.gflops, e.peak_gflops);
    read_evaluation(f, e);
    if (f.has("samples"))
      for (const json& v : f.array("samples")) {
        if (!v.is_string()) f.fail("samples", "an array of strings");
        e.samples.push_back(v.get<std::string>());
      }
    if (f.has("reconstructions")) e.reconstructions = read_reconstructions(f);
    out = e;
  } else if (kind == "test") {
    TestEnd t;
    read_evaluation(f, t.figures);
    if (!t.figures.has_eval) f.fail("eval_loss", "a number (the test split's loss)");
    out = t;
  } else if (kind == "finished") {
    Finished e;
    e.cancelled = f.boolean("cancelled");
    e.epochs_completed = to_int(f, "epochs");
    e.seconds = f.number("seconds");
    if (f.has("stopped_early")) {
      e.stopped_early = f.boolean("stopped_early");
      e.best_epoch = to_int(f, "best_epoch");
    }
    out = e;
  } else if (kind == "failed") {
    out = Failed{f.text("message")};
  } else if (kind == "notice") {
    out = Notice{f.text("text")};
  } else if (kind == "node_stats") {
    out = read_node_stats(f, where);
  } else if (kind == "edit") {
    GraphEdit e;
    e.epoch = to_int(f, "epoch");
    e.batch = f.integer("batch");
    e.batches = f.integer("batches");
    for (const json& v : f.array("changes")) {
      if (!v.is_string()) f.fail("changes", "an array of strings");
      e.changes.push_back(v.get<std::string>());
    }
    e.kept = f.integer("kept");
    e.reset = f.integer("reset");
    e.carried = f.text("carried");
    out = e;
  } else {
    throw DataError(where + ": unknown event '" + kind +
                    "' (expected batch, epoch, test, notice, node_stats, edit, finished or failed)");
  }
  f.finish();
  return out;
}

json parse_json_line(std::string_view line, const std::string& where) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw DataError(where + ": not a line of JSON");
  if (!j.is_object()) throw DataError(where + ": expected a JSON object, got " + shown(j));
  return j;
}

// ---- JsonFields --------------------------------------------------------------------------

JsonFields::JsonFields(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

void JsonFields::fail(const std::string& key, const std::string& expected) const {
  const auto it = object_.find(key);
  throw DataError(where_ + ": key '" + key + "' must be " + expected +
                  (it == object_.end() ? std::string(", but it is missing") : ", got " + shown(*it)));
}

const json& JsonFields::get(const std::string& key) {
  read_.insert(key);
  static const json missing;
  const auto it = object_.find(key);
  return it == object_.end() ? missing : *it;
}

int64_t JsonFields::integer(const std::string& key) {
  const json& v = get(key);
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)))
    fail(key, "a whole number");
  return v.get<int64_t>();
}

double JsonFields::number(const std::string& key) {
  const json& v = get(key);
  if (!v.is_number() && !(v.is_null() && has(key))) fail(key, "a number");
  return real_of(v);
}

bool JsonFields::boolean(const std::string& key) {
  const json& v = get(key);
  if (!v.is_boolean()) fail(key, "true or false");
  return v.get<bool>();
}

std::string JsonFields::text(const std::string& key) {
  const json& v = get(key);
  if (!v.is_string()) fail(key, "a string");
  return v.get<std::string>();
}

std::optional<std::string> JsonFields::text_or_null(const std::string& key) {
  const json& v = get(key);
  if (v.is_null() && has(key)) return std::nullopt;
  if (!v.is_string()) fail(key, "null or a string");
  return v.get<std::string>();
}

const json& JsonFields::array(const std::string& key) {
  const json& v = get(key);
  if (!v.is_array()) fail(key, "an array");
  return v;
}

const json& JsonFields::object(const std::string& key) {
  const json& v = get(key);
  if (!v.is_object()) fail(key, "an object");
  return v;
}

void JsonFields::finish() const {
  for (const auto& [key, value] : object_.items())
    if (!read_.count(key)) throw DataError(where_ + ": unexpected key '" + key + "'");
}

}  // namespace plexus::train
