#pragma once
// A binary classifier judged across every threshold, from each example's score (the positive
// class's probability: softmax of the logits, class 1 positive) and its label (0 or 1), as
// scikit-learn's roc_curve (drop_intermediate=False), roc_auc_score, precision_recall_curve and
// average_precision_score compute them. An example counts as predicted positive when its score
// is >= the threshold. Curves are point lists a plot draws as they are.
//
// Ties: examples of equal score cross every threshold together, so a curve has one point per
// distinct score (from the highest down), after a first point at threshold +infinity where
// nothing is predicted positive.
#include <cstdint>
#include <vector>

#include "train/metrics.h"

namespace plexus::train {

struct RocPoint {
  double fpr = 0, tpr = 0, threshold = 0;  // false and true positive rates at score >= threshold
};

// The first point is (0, 0) at +infinity, the last (1, 1) at the lowest score. Without
// negatives (or positives) the false (or true) positive rates are NaN. ValueError when scores
// and labels differ in number, IndexError for a label other than 0 or 1.
std::vector<RocPoint> roc_curve(const std::vector<float>& scores, const std::vector<int32_t>& labels);

// The area under the curve by the trapezoid rule: 1 for a perfect ranking, 0.5 for a constant
// score; NaN without positives or without negatives (sklearn refuses those).
double area_under(const std::vector<RocPoint>& curve);

struct PrPoint {
  double recall = 0, precision = 1, threshold = 0;
};

// From the highest threshold down: (recall 0, precision 1) at +infinity, then one point per
// distinct score (sklearn lists the same points in the reverse order). Without positives the
// recalls are NaN. Errors as roc_curve's.
std::vector<PrPoint> precision_recall_curve(const std::vector<float>& scores, const std::vector<int32_t>& labels);

// sklearn's average precision: sum over the points of (R_n - R_{n-1}) · P_n, the precision at
// each threshold weighted by the recall it adds (no interpolation). The share of positives for
// a constant score; NaN without positives.
double average_precision(const std::vector<PrPoint>& curve);

// The 2×2 confusion matrix (rows true class 0, 1; columns predicted) of predicting class 1 when
// the score is >= threshold. Errors as roc_curve's.
ConfusionMatrix confusion_at(const std::vector<float>& scores, const std::vector<int32_t>& labels, double threshold);

}  // namespace plexus::train
