#include "editor/node_stats_panel.h"

#include <QLabel>
#include <QScrollArea>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "common/plot_style.h"
#include "common/qt_text.h"
#include "common/theme.h"
#include "editor/node_stats_model.h"

namespace plexus::widgets {
namespace {

constexpr int kPlotHeight = 150;
constexpr int kColumns = 200;  // the heat map's resolution over the steps, at most
constexpr int kRows = 40;      // and over the values
constexpr double kHealthyRatio = 1e-3;
// The heat map's colours are on a log scale down to this share: tails show beside a spike.
constexpr double kFaintest = 1e-3;

QFont plotTitleFont() {
  QFont f = QApplication::font();
  f.setBold(true);
  f.setPointSizeF(f.pointSizeF() * 0.9);
  return f;
}

bool finite(const NodeSample& s) { return s.finite && std::isfinite(s.mean) && std::isfinite(s.std); }

// The shares of one sample's histogram over [s.min, s.max], spread over `rows` equal rows of
// [lo, hi] by how much of each bin falls in each row; what lies beyond goes to the edge rows.
void spread(const NodeSample& s, double lo, double hi, int rows, std::vector<double>& out) {
  std::fill(out.begin(), out.end(), 0.0);
  const double row = (hi - lo) / rows;
  const auto rowOf = [&](double v) { return std::clamp(int(std::floor((v - lo) / row)), 0, rows - 1); };
  const double bin = (s.max - s.min) / train::kHistogramBins;
  for (int b = 0; b < train::kHistogramBins; ++b) {
    const double share = s.histogram[size_t(b)];
    if (share <= 0) continue;
    const double from = s.min + b * bin, to = from + bin;
    if (bin <= 0) {
      out[size_t(rowOf(from))] += share;
      continue;
    }
    out.front() += share * std::clamp((lo - from) / bin, 0.0, 1.0);
    out.back() += share * std::clamp((to - hi) / bin, 0.0, 1.0);
    const double a = std::max(from, lo), z = std::min(to, hi);
    for (int r = rowOf(a); a < z && r <= rowOf(z); ++r) {
      const double overlap = std::min(z, lo + (r + 1) * row) - std::max(a, lo + r * row);
      if (overlap > 0) out[size_t(r)] += share * overlap / bin;
    }
  }
}

}  // namespace

NodeStatsPanel::NodeStatsPanel(NodeStatsModel* model, QWidget* parent) : QWidget(parent), model_(model) {
  pages_ = new QStackedWidget(this);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(pages_);

  empty_ = new QLabel(pages_);
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setWordWrap(true);
  empty_->setMargin(16);
  empty_->setForegroundRole(QPalette::PlaceholderText);
  pages_->addWidget(empty_);

  auto* scroll = new QScrollArea(pages_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* content = new QWidget(scroll);
  auto* column = new QVBoxLayout(content);
  column->setContentsMargins(8, 6, 8, 6);
  title_ = new QLabel(content);
  QFont bold = title_->font();
  bold.setBold(true);
  title_->setFont(bold);
  issues_ = new QLabel(content);
  issues_->setWordWrap(true);
  issues_->setTextFormat(Qt::RichText);
  column->addWidget(title_);
  column->addWidget(issues_);
  scroll->setWidget(content);
  pages_->addWidget(scroll);

  output_ = addPlot(tr("Output: mean ± std"));
  upper_ = addGraph(output_, {});
  lower_ = addGraph(output_, {});
  mean_ = addGraph(output_, tr("mean"));
  upper_->setChannelFillGraph(lower_);

  zeros_ = addPlot(tr("Zeros and dead units (%)"));
  zeroShare_ = addGraph(zeros_, tr("zero values"));
  deadShare_ = addGraph(zeros_, tr("dead units"));
  zeros_->yAxis->setRange(0, 100);
  zeros_->legend->setVisible(true);

  gradients_ = addPlot(tr("Gradient norm and update/weight ratio"));
  gradNorm_ = addGraph(gradients_, tr("|gradient|"));
  updateRatio_ = addGraph(gradients_, tr("update / weight"));
  gradients_->yAxis->setScaleType(QCPAxis::stLogarithmic);
  gradients_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new LogTicker));
  gradients_->legend->setVisible(true);
  ratioMark_ = new QCPItemStraightLine(gradients_);
  ratioMark_->point1->setCoords(0, kHealthyRatio);
  ratioMark_->point2->setCoords(1, kHealthyRatio);
  ratioMark_->setSelectable(false);

