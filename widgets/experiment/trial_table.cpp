#include "experiment/trial_table.h"

#include <cmath>

namespace plexus::widgets {

namespace {

// A parameter's value as text: numbers in few digits (1e-3 reads better than 0.001000).
QString valueText(const QVariant& value) {
  if (!value.isValid()) return QString();
  bool numeric = false;
  const double v = value.toDouble(&numeric);
  if (!numeric || value.typeId() == QMetaType::QString) return value.toString();
  return QString::number(v, 'g', 4);
}

}  // namespace

QString durationText(double seconds) {
  const auto s = qint64(std::llround(seconds));
  if (s < 60) return QStringLiteral("%1 s").arg(s);
  if (s < 3600) return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
  return QStringLiteral("%1 h %2 min").arg(s / 3600).arg(s % 3600 / 60, 2, 10, QLatin1Char('0'));
}

TrialTableModel::TrialTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void TrialTableModel::setParameters(const std::vector<SweptParameter>& parameters) {
  beginResetModel();
  parameters_ = parameters;
  trials_.clear();
  endResetModel();
}

int TrialTableModel::rowOf(int trial) const {
  for (size_t row = 0; row < trials_.size(); ++row)
    if (trials_[row].index == trial) return int(row);
  return -1;
}

void TrialTableModel::setTrials(const std::vector<Trial>& trials) {
  // Trials no longer listed go first (from the end, so rows keep their numbers as they go).
  for (int row = int(trials_.size()) - 1; row >= 0; --row) {
    const int index = trials_[size_t(row)].index;
    const bool kept = std::any_of(trials.begin(), trials.end(), [index](const Trial& t) { return t.index == index; });
    if (kept) continue;
    beginRemoveRows({}, row, row);
    trials_.erase(trials_.begin() + row);
    endRemoveRows();
  }
  for (const Trial& trial : trials) {
    const int row = rowOf(trial.index);
    if (row < 0) {
      beginInsertRows({}, int(trials_.size()), int(trials_.size()));
      trials_.push_back(trial);
      endInsertRows();
      continue;
    }
    Trial& shown = trials_[size_t(row)];
    const bool same = shown.values == trial.values && shown.status == trial.status &&
                      shown.bestLoss == trial.bestLoss && shown.bestAccuracy == trial.bestAccuracy &&
                      shown.bestEpoch == trial.bestEpoch && shown.epochs == trial.epochs &&
                      shown.seconds == trial.seconds && shown.folder == trial.folder;
    if (same) continue;
    shown = trial;
    emit dataChanged(index(row, 0), index(row, columnCount() - 1));
  }
}

int TrialTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(trials_.size()); }

int TrialTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : column(FigureCount); }

QVariant TrialTableModel::sortValue(const Trial& trial, int col) const {
  if (col == 0) return double(trial.index);
  if (col <= int(parameters_.size())) {
    const QVariant& value = trial.values.size() >= size_t(col) ? trial.values[size_t(col - 1)] : QVariant();
    bool numeric = false;
    const double v = value.toDouble(&numeric);
    if (numeric && value.typeId() != QMetaType::QString) return v;
    return value.isValid() ? QVariant(value.toString()) : QVariant();
  }
  const auto optional = [](const std::optional<double>& v) { return v ? QVariant(*v) : QVariant(); };
  switch (Figure(col - column(LossColumn))) {
    case LossColumn:
      return optional(trial.bestLoss);
    case AccuracyColumn:
      return optional(trial.bestAccuracy);
    case BestEpochColumn:
      return trial.bestEpoch > 0 ? QVariant(double(trial.bestEpoch)) : QVariant();
    case EpochsColumn:
      return double(trial.epochs);
    case TimeColumn:
      return trial.seconds;
    case StatusColumn:
      return trial.status;
    case FigureCount:
      break;
  }
  return {};
}

QString TrialTableModel::text(const Trial& trial, int col) const {
  if (col == 0) return QString::number(trial.index);
  if (col <= int(parameters_.size()))
    return trial.values.size() >= size_t(col) ? valueText(trial.values[size_t(col - 1)]) : QString();
  switch (Figure(col - column(LossColumn))) {
    case LossColumn:
      return trial.bestLoss ? QString::number(*trial.bestLoss, 'f', 4) : QString();
    case AccuracyColumn:
      return trial.bestAccuracy ? QStringLiteral("%1 %").arg(*trial.bestAccuracy * 100, 0, 'f', 2) : QString();
    case BestEpochColumn:
      return trial.bestEpoch > 0 ? QString::number(trial.bestEpoch) : QString();
    case EpochsColumn:
      return QString::number(trial.epochs);
    case TimeColumn:
      return trial.seconds > 0 ? durationText(trial.seconds) : QString();
    case StatusColumn:
      return trial.status;
    case FigureCount:
      break;
  }
  return {};
}

QVariant TrialTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= int(trials_.size())) return {};
  const Trial& trial = trials_[size_t(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      return text(trial, index.column());
    case SortRole:
      return sortValue(trial, index.column());
    case TrialRole:
      return trial.index;
    case Qt::TextAlignmentRole:
      return index.column() == column(StatusColumn) ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                                    : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
      return trial.folder.isEmpty() ? QVariant() : QVariant(trial.folder);
    default:
      return {};
  }
}

QVariant TrialTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  if (section == 0) return tr("#");
  if (section <= int(parameters_.size())) return parameters_[size_t(section - 1)].name;
  switch (Figure(section - column(LossColumn))) {
    case LossColumn:
      return tr("Val loss");
    case AccuracyColumn:
      return tr("Val accuracy");
    case BestEpochColumn:
      return tr("Best epoch");
    case EpochsColumn:
      return tr("Epochs");
    case TimeColumn:
      return tr("Time");
    case StatusColumn:
      return tr("Status");
    case FigureCount:
      break;
  }
  return {};
}

TrialFilter::TrialFilter(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(TrialTableModel::SortRole);
  setDynamicSortFilter(true);  // a trial that finishes moves to its place
}

void TrialFilter::setStatus(const QString& status) {
  status_ = status;
  invalidateRowsFilter();
}

void TrialFilter::setText(const QString& text) {
  text_ = text;
  invalidateRowsFilter();
}

bool TrialFilter::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  const QVariant a = left.data(sortRole()), b = right.data(sortRole());
  // Without a figure last, whichever way the column sorts (the view reverses lessThan when
  // descending).
  if (!a.isValid() || !b.isValid()) {
    if (a.isValid() == b.isValid()) return false;
    return (sortOrder() == Qt::AscendingOrder) == a.isValid();
  }
  if (a.typeId() == QMetaType::Double && b.typeId() == QMetaType::Double) return a.toDouble() < b.toDouble();
  return QString::localeAwareCompare(a.toString(), b.toString()) < 0;
}

bool TrialFilter::filterAcceptsRow(int row, const QModelIndex& parent) const {
  const auto* model = qobject_cast<const TrialTableModel*>(sourceModel());
  if (!model) return true;
  if (!status_.isEmpty() &&
      model->index(row, model->column(TrialTableModel::StatusColumn), parent).data().toString() != status_)
    return false;
  if (text_.isEmpty()) return true;
  for (int column = 0; column < model->columnCount(); ++column)
    if (model->index(row, column, parent).data().toString().contains(text_, Qt::CaseInsensitive)) return true;
  return false;
}

}  // namespace plexus::widgets
