#include "dashboard/confusion_matrix.h"

#include <QHelpEvent>
#include <QLinearGradient>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "common/qt_text.h"
#include "common/theme.h"

namespace plexus::widgets {
namespace {

constexpr int kMatrixMargin = 10;
constexpr int kMaxCell = 64;
constexpr int kMaxRowLabel = 120;

QColor mix(const QColor& a, const QColor& b, double t) {
  t = std::clamp(t, 0.0, 1.0);
  return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * t), float(a.greenF() + (b.greenF() - a.greenF()) * t),
                          float(a.blueF() + (b.blueF() - a.blueF()) * t));
}

// Perceived brightness in [0, 1], to pick readable text on a shaded cell.
double luminance(const QColor& c) { return 0.299 * c.redF() + 0.587 * c.greenF() + 0.114 * c.blueF(); }


}  // namespace

struct ConfusionMatrixView::Layout {
  QFont small;
  QRect header, grid, legend;
  int cell = 0;
  int rowLabelWidth = 0, titleWidth = 0, accuracyWidth = 0, columnLabelHeight = 0, titleHeight = 0;
  bool columnNames = true;  // class names fit above the columns; otherwise indices, and rows show both
  bool counts = false;      // every count fits in its cell
  int labelStep = 1;        // with tiny cells only every labelStep-th class is labelled

  QString rowLabel(const ConfusionMatrixView& view, int cls) const {
    return columnNames ? view.name(cls) : QStringLiteral("%1  %2").arg(cls).arg(view.name(cls));
  }
};

ConfusionMatrixView::ConfusionMatrixView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, qOverload<>(&QWidget::update));
}

void ConfusionMatrixView::setMatrix(const std::vector<int64_t>& rowMajor, int classes,
                                    const std::vector<QString>& classNames) {
  const bool valid = classes > 0 && rowMajor.size() == size_t(classes) * size_t(classes);
  classes_ = valid ? classes : 0;
  counts_ = valid ? rowMajor : std::vector<int64_t>();
  names_ = classNames;
  row_totals_.assign(size_t(classes_), 0);
  total_ = correct_ = 0;
  for (int t = 0; t < classes_; ++t)
    for (int p = 0; p < classes_; ++p) {
      row_totals_[size_t(t)] += count(t, p);
      total_ += count(t, p);
      if (t == p) correct_ += count(t, p);
    }
  hovered_ = pressed_ = {-1, -1};
  update();
}

void ConfusionMatrixView::clear() { setMatrix({}, 0, {}); }

int64_t ConfusionMatrixView::count(int t, int p) const {
  if (t < 0 || p < 0 || t >= classes_ || p >= classes_) return 0;
  return counts_[size_t(t) * size_t(classes_) + size_t(p)];
}

int64_t ConfusionMatrixView::rowTotal(int t) const { return t >= 0 && t < classes_ ? row_totals_[size_t(t)] : 0; }

double ConfusionMatrixView::accuracy() const { return total_ > 0 ? double(correct_) / double(total_) : 0.0; }

double ConfusionMatrixView::classAccuracy(int t) const {
  return rowTotal(t) > 0 ? double(count(t, t)) / double(rowTotal(t)) : 0.0;
}

QString ConfusionMatrixView::name(int cls) const {
  return cls >= 0 && cls < int(names_.size()) && !names_[size_t(cls)].isEmpty() ? names_[size_t(cls)]
                                                                                : QString::number(cls);
}

QString ConfusionMatrixView::cellToolTip(int t, int p) const {
  if (t < 0 || p < 0 || t >= classes_ || p >= classes_) return {};
  const int64_t n = count(t, p);
  const double share = rowTotal(t) > 0 ? double(n) / double(rowTotal(t)) : 0.0;
  return tr("true %1, predicted %2: %3 %4 (%5 of %1s)")
      .arg(name(t), name(p), QLocale().toString(qlonglong(n)), n == 1 ? tr("sample") : tr("samples"), percentText(share));
}

