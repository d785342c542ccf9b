// Per-class precision, recall, F1 and support with macro and weighted averages (sklearn's
// classification_report), and the majority-class baseline; values derived by hand below.
#include "support/check.h"

#include <cmath>

#include "train/class_report.h"
#include "util/error.h"

using namespace plexus;

namespace {

// Rows = true class, columns = predicted. Class 2 is never predicted, class 3 is predicted once
// but has no examples, class 4 is neither in the data nor predicted.
train::ConfusionMatrix mixed() {
  return train::ConfusionMatrix(5, {3, 1, 0, 1, 0,   // class 0: 5 examples
                                    1, 2, 0, 0, 0,   // class 1: 3
                                    2, 0, 0, 0, 0,   // class 2: 2
                                    0, 0, 0, 0, 0,   // class 3: none
                                    0, 0, 0, 0, 0}); // class 4: none
}

}  // namespace

TEST(eachClassHasSklearnsPrecisionRecallAndF1) {
  const train::ClassReport r = train::class_report(mixed());
  COMPARE(r.classes.size(), size_t(5));
  // Class 0: predicted 6 times (column 3 + 1 + 2), 3 right; 5 examples.
  COMPARE(r.classes[0].precision, 3.0 / 6.0);
  COMPARE(r.classes[0].recall, 3.0 / 5.0);
  COMPARE(r.classes[0].f1, 6.0 / 11.0);  // 2 · 0.5 · 0.6 / 1.1
  COMPARE(r.classes[0].support, int64_t(5));
  // Class 1: predicted 3 times, 2 right; 3 examples.
  COMPARE(r.classes[1].precision, 2.0 / 3.0);
  COMPARE(r.classes[1].recall, 2.0 / 3.0);
  COMPARE(r.classes[1].f1, 2.0 / 3.0);
  // Class 2, never predicted: precision 0 (not NaN), recall 0 of 2.
  COMPARE(r.classes[2].precision, 0.0);
  COMPARE(r.classes[2].recall, 0.0);
  COMPARE(r.classes[2].f1, 0.0);
  COMPARE(r.classes[2].support, int64_t(2));
  VERIFY(r.classes[2].present);
  // Class 3, predicted once wrongly with no examples: precision 0, recall 0, in the averages.
  COMPARE(r.classes[3].precision, 0.0);
  COMPARE(r.classes[3].recall, 0.0);
  COMPARE(r.classes[3].support, int64_t(0));
  VERIFY(r.classes[3].present);
  // Class 4, in neither: undefined, and left out.
  VERIFY(!r.classes[4].present);
  VERIFY(std::isnan(r.classes[4].precision) && std::isnan(r.classes[4].recall) && std::isnan(r.classes[4].f1));
  COMPARE(r.accuracy, 0.5);  // 3 + 2 right of 10
}

TEST(averagesAreOverThePresentClassesAndBySupport) {
  const train::ClassReport r = train::class_report(mixed());
  // Macro: the four present classes alike.
  COMPARE(r.macro.precision, (0.5 + 2.0 / 3.0 + 0 + 0) / 4);   // 7/24
  COMPARE(r.macro.recall, (0.6 + 2.0 / 3.0 + 0 + 0) / 4);      // 19/60
  COMPARE(r.macro.f1, (6.0 / 11.0 + 2.0 / 3.0) / 4);           // 10/33
  // Weighted by support 5, 3, 2, 0 of 10.
  COMPARE(r.weighted.precision, (5 * 0.5 + 3 * 2.0 / 3.0) / 10);  // 0.45
  COMPARE(r.weighted.recall, 0.5);                                // always the accuracy
  COMPARE(r.weighted.f1, 26.0 / 55.0);                            // (5 · 6/11 + 3 · 2/3) / 10
  COMPARE(r.macro.support, int64_t(10));
  COMPARE(r.weighted.support, int64_t(10));
}

TEST(aPerfectClassifierScoresOneEverywhere) {
  const train::ClassReport r = train::class_report(train::ConfusionMatrix(3, {4, 0, 0, 0, 1, 0, 0, 0, 5}));
  for (const train::ClassFigures& f : r.classes) {
    COMPARE(f.precision, 1.0);
    COMPARE(f.recall, 1.0);
    COMPARE(f.f1, 1.0);
  }
  COMPARE(r.macro.f1, 1.0);
  COMPARE(r.weighted.f1, 1.0);
  COMPARE(r.accuracy, 1.0);
}

TEST(theBaselinePredictsTheTrainingSplitsMostFrequentClass) {
  // Training targets: class 1 three times, class 0 and 2 twice each.
  const std::vector<int64_t> counts = train::class_counts({1, 0, 2, 1, 0, 2, 1}, 3);
  COMPARE(counts, (std::vector<int64_t>{2, 3, 2}));
  COMPARE(train::majority_class(counts), int64_t(1));
  COMPARE(train::majority_class({4, 4, 1}), int64_t(0));  // equals: the lowest index
  // Always class 0 on mixed(): every row total lands in column 0.
  const train::ConfusionMatrix always = train::constant_prediction(mixed(), 0);
  COMPARE(always.counts(), (std::vector<int64_t>{5, 0, 0, 0, 0, 3, 0, 0, 0, 0, 2, 0, 0, 0, 0,  //
                                                 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  const train::ClassReport r = train::class_report(always);
  COMPARE(r.accuracy, 0.5);
  COMPARE(r.classes[0].precision, 0.5);   // 5 right of 10 predicted
  COMPARE(r.classes[0].f1, 2.0 / 3.0);    // 2 · 0.5 · 1 / 1.5
  COMPARE(r.classes[1].f1, 0.0);
  VERIFY(!r.classes[3].present);          // no longer predicted, and never in the data
  COMPARE(r.macro.f1, (2.0 / 3.0) / 3);   // classes 0, 1, 2
}

TEST(badClassTargetsAreRefused) {
  VERIFY_THROWS(IndexError, train::class_counts({0, 3}, 3));
  VERIFY_THROWS(IndexError, train::class_counts({0.5f}, 3));
  VERIFY_THROWS(IndexError, train::constant_prediction(mixed(), 5));
  VERIFY_THROWS(ValueError, train::majority_class({}));
}
