#pragma once
// The table of a split whose examples are feature vectors (CSV): one row per sample of the
// preview's current page, one column per feature, then the label and, once there are
// predictions, the predicted class and its confidence. Only the page's rows are read: page()
// says which (on the UI thread), Page::read() reads them (on any thread), setPage() shows them.
#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "dataset/dataset_content.h"

namespace plexus::widgets {

class DatasetTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  // A page of rows. read() touches nothing of the model.
  struct Page {
    std::vector<int64_t> samples;
    std::shared_ptr<const data::Dataset> dataset;
    std::vector<float> values, targets;  // read: [rows, features] and one target per row

    bool needsReading() const { return !samples.empty(); }
    void read();  // throws what the dataset throws
  };

  explicit DatasetTableModel(const DatasetContent* content, QObject* parent = nullptr);

  // After the content's dataset or input shape changed (the columns may change).
  void datasetChanged();
  // After the content's feature names changed: the column headers change.
  void featureNamesChanged();
  // After the content's predictions changed (the prediction columns may appear).
  void predictionsChanged();
  Page page(const std::vector<int64_t>& samples) const { return {samples, content_->dataset, {}, {}}; }
  void setPage(Page page);  // once read
  const std::vector<int64_t>& samples() const { return samples_; }

  int featureCount() const { return features_; }
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  enum class Column { Feature, Label, Predicted, Confidence };
  Column kind(int column) const;
  bool showsPredictions() const { return !content_->predictions.predicted.empty(); }
  QVariant display(int row, int column) const;
  QVariant foreground(int row, int column) const;

  const DatasetContent* content_;
  std::vector<int64_t> samples_;
  int features_ = 0;
  bool prediction_columns_ = false;
  std::vector<float> values_, targets_;  // the page's rows: [rows, features_] and [rows]
};

}  // namespace plexus::widgets
