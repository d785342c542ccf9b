#include "dashboard/top_confusions.h"

#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "train/readable_figures.h"

namespace plexus::widgets {
namespace {
enum Column { TrueColumn, PredictedColumn, CountColumn, ShareColumn };
}  // namespace

TopConfusionsView::TopConfusionsView(QWidget* parent) : QWidget(parent) {
  title_ = new QLabel(this);
  title_->setObjectName(QStringLiteral("topConfusionsTitle"));
  QFont bold = title_->font();
  bold.setBold(true);
  title_->setFont(bold);
  list_ = new QTreeWidget(this);
  list_->setObjectName(QStringLiteral("topConfusions"));
  list_->setColumnCount(4);
  list_->setHeaderLabels({tr("True"), tr("Predicted"), tr("Count"), tr("Share of true")});
  list_->headerItem()->setToolTip(ShareColumn, tr("The share of the true class's examples predicted as this"));
  list_->setRootIsDecorated(false);
  list_->setUniformRowHeights(true);
  list_->setAllColumnsShowFocus(true);
  list_->header()->setStretchLastSection(false);
  for (int c : {CountColumn, ShareColumn}) list_->headerItem()->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(title_);
  layout->addWidget(list_, 1);
  connect(list_, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) {
    emit cellClicked(item->data(TrueColumn, Qt::UserRole).toInt(), item->data(PredictedColumn, Qt::UserRole).toInt());
  });
  clear();
}

QString TopConfusionsView::readable(const QString& name) {
  if (name == QLatin1String(" ")) return QStringLiteral("␣");
  QString out;
  for (QChar c : name) {
    if (c == QLatin1Char('\n')) out += QStringLiteral("↵");
    else if (c == QLatin1Char('\t')) out += QStringLiteral("⇥");
    else if (c.unicode() < 0x20) out += QChar(0x2400 + c.unicode());  // the Control Pictures block
    else out += c;
  }
  return out;
}

void TopConfusionsView::setMatrix(const std::vector<int64_t>& rowMajor, int classes, const std::vector<QString>& classNames) {
  list_->clear();
  if (classes <= 0 || rowMajor.size() != size_t(classes) * size_t(classes)) return clear();
  const train::ConfusionMatrix matrix(classes, rowMajor);
  const auto name = [&](int64_t c) {
    return c < int64_t(classNames.size()) ? readable(classNames[size_t(c)]) : QString::number(c);
  };
  const auto rowTotal = [&](int64_t truth) {
    int64_t n = 0;
    for (int64_t j = 0; j < classes; ++j) n += matrix.count(truth, j);
    return n;
  };
  const std::vector<train::Confusion> top = train::top_confusions(matrix, kShown);
  for (const train::Confusion& c : top) {
    auto* item = new QTreeWidgetItem(list_);
    item->setText(TrueColumn, name(c.truth));
    item->setText(PredictedColumn, name(c.predicted));
    item->setText(CountColumn, QStringLiteral("%L1").arg(c.count));
    item->setText(ShareColumn, QString::number(100 * c.share, 'f', 1) + QStringLiteral(" %"));
    item->setData(TrueColumn, Qt::UserRole, int(c.truth));
    item->setData(PredictedColumn, Qt::UserRole, int(c.predicted));
    for (int col : {CountColumn, ShareColumn}) item->setTextAlignment(col, Qt::AlignRight | Qt::AlignVCenter);
    item->setToolTip(TrueColumn, tr("%L1 of %L2 examples of “%3” were predicted as “%4”")
                                     .arg(c.count)
                                     .arg(rowTotal(c.truth))
                                     .arg(name(c.truth), name(c.predicted)));
  }
  for (int col = 0; col < list_->columnCount(); ++col) list_->resizeColumnToContents(col);
  const int64_t total = matrix.total();
  title_->setText(top.empty() ? tr("No mistakes among %L1 examples").arg(total)
                              : tr("Top confusions of %1 classes (%L2 examples, %3 % right)")
                                    .arg(classes)
                                    .arg(total)
                                    .arg(100 * matrix.accuracy(), 0, 'f', 1));
}

void TopConfusionsView::clear() {
  list_->clear();
  title_->setText(tr("Top confusions appear after the first evaluation"));
}

int TopConfusionsView::rows() const { return list_->topLevelItemCount(); }

QStringList TopConfusionsView::rowText(int row) const {
  QStringList out;
  if (const QTreeWidgetItem* item = list_->topLevelItem(row))
    for (int col = 0; col < list_->columnCount(); ++col) out << item->text(col);
  return out;
}

QString TopConfusionsView::title() const { return title_->text(); }

}  // namespace plexus::widgets
