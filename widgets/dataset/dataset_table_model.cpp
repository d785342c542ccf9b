#include "dataset/dataset_table_model.h"

#include "common/theme.h"

namespace plexus::widgets {

DatasetTableModel::DatasetTableModel(const DatasetContent* content, QObject* parent)
    : QAbstractTableModel(parent), content_(content) {}

void DatasetTableModel::datasetChanged() {
  beginResetModel();
  features_ = content_->input.empty() ? 0 : int(numel(content_->input));
  prediction_columns_ = showsPredictions();
  samples_.clear();
  values_.clear();
  targets_.clear();
  endResetModel();
}

void DatasetTableModel::featureNamesChanged() {
  if (features_ > 0) emit headerDataChanged(Qt::Horizontal, 0, features_ - 1);
}

void DatasetTableModel::predictionsChanged() {
  if (prediction_columns_ != showsPredictions()) {
    beginResetModel();
    prediction_columns_ = showsPredictions();
    endResetModel();
  } else if (rowCount() > 0) {
    emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
  }
}

void DatasetTableModel::Page::read() {
  if (samples.empty()) return;
  const data::Example batch = dataset->get_batch(samples);
  values = batch.input.contiguous().to_vector();
  // One target per row; a vector target shows its first value.
  const std::vector<float> all = batch.target.contiguous().to_vector();
  const size_t per_row = all.size() / samples.size();
  for (size_t r = 0; r < samples.size(); ++r) targets.push_back(per_row ? all[r * per_row] : 0.f);
}

void DatasetTableModel::setPage(Page page) {
  beginResetModel();
  samples_ = std::move(page.samples);
  values_ = std::move(page.values);
  targets_ = std::move(page.targets);
  endResetModel();
}

int DatasetTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(samples_.size());
}

int DatasetTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : features_ + 1 + (prediction_columns_ ? 2 : 0);
}

DatasetTableModel::Column DatasetTableModel::kind(int column) const {
  if (column < features_) return Column::Feature;
  if (column == features_) return Column::Label;
  return column == features_ + 1 ? Column::Predicted : Column::Confidence;
}

QVariant DatasetTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const int64_t sample = samples_[size_t(index.row())];
  switch (role) {
    case Qt::DisplayRole: return display(index.row(), index.column());
    case Qt::ForegroundRole: return foreground(index.row(), index.column());
    case Qt::TextAlignmentRole:
      return kind(index.column()) == Column::Feature || kind(index.column()) == Column::Confidence
                 ? int(Qt::AlignRight | Qt::AlignVCenter)
                 : int(Qt::AlignLeft | Qt::AlignVCenter);
    default: return content_->sampleData(sample, role);
  }
}

QVariant DatasetTableModel::display(int row, int column) const {
  const int64_t sample = samples_[size_t(row)];
  switch (kind(column)) {
    case Column::Feature: {
      const size_t at = size_t(row) * size_t(features_) + size_t(column);
      return at < values_.size() ? QString::number(values_[at], 'g', 5) : QString();
    }
    case Column::Label:
      return content_->classes() > 0 ? content_->className(content_->label(sample))
                                     : QString::number(targets_[size_t(row)], 'g', 6);
    case Column::Predicted:
      return content_->predictions.has(sample) ? content_->className(content_->predicted(sample)) : QString();
    case Column::Confidence:
      return content_->predictions.has(sample)
                 ? QStringLiteral("%1%").arg(100.0 * content_->predictions.confidenceOf(sample), 0, 'f', 1)
                 : QString();
  }
  return {};
}

QVariant DatasetTableModel::foreground(int row, int column) const {
  if (kind(column) != Column::Predicted) return {};
  const Theme& theme = ThemeManager::instance().theme();
  switch (content_->verdict(samples_[size_t(row)])) {
    case Verdict::Wrong: return theme.error;
    case Verdict::Right: return theme.mutedText;
    case Verdict::None: break;
  }
  return {};
}

QVariant DatasetTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
  if (orientation == Qt::Vertical)
    return section < rowCount() ? QVariant::fromValue<qint64>(samples_[size_t(section)]) : QVariant();
  switch (kind(section)) {
    case Column::Feature: return content_->featureName(section);
    case Column::Label: return content_->classes() > 0 ? tr("Label") : tr("Target");
    case Column::Predicted: return tr("Predicted");
    case Column::Confidence: return tr("Confidence");
  }
  return {};
}

}  // namespace plexus::widgets