  overTime_ = addPlot(tr("Output distribution over the steps"));
  distribution_ = new QCPColorMap(overTime_->xAxis, overTime_->yAxis);
  distribution_->setInterpolate(false);
  distribution_->setDataScaleType(QCPAxis::stLogarithmic);
  distribution_->setTightBoundary(true);

  latestPlot_ = addPlot(tr("Latest output histogram (%)"));
  latest_ = new QCPBars(latestPlot_->xAxis, latestPlot_->yAxis);
  latest_->setSelectable(QCP::stNone);

  for (QCustomPlot* plot : plots_) column->addWidget(plot);
  column->addStretch(1);

  connect(model_, &NodeStatsModel::updated, this, &NodeStatsPanel::refresh);
  connect(model_, &NodeStatsModel::cleared, this, &NodeStatsPanel::refresh);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &NodeStatsPanel::applyTheme);
  applyTheme();  // and shows what there is
}

QCustomPlot* NodeStatsPanel::addPlot(const QString& title) {
  auto* plot = new QCustomPlot(this);
  plot->setMinimumHeight(kPlotHeight);
  plot->plotLayout()->insertRow(0);
  auto* text = new QCPTextElement(plot, title, plotTitleFont());
  text->setMargins(QMargins(0, 4, 0, 0));
  plot->plotLayout()->addElement(0, 0, text);
  plot->plotLayout()->setRowSpacing(0);
  plot->axisRect()->setMinimumMargins(QMargins(56, 0, 8, 0));  // the same left edge on every plot
  QFont small = plot->xAxis->tickLabelFont();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) axis->setTickLabelFont(small);
  plot->legend->setFont(small);
  plot->legend->setIconSize(14, 8);
  plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  plots_.push_back(plot);
  titles_.push_back(text);
  return plot;
}

QCPGraph* NodeStatsPanel::addGraph(QCustomPlot* plot, const QString& name) {
  QCPGraph* g = plot->addGraph();
  g->setSelectable(QCP::stNone);
  g->setName(name);
  if (name.isEmpty()) g->removeFromLegend();
  return g;
}

QCPGraph* NodeStatsPanel::graph(Series series) const {
  switch (series) {
    case Series::Mean: return mean_;
    case Series::StdUpper: return upper_;
    case Series::StdLower: return lower_;
    case Series::Zeros: return zeroShare_;
    case Series::Dead: return deadShare_;
    case Series::GradNorm: return gradNorm_;
    case Series::UpdateRatio: return updateRatio_;
  }
  return nullptr;
}

bool NodeStatsPanel::showsStatistics() const { return pages_->currentIndex() == 1; }
QString NodeStatsPanel::message() const { return empty_->text(); }
bool NodeStatsPanel::showsGradients() const { return !gradients_->isHidden(); }

void NodeStatsPanel::setNode(const QString& node) {
  if (node == node_) return;
  node_ = node;
  refresh();
}

void NodeStatsPanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (stale_) refresh();
}

