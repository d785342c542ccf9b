#pragma once
// A classifier judged class by class, as scikit-learn's classification_report does: each
// class's precision, recall, F1 and support (its examples) from a confusion matrix, with their
// macro average (every class alike) and support-weighted average, and the same figures for the
// trivial baseline that always predicts the training split's most frequent class.
//
// Definitions (sklearn's, zero_division=0):
//  - precision = TP / (TP + FP); a class never predicted has precision 0.
//  - recall    = TP / (TP + FN); a class with no examples (support 0) has recall 0.
//  - F1 = 2·P·R / (P + R); 0 when P + R = 0.
//  - A class that is neither in the data nor predicted is left out of the averages, as sklearn
//    leaves out labels found in neither y_true nor y_pred; its row has NaN figures (`present`
//    false). A class predicted but absent from the data is in them, with recall and F1 0.
//  - The weighted average weighs each class by its support (so classes without examples count
//    for nothing); its support, as the macro average's, is all the examples.
#include <cstdint>
#include <vector>

#include "train/metrics.h"

namespace plexus::train {

struct ClassFigures {
  double precision = 0, recall = 0, f1 = 0;
  int64_t support = 0;   // examples of the class (or, for an average, all the examples)
  bool present = true;   // in the data or predicted at least once; else the figures are NaN
};

struct ClassReport {
  std::vector<ClassFigures> classes;  // by class index
  ClassFigures macro, weighted;
  double accuracy = 0;
};

ClassReport class_report(const ConfusionMatrix& matrix);

// How many examples of each class `targets` holds (whole numbers in [0, classes), as class
// targets are); IndexError naming the value for one outside.
std::vector<int64_t> class_counts(const std::vector<float>& targets, int64_t classes);

// The class the baseline predicts: the most frequent in `counts` (the lowest index among equals).
int64_t majority_class(const std::vector<int64_t>& counts);

// The confusion matrix of predicting `predicted` for every example of `matrix`'s data: each
// true class's row total in that one column.
ConfusionMatrix constant_prediction(const ConfusionMatrix& matrix, int64_t predicted);

}  // namespace plexus::train
