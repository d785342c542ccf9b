#include "dataset/dataset_histogram.h"

#include <QHelpEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/qt_text.h"
#include "common/theme.h"
#include "dataset/dataset_class_colours.h"

namespace plexus::widgets {
namespace {

constexpr int kBarGap = 3;
constexpr int kMaxColumn = 64;  // a few classes make a compact chart, not a wall of colour
constexpr int kHistogramMargin = 4;

}  // namespace

ClassHistogram::ClassHistogram(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, qOverload<>(&QWidget::update));
}

void ClassHistogram::setCounts(std::vector<int64_t> counts, std::vector<QString> names) {
  counts_ = std::move(counts);
  names_ = std::move(names);
  total_ = std::accumulate(counts_.begin(), counts_.end(), int64_t(0));
  highlighted_ = hovered_ = -1;
  update();
}

void ClassHistogram::setHighlighted(int cls) {
  highlighted_ = cls >= 0 && cls < classes() ? cls : -1;
  update();
}

int64_t ClassHistogram::count(int cls) const { return cls >= 0 && cls < classes() ? counts_[size_t(cls)] : 0; }

QSize ClassHistogram::sizeHint() const { return {320, minimumSizeHint().height()}; }

QSize ClassHistogram::minimumSizeHint() const {
  const QFontMetrics small(smallerFont(font(), 0.8));
  return {60, 2 * small.height() + 44};  // count line, bars, name line
}

QRect ClassHistogram::plotRect() const {
  const int line = QFontMetrics(smallerFont(font(), 0.8)).height();
  return rect().adjusted(kHistogramMargin, kHistogramMargin + line, -kHistogramMargin, -(kHistogramMargin + line));
}

QRect ClassHistogram::barRect(int cls) const {
  if (cls < 0 || cls >= classes()) return {};
  const QRect plot = plotRect();
  const double width = std::min(double(plot.width()) / classes(), double(kMaxColumn));
  const double start = plot.left() + (plot.width() - width * classes()) / 2;  // centred
  const int left = int(start + cls * width);
  const int right = int(start + (cls + 1) * width);
  return QRect(left, rect().top(), right - left, height());
}

bool ClassHistogram::labelsFit() const {
  const QFontMetrics fm(smallerFont(font(), 0.8));
  const int room = classes() > 0 ? barRect(0).width() - kBarGap : 0;
  return std::all_of(names_.begin(), names_.end(), [&](const QString& n) { return fm.horizontalAdvance(n) <= room; });
}

int ClassHistogram::classAt(const QPoint& pos) const {
  for (int c = 0; c < classes(); ++c)
    if (barRect(c).contains(pos)) return c;
  return -1;
}

QString ClassHistogram::toolTipFor(int cls) const {
  if (cls < 0 || cls >= classes()) return {};
  const QString name = cls < int(names_.size()) ? names_[size_t(cls)] : QString::number(cls);
  const double share = total_ > 0 ? 100.0 * double(count(cls)) / double(total_) : 0.0;
  return tr("%1: %2 samples (%3%)").arg(name, QLocale().toString(qlonglong(count(cls)))).arg(share, 0, 'f', 1);
}

void ClassHistogram::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  const Theme& theme = ThemeManager::instance().theme();
  const QRect plot = plotRect();
  if (classes() > 0) {  // the baseline, under the bars only
    painter.setPen(QPen(theme.gridMajor, 1));
    painter.drawLine(barRect(0).left(), plot.bottom() + 1, barRect(classes() - 1).right(), plot.bottom() + 1);
  }
  const int64_t max = counts_.empty() ? 0 : *std::max_element(counts_.begin(), counts_.end());
  for (int c = 0; c < classes(); ++c) paintBar(painter, c, max);
}

void ClassHistogram::paintBar(QPainter& painter, int cls, int64_t max) const {
  const Theme& theme = ThemeManager::instance().theme();
  const QRect plot = plotRect();
  const QRect column = barRect(cls);
  const int height = max > 0 ? int(std::lround(double(plot.height()) * double(count(cls)) / double(max))) : 0;
  const QRectF bar(column.left() + kBarGap / 2.0, plot.bottom() + 1 - height, column.width() - kBarGap, height);

  QColor fill = classColour(cls, theme.dark);
  const bool faded = highlighted_ >= 0 && highlighted_ != cls;
  if (faded) fill.setAlphaF(0.3f);
  if (cls == hovered_) fill = fill.lighter(115);
  painter.setPen(Qt::NoPen);
  painter.setBrush(fill);
  painter.drawRoundedRect(bar, 2, 2);

  const QFont small = smallerFont(font(), 0.8);
  const QFontMetrics fm(small);
  painter.setFont(small);
  const QString number = QLocale().toString(qlonglong(count(cls)));
  painter.setPen(faded ? theme.mutedText : theme.text);
  if (fm.horizontalAdvance(number) <= column.width())
    painter.drawText(QRectF(column.left(), bar.top() - fm.height(), column.width(), fm.height()), Qt::AlignCenter, number);
  if (labelsFit() && cls < int(names_.size())) {
    painter.setPen(cls == highlighted_ ? theme.text : theme.mutedText);
    painter.drawText(QRect(column.left(), plot.bottom() + 2, column.width(), fm.height()), Qt::AlignCenter,
                     names_[size_t(cls)]);
  }
}

void ClassHistogram::mouseMoveEvent(QMouseEvent* event) {
  const int over = classAt(event->position().toPoint());
  if (over != hovered_) {
    hovered_ = over;
    setCursor(over >= 0 ? Qt::PointingHandCursor : Qt::ArrowCursor);
    update();
  }
}

void ClassHistogram::mouseReleaseEvent(QMouseEvent* event) {
  const int cls = classAt(event->position().toPoint());
  if (event->button() == Qt::LeftButton && cls >= 0) emit classClicked(cls);
}

void ClassHistogram::leaveEvent(QEvent*) {
  hovered_ = -1;
  update();
}

bool ClassHistogram::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString tip = toolTipFor(classAt(help->pos()));
    if (tip.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(help->globalPos(), tip, this, barRect(classAt(help->pos())));
    return true;
  }
  return QWidget::event(event);
}

}  // namespace plexus::widgets