ConfusionMatrixView::Layout ConfusionMatrixView::layout() const {
  Layout l;
  l.small = smallerFont(font());
  const QFontMetrics fm(font()), fs(l.small);
  const int n = std::max(classes_, 1);
  l.header = QRect(kMatrixMargin, kMatrixMargin, width() - 2 * kMatrixMargin, fm.height());
  l.titleHeight = fs.height();
  l.columnLabelHeight = fs.height() + 4;
  l.titleWidth = fs.height() + 6;
  l.accuracyWidth = std::max(fs.horizontalAdvance(QStringLiteral("100.0%")), fs.horizontalAdvance(tr("Accuracy"))) + 14;
  const int top = l.header.bottom() + 10 + l.titleHeight + l.columnLabelHeight;
  const int legend_height = fs.height() + 12;

  // The row labels' width decides the cells' size, which decides whether names fit above the
  // columns, which changes the row labels: settle it in two rounds.
  for (int round = 0; round < 2; ++round) {
    int widest = 0;
    for (int c = 0; c < classes_; ++c) widest = std::max(widest, fs.horizontalAdvance(l.rowLabel(*this, c)));
    l.rowLabelWidth = std::min(widest, kMaxRowLabel) + 10;
    const int free_width = width() - 2 * kMatrixMargin - l.titleWidth - l.rowLabelWidth - l.accuracyWidth;
    const int free_height = height() - top - legend_height - kMatrixMargin;
    l.cell = std::clamp(std::min(free_width, free_height) / n, 0, kMaxCell);
    int widest_name = 0;
    for (int c = 0; c < classes_; ++c) widest_name = std::max(widest_name, fs.horizontalAdvance(name(c)));
    const bool names_fit = widest_name + 6 <= l.cell;
    if (names_fit == l.columnNames) break;
    l.columnNames = names_fit;
  }

  const int block = l.titleWidth + l.rowLabelWidth + l.cell * n + l.accuracyWidth;
  const int left = std::max(kMatrixMargin, (width() - block) / 2);
  l.header.setLeft(left);
  l.grid = QRect(left + l.titleWidth + l.rowLabelWidth, top, l.cell * n, l.cell * n);
  l.legend = QRect(l.grid.left(), l.grid.bottom() + 10, width() - l.grid.left() - kMatrixMargin, fs.height());
  l.labelStep = std::max(1, int(std::ceil(double(fs.height()) / std::max(l.cell, 1))));
  const int64_t largest = counts_.empty() ? 0 : *std::max_element(counts_.begin(), counts_.end());
  l.counts = l.cell >= fs.height() + 2 && fs.horizontalAdvance(QString::number(largest)) + 6 <= l.cell;
  return l;
}

QRect ConfusionMatrixView::cellRect(int t, int p) const {
  if (t < 0 || p < 0 || t >= classes_ || p >= classes_) return {};
  const Layout l = layout();
  return QRect(l.grid.left() + p * l.cell, l.grid.top() + t * l.cell, l.cell, l.cell);
}

std::pair<int, int> ConfusionMatrixView::cellAt(const QPoint& pos) const {
  const Layout l = layout();
  if (classes_ == 0 || l.cell == 0 || !l.grid.contains(pos)) return {-1, -1};
  return {(pos.y() - l.grid.top()) / l.cell, (pos.x() - l.grid.left()) / l.cell};
}

bool ConfusionMatrixView::countsShown() const { return classes_ > 0 && layout().counts; }

QSize ConfusionMatrixView::sizeHint() const { return {520, 460}; }

QSize ConfusionMatrixView::minimumSizeHint() const { return {180, 160}; }

QColor ConfusionMatrixView::cellColour(int t, int p) const {
  const Theme& theme = ThemeManager::instance().theme();
  const QColor base = palette().color(QPalette::Base);
  const double share = rowTotal(t) > 0 ? double(count(t, p)) / double(rowTotal(t)) : 0.0;
  if (count(t, p) == 0) return base;
  // Mistakes are usually a few percent of a row: a power below one keeps them visible.
  return t == p ? mix(base, theme.selection, 0.12 + 0.88 * share) : mix(base, theme.error, 0.2 + 0.8 * std::pow(share, 0.4));
}

void ConfusionMatrixView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  const Layout l = layout();
  if (classes_ == 0 || l.cell == 0) {
    painter.setPen(ThemeManager::instance().theme().mutedText);
    painter.drawText(rect(), Qt::AlignCenter, tr("No evaluation yet: the confusion matrix appears after an epoch."));
    return;
  }
  paintHeader(painter, l);
  paintAxes(painter, l);
  paintCells(painter, l);
  paintRowAccuracy(painter, l);
  paintLegend(painter, l);
}

