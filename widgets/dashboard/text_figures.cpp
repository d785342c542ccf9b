#include "dashboard/text_figures.h"

#include <QGridLayout>
#include <QLabel>

#include "common/panel_style.h"
#include "common/qt_text.h"
#include "common/theme.h"
#include "train/readable_figures.h"

namespace plexus::widgets {

TextFigures::TextFigures(QWidget* parent) : QWidget(parent) {
  title_ = new QLabel(this);
  title_->setObjectName(QStringLiteral("textFiguresTitle"));
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(6, 2, 6, 2);
  grid->setHorizontalSpacing(18);
  grid->setVerticalSpacing(0);
  grid->addWidget(title_, 0, 0);
  const QStringList heads{tr("loss (nats)"), tr("bits/char"), tr("perplexity"), tr("next-char accuracy")};
  const QStringList tips{tr("Mean cross-entropy per character, natural log"),
                         tr("The same in bits: what a character costs to encode with the model's odds"),
                         tr("e to the loss: the model is as unsure as a choice among this many equally likely characters"),
                         tr("How often the most likely next character is the right one")};
  for (int c = 0; c < 4; ++c) {
    QLabel* head = heads_[c] = new QLabel(heads[c], this);
    head->setToolTip(tips[c]);
    head->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    grid->addWidget(head, 0, c + 1);
  }
  const QStringList rows{tr("Training"), tr("Validation")};
  QFont large = font();
  large.setPointSizeF(large.pointSizeF() * 1.5);
  large.setBold(true);
  for (int r = 0; r < 2; ++r) {
    const int gridRow = 1 + 2 * r;  // the split's total, its loss nodes below
    grid->addWidget(new QLabel(rows[r], this), gridRow, 0);
    QLabel* nodes = lossNodes_[r] = new QLabel(this);
    nodes->setObjectName(QStringLiteral("textLossNodes%1").arg(r));
    nodes->setTextInteractionFlags(Qt::TextSelectableByMouse);
    nodes->hide();
    grid->addWidget(nodes, gridRow + 1, 1, 1, 4);
    for (int c = 0; c < 4; ++c) {
      QLabel* cell = cells_[r][c] = new QLabel(this);
      cell->setObjectName(QStringLiteral("textFigure%1%2").arg(r).arg(c));
      cell->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
      cell->setTextInteractionFlags(Qt::TextSelectableByMouse);
      // What a character model is judged by stands out; accuracy is there for reference.
      if (r == Validation && c != Accuracy) cell->setFont(large);
      grid->addWidget(cell, gridRow, c + 1);
    }
  }
  grid->setColumnStretch(5, 1);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &TextFigures::applyTheme);
  applyTheme();
  clear();
}

void TextFigures::applyTheme() {
  for (QLabel* label : heads_) setColour(label, QPalette::WindowText, ThemeManager::instance().theme().mutedText);
  for (QLabel* label : lossNodes_) setColour(label, QPalette::WindowText, ThemeManager::instance().theme().mutedText);
}

void TextFigures::setLossNames(const train::NodeInfos& names) { lossNames_ = names; }

void TextFigures::clear() {
  title_->setText(tr("Loss per character"));
  for (auto& row : cells_)
    for (QLabel* cell : row) cell->clear();
  for (Row row : {Training, Validation}) setLossNodes(row, {});
}

void TextFigures::setLossNodes(Row row, const std::vector<train::LossPart>& parts) {
  QStringList nodes;
  for (const train::LossPart& part : parts)
    nodes << QStringLiteral("%1 %2").arg(qstr(train::node_label(lossNames_, part.node)), QString::number(part.value, 'f', 3));
  lossNodes_[row]->setText(nodes.join(QStringLiteral(" · ")));
  lossNodes_[row]->setVisible(!nodes.isEmpty());
}

void TextFigures::setRow(Row row, double loss, double accuracy, const std::vector<train::LossPart>& parts) {
  setLossNodes(row, parts);
  QLabel** cells = cells_[row];
  cells[Nats]->setText(QString::number(loss, 'f', 3));
  cells[BitsPerChar]->setText(QString::number(train::nats_to_bits(loss), 'f', 3));
  cells[Perplexity]->setText(QString::number(train::perplexity(loss), 'f', 2));
  cells[Accuracy]->setText(QString::number(100 * accuracy, 'f', 1) + QStringLiteral(" %"));
}

void TextFigures::setEpoch(const train::EpochEnd& e) {
  title_->setText(tr("Epoch %1").arg(e.epoch));
  setRow(Training, e.train_loss, e.train_accuracy, e.train_losses);
  if (e.has_eval) {
    setRow(Validation, e.eval_loss, e.eval_accuracy, e.eval_losses);
  } else {
    for (QLabel* cell : cells_[Validation]) cell->clear();
    setLossNodes(Validation, {});
  }
}

QString TextFigures::title() const { return title_->text(); }

QString TextFigures::text(Row row, Column column) const { return cells_[row][column]->text(); }

QString TextFigures::lossNodesText(Row row) const { return lossNodes_[row]->text(); }

}  // namespace plexus::widgets
