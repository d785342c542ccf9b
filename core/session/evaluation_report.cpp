#include "session/evaluation_report.h"

#include <algorithm>
#include <numeric>

#include "util/error.h"

namespace plexus::session {
namespace {

std::vector<int64_t> all_indices(int64_t n) {
  std::vector<int64_t> idx(size_t(std::max<int64_t>(n, 0)));
  std::iota(idx.begin(), idx.end(), int64_t(0));
  return idx;
}

// With two classes and one recorded score per test example: the curves, and a constant scorer's.
std::optional<BinaryReport> binary_report(const train::EpochEnd& r, const std::vector<float>& targets) {
  if (r.classes != 2 || r.positive_probability.empty()) return std::nullopt;
  if (r.positive_probability.size() != targets.size())
    throw ValueError("evaluation_report: " + std::to_string(r.positive_probability.size()) + " recorded scores for " +
                     std::to_string(targets.size()) + " test targets");
  BinaryReport b;
  b.scores = r.positive_probability;
  b.labels.assign(targets.begin(), targets.end());
  b.roc = train::roc_curve(b.scores, b.labels);
  b.pr = train::precision_recall_curve(b.scores, b.labels);
  b.roc_auc = train::area_under(b.roc);
  b.average_precision = train::average_precision(b.pr);
  const std::vector<float> constant(b.scores.size(), 0.5f);
  b.baseline_roc_auc = train::area_under(train::roc_curve(constant, b.labels));
  b.baseline_average_precision = train::average_precision(train::precision_recall_curve(constant, b.labels));
  return b;
}

}  // namespace

std::vector<float> split_targets(const data::Dataset& split) {
  if (split.size() == 0) return {};
  return split.target_batch(all_indices(split.size())).to_vector();
}

EvaluationReport evaluation_report(bool classification, const TestEvaluation& evaluation) {
  EvaluationReport out;
  const data::Dataset* learn_from = evaluation.train.get();
  if (!learn_from) {
    learn_from = evaluation.split.get();
    out.baseline_split = "test";
  }
  const std::vector<float> targets = split_targets(*evaluation.split), learnt = split_targets(*learn_from);
  const train::EpochEnd& r = evaluation.figures;
  if (classification) {
    if (r.classes == 0) return out;  // no class targets were scored (outputs of another shape)
    ClassificationReport c;
    const train::ConfusionMatrix matrix(r.classes, r.confusion);
    c.model = train::class_report(matrix);
    c.baseline_class = train::majority_class(train::class_counts(learnt, r.classes));
    c.baseline = train::class_report(train::constant_prediction(matrix, c.baseline_class));
    c.binary = binary_report(r, targets);
    out.classification = std::move(c);
    return out;
  }
  if (r.outputs.empty()) return out;
  const int64_t n = evaluation.split->size();
  if (n == 0) throw ValueError("evaluation_report: the test split has no examples");
  const size_t per_example = targets.size() / size_t(n);
  RegressionReport g;
  g.model = train::regression_figures(targets, r.outputs, per_example);
  g.targets = targets;
  g.predictions = r.outputs;
  g.outputs = per_example;
  g.baseline_mean = train::target_means(learnt, per_example);
  g.baseline = train::constant_figures(targets, g.baseline_mean);
  out.regression = std::move(g);
  return out;
}

}  // namespace plexus::session
