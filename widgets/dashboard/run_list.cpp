#include "dashboard/run_list.h"

#include <QAction>
#include <QContextMenuEvent>
#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QStyledItemDelegate>

#include <utility>

#include "common/icons.h"
#include "common/theme.h"
#include "dashboard/training_plots.h"
#include "train/readable_figures.h"

namespace plexus::widgets {
namespace {

constexpr int kRunRole = Qt::UserRole;  // the run's id, on the name column

// Only the name is editable; the other columns show what the plots know.
class ReadOnlyDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  QWidget* createEditor(QWidget*, const QStyleOptionViewItem&, const QModelIndex&) const override { return nullptr; }
};

QString startedText(const TrainingPlots::RunOrigin& origin) {
  if (!origin.started.isValid()) return QStringLiteral("—");
  const QString time = origin.started.toString(QStringLiteral("HH:mm"));
  if (!origin.past) return RunList::tr("this session, %1").arg(time);
  return origin.started.toString(QStringLiteral("yyyy-MM-dd ")) + time;
}

// Accuracy for a classification run, the loss for a regression, bits per character for a
// character model.
QString bestText(const TrainingPlots::RunInfo& info, bool text) {
  if (text && info.bestEvalLoss)
    return RunList::tr("%1 bits/char").arg(QString::number(train::nats_to_bits(*info.bestEvalLoss), 'f', 3));
  if (info.bestEvalAccuracy) return QString::number(100 * *info.bestEvalAccuracy, 'f', 1) + QLatin1Char('%');
  if (info.bestEvalLoss) return RunList::tr("loss %1").arg(QString::number(*info.bestEvalLoss, 'g', 4));
  return QStringLiteral("—");
}

}  // namespace

RunList::RunList(TrainingPlots* plots, QWidget* parent) : QTreeWidget(parent), plots_(plots) {
  setColumnCount(5);
  setHeaderLabels({tr("Run"), tr("Started"), tr("Status"), tr("Best val."), tr("Settings")});
  headerItem()->setToolTip(BestColumn, tr("Best validation accuracy (the lowest validation loss for a regression)"));
  setRootIsDecorated(false);
  setUniformRowHeights(true);
  setAllColumnsShowFocus(true);
  setAlternatingRowColors(true);
  setSelectionMode(QAbstractItemView::ExtendedSelection);  // two runs to compare
  setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
  auto* readOnly = new ReadOnlyDelegate(this);
  for (int column : {StartedColumn, StatusColumn, BestColumn, SettingsColumn}) setItemDelegateForColumn(column, readOnly);
  header()->setStretchLastSection(true);

  resume_ = new QAction(tr("&Resume This Run"), this);
  resume_->setToolTip(tr("Go on training the run that stopped short, in its own folder, from its last checkpoint, as if "
                         "it had never stopped"));
  connect(resume_, &QAction::triggered, this, [this] { emit resumeRequested(currentRun()); });
  continue_ = new QAction(tr("Co&ntinue from This Run"), this);
  continue_->setToolTip(tr("Train on from the run's final checkpoint, with its optimizer state, numbering epochs on"));
  connect(continue_, &QAction::triggered, this, [this] { emit continueRequested(currentRun()); });
  compare_ = new QAction(tr("Co&mpare Runs"), this);
  compare_->setToolTip(tr("Overlay the curves of the two selected runs and show how their graphs and settings differ"));
  connect(compare_, &QAction::triggered, this, [this] {
    if (const std::vector<int> runs = selectedRuns(); runs.size() == 2) requestComparison(runs[0], runs[1]);
  });
  delete_ = new QAction(icon(QStringLiteral("delete")), tr("Delete R&un…"), this);
  delete_->setShortcut(QKeySequence::Delete);
  connect(delete_, &QAction::triggered, this, [this] { emit deleteRequested(currentRun()); });
  connect(&ThemeManager::instance(), &ThemeManager::changed, delete_,
          [this] { delete_->setIcon(icon(QStringLiteral("delete"))); });
  open_ = new QAction(icon(QStringLiteral("open")), tr("&Open Run Folder…"), this);
  connect(open_, &QAction::triggered, this, &RunList::openRequested);
  connect(&ThemeManager::instance(), &ThemeManager::changed, open_,
          [this] { open_->setIcon(icon(QStringLiteral("open"))); });
  // Delete acts on the run list only when it has focus; elsewhere the key belongs to others.
  delete_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  addAction(delete_);

  for (int run : plots_->runIds()) addRun(run);
  connect(plots_, &TrainingPlots::runAdded, this, &RunList::addRun);
  connect(plots_, &TrainingPlots::runChanged, this, &RunList::refresh);
  connect(plots_, &TrainingPlots::runRemoved, this, &RunList::removeRun);
  connect(plots_, &TrainingPlots::cleared, this, [this] {
    clear();
    updateActions();
  });
  connect(this, &QTreeWidget::itemChanged, this, &RunList::edited);
  connect(this, &QTreeWidget::currentItemChanged, this, &RunList::updateActions);
  connect(this, &QTreeWidget::itemSelectionChanged, this, &RunList::updateActions);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &RunList::refreshAll);  // swatch colours
  updateActions();
}

