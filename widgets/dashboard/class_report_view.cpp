#include "dashboard/class_report_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "dashboard/baseline_comparison.h"

namespace plexus::widgets {

namespace {

QString className(const std::vector<QString>& names, size_t k) {
  return k < names.size() && !names[k].isEmpty() ? names[k] : QString::number(k);
}

void setRow(QTableWidget* table, int row, const QString& name, const train::ClassFigures& f, bool average) {
  auto* label = new QTableWidgetItem(name);
  if (average) {
    QFont bold = label->font();
    bold.setBold(true);
    label->setFont(bold);
  }
  if (!f.present) label->setToolTip(QObject::tr("Neither in the test split nor predicted: left out of the averages"));
  table->setItem(row, 0, label);
  const QStringList cells{BaselineComparison::number(f.present ? f.precision : std::nan("")),
                          BaselineComparison::number(f.present ? f.recall : std::nan("")),
                          BaselineComparison::number(f.present ? f.f1 : std::nan("")), QString::number(f.support)};
  for (int c = 0; c < cells.size(); ++c) {
    auto* item = new QTableWidgetItem(cells[c]);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    table->setItem(row, c + 1, item);
  }
}

}  // namespace

ClassReportView::ClassReportView(QWidget* parent)
    : QWidget(parent), title_(new QLabel(this)), table_(new QTableWidget(this)), baseline_(new BaselineComparison(this)) {
  title_->setObjectName(QStringLiteral("classReportTitle"));
  title_->setWordWrap(true);
  table_->setObjectName(QStringLiteral("classReport"));
  table_->setColumnCount(5);
  table_->setHorizontalHeaderLabels({tr("Class"), tr("Precision"), tr("Recall"), tr("F1"), tr("Support")});
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(BaselineComparison::rowHeight(table_));  // more classes in view
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Interactive);
  table_->horizontalHeaderItem(0)->setToolTip(tr("Precision: of the examples predicted as the class, the share that "
                                                 "are. Recall: of the class's examples, the share predicted as it. "
                                                 "F1: their harmonic mean. Support: the class's test examples."));
  baseline_->setObjectName(QStringLiteral("classBaseline"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(title_);
  layout->addWidget(table_, 1);
  layout->addWidget(baseline_);
}

void ClassReportView::setReport(const session::ClassificationReport& report, const std::vector<QString>& classNames,
                                const QString& baselineSplit) {
  const train::ClassReport& m = report.model;
  title_->setText(tr("Test set, per class (%L1 examples)").arg(m.macro.support));
  table_->clearContents();
  table_->setRowCount(int(m.classes.size()) + 2);
  int width = 0;
  const QFontMetrics metrics(table_->font());
  for (size_t k = 0; k < m.classes.size(); ++k) {
    setRow(table_, int(k), className(classNames, k), m.classes[k], false);
    width = std::max(width, metrics.horizontalAdvance(className(classNames, k)));
  }
  setRow(table_, int(m.classes.size()), tr("macro avg"), m.macro, true);
  setRow(table_, int(m.classes.size()) + 1, tr("weighted avg"), m.weighted, true);
  table_->item(int(m.classes.size()), 0)->setToolTip(tr("Every class counts alike"));
  table_->item(int(m.classes.size()) + 1, 0)->setToolTip(tr("Each class counts by its support"));
  width = std::max(width, metrics.horizontalAdvance(tr("weighted avg")) + 8);  // bold
  table_->setColumnWidth(0, std::min(width + 16, 220));

  const QString always = className(classNames, size_t(report.baseline_class));
  baseline_->setRows({{tr("Accuracy"), m.accuracy, report.baseline.accuracy, true, {}},
                      {tr("Macro F1"), m.macro.f1, report.baseline.macro.f1, false, {}},
                      {tr("Weighted F1"), m.weighted.f1, report.baseline.weighted.f1, false, {}}},
                     tr("Always '%1'").arg(always),
                     tr("Predicts '%1', the %2 split's most frequent class, for every example").arg(always, baselineSplit));
}

void ClassReportView::clear() {
  title_->clear();
  table_->clearContents();
  table_->setRowCount(0);
  baseline_->setRows({}, tr("Baseline"), {});
}

int ClassReportView::rows() const { return table_->rowCount(); }

QString ClassReportView::text(int row, int column) const {
  const QTableWidgetItem* i = table_->item(row, column);
  return i ? i->text() : QString();
}

}  // namespace plexus::widgets
