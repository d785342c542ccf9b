#include "experiment/parallel_coordinates.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "common/plot_style.h"
#include "common/theme.h"

namespace plexus::widgets {

namespace {

// A number as a value of the text kind (a choice) or not.
std::optional<double> number(const QVariant& value) {
  if (!value.isValid() || value.typeId() == QMetaType::QString) return std::nullopt;
  bool ok = false;
  const double v = value.toDouble(&ok);
  return ok && std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

double distanceToSegment(QPointF p, QPointF a, QPointF b) {
  const QPointF ab = b - a;
  const double length2 = QPointF::dotProduct(ab, ab);
  const double t = length2 > 0 ? std::clamp(QPointF::dotProduct(p - a, ab) / length2, 0.0, 1.0) : 0.0;
  const QPointF nearest = a + t * ab;
  return std::hypot(p.x() - nearest.x(), p.y() - nearest.y());
}

}  // namespace

ParallelCoordinates::ParallelCoordinates(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, qOverload<>(&QWidget::update));
  rebuildAxes();
}

void ParallelCoordinates::setParameters(const std::vector<SweptParameter>& parameters) {
  parameters_ = parameters;
  trials_.clear();
  selected_.clear();
  rebuildAxes();
}

void ParallelCoordinates::setTrials(const std::vector<Trial>& trials) {
  trials_ = trials;
  rebuildAxes();
}

void ParallelCoordinates::setMetric(TrialMetric metric) {
  metric_ = metric;
  rebuildAxes();
}

void ParallelCoordinates::setSelectedTrials(const QList<int>& trials) {
  selected_ = trials;
  update();
}

bool ParallelCoordinates::axisIsLog(int axis) const {
  return axis >= 0 && axis < int(axes_.size()) && axes_[size_t(axis)].log;
}

void ParallelCoordinates::rebuildAxes() {
  axes_.clear();
  for (size_t p = 0; p <= parameters_.size(); ++p) {
    const bool metric = p == parameters_.size();
    Axis axis;
    axis.name = metric ? (metric_ == TrialMetric::Loss ? tr("Val loss") : tr("Val accuracy")) : parameters_[p].name;
    std::vector<double> values;
    for (const Trial& trial : trials_) {
      if (metric) {
        if (const auto v = metricOf(trial, metric_)) values.push_back(*v);
        continue;
      }
      if (p >= trial.values.size() || !trial.values[p].isValid()) continue;
      if (const auto v = number(trial.values[p]))
        values.push_back(*v);
      else if (!axis.categories.contains(trial.values[p].toString()))
        axis.categories << trial.values[p].toString();
    }
    if (!axis.categories.isEmpty()) {
      axis.categories.sort();
      axes_.push_back(axis);
      continue;
    }
    if (!values.empty()) {
      const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
      axis.min = *lo;
      axis.max = *hi;
    }
    axis.log = !metric && parameters_[p].log && axis.min > 0;
    if (axis.max <= axis.min) {  // one value: in the middle of a range around it
      if (axis.log) {
        axis.min /= 2;
        axis.max *= 2;
      } else {
        axis.min -= 0.5;
        axis.max += 0.5;
      }
    }
    axes_.push_back(axis);
  }
  best_ = widgets::bestTrial(trials_, metric_);
  update();
}

std::optional<double> ParallelCoordinates::position(const Axis& axis, const QVariant& value) const {
  if (!axis.categories.isEmpty()) {
    const qsizetype at = axis.categories.indexOf(value.toString());
    if (at < 0) return std::nullopt;
    return axis.categories.size() == 1 ? 0.5 : double(at) / double(axis.categories.size() - 1);
  }
  const std::optional<double> v = number(value);
  if (!v) return std::nullopt;
  if (axis.log) {
    if (*v <= 0) return std::nullopt;
    return (std::log(*v) - std::log(axis.min)) / (std::log(axis.max) - std::log(axis.min));
  }
  return (*v - axis.min) / (axis.max - axis.min);
}

std::optional<double> ParallelCoordinates::axisValue(const Trial& trial, int axis) const {
  if (axis == int(parameters_.size())) {
    const std::optional<double> v = metricOf(trial, metric_);
    return v ? position(axes_[size_t(axis)], *v) : std::nullopt;
  }
  if (size_t(axis) >= trial.values.size()) return std::nullopt;
  return position(axes_[size_t(axis)], trial.values[size_t(axis)]);
}

QRectF ParallelCoordinates::plotRect() const {
  const QFontMetrics fm(font());
  // Room for each axis's name and top value above it, its bottom value below, and half the
  // widest name at each side.
  double side = 24;
  for (const Axis& axis : axes_) side = std::max(side, fm.horizontalAdvance(axis.name) / 2.0 + 6);
  const double top = 2 * fm.height() + 8, bottom = fm.height() + 8;
  return QRectF(side, top, std::max(1.0, width() - 2 * side), std::max(1.0, height() - top - bottom));
}

double ParallelCoordinates::axisX(int axis) const {
  const QRectF r = plotRect();
  if (axes_.size() < 2) return r.center().x();
  return r.left() + r.width() * axis / double(axes_.size() - 1);
}

std::vector<std::optional<QPointF>> ParallelCoordinates::points(const Trial& trial) const {
  const QRectF r = plotRect();
  std::vector<std::optional<QPointF>> out;
  for (int axis = 0; axis < int(axes_.size()); ++axis) {
    const std::optional<double> at = axisValue(trial, axis);
    out.push_back(at ? std::optional<QPointF>(QPointF(axisX(axis), r.bottom() - *at * r.height())) : std::nullopt);
  }
  return out;
}

std::optional<QPointF> ParallelCoordinates::linePoint(int trial, int axis) const {
  for (const Trial& t : trials_)
    if (t.index == trial && axis >= 0 && axis < int(axes_.size())) return points(t)[size_t(axis)];
  return std::nullopt;
}

int ParallelCoordinates::trialAt(QPointF pixel) const {
  int nearest = -1;
  double nearest_distance = kHitDistance;
  for (const Trial& trial : trials_) {
    const auto line = points(trial);
    for (size_t i = 0; i + 1 < line.size(); ++i) {
      if (!line[i] || !line[i + 1]) continue;
      const double d = distanceToSegment(pixel, *line[i], *line[i + 1]);
      if (d <= nearest_distance) {
        nearest_distance = d;
        nearest = trial.index;
      }
    }
  }
  return nearest;
}

QColor ParallelCoordinates::lineColour(const Trial& trial) const {
  const Theme& theme = ThemeManager::instance().theme();
  const std::optional<double> v = metricOf(trial, metric_);
  if (!v) return theme.mutedText;
  const Axis& axis = axes_.back();
  double good = (*v - axis.min) / (axis.max - axis.min);  // 0 = lowest, 1 = highest
  if (metric_ == TrialMetric::Loss) good = 1 - good;
  // From orange (the worst) through green to blue (the best), lighter on a dark background.
  const double hue = (30 + std::clamp(good, 0.0, 1.0) * 190) / 360;
  return QColor::fromHsvF(float(hue), 0.8f, theme.dark ? 0.95f : 0.8f);
}

QString ParallelCoordinates::tickText(const Axis& axis, double at) const {
  const double v = axis.log ? std::exp(std::log(axis.min) + at * (std::log(axis.max) - std::log(axis.min)))
                            : axis.min + at * (axis.max - axis.min);
  return QString::number(v, 'g', 3);
}

void ParallelCoordinates::paintEvent(QPaintEvent*) {
  const Theme& theme = ThemeManager::instance().theme();
  const PlotColours c = plotColours(theme);
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), c.background);
  const QRectF r = plotRect();
  const QFontMetrics fm(font());

  // The lines: without the metric first, then worst to best, the selected and the best on top.
  std::vector<const Trial*> order;
  for (const Trial& trial : trials_) order.push_back(&trial);
  const auto rank = [this](const Trial* t) {
    if (t->index == best_) return 3;
    if (selected_.contains(t->index)) return 2;
    return metricOf(*t, metric_) ? 1 : 0;
  };
  std::stable_sort(order.begin(), order.end(), [&](const Trial* a, const Trial* b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    const auto va = metricOf(*a, metric_), vb = metricOf(*b, metric_);
    return va && vb && better(metric_, *vb, *va);
  });
  for (const Trial* trial : order) {
    const bool selected = selected_.contains(trial->index), best = trial->index == best_;
    QColor colour = lineColour(*trial);
    double width = metricOf(*trial, metric_) ? 1.5 : 1;
    if (!selected_.isEmpty() && !selected) colour.setAlphaF(0.25f);
    if (selected) width = 2.5;
    if (best) width = 3.5;
    QPainterPath path;
    bool open = false;
    for (const std::optional<QPointF>& point : points(*trial)) {
      if (!point) {
        open = false;
        continue;
      }
      if (open)
        path.lineTo(*point);
      else
        path.moveTo(*point);
      open = true;
    }
    p.setPen(QPen(colour, width, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
    p.setBrush(Qt::NoBrush);
    p.drawPath(path);
    if (best)
      if (const auto end = points(*trial).back()) {
        p.setBrush(colour);
        p.drawEllipse(*end, 5, 5);
      }
  }

  // The axes over the lines: names above, their ranges' ends at either end.
  for (int i = 0; i < int(axes_.size()); ++i) {
    const Axis& axis = axes_[size_t(i)];
    const double x = axisX(i);
    p.setPen(QPen(c.axis, 1.5));
    p.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom()));
    const auto centred = [&](double y, const QString& text, const QColor& colour) {
      p.setPen(colour);
      const double w = fm.horizontalAdvance(text);
      p.drawText(QPointF(x - w / 2, y), text);
    };
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    // Names elided to the room between axes, so that neighbours never overlap (hover tells all).
    const QString name = axis.log ? axis.name + tr(" (log)") : axis.name;
    const double room = axes_.size() < 2 ? r.width() : r.width() / double(axes_.size() - 1) - 8;
    p.setPen(c.text);
    p.drawText(QRectF(x - room / 2, 2, room, fm.height()), Qt::AlignHCenter | Qt::AlignTop,
               QFontMetrics(bold).elidedText(name, Qt::ElideMiddle, int(room)));
    p.setFont(font());
    if (!axis.categories.isEmpty()) {
      for (const QString& category : axis.categories) {
        const double y = r.bottom() - *position(axis, category) * r.height();
        p.setPen(c.muted);
        p.drawText(QPointF(x + 4, y + fm.ascent() / 2.0), category);
      }
      continue;
    }
    if (axis.name.isEmpty() || trials_.empty()) continue;
    centred(r.top() - 4, tickText(axis, 1), c.muted);
    centred(r.bottom() + fm.ascent() + 4, tickText(axis, 0), c.muted);
  }
  if (trials_.empty()) {
    p.setPen(c.muted);
    p.drawText(r, Qt::AlignCenter, tr("No trials yet"));
  }
}