QTreeWidgetItem* RunList::itemForRun(int run) const {
  for (int i = 0; i < topLevelItemCount(); ++i)
    if (topLevelItem(i)->data(NameColumn, kRunRole).toInt() == run) return topLevelItem(i);
  return nullptr;
}

int RunList::currentRun() const {
  return currentItem() ? currentItem()->data(NameColumn, kRunRole).toInt() : -1;
}

std::vector<int> RunList::selectedRuns() const {
  std::vector<int> runs;
  for (int i = 0; i < topLevelItemCount(); ++i)
    if (topLevelItem(i)->isSelected()) runs.push_back(topLevelItem(i)->data(NameColumn, kRunRole).toInt());
  return runs;
}

// A run that has its folder (its log and project) and is not being written.
bool RunList::comparable(int run) const {
  const TrainingPlots::RunInfo info = plots_->runInfo(run);
  return run >= 0 && !info.origin.folder.isEmpty() && !info.active;
}

// The older run first: the comparison reads "what the newer one changed".
void RunList::requestComparison(int a, int b) {
  const QDateTime ta = plots_->runInfo(a).origin.started, tb = plots_->runInfo(b).origin.started;
  if (ta.isValid() && tb.isValid() ? tb < ta : b < a) std::swap(a, b);
  emit compareRequested(a, b);
}

void RunList::setTraining(bool training) {
  if (training == training_) return;
  training_ = training;
  refreshAll();  // the Resume links come and go
  updateActions();
}

void RunList::contextMenuEvent(QContextMenuEvent* event) {
  // The run clicked is the one the menu acts on; a click on a selected run keeps the selection,
  // for Compare Runs.
  if (QTreeWidgetItem* item = itemAt(viewport()->mapFromGlobal(event->globalPos())))
    setCurrentItem(item, 0, item->isSelected() ? QItemSelectionModel::NoUpdate : QItemSelectionModel::ClearAndSelect);
  QMenu menu(this);
  menu.addActions({resume_, continue_, compare_});
  QMenu* with = menu.addMenu(tr("Compare &With"));
  const int run = currentRun();
  for (int i = 0; i < topLevelItemCount(); ++i) {
    const int other = topLevelItem(i)->data(NameColumn, kRunRole).toInt();
    if (other == run || !comparable(other)) continue;
    connect(with->addAction(plots_->runInfo(other).name), &QAction::triggered, this,
            [this, run, other] { requestComparison(run, other); });
  }
  with->setEnabled(comparable(run) && !with->isEmpty());
  menu.addAction(delete_);
  menu.addSeparator();
  menu.addAction(open_);
  menu.exec(event->globalPos());
}

void RunList::addRun(int run) {
  auto* item = new QTreeWidgetItem;
  item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsEditable);
  item->setData(NameColumn, kRunRole, run);
  item->setTextAlignment(BestColumn, Qt::AlignRight | Qt::AlignVCenter);
  {
    const QSignalBlocker block(this);  // not an edit by the user
    addTopLevelItem(item);
  }
  refresh(run);
  for (int column : {NameColumn, StartedColumn, StatusColumn, BestColumn}) resizeColumnToContents(column);
}

void RunList::removeRun(int run) {
  delete itemForRun(run);
  updateActions();
}

