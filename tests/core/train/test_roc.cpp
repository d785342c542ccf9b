// ROC and precision-recall curves of a two-class scorer with their areas (sklearn's roc_curve
// with drop_intermediate=False, roc_auc_score, precision_recall_curve, average_precision_score),
// and the confusion matrix at a threshold; values derived by hand below.
#include "support/check.h"

#include <cmath>
#include <limits>

#include "train/roc.h"
#include "util/error.h"

using namespace plexus;

namespace {

// Two ties: 0.8 and 0.6 each score one positive and one negative.
const std::vector<float> kScores{0.9f, 0.8f, 0.8f, 0.6f, 0.6f, 0.3f};
const std::vector<int32_t> kLabels{1, 1, 0, 1, 0, 0};
constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST(rocHasOnePointPerDistinctScore) {
  const std::vector<train::RocPoint> roc = train::roc_curve(kScores, kLabels);
  COMPARE(roc.size(), size_t(5));  // +inf, then 0.9, 0.8, 0.6, 0.3
  // Cumulative (TP, FP) at each score of 3 positives and 3 negatives: (1,0), (2,1), (3,2), (3,3).
  const double fpr[] = {0, 0, 1.0 / 3, 2.0 / 3, 1}, tpr[] = {0, 1.0 / 3, 2.0 / 3, 1, 1};
  const double threshold[] = {kInf, 0.9f, 0.8f, 0.6f, 0.3f};
  for (size_t i = 0; i < roc.size(); ++i) {
    COMPARE(roc[i].fpr, fpr[i]);
    COMPARE(roc[i].tpr, tpr[i]);
    COMPARE(roc[i].threshold, threshold[i]);
  }
  // Trapezoids: 0 + 1/3·(1/3+2/3)/2 + 1/3·(2/3+1)/2 + 1/3·1 = 3/18 + 5/18 + 6/18; as counted over
  // the 9 positive-negative pairs, ties half: 3 + 2.5 + 1.5 = 7 of 9.
  COMPARE(train::area_under(roc), 7.0 / 9.0);
}

TEST(precisionRecallCurveAndAveragePrecision) {
  const std::vector<train::PrPoint> pr = train::precision_recall_curve(kScores, kLabels);
  COMPARE(pr.size(), size_t(5));
  const double recall[] = {0, 1.0 / 3, 2.0 / 3, 1, 1}, precision[] = {1, 1, 2.0 / 3, 3.0 / 5, 3.0 / 6};
  for (size_t i = 0; i < pr.size(); ++i) {
    COMPARE(pr[i].recall, recall[i]);
    COMPARE(pr[i].precision, precision[i]);
  }
  COMPARE(pr[0].threshold, kInf);
  // Σ (R_n - R_{n-1}) · P_n = 1/3 · 1 + 1/3 · 2/3 + 1/3 · 3/5 + 0 · 1/2 = 34/45.
  COMPARE(train::average_precision(pr), 34.0 / 45.0);
}

TEST(perfectReversedAndConstantScorers) {
  const std::vector<int32_t> labels{0, 0, 1, 1};
  const std::vector<float> perfect{0.1f, 0.2f, 0.7f, 0.8f}, reversed{0.8f, 0.7f, 0.2f, 0.1f}, constant(4, 0.5f);
  COMPARE(train::area_under(train::roc_curve(perfect, labels)), 1.0);
  COMPARE(train::average_precision(train::precision_recall_curve(perfect, labels)), 1.0);
  COMPARE(train::area_under(train::roc_curve(reversed, labels)), 0.0);
  // A constant score: one threshold, from (0, 0) straight to (1, 1); its average precision is
  // the share of positives, the precision of predicting every example positive.
  const std::vector<train::RocPoint> flat = train::roc_curve(constant, labels);
  COMPARE(flat.size(), size_t(2));
  COMPARE(train::area_under(flat), 0.5);
  COMPARE(train::average_precision(train::precision_recall_curve(constant, {1, 0, 0, 0})), 0.25);
}

TEST(undefinedWithoutBothClasses) {
  const std::vector<float> scores{0.2f, 0.9f};
  VERIFY(std::isnan(train::area_under(train::roc_curve(scores, {1, 1}))));  // no negatives
  VERIFY(std::isnan(train::area_under(train::roc_curve(scores, {0, 0}))));  // no positives
  VERIFY(std::isnan(train::average_precision(train::precision_recall_curve(scores, {0, 0}))));
  VERIFY(std::isnan(train::area_under(train::roc_curve({}, {}))));
}

TEST(confusionAtAThresholdMatchesTheRocPoint) {
  // At 0.8, examples 0, 1, 2 are predicted positive: TP 2 of 3, FP 1 of 3.
  const train::ConfusionMatrix m = train::confusion_at(kScores, kLabels, 0.8f);
  COMPARE(m.counts(), (std::vector<int64_t>{2, 1,    // true 0: one predicted positive (example 2)
                                            1, 2})); // true 1: example 3 (0.6) missed
  for (const train::RocPoint& p : train::roc_curve(kScores, kLabels)) {
    const train::ConfusionMatrix at = train::confusion_at(kScores, kLabels, p.threshold);
    COMPARE(double(at.count(0, 1)) / 3, p.fpr);
    COMPARE(double(at.count(1, 1)) / 3, p.tpr);
  }
}

TEST(mismatchedOrBadLabelsAreRefused) {
  VERIFY_THROWS(ValueError, train::roc_curve({0.1f, 0.2f}, {1}));
  VERIFY_THROWS(IndexError, train::precision_recall_curve({0.1f}, {2}));
  VERIFY_THROWS(IndexError, train::confusion_at({0.1f}, {-1}, 0.5));
}