void NodeStatsPanel::refresh() {
  // A hidden panel (a dock tabbed away) draws nothing until it is shown.
  if (!isVisible()) {
    stale_ = true;
    return;
  }
  stale_ = false;
  const std::vector<NodeSample>& samples = model_->samples(node_);
  if (node_.isEmpty() || samples.empty()) {
    empty_->setText(node_.isEmpty() ? tr("Select a node") : tr("Train the model to see statistics for this node"));
    pages_->setCurrentIndex(0);
    return;
  }
  pages_->setCurrentIndex(1);
  const NodeSample& last = samples.back();
  title_->setText(tr("%1 — step %2, epoch %3").arg(node_).arg(last.step).arg(last.epoch));

  const Theme& theme = ThemeManager::instance().theme();
  QStringList rich, plain;
  for (const train::HealthIssue& i : model_->issues(node_)) {
    const QColor colour = isSevere(i.kind) ? theme.error : theme.warning;
    rich << QStringLiteral("<span style=\"color:%1\">●</span> %2").arg(colour.name(), qstr(i.reason).toHtmlEscaped());
    plain << qstr(i.reason);
  }
  issues_->setText(rich.join(QStringLiteral("<br>")));
  issues_->setVisible(!rich.isEmpty());
  issuesPlain_ = plain.join('\n');

  // NaN breaks a line: non-finite samples, and values a log axis cannot show, leave gaps.
  const double gap = qQNaN();
  QVector<double> steps, mean, upper, lower, zeros, dead, grad, ratio;
  for (const NodeSample& s : samples) {
    const bool ok = finite(s);
    steps << double(s.step);
    mean << (ok ? s.mean : gap);
    upper << (ok ? s.mean + s.std : gap);
    lower << (ok ? s.mean - s.std : gap);
    zeros << 100 * s.zeroFraction;
    dead << 100 * s.deadFraction;
    grad << (s.gradNorm > 0 && std::isfinite(s.gradNorm) ? s.gradNorm : gap);
    ratio << (s.updateRatio > 0 && std::isfinite(s.updateRatio) ? s.updateRatio : gap);
  }
  mean_->setData(steps, mean, true);
  upper_->setData(steps, upper, true);
  lower_->setData(steps, lower, true);
  zeroShare_->setData(steps, zeros, true);
  deadShare_->setData(steps, dead, true);
  gradNorm_->setData(steps, grad, true);
  updateRatio_->setData(steps, ratio, true);
  gradients_->setVisible(last.hasParams);

  const QCPRange stepRange(steps.front(), std::max(steps.back(), steps.front() + 1));
  for (QCustomPlot* plot : {output_, zeros_, gradients_, overTime_}) plot->xAxis->setRange(stepRange);
  output_->yAxis->rescale();
  output_->yAxis->scaleRange(1.15);
  gradients_->yAxis->rescale();
  if (gradients_->yAxis->range().lower > kHealthyRatio) gradients_->yAxis->setRangeLower(kHealthyRatio);
  if (gradients_->yAxis->range().upper < kHealthyRatio) gradients_->yAxis->setRangeUpper(kHealthyRatio);
  gradients_->yAxis->scaleRange(1.3);
  fillDistribution();
  fillLatest();
  for (QCustomPlot* plot : plots_)
    if (plot->isVisible()) plot->replot(QCustomPlot::rpQueuedReplot);
}

