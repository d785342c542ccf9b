// MAE, RMSE and R² of a regression (sklearn's, uniform average over outputs) and the
// mean-predicting baseline; values derived by hand below.
#include "support/check.h"

#include <cmath>

#include "train/regression_report.h"
#include "util/error.h"

using namespace plexus;

TEST(maeRmseAndR2OfOneOutput) {
  // Targets 1, 2, 3, 6 (mean 3, SS_tot 4 + 1 + 0 + 9 = 14); errors -1, 0, 1, -2.
  const train::RegressionFigures f = train::regression_figures({1, 2, 3, 6}, {2, 2, 2, 8});
  COMPARE(f.mae, 1.0);                  // (1 + 0 + 1 + 2) / 4
  COMPARE(f.rmse, std::sqrt(6.0 / 4));  // (1 + 0 + 1 + 4) / 4
  COMPARE(f.r2, 1 - 6.0 / 14);          // 4/7
}

TEST(predictingTheMeanHasR2ZeroExactly) {
  const std::vector<float> targets{1, 2, 3, 6};
  const std::vector<double> mean = train::target_means(targets);
  COMPARE(mean, (std::vector<double>{3.0}));
  const train::RegressionFigures f = train::constant_figures(targets, mean);
  VERIFY2(f.r2 == 0.0, "R² of the mean: " + std::to_string(f.r2));
  COMPARE(f.mae, 1.5);                  // (2 + 1 + 0 + 3) / 4
  COMPARE(f.rmse, std::sqrt(14.0 / 4));
  // A baseline that learnt another mean (2) does worse than none: 1 - 18/14.
  const train::RegressionFigures off = train::constant_figures(targets, {2.0});
  COMPARE(off.mae, 1.5);                // (1 + 0 + 1 + 4) / 4
  COMPARE(off.rmse, std::sqrt(18.0 / 4));
  COMPARE(off.r2, -2.0 / 7);
}

TEST(perfectAndConstantTargets) {
  const train::RegressionFigures perfect = train::regression_figures({1, 2, 3}, {1, 2, 3});
  COMPARE(perfect.mae, 0.0);
  COMPARE(perfect.rmse, 0.0);
  COMPARE(perfect.r2, 1.0);
  // A constant target has no variance: R² 1 when exact, else 0 (sklearn's force_finite).
  COMPARE(train::regression_figures({2, 2, 2}, {2, 2, 2}).r2, 1.0);
  COMPARE(train::regression_figures({2, 2, 2}, {2, 2, 3}).r2, 0.0);
}

TEST(severalOutputsAreAveragedFigureByFigure) {
  // Examples [1, 10] and [3, 30], both predicted [1, 10]. Output 0: errors 0, 2 (MAE 1, RMSE √2,
  // SS_res 4, SS_tot 2: R² -1); output 1: errors 0, 20 (MAE 10, RMSE 10√2, R² 1 - 400/200 = -1).
  const train::RegressionFigures f = train::regression_figures({1, 10, 3, 30}, {1, 10, 1, 10}, 2);
  COMPARE(f.mae, 5.5);
  COMPARE(f.rmse, 5.5 * std::sqrt(2.0));  // not √((4 + 400) / 4), the RMSE of all values
  COMPARE(f.r2, -1.0);
  COMPARE(train::target_means({1, 10, 3, 30}, 2), (std::vector<double>{2.0, 20.0}));
}

TEST(mismatchedCountsAreRefused) {
  VERIFY_THROWS(ValueError, train::regression_figures({1, 2}, {1}));
  VERIFY_THROWS(ValueError, train::regression_figures({1, 2, 3}, {1, 2, 3}, 2));
  VERIFY_THROWS(ValueError, train::regression_figures({}, {}));
  VERIFY_THROWS(ValueError, train::constant_figures({1, 2}, {}));
}
