#include "experiment/experiment_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <exception>

#include "common/qt_text.h"
#include "dashboard/training_plots.h"
#include "experiment/parallel_coordinates.h"
#include "experiment/trial_table.h"
#include "session/run_log.h"

namespace plexus::widgets {

ExperimentView::ExperimentView(QWidget* parent) : QWidget(parent) {
  model_ = new TrialTableModel(this);
  filter_ = new TrialFilter(this);
  filter_->setSourceModel(model_);
  table_ = new QTableView(this);
  table_->setObjectName(QStringLiteral("trialTable"));
  table_->setModel(filter_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(0, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &ExperimentView::tableSelectionChanged);

  parallel_ = new ParallelCoordinates(this);
  parallel_->setObjectName(QStringLiteral("parallelCoordinates"));
  connect(parallel_, &ParallelCoordinates::selectionChanged, this, [this](const QList<int>& trials) {
    selectTrials(trials);
    emit selectionChanged(selectedTrials());
  });
  plots_ = new TrainingPlots(this);

  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("sweepSummary"));
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_->setWordWrap(true);  // a long sweep name and many statuses take two lines, not the buttons' room
  filter_edit_ = new QLineEdit(this);
  filter_edit_->setObjectName(QStringLiteral("trialFilter"));
  filter_edit_->setPlaceholderText(tr("Filter trials"));
  filter_edit_->setClearButtonEnabled(true);
  filter_edit_->setMaximumWidth(160);
  connect(filter_edit_, &QLineEdit::textChanged, filter_, &TrialFilter::setText);
  status_ = new QComboBox(this);
  status_->setObjectName(QStringLiteral("trialStatus"));
  status_->addItem(tr("Every status"), QString());
  for (const char* s : {"completed", "stopped early", "running", "pending", "interrupted", "stopped", "failed"})
    status_->addItem(QString::fromLatin1(s), QString::fromLatin1(s));
  connect(status_, &QComboBox::currentIndexChanged, this,
          [this] { filter_->setStatus(status_->currentData().toString()); });
  apply_best_ = new QPushButton(tr("Apply Best Settings"), this);
  apply_best_->setObjectName(QStringLiteral("applyBest"));
  apply_best_->setToolTip(
      tr("Set the project's settings and node parameters to the best trial's values (one undo step)"));
  connect(apply_best_, &QPushButton::clicked, this, [this] {
    if (bestTrial() >= 0) emit applyBestRequested(bestTrial());
  });

  auto* bar = new QHBoxLayout;
  bar->addWidget(summary_, 1);
  bar->addWidget(filter_edit_);
  bar->addWidget(status_);
  bar->addWidget(apply_best_);

  auto* top = new QSplitter(Qt::Horizontal, this);
  top->setObjectName(QStringLiteral("experimentTop"));
  top->addWidget(table_);
  top->addWidget(parallel_);
  top->setStretchFactor(0, 3);  // the table has more columns than the plot has axes
  top->setStretchFactor(1, 2);
  top->setSizes({600, 400});
  // The curves scroll below their plots' minimum height (as on the dashboard): the table and the
  // plot above keep their room in a window of 800 pixels.
  auto* curves = new QScrollArea(this);
  curves->setWidgetResizable(true);
  curves->setFrameShape(QFrame::NoFrame);
  curves->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  curves->setWidget(plots_);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(top);
  split->addWidget(curves);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  split->setSizes({300, 500});  // the curves' three plots want the more height

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(split, 1);
  clear();
}

void ExperimentView::setSweep(const QString& name, const std::vector<SweptParameter>& parameters, TrialMetric metric) {
  name_ = name;
  metric_ = metric;
  model_->setParameters(parameters);
  parallel_->setParameters(parameters);
  parallel_->setMetric(metric);
  plots_->clear();
  overlaid_.clear();
  overlaid_state_.clear();
  updateSummary();
}

void ExperimentView::clear() { setSweep({}, {}, TrialMetric::Loss); }

void ExperimentView::setTrials(const std::vector<Trial>& trials) {
  const QList<int> selected = selectedTrials();
  selecting_ = true;
  model_->setTrials(trials);
  selecting_ = false;
  parallel_->setTrials(trials);
  parallel_->setSelectedTrials(selected);
  showCurves();
  updateSummary();
}

void ExperimentView::selectTrials(const QList<int>& trials) {
  selecting_ = true;
  QItemSelection selection;
  for (const int trial : trials) {
    const int row = model_->rowOf(trial);
    if (row < 0) continue;
    const QModelIndex at = filter_->mapFromSource(model_->index(row, 0));
    if (at.isValid()) selection.select(at, at.siblingAtColumn(filter_->columnCount() - 1));
  }
  table_->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
  if (!trials.isEmpty())
    if (const int row = model_->rowOf(trials.first()); row >= 0)
      table_->scrollTo(filter_->mapFromSource(model_->index(row, 0)));
  selecting_ = false;
  parallel_->setSelectedTrials(trials);
  showCurves();
}

QList<int> ExperimentView::selectedTrials() const {
  QList<int> out;
  for (const QModelIndex& row : table_->selectionModel()->selectedRows())
    out << row.data(TrialTableModel::TrialRole).toInt();
  return out;
}

int ExperimentView::bestTrial() const { return widgets::bestTrial(model_->trials(), metric_); }

void ExperimentView::tableSelectionChanged() {
  if (selecting_) return;
  const QList<int> trials = selectedTrials();
  parallel_->setSelectedTrials(trials);
  showCurves();
  emit selectionChanged(trials);
}

void ExperimentView::showCurves() {
  QList<int> wanted = selectedTrials();
  if (wanted.size() > kMaxOverlaid) wanted = wanted.mid(0, kMaxOverlaid);
  // The curves of trials no longer selected go; those of selected trials that progressed since
  // they were read are read again.
  for (auto it = overlaid_.begin(); it != overlaid_.end();) {
    const int row = model_->rowOf(it->first);
    const bool stale = row < 0 || overlaid_state_[it->first] != std::pair(model_->trials()[size_t(row)].status,
                                                                          model_->trials()[size_t(row)].epochs);
    if (wanted.contains(it->first) && !stale) {
      ++it;
      continue;
    }
    plots_->removeRun(it->second);
    overlaid_state_.erase(it->first);
    it = overlaid_.erase(it);
  }
  for (const int trial : wanted) {
    if (overlaid_.contains(trial)) continue;
    const Trial& t = model_->trials()[size_t(model_->rowOf(trial))];
    if (t.folder.isEmpty()) continue;
    session::RunRecord record;
    try {
      record = session::read_run(t.folder.toStdString());
    } catch (const std::exception&) {
      continue;  // no log yet (a trial just starting): its curves come with the next update
    }
    QStringList values;
    for (size_t p = 0; p < model_->parameters().size() && p < t.values.size(); ++p)
      values << QStringLiteral("%1=%2").arg(model_->parameters()[p].name, t.values[p].toString());
    const int run = plots_->beginRun(tr("Trial %1").arg(trial), values.join(QLatin1Char(' ')));
    plots_->addBatches(run, record.batches);
    for (const train::EpochEnd& epoch : record.epochs) plots_->addEpoch(run, epoch);
    if (record.status != session::RunStatus::Incomplete)
      plots_->finishRun(run, qstr(session::to_string(record.status)));
    overlaid_[trial] = run;
    overlaid_state_[trial] = {t.status, t.epochs};
  }
}

void ExperimentView::updateSummary() {
  const std::vector<Trial>& trials = model_->trials();
  apply_best_->setEnabled(bestTrial() >= 0);
  if (name_.isEmpty()) {
    summary_->setText(tr("No sweep: define one under Sweep and press Start Sweep, or open a sweep folder."));
    return;
  }
  std::map<QString, int> by_status;
  for (const Trial& t : trials) ++by_status[t.status];
  QStringList counts;
  for (const auto& entry : by_status) counts << QStringLiteral("%1 %2").arg(entry.second).arg(entry.first);
  QString text = tr("%1: %n trial(s)", nullptr, int(trials.size())).arg(name_);
  if (!counts.isEmpty()) text += QStringLiteral(" (") + counts.join(QStringLiteral(", ")) + QLatin1Char(')');
  if (const int best = bestTrial(); best >= 0) {
    const Trial& t = trials[size_t(model_->rowOf(best))];
    text += metric_ == TrialMetric::Accuracy
                ? tr(". Best: trial %1, validation accuracy %2 %").arg(best).arg(*t.bestAccuracy * 100, 0, 'f', 2)
                : tr(". Best: trial %1, validation loss %2").arg(best).arg(*t.bestLoss, 0, 'f', 4);
  }
  summary_->setText(text);
}

QString ExperimentView::summaryText() const { return summary_->text(); }

}  // namespace plexus::widgets