void RunList::refresh(int run) {
  QTreeWidgetItem* item = itemForRun(run);
  if (!item) return;
  const TrainingPlots::RunInfo info = plots_->runInfo(run);
  const Theme& theme = ThemeManager::instance().theme();
  {
    const QSignalBlocker block(this);
    item->setIcon(NameColumn, swatchIcon(info.colour));
    item->setText(NameColumn, info.name);
    item->setCheckState(NameColumn, info.visible ? Qt::Checked : Qt::Unchecked);
    // Set once a run's origin is known, after its row was sized.
    if (const QString started = startedText(info.origin); started != item->text(StartedColumn)) {
      item->setText(StartedColumn, started);
      resizeColumnToContents(StartedColumn);
    }
    item->setForeground(StartedColumn, info.origin.past ? theme.text : theme.mutedText);
    const bool link = info.origin.resumable && !info.active && !training_;
    item->setText(StatusColumn, link ? QString() : info.status);  // the link shows it
    showResumeLink(link ? item : nullptr, run, info.status);
    if (!link && itemWidget(item, StatusColumn)) {
      removeItemWidget(item, StatusColumn);
      item->setSizeHint(StatusColumn, {});
    }
    const bool bad = info.status.startsWith(QLatin1String("failed")) || info.status.startsWith(QLatin1String("unreadable"));
    item->setForeground(StatusColumn, bad ? theme.error : theme.text);
    item->setText(BestColumn, bestText(info, plots_->textUnits()));
    item->setText(SettingsColumn, info.settings);
  }
  QString tip = QStringLiteral("<b>%1</b> · %2<br>%3").arg(info.name.toHtmlEscaped(), info.status.toHtmlEscaped(),
                                                          info.settings.toHtmlEscaped());
  if (!info.origin.note.isEmpty())
    tip += QStringLiteral("<br>") + info.origin.note.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"));
  if (!info.origin.folder.isEmpty())
    tip += QStringLiteral("<br><i>%1</i>").arg(QDir::toNativeSeparators(info.origin.folder).toHtmlEscaped());
  {
    const QSignalBlocker block(this);
    for (int column = 0; column < columnCount(); ++column) item->setToolTip(column, tip);
  }
  if (run == currentRun()) updateActions();
}

void RunList::showResumeLink(QTreeWidgetItem* item, int run, const QString& status) {
  if (!item) return;
  auto* label = qobject_cast<QLabel*>(itemWidget(item, StatusColumn));
  if (!label) {
    label = new QLabel;
    label->setObjectName(QStringLiteral("resumeLink"));
    label->setContentsMargins(3, 0, 3, 0);
    connect(label, &QLabel::linkActivated, this, [this, run] { emit resumeRequested(run); });
    setItemWidget(item, StatusColumn, label);
  }
  label->setText(QStringLiteral("%1 — <a href=\"resume\">%2</a>").arg(status.toHtmlEscaped(), tr("Resume")));
  label->setToolTip(resume_->toolTip());
  item->setSizeHint(StatusColumn, label->sizeHint());  // the column sizes to the link, not the empty text
  resizeColumnToContents(StatusColumn);
}

void RunList::refreshAll() {
  for (int i = 0; i < topLevelItemCount(); ++i) refresh(topLevelItem(i)->data(NameColumn, kRunRole).toInt());
}

void RunList::updateActions() {
  const int run = currentRun();
  const TrainingPlots::RunInfo info = plots_->runInfo(run);
  resume_->setEnabled(run >= 0 && info.origin.resumable && !info.active && !training_);
  continue_->setEnabled(run >= 0 && info.origin.continuable && !training_);
  const std::vector<int> selected = selectedRuns();
  compare_->setEnabled(selected.size() == 2 && comparable(selected[0]) && comparable(selected[1]));
  delete_->setEnabled(run >= 0 && !info.origin.folder.isEmpty() && !info.active);
}

// The check box and the name both live in the name column.
void RunList::edited(QTreeWidgetItem* item, int column) {
  if (column != NameColumn) return;
  const int run = item->data(NameColumn, kRunRole).toInt();
  plots_->setRunVisible(run, item->checkState(NameColumn) == Qt::Checked);
  plots_->setRunName(run, item->text(NameColumn));
  refresh(run);  // an empty name goes back to the old one
}

}  // namespace plexus::widgets