void ParallelCoordinates::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  const int trial = trialAt(event->position());
  QList<int> selection = selected_;
  if (event->modifiers() & Qt::ControlModifier) {
    if (trial < 0) return;
    if (!selection.removeOne(trial)) selection << trial;
  } else {
    selection = trial < 0 ? QList<int>() : QList<int>{trial};
  }
  if (selection == selected_) return;
  setSelectedTrials(selection);
  emit selectionChanged(selected_);
}

bool ParallelCoordinates::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  const auto* help = static_cast<QHelpEvent*>(event);
  const int index = trialAt(help->pos());
  const auto trial = std::find_if(trials_.begin(), trials_.end(), [index](const Trial& t) { return t.index == index; });
  if (trial == trials_.end()) {
    QToolTip::hideText();
    event->ignore();
    return true;
  }
  QStringList lines{tr("Trial %1 (%2)").arg(trial->index).arg(trial->status)};
  for (size_t p = 0; p < parameters_.size() && p < trial->values.size(); ++p)
    lines << QStringLiteral("%1 = %2").arg(parameters_[p].name, trial->values[p].toString());
  if (const auto v = metricOf(*trial, metric_))
    lines << QStringLiteral("%1 = %2").arg(axes_.back().name).arg(*v, 0, 'g', 4);
  QToolTip::showText(help->globalPos(), lines.join(QLatin1Char('\n')), this);
  return true;
}

}  // namespace plexus::widgets
