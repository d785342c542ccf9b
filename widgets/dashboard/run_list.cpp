#include "dashboard/run_list.h"

#include <QHeaderView>
#include <QStyledItemDelegate>

#include "common/icons.h"
#include "common/theme.h"
#include "dashboard/training_plots.h"

namespace plexus::widgets {
namespace {

constexpr int kRunRole = Qt::UserRole;  // the run's id, on the name column

// Only the name is editable; the other columns show what the plots know.
class ReadOnlyDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  QWidget* createEditor(QWidget*, const QStyleOptionViewItem&, const QModelIndex&) const override { return nullptr; }
};


}  // namespace

RunList::RunList(TrainingPlots* plots, QWidget* parent) : QTreeWidget(parent), plots_(plots) {
  setColumnCount(4);
  setHeaderLabels({tr("Run"), tr("Status"), tr("Best val. acc."), tr("Settings")});
  setRootIsDecorated(false);
  setUniformRowHeights(true);
  setAllColumnsShowFocus(true);
  setAlternatingRowColors(true);
  setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
  auto* readOnly = new ReadOnlyDelegate(this);
  for (int column : {StatusColumn, AccuracyColumn, SettingsColumn}) setItemDelegateForColumn(column, readOnly);
  header()->setStretchLastSection(true);

  for (int run = 0; run < plots_->runCount(); ++run) addRun(run);
  connect(plots_, &TrainingPlots::runAdded, this, &RunList::addRun);
  connect(plots_, &TrainingPlots::runChanged, this, &RunList::refresh);
  connect(plots_, &TrainingPlots::cleared, this, &QTreeWidget::clear);
  connect(this, &QTreeWidget::itemChanged, this, &RunList::edited);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &RunList::refreshAll);  // swatch colours
}

QTreeWidgetItem* RunList::itemForRun(int run) const {
  for (int i = 0; i < topLevelItemCount(); ++i)
    if (topLevelItem(i)->data(NameColumn, kRunRole).toInt() == run) return topLevelItem(i);
  return nullptr;
}

void RunList::addRun(int run) {
  auto* item = new QTreeWidgetItem;
  item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsEditable);
  item->setData(NameColumn, kRunRole, run);
  item->setTextAlignment(AccuracyColumn, Qt::AlignRight | Qt::AlignVCenter);
  {
    const QSignalBlocker block(this);  // not an edit by the user
    addTopLevelItem(item);
  }
  refresh(run);
  for (int column : {NameColumn, StatusColumn, AccuracyColumn}) resizeColumnToContents(column);
}

void RunList::refresh(int run) {
  QTreeWidgetItem* item = itemForRun(run);
  if (!item) return;
  const TrainingPlots::RunInfo info = plots_->runInfo(run);
  const Theme& theme = ThemeManager::instance().theme();
  const QSignalBlocker block(this);
  item->setIcon(NameColumn, swatchIcon(info.colour));
  item->setText(NameColumn, info.name);
  item->setCheckState(NameColumn, info.visible ? Qt::Checked : Qt::Unchecked);
  item->setText(StatusColumn, info.status);
  item->setForeground(StatusColumn, info.status.startsWith(QLatin1String("failed")) ? theme.error : theme.text);
  item->setText(AccuracyColumn, info.bestEvalAccuracy ? QString::number(100 * *info.bestEvalAccuracy, 'f', 1) + '%'
                                                      : QStringLiteral("—"));
  item->setText(SettingsColumn, info.settings);
  const QString tip = QStringLiteral("<b>%1</b> · %2<br>%3")
                          .arg(info.name.toHtmlEscaped(), info.status.toHtmlEscaped(), info.settings.toHtmlEscaped());
  for (int column = 0; column < columnCount(); ++column) item->setToolTip(column, tip);
}

void RunList::refreshAll() {
  for (int i = 0; i < topLevelItemCount(); ++i) refresh(topLevelItem(i)->data(NameColumn, kRunRole).toInt());
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