void NodeStatsPanel::fillDistribution() {
  const std::vector<NodeSample>& samples = model_->samples(node_);
  // The value axis spans what most samples reach: a rare outlier would squeeze the rest into a
  // row or two (values beyond go to the edge rows).
  std::vector<double> lows, highs;
  for (const NodeSample& s : samples)
    if (finite(s) && std::isfinite(s.min) && std::isfinite(s.max)) {
      lows.push_back(s.min);
      highs.push_back(s.max);
    }
  if (lows.empty()) {
    distribution_->data()->clear();
    return;
  }
  const size_t cut = lows.size() / 20;  // 5% of the samples at each end
  std::nth_element(lows.begin(), lows.begin() + std::ptrdiff_t(cut), lows.end());
  std::nth_element(highs.begin(), highs.end() - std::ptrdiff_t(cut) - 1, highs.end());
  double lo = lows[cut], hi = highs[highs.size() - cut - 1];
  if (hi - lo < 1e-12) {
    lo -= 0.5;
    hi += 0.5;
  }
  const double first = double(samples.front().step), last = double(samples.back().step);
  const int columns = std::min(int(samples.size()), kColumns);
  distribution_->data()->setSize(columns, kRows);
  distribution_->data()->setRange(QCPRange(first, std::max(last, first + 1)), QCPRange(lo, hi));
  std::vector<double> column(kRows);
  size_t at = 0;
  double fullest = kFaintest * 10;
  for (int c = 0; c < columns; ++c) {
    // The sample each column shows: the last one at or before the column's step.
    const double step = columns == 1 ? first : first + (last - first) * c / (columns - 1);
    while (at + 1 < samples.size() && double(samples[at + 1].step) <= step) ++at;
    const NodeSample& s = samples[at];
    if (finite(s))
      spread(s, lo, hi, kRows, column);
    else
      std::fill(column.begin(), column.end(), 0.0);
    for (int r = 0; r < kRows; ++r) {
      const double share = column[size_t(r)];
      fullest = std::max(fullest, share);
      distribution_->data()->setCell(c, r, share > 0 ? share : qQNaN());  // NaN: transparent, no log of 0
    }
  }
  distribution_->setDataRange(QCPRange(kFaintest, fullest));
  overTime_->yAxis->setRange(lo, hi);
}

void NodeStatsPanel::fillLatest() {
  const NodeSample& s = model_->samples(node_).back();
  QVector<double> keys, shares;
  const bool known = finite(s) && std::isfinite(s.min) && std::isfinite(s.max);
  const double bin = known && s.max > s.min ? (s.max - s.min) / train::kHistogramBins : 1.0 / train::kHistogramBins;
  if (known)
    for (int b = 0; b < train::kHistogramBins; ++b) {
      keys << s.min + (b + 0.5) * bin;
      shares << 100 * double(s.histogram[size_t(b)]);
    }
  latest_->setWidth(bin);
  latest_->setData(keys, shares, true);
  latestPlot_->rescaleAxes();
  latestPlot_->yAxis->setRangeLower(0);
  latestPlot_->yAxis->scaleRange(1.1, latestPlot_->yAxis->range().lower);
  latestPlot_->xAxis->scaleRange(1.05);
}

void NodeStatsPanel::applyTheme() {
  const Theme& theme = ThemeManager::instance().theme();
  const PlotColours c = plotColours(theme);
  for (QCustomPlot* plot : plots_) {
    plot->setBackground(c.background);
    for (QCPAxis* axis : plot->axisRect()->axes()) styleAxis(axis, c);
    plot->legend->setBrush(QColor(c.background.red(), c.background.green(), c.background.blue(), 200));
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setTextColor(c.text);
  }
  for (QCPTextElement* t : titles_) t->setTextColor(c.text);
  const QColor accent = theme.dark ? QColor(0x60A5FA) : QColor(0x2563EB);
  QColor band = accent;
  band.setAlpha(55);
  mean_->setPen(QPen(accent, 1.8));
  for (QCPGraph* g : {upper_, lower_}) g->setPen(Qt::NoPen);
  upper_->setBrush(band);
  zeroShare_->setPen(QPen(accent, 1.6));
  deadShare_->setPen(QPen(theme.error, 1.6));
  gradNorm_->setPen(QPen(accent, 1.6));
  updateRatio_->setPen(QPen(theme.dark ? QColor(0x34D399) : QColor(0x059669), 1.6));
  ratioMark_->setPen(QPen(c.muted, 1, Qt::DashLine));
  latest_->setPen(Qt::NoPen);
  latest_->setBrush(accent);
  QCPColorGradient gradient;
  gradient.setNanHandling(QCPColorGradient::nhTransparent);
  gradient.setColorStopAt(0, theme.dark ? QColor(0x1E3A5F) : QColor(0xDBEAFE));
  gradient.setColorStopAt(0.5, accent);
  gradient.setColorStopAt(1, theme.dark ? QColor(0xFDE68A) : QColor(0x1E1B4B));
  distribution_->setGradient(gradient);
  refresh();
}

}  // namespace plexus::widgets
