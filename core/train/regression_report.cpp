#include "train/regression_report.h"

#include <cmath>
#include <string>

#include "util/error.h"

namespace plexus::train {
namespace {

size_t examples_of(size_t values, size_t outputs, const char* who) {
  if (outputs == 0 || values == 0 || values % outputs)
    throw ValueError(std::string(who) + ": " + std::to_string(values) + " target values for " +
                     std::to_string(outputs) + " outputs per example");
  return values / outputs;
}

// predicted(i) is the prediction for targets[i].
template <class Predicted>
RegressionFigures figures(const std::vector<float>& targets, size_t outputs, Predicted predicted) {
  const size_t n = examples_of(targets.size(), outputs, "regression_figures");
  const std::vector<double> mean = target_means(targets, outputs);
  RegressionFigures out;
  for (size_t j = 0; j < outputs; ++j) {
    double abs = 0, res = 0, tot = 0;
    for (size_t i = 0; i < n; ++i) {
      const size_t at = i * outputs + j;
      const double e = double(targets[at]) - predicted(at), d = double(targets[at]) - mean[j];
      abs += std::fabs(e);
      res += e * e;
      tot += d * d;
    }
    out.mae += abs / double(n);
    out.rmse += std::sqrt(res / double(n));
    out.r2 += tot > 0 ? 1 - res / tot : (res == 0 ? 1.0 : 0.0);
  }
  out.mae /= double(outputs);
  out.rmse /= double(outputs);
  out.r2 /= double(outputs);
  return out;
}

}  // namespace

std::vector<double> target_means(const std::vector<float>& targets, size_t outputs) {
  const size_t n = examples_of(targets.size(), outputs, "target_means");
  std::vector<double> mean(outputs, 0.0);
  for (size_t i = 0; i < targets.size(); ++i) mean[i % outputs] += targets[i];
  for (double& m : mean) m /= double(n);
  return mean;
}

RegressionFigures regression_figures(const std::vector<float>& targets, const std::vector<float>& predictions,
                                     size_t outputs) {
  if (predictions.size() != targets.size())
    throw ValueError("regression_figures: " + std::to_string(predictions.size()) + " predictions for " +
                     std::to_string(targets.size()) + " target values");
  return figures(targets, outputs, [&](size_t at) { return double(predictions[at]); });
}

RegressionFigures constant_figures(const std::vector<float>& targets, const std::vector<double>& constant) {
  return figures(targets, constant.size(), [&](size_t at) { return constant[at % constant.size()]; });
}

}  // namespace plexus::train