// "Accuracy 97.8%  ·  10,000 samples"
void ConfusionMatrixView::paintHeader(QPainter& painter, const Layout& l) const {
  const Theme& theme = ThemeManager::instance().theme();
  QFont bold = font();
  bold.setBold(true);
  const QString title = tr("Accuracy %1").arg(percentText(accuracy()));
  painter.setFont(bold);
  painter.setPen(theme.text);
  painter.drawText(l.header, Qt::AlignLeft | Qt::AlignVCenter, title);
  painter.setFont(font());
  painter.setPen(theme.mutedText);
  const int after = l.header.left() + QFontMetrics(bold).horizontalAdvance(title);
  painter.drawText(QRect(after, l.header.top(), l.header.right() - after, l.header.height()), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("  \u00b7  %1 samples").arg(QLocale().toString(qlonglong(total_))));
}

void ConfusionMatrixView::paintAxes(QPainter& painter, const Layout& l) const {
  const Theme& theme = ThemeManager::instance().theme();
  painter.setFont(l.small);
  const QFontMetrics fs(l.small);
  const int column_top = l.grid.top() - l.columnLabelHeight;

  painter.setPen(theme.mutedText);
  painter.drawText(QRect(l.grid.left(), column_top - l.titleHeight, l.grid.width(), l.titleHeight), Qt::AlignCenter,
                   tr("Predicted class"));
  painter.drawText(QRect(l.grid.right() + 1, column_top, l.accuracyWidth, l.columnLabelHeight),
                   Qt::AlignRight | Qt::AlignVCenter, tr("Accuracy"));
  painter.save();  // the rows' title reads bottom to top, beside the row labels
  painter.translate(l.grid.left() - l.rowLabelWidth - l.titleWidth / 2.0, l.grid.center().y());
  painter.rotate(-90);
  painter.drawText(QRectF(-l.grid.height() / 2.0, -fs.height() / 2.0, l.grid.height(), fs.height()), Qt::AlignCenter,
                   tr("True class"));
  painter.restore();

  for (int c = 0; c < classes_; c += l.labelStep) {
    const bool lit = hovered_.first == c || hovered_.second == c;
    const QRect row(l.grid.left() - l.rowLabelWidth, l.grid.top() + c * l.cell, l.rowLabelWidth - 8, l.cell);
    painter.setPen(hovered_.first == c ? theme.text : theme.mutedText);
    painter.drawText(row, Qt::AlignRight | Qt::AlignVCenter, fs.elidedText(l.rowLabel(*this, c), Qt::ElideRight, row.width()));
    const QRect column(l.grid.left() + c * l.cell, column_top, l.cell * l.labelStep, l.columnLabelHeight);
    painter.setPen(hovered_.second == c ? theme.text : theme.mutedText);
    const QString label = l.columnNames ? name(c) : QString::number(c);
    if (fs.horizontalAdvance(label) <= column.width() + 4 || lit)
      painter.drawText(QRect(column.left(), column.top(), l.cell, column.height()), Qt::AlignCenter | Qt::TextDontClip, label);
  }
}

void ConfusionMatrixView::paintCells(QPainter& painter, const Layout& l) const {
  const Theme& theme = ThemeManager::instance().theme();
  const qreal gap = l.cell >= 8 ? 1.0 : 0.0;
  const qreal radius = l.cell >= 20 ? 3.0 : 0.0;
  painter.setFont(l.small);
  for (int t = 0; t < classes_; ++t)
    for (int p = 0; p < classes_; ++p) {
      const QRectF cell = QRectF(l.grid.left() + p * l.cell, l.grid.top() + t * l.cell, l.cell, l.cell)
                              .adjusted(gap, gap, -gap, -gap);
      const QColor fill = cellColour(t, p);
      painter.setPen(t == p && count(t, p) == 0 ? QPen(theme.selection, 1) : Qt::NoPen);
      painter.setBrush(fill);
      painter.drawRoundedRect(cell, radius, radius);
      if (l.counts && (count(t, p) > 0 || t == p)) {
        painter.setPen(luminance(fill) < 0.55 ? QColor(Qt::white) : theme.text);
        painter.drawText(cell, Qt::AlignCenter, QString::number(count(t, p)));
      }
    }
  if (hovered_.first >= 0) {
    painter.setPen(QPen(theme.text, 2));
    painter.setBrush(Qt::NoBrush);
    painter.drawRoundedRect(QRectF(cellRect(hovered_.first, hovered_.second)).adjusted(1, 1, -1, -1), radius, radius);
  }
}

