#include "cli/command.h"

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/builtin_projects.h"
#include "cli/evaluation_figures.h"
#include "cli/project_files.h"
#include "data/csv.h"
#include "io/atomic_file.h"
#include "io/safetensors.h"
#include "session/evaluation_report.h"
#include "session/trained_model.h"
#include "train/event_json.h"
#include "train/readable_figures.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::cli {
namespace {

constexpr const char* kEvalHelp = R"(  Evaluates the project's model with the weights of CKPT on the test split of its dataset:
  loss, and for classification accuracy, top-5, per-class accuracy and the confusion matrix,
  each class's precision, recall, F1 and support with their macro and weighted averages, and
  with two classes the areas under the ROC and precision-recall curves (the second class
  positive, scored by its softmax probability); for a regression MAE, RMSE and R². Beside
  them the trivial baseline's: always the training split's most frequent class, or its mean.
  --json carries the curves too.
  CKPT is a run checkpoint (a run's best.safetensors or final.safetensors, tensors
  "model.<node>.<param>") or a weights file (tensors "<node>.<param>", from init or the
  GUI's Export Weights). Without FILE, the project is the one a run checkpoint holds; its
  relative dataset path is looked up in the folder holding the run's <name>.runs folder, then
  in the current directory. A checkpoint of a built-in model (train --model ... --save) names
  its model and is evaluated as that built-in project.
  --checkpoint FILE    the checkpoint or weights file to evaluate (required)
  --json               print the result as one JSON object
  --metrics F          write that JSON object to F
  --predictions F      write one CSV line per test example to F: index,label,predicted,
                       probability (a regression: index,target,prediction); for a CSV
                       dataset index,line,...: the line of the data file its row starts on
  --data PATH          use this dataset folder or file instead of the project's
  --batch-size N       examples per forward pass                                  [1000]
  --device D           cpu, cuda (the first GPU) or cuda:N                   [the project's]
  --threads N          CPU threads for the math                  [all hardware threads]
  --model NAME         the built-in model CKPT is of: mlp, mlp64, mlp1024 or lenet
                       [its metadata "model"]
  --dataset KIND       a built-in model's dataset: mnist or fashion-mnist          [mnist]
)";

// What an evaluation was of, for its report: `what` for people ("mnist_mlp.plexus on 10000 mnist
// test examples"), `ids` the JSON object's first keys (the model or project, the checkpoint, the
// number of examples), and the class names (empty for a regression).
struct EvalSubject {
  std::string what;
  nlohmann::json ids;
  std::vector<std::string> class_names;
};

// The result of `eval`: one JSON object (printed with --json, written to --metrics F), or lines a
// person reads.
int report_evaluation(const Args& args, const train::EpochEnd& r, bool classification,
                      const session::EvaluationReport& report, const EvalSubject& s) {
  // The figures under the keys of a metrics file's "test" line, then the judging figures'.
  nlohmann::json j = train::to_json(train::TestEnd{r}, classification);
  j.update(s.ids);
  j["event"] = "eval";
  if (classification) j["class_names"] = s.class_names;
  j.update(evaluation_json(report, s.class_names));
  if (args.has("--metrics")) io::write_file_atomically(args.str("--metrics", ""), j.dump() + "\n");
  if (args.has("--json")) {
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%s: loss %.4f%s", s.what.c_str(), r.eval_loss, train::parts_text(r.eval_losses).c_str());
  if (!classification) {
    std::printf("\n%s", evaluation_text(report, s.class_names).c_str());
    return 0;
  }
  std::printf(", accuracy %.2f%%", 100 * r.eval_accuracy);
  if (r.classes > 5) std::printf(", top-5 %.2f%%", 100 * r.eval_top5);  // else every target is in the top 5
  std::printf("\n");
  std::printf("per-class accuracy:");
  for (size_t c = 0; c < r.per_class_accuracy.size(); ++c)
    std::printf(" %s:%.1f%%", s.class_names[c].c_str(), 100 * r.per_class_accuracy[c]);
  std::printf("\nconfusion matrix (rows: true class, columns: predicted):\n");
  for (int64_t i = 0; i < r.classes; ++i) {
    for (int64_t j = 0; j < r.classes; ++j) std::printf("%6lld", (long long)r.confusion[size_t(i * r.classes + j)]);
    std::printf("\n");
  }
  std::printf("%s", evaluation_text(report, s.class_names).c_str());
  return 0;
}

// The line of the data file each example of `test` starts on, for a CSV dataset (so a prediction
// can be traced to its row); empty for other datasets.
std::vector<int64_t> example_lines(const data::Dataset& test) {
  const auto* csv = dynamic_cast<const data::CsvDataset*>(&test);
  return csv ? csv->row_lines() : std::vector<int64_t>{};
}

// A --predictions line's first fields: the example's index, and for a CSV dataset its line.
std::string example_fields(size_t i, const std::vector<int64_t>& lines) {
  return std::to_string(i) + (lines.empty() ? "" : "," + std::to_string(lines[i]));
}

// --predictions F of a classification: the predicted class and its probability that the
// evaluation recorded for each example of `test` (loader order = dataset order).
void write_class_predictions(const std::string& path, const train::EpochEnd& r, const data::Dataset& test) {
  const std::vector<float> labels = session::split_targets(test);
  const std::vector<int64_t> lines = example_lines(test);
  io::write_file_atomically(path, [&](std::ostream& out) {
    out << "index" << (lines.empty() ? "" : ",line") << ",label,predicted,probability\n";
    for (size_t i = 0; i < labels.size(); ++i)
      out << example_fields(i, lines) << ',' << int64_t(labels[i]) << ',' << r.predicted[i] << ','
          << shortest_float_text(r.confidence[i]) << '\n';
  });
}

// --predictions F of a regression: the model's `outputs` for the examples of `test`.
void write_value_predictions(const std::string& path, const std::vector<float>& outputs, const data::Dataset& test) {
  const std::vector<float> targets = session::split_targets(test);
  const std::vector<int64_t> lines = example_lines(test);
  const size_t n = size_t(test.size());
  const size_t per_target = n ? targets.size() / n : 1, per_output = n ? outputs.size() / n : 1;
  auto columns = [](const char* name, size_t k) {
    if (k == 1) return std::string(",") + name;
    std::string s;
    for (size_t j = 0; j < k; ++j) s += std::string(",") + name + "_" + std::to_string(j);
    return s;
  };
  io::write_file_atomically(path, [&](std::ostream& out) {
    out << "index" << (lines.empty() ? "" : ",line") << columns("target", per_target)
        << columns("prediction", per_output) << '\n';
    for (size_t i = 0; i < n; ++i) {
      out << example_fields(i, lines);
      for (size_t j = 0; j < per_target; ++j) out << ',' << shortest_float_text(targets[i * per_target + j]);
      for (size_t j = 0; j < per_output; ++j) out << ',' << shortest_float_text(outputs[i * per_output + j]);
      out << '\n';
    }
  });
}

int eval_project(const Args& args, ProjectSource p, const std::optional<std::string>& builtin) {
  const std::string checkpoint = args.str("--checkpoint", "");
  graph::Graph& g = p.graph;
  apply_machine_options(args, g);
  session::TrainedModel m =
      builtin ? load_builtin_model(g, checkpoint) : session::load_trained_model(g, checkpoint, {p.dir});
  const bool predictions = args.has("--predictions");
  const int64_t batch_size = args.integer("--batch-size", 1000, 1);
  // Predictions are recorded whatever --predictions says: the two-class curves rank them.
  const session::TestEvaluation t =
      session::evaluate_on_test(m, {p.dir}, batch_size, parse_device(g.training.device), true);
  const train::EpochEnd& r = t.figures;
  if (predictions && m.classification()) write_class_predictions(args.str("--predictions", ""), r, *t.split);
  if (predictions && !m.classification()) write_value_predictions(args.str("--predictions", ""), r.outputs, *t.split);
  const int64_t n = t.split->size();
  nlohmann::json ids{{"checkpoint", checkpoint}, {"examples", n}};
  if (builtin) ids["model"] = *builtin;
  if (p.file) ids["project"] = *p.file;  // else the checkpoint's own
  const std::string what = p.name + " on " + std::to_string(n) + " " + t.dataset_kind + " test " +
                           (builtin ? "images" : "examples");
  return report_evaluation(args, r, m.classification(), session::evaluation_report(m.classification(), t),
                           {what, ids, m.class_names});
}

int cmd_eval(const Args& args) {
  std::optional<std::string> file;
  if (!args.positional().empty()) {
    for (const char* o : {"--model", "--dataset"})
      if (args.has(o)) throw UsageError{std::string(o) + " is for the built-in models: a project file names its own"};
    file = args.positional()[0];
  }
  if (!args.has("--checkpoint")) throw UsageError{"eval needs --checkpoint FILE"};
  const std::string checkpoint = args.str("--checkpoint", "");
  // Without FILE or --model: the checkpoint says what it is of (a project, or a built-in model).
  const bool builtin = args.has("--model") || args.has("--dataset");
  if (file || !builtin)
    if (std::optional<ProjectSource> p = find_project(file, checkpoint)) return eval_project(args, std::move(*p), {});
  const io::SafetensorsMetadata meta = io::read_safetensors_header(checkpoint).metadata;
  const auto stored_model = meta.find("model");
  if (!builtin && stored_model == meta.end())
    throw IoError(checkpoint + " holds no project (and is no built-in model's checkpoint): pass the project FILE it "
                  "belongs to, as in: plexus-cli eval FILE --checkpoint " + checkpoint);
  const std::string name = args.str("--model", stored_model != meta.end() ? stored_model->second : "mlp");
  return eval_project(args, {builtin_project(name, args), {}, name, std::nullopt, name}, name);
}

}  // namespace

Command eval_command() {
  return {"eval",
          "eval [FILE] --checkpoint CKPT [--json] [--metrics F] [--predictions F] [--data PATH]\n"
          "     [--batch-size N] [--device D] [--threads N]\n"
          "eval --model NAME --checkpoint CKPT [options]",
          "evaluate a project's (or a built-in model's) checkpoint or weights file on its test split",
          [] { return std::string(kEvalHelp); }, {{"--json"},
           {{"--checkpoint", Takes::Path}, {"--metrics", Takes::Path}, {"--predictions", Takes::Path},
            {"--data", Takes::Path}, {"--batch-size"}, kDeviceOption, kThreadsOption, builtin_model_option(),
            builtin_dataset_option()},
           1}, cmd_eval};
}

}  // namespace plexus::cli
