#include "dashboard/baseline_comparison.h"

#include <QHeaderView>
#include <cmath>

namespace plexus::widgets {

BaselineComparison::BaselineComparison(QWidget* parent) : QTableWidget(parent) {
  setColumnCount(3);
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setSelectionMode(QAbstractItemView::NoSelection);
  setFocusPolicy(Qt::NoFocus);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  verticalHeader()->hide();
  verticalHeader()->setDefaultSectionSize(rowHeight(this));
  horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);  // the figures' names whole
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

int BaselineComparison::rowHeight(const QWidget* table) { return table->fontMetrics().height() + 8; }

QString BaselineComparison::number(double v, bool percent) {
  if (!std::isfinite(v)) return QStringLiteral("–");
  return percent ? QStringLiteral("%1 %").arg(100 * v, 0, 'f', 2) : QString::number(v, 'f', 4);
}

void BaselineComparison::setRows(const std::vector<Row>& rows, const QString& baseline,
                                 const QString& baselineToolTip) {
  clearContents();
  setRowCount(int(rows.size()));
  setHorizontalHeaderLabels({tr("Test set"), tr("Model"), baseline});
  horizontalHeaderItem(2)->setToolTip(baselineToolTip);
  for (int r = 0; r < int(rows.size()); ++r) {
    const Row& row = rows[size_t(r)];
    auto* name = new QTableWidgetItem(row.figure);
    name->setToolTip(row.toolTip);
    setItem(r, 0, name);
    for (int c : {1, 2}) {
      auto* item = new QTableWidgetItem(number(c == 1 ? row.model : row.baseline, row.percent));
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      setItem(r, c, item);
    }
  }
  setFixedHeight(horizontalHeader()->sizeHint().height() + verticalHeader()->length() + 2 * frameWidth());
}

QString BaselineComparison::text(int row, int column) const {
  const QTableWidgetItem* i = item(row, column);
  return i ? i->text() : QString();
}

}  // namespace plexus::widgets
