#pragma once
// A regression judged as scikit-learn judges one: mean absolute error, root mean squared error
// and the coefficient of determination R², beside the trivial baseline that predicts the
// training split's mean target for every example.
//
// Values are example-major, `outputs` per example. With several outputs each figure is computed
// per output and averaged (sklearn's multioutput="uniform_average"). R² = 1 - SS_res / SS_tot
// around the evaluated targets' own mean: 0 for predicting that mean, negative for worse; for a
// constant target (SS_tot = 0) it is 1 when every prediction is exact, else 0 (sklearn's
// force_finite). ValueError for no examples or counts that do not fit `outputs`.
#include <cstddef>
#include <vector>

namespace plexus::train {

struct RegressionFigures {
  double mae = 0, rmse = 0, r2 = 0;
};

RegressionFigures regression_figures(const std::vector<float>& targets, const std::vector<float>& predictions,
                                     size_t outputs = 1);

// The figures of predicting `constant` (one value per output) for every example.
RegressionFigures constant_figures(const std::vector<float>& targets, const std::vector<double>& constant);

// Each output's mean over the examples (the baseline's prediction, from the training split).
std::vector<double> target_means(const std::vector<float>& targets, size_t outputs = 1);

}  // namespace plexus::train
