#pragma once
// The figures people judge a trained model by, on its test split, each beside the trivial
// baseline's: for classification the per-class table (train/class_report.h) and, with two
// classes, the ROC and precision-recall curves (train/roc.h); for regression MAE, RMSE and R²
// (train/regression_report.h). The baseline learns from the training split of the project's
// dataset, as the model did: its most frequent class, or its mean target. `plexus-cli eval`
// prints these; a dashboard view draws from the same structs.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "session/trained_model.h"  // TestEvaluation
#include "train/class_report.h"
#include "train/regression_report.h"
#include "train/roc.h"

namespace plexus::session {

// A binary classifier over every threshold, class 1 positive. scores and labels stay for
// train::confusion_at (a threshold slider).
struct BinaryReport {
  std::vector<float> scores;    // class 1's softmax probability, per test example
  std::vector<int32_t> labels;  // 0 or 1, per test example
  std::vector<train::RocPoint> roc;
  std::vector<train::PrPoint> pr;
  double roc_auc = 0, average_precision = 0;
  // A constant score: AUC 0.5, and an average precision of the test split's share of positives.
  double baseline_roc_auc = 0, baseline_average_precision = 0;
};

struct ClassificationReport {
  train::ClassReport model;
  int64_t baseline_class = 0;  // the most frequent class of the baseline's split
  train::ClassReport baseline;
  std::optional<BinaryReport> binary;  // two classes, one prediction per example
};

struct RegressionReport {
  // Per test example, example-major, `outputs` values each: what a predicted-versus-actual plot draws.
  std::vector<float> targets, predictions;
  size_t outputs = 1;
  train::RegressionFigures model;
  std::vector<double> baseline_mean;  // per output
  train::RegressionFigures baseline;
};

struct EvaluationReport {
  std::optional<ClassificationReport> classification;
  std::optional<RegressionReport> regression;
  // Where the baseline learnt: "training", or "test" for a dataset without a training split
  // (the baseline then knows the test split's own counts or mean: a fairer opponent than it
  // should be).
  std::string baseline_split = "training";
};

// The targets of every example of `split`, in order, flattened (a class or value each, or [k]).
std::vector<float> split_targets(const data::Dataset& split);

// From an evaluation with its predictions recorded (evaluate_on_test(..., predictions = true), or
// a run's TestEnd with TrainerOptions::record_test_predictions) of a model that classifies or
// not. A regression without recorded outputs (one not [N, k]: an autoencoder's) has no figures.
// ValueError when the recorded predictions do not match the test split.
EvaluationReport evaluation_report(bool classification, const TestEvaluation& evaluation);

}  // namespace plexus::session
