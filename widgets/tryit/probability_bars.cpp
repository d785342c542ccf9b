#include "tryit/probability_bars.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/theme.h"

namespace plexus::widgets {

namespace {

constexpr int kProbabilityGap = 8;       // between the name, the bar and the percentage
constexpr int kRowSpace = 6;  // between rows

QFont bold(QFont font) {  // the top class's
  font.setBold(true);
  return font;
}

}  // namespace

ProbabilityBars::ProbabilityBars(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("probabilityBars"));
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, qOverload<>(&QWidget::update));
}

void ProbabilityBars::setClassNames(const QStringList& names) {
  names_ = names;
  probabilities_.clear();
  reorder();
  updateGeometry();
  update();
}

void ProbabilityBars::setProbabilities(const std::vector<float>& probabilities) {
  probabilities_ = probabilities;
  if (int(probabilities_.size()) > names_.size())  // unnamed classes are numbered
    for (int c = int(names_.size()); c < int(probabilities_.size()); ++c) names_ << QString::number(c);
  reorder();
  updateGeometry();
  update();
}

int ProbabilityBars::topClass() const {
  if (probabilities_.empty()) return -1;
  return int(std::max_element(probabilities_.begin(), probabilities_.end()) - probabilities_.begin());
}

void ProbabilityBars::reorder() {
  order_.resize(size_t(names_.size()));
  std::iota(order_.begin(), order_.end(), 0);
  if (order_.size() <= size_t(kMaxRows)) return;
  if (!probabilities_.empty())
    std::stable_sort(order_.begin(), order_.end(),
                     [this](int a, int b) { return probabilities_[size_t(a)] > probabilities_[size_t(b)]; });
  order_.resize(kMaxRows);
}

QString ProbabilityBars::nameOf(int cls) const { return cls < names_.size() ? names_[cls] : QString::number(cls); }

int ProbabilityBars::rowHeight() const { return fontMetrics().height() + kRowSpace; }

// Room for the widest name in bold (the top class's, wherever it moves), rounded up: a width
// rounded down elides a name that fits ("fem…" for "female").
int ProbabilityBars::nameWidth() const {
  const QFontMetricsF metrics(bold(font()));
  qreal widest = 0;
  for (const int cls : order_) widest = std::max(widest, metrics.horizontalAdvance(nameOf(cls)));
  return std::min(int(std::ceil(widest)) + 1, width() / 3);
}

int ProbabilityBars::percentWidth() const {
  return QFontMetrics(bold(font())).horizontalAdvance(QStringLiteral("100.0%"));
}

QRect ProbabilityBars::trackRect(int row) const {
  const int left = nameWidth() + kProbabilityGap, right = width() - percentWidth() - kProbabilityGap;
  const int top = row * rowHeight() + kRowSpace / 2;
  return {left, top + 2, std::max(1, right - left), rowHeight() - kRowSpace - 4};
}

// The palette's bevel shade: a step off the window colour in both themes.
QColor ProbabilityBars::trackColour() const { return palette().color(QPalette::Midlight); }

QColor ProbabilityBars::fillColour(bool top) const {
  const Theme& theme = ThemeManager::instance().theme();
  return top ? theme.selection : theme.wire;
}

void ProbabilityBars::mousePressEvent(QMouseEvent* event) {
  const int row = int(event->position().y()) / rowHeight();
  if (event->button() == Qt::LeftButton && row >= 0 && row < rows()) emit classClicked(classAtRow(row));
}

QSize ProbabilityBars::sizeHint() const { return {280, std::max(1, rows()) * rowHeight()}; }

QSize ProbabilityBars::minimumSizeHint() const { return {120, std::max(1, rows()) * rowHeight()}; }

void ProbabilityBars::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  const Theme& theme = ThemeManager::instance().theme();
  const int top_class = topClass();
  for (int row = 0; row < rows(); ++row) {
    const int cls = order_[size_t(row)];
    const bool top = cls == top_class;
    const QRect track = trackRect(row);
    const QRect line(0, row * rowHeight(), width(), rowHeight());
    painter.setFont(top ? bold(font()) : font());
    painter.setPen(top ? theme.text : theme.mutedText);
    const QString name = painter.fontMetrics().elidedText(nameOf(cls), Qt::ElideRight, nameWidth());
    painter.drawText(QRect(0, line.top(), nameWidth(), line.height()), Qt::AlignRight | Qt::AlignVCenter, name);

    painter.setPen(Qt::NoPen);
    painter.setBrush(trackColour());
    painter.drawRoundedRect(track, 3, 3);
    if (probabilities_.empty()) continue;
    const float p = std::clamp(probabilities_[size_t(cls)], 0.f, 1.f);
    painter.setBrush(fillColour(top));
    painter.drawRoundedRect(QRectF(track.left(), track.top(), double(track.width()) * p, track.height()), 3, 3);
    painter.setPen(top ? theme.text : theme.mutedText);
    painter.drawText(QRect(track.right() + kProbabilityGap, line.top(), percentWidth(), line.height()),
                     Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("%1%").arg(100.0 * p, 0, 'f', 1));
  }
}

}  // namespace plexus::widgets
