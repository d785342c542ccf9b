#pragma once
// What the dataset preview shows, shared read-only by its gallery and table models: the split,
// its labels and class names, the column names and the latest predictions. The preview owns it
// and tells the models when a part changes.
#include <QString>
#include <QVariant>
#include <memory>
#include <vector>

#include "data/dataset.h"
#include "dataset/dataset_samples.h"
#include "tensor/shape.h"

namespace plexus::widgets {

// A sample's standing with the model, for the item role VerdictRole.
enum class Verdict { None, Right, Wrong };

// Item data roles of the gallery and table models, beyond Qt's own.
enum SampleRole {
  SampleIndexRole = Qt::UserRole + 1,  // int64: the sample's index in the split
  LabelRole,                           // int: its class (-1 for none)
  PredictedRole,                       // int: the predicted class (-1 for none)
  PredictedNameRole,                   // QString: its name (empty for none)
  ConfidenceRole,                      // float: the prediction's probability
  VerdictRole,                         // int: a Verdict
};

struct DatasetContent {
  std::shared_ptr<const data::Dataset> dataset;
  Shape input;                        // an example's input shape
  std::vector<QString> classNames;    // empty: not a classification split
  std::vector<QString> featureNames;  // table columns; missing ones are named x<i>
  std::vector<int32_t> labels;        // by sample; empty without classes
  Predictions predictions;

  int classes() const { return int(classNames.size()); }
  int label(int64_t sample) const;
  int predicted(int64_t sample) const;  // -1 without a prediction
  Verdict verdict(int64_t sample) const;
  QString className(int cls) const;     // "?" outside the classes
  QString featureName(int column) const;
  // "Sample 12 · label 7 · predicted 9 (87.1%)", for tooltips.
  QString describe(int64_t sample) const;
  // What both item models answer alike: the tooltip and the SampleRole values (else none).
  QVariant sampleData(int64_t sample, int role) const;
};

}  // namespace plexus::widgets