// Each row's accuracy as a number with a thin bar under it (only the bar when rows are tiny).
void ConfusionMatrixView::paintRowAccuracy(QPainter& painter, const Layout& l) const {
  const Theme& theme = ThemeManager::instance().theme();
  const QFontMetrics fs(l.small);
  const bool text = fs.height() + 4 <= l.cell;
  painter.setFont(l.small);
  for (int t = 0; t < classes_; ++t) {
    const QRectF row(l.grid.right() + 9, l.grid.top() + t * l.cell, l.accuracyWidth - 9, l.cell);
    const qreal bar_height = std::clamp(l.cell / 14.0, 1.0, 2.0);
    const qreal bar_top = text ? row.center().y() + fs.height() / 2.0 + 1 : row.center().y() - bar_height / 2;
    painter.setPen(Qt::NoPen);
    painter.setBrush(theme.gridMajor);
    painter.drawRoundedRect(QRectF(row.left(), bar_top, row.width(), bar_height), 1, 1);
    painter.setBrush(theme.selection);
    painter.drawRoundedRect(QRectF(row.left(), bar_top, row.width() * classAccuracy(t), bar_height), 1, 1);
    if (text) {
      painter.setPen(rowTotal(t) > 0 ? theme.text : theme.mutedText);
      painter.drawText(QRectF(row.left(), bar_top - fs.height() - 2, row.width(), fs.height()),
                       Qt::AlignRight | Qt::AlignVCenter,
                       rowTotal(t) > 0 ? percentText(classAccuracy(t)) : QStringLiteral("\u2013"));
    }
  }
}

// What the shades mean: two small ramps, from none to all of the true class.
void ConfusionMatrixView::paintLegend(QPainter& painter, const Layout& l) const {
  const Theme& theme = ThemeManager::instance().theme();
  const QFontMetrics fs(l.small);
  const QColor base = palette().color(QPalette::Base);
  painter.setFont(l.small);
  int x = l.legend.left();
  const int ramp = 36;
  auto entry = [&](const QColor& colour, const QString& text) {
    QLinearGradient gradient(x, 0, x + ramp, 0);
    gradient.setColorAt(0, mix(base, colour, 0.12));
    gradient.setColorAt(1, colour);
    painter.setPen(Qt::NoPen);
    painter.setBrush(gradient);
    painter.drawRoundedRect(QRectF(x, l.legend.center().y() - 4, ramp, 8), 2, 2);
    x += ramp + 6;
    painter.setPen(theme.mutedText);
    painter.drawText(QRect(x, l.legend.top(), fs.horizontalAdvance(text) + 1, l.legend.height()), Qt::AlignVCenter, text);
    x += fs.horizontalAdvance(text) + 16;
  };
  entry(theme.selection, tr("correct"));
  entry(theme.error, tr("mistaken"));
  const QString note = tr("shade: share of the true class");
  if (x + fs.horizontalAdvance(note) <= width() - kMatrixMargin)
    painter.drawText(QRect(x, l.legend.top(), width() - kMatrixMargin - x, l.legend.height()), Qt::AlignVCenter, note);
}

void ConfusionMatrixView::mouseMoveEvent(QMouseEvent* event) {
  const auto over = cellAt(event->position().toPoint());
  if (over != hovered_) {
    hovered_ = over;
    setCursor(over.first >= 0 ? Qt::PointingHandCursor : Qt::ArrowCursor);
    update();
  }
}

void ConfusionMatrixView::mousePressEvent(QMouseEvent* event) {
  pressed_ = event->button() == Qt::LeftButton ? cellAt(event->position().toPoint()) : std::pair{-1, -1};
}

// A click is a press and a release on the same cell.
void ConfusionMatrixView::mouseReleaseEvent(QMouseEvent* event) {
  const auto cell = cellAt(event->position().toPoint());
  if (event->button() == Qt::LeftButton && cell.first >= 0 && cell == pressed_) emit cellClicked(cell.first, cell.second);
  pressed_ = {-1, -1};
}

void ConfusionMatrixView::leaveEvent(QEvent*) {
  hovered_ = {-1, -1};
  update();
}

bool ConfusionMatrixView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const auto [t, p] = cellAt(help->pos());
    if (t < 0) QToolTip::hideText();
    else QToolTip::showText(help->globalPos(), cellToolTip(t, p), this, cellRect(t, p));
    return true;
  }
  return QWidget::event(event);
}

}  // namespace plexus::widgets
