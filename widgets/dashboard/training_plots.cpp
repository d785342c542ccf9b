#include "dashboard/training_plots.h"

#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QMessageBox>
#include <QPainter>
#include <QSaveFile>
#include <QSplitter>
#include <QTextStream>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "common/icons.h"
#include "common/plot_style.h"
#include "common/qt_text.h"
#include "common/theme.h"
#include "train/readable_figures.h"

namespace plexus::widgets {
namespace {

constexpr double kSmoothing = 0.95;             // EMA weight of the past: calm, yet only ~20 batches behind
constexpr int kReplotIntervalMs = 50;           // at most 20 replots a second
constexpr int kHoverRadius = 40;                // pixels from a point that still show its values
constexpr int kMarkerRadius = 4;                // pixels from a marker's line that show its tip
constexpr QMargins kAxisMargins{72, 4, 64, 4};  // the same on every plot, so their axes line up
constexpr int kPlotMinimumHeight = 140;         // below it the dashboard scrolls the plots

// One hue per run, in the order runs start; brighter on the dark theme.
struct RunColour {
  QRgb light, dark;
};
constexpr RunColour kRunColours[] = {
    {0x2563EB, 0x60A5FA}, {0xEA580C, 0xFB923C}, {0x059669, 0x34D399}, {0x9333EA, 0xC084FC},
    {0xDB2777, 0xF472B6}, {0x0891B2, 0x22D3EE}, {0xCA8A04, 0xFACC15}, {0x65A30D, 0xA3E635},
};

QColor runColour(int index, bool dark) {
  const RunColour& c = kRunColours[size_t(index) % std::size(kRunColours)];
  return QColor(dark ? c.dark : c.light);
}

// The epoch plot's lines: loss with round markers, accuracy with diamonds; validation solid,
// training dashed and lighter.
QPen epochPen(const QColor& colour, bool training) {
  QPen pen(colour, training ? 1.4 : 2.0);
  if (training) pen.setStyle(Qt::DashLine);
  return pen;
}

QCPScatterStyle epochMarker(const QColor& colour, const QColor& fill, bool accuracy, bool training) {
  return QCPScatterStyle(accuracy ? QCPScatterStyle::ssDiamond : QCPScatterStyle::ssCircle, QPen(colour, 1.5),
                         QBrush(fill), training ? 5 : 7);
}

// A loss node's look, by its name's index among the names shown: a dash pattern per batch, a
// marker shape per epoch (the total's circles and diamonds are none of them), and a shade of
// the run's colour, thinner than the total's lines so that the total stays the one to read.
constexpr QCPScatterStyle::ScatterShape kLossNodeShapes[] = {
    QCPScatterStyle::ssSquare, QCPScatterStyle::ssTriangle, QCPScatterStyle::ssTriangleInverted,
    QCPScatterStyle::ssCross,  QCPScatterStyle::ssPlus,     QCPScatterStyle::ssStar};

QPen lossNodeBatchPen(const QColor& colour, size_t style) {
  static const QVector<qreal> dashes[] = {{4, 2}, {1, 2}, {6, 2, 1, 2}, {8, 3}, {6, 2, 1, 2, 1, 2}, {2, 3}};
  QPen pen(colour, 1.3);
  pen.setDashPattern(dashes[style % std::size(dashes)]);
  return pen;
}

QPen lossNodeEpochPen(const QColor& colour, bool training) {
  QPen pen(colour, training ? 1.1 : 1.5);
  if (training) pen.setStyle(Qt::DashLine);
  return pen;
}

QCPScatterStyle lossNodeMarker(const QColor& colour, const QColor& fill, size_t style, bool training) {
  return QCPScatterStyle(kLossNodeShapes[style % std::size(kLossNodeShapes)], QPen(colour, 1.2), QBrush(fill),
                         training ? 5 : 6);
}

// The run's colour for a loss node: alternately paler and deeper (towards the background, then
// the text), further for later names, so that two nodes of one run differ in shade too.
QColor lossNodeShade(const QColor& colour, const PlotColours& c, size_t style) {
  const QColor& towards = style % 2 == 0 ? c.background : c.text;
  const double t = 0.3 + 0.15 * double(style / 2 % 3);
  return QColor::fromRgbF(float(colour.redF() * (1 - t) + towards.redF() * t),
                          float(colour.greenF() * (1 - t) + towards.greenF() * t),
                          float(colour.blueF() * (1 - t) + towards.blueF() * t));
}

// The union of `rangeOf(graph, found)` over the visible graphs; none when none has data.
template <typename RangeOf>
std::optional<QCPRange> unionOf(const std::vector<QCPGraph*>& graphs, RangeOf rangeOf) {
  std::optional<QCPRange> out;
  for (QCPGraph* g : graphs) {
    bool found = false;
    const QCPRange r = g->visible() ? rangeOf(g, found) : QCPRange();
    if (found) out = out ? QCPRange(std::min(out->lower, r.lower), std::max(out->upper, r.upper)) : r;
  }
  return out;
}

std::optional<QCPRange> keyRange(const std::vector<QCPGraph*>& graphs) {
  return unionOf(graphs, [](QCPGraph* g, bool& found) { return g->getKeyRange(found); });
}

// Positive values only on a log axis.
std::optional<QCPRange> valueRange(const std::vector<QCPGraph*>& graphs, QCP::SignDomain domain) {
  return unionOf(graphs, [domain](QCPGraph* g, bool& found) { return g->getValueRange(found, domain); });
}

// `range` widened by `fraction` of its size on each side (in log space on a log axis); a single
// value gets a small range around it.
void setPaddedRange(QCPAxis* axis, QCPRange range, double fraction) {
  if (axis->scaleType() == QCPAxis::stLogarithmic) {
    const double factor = range.upper > range.lower ? std::pow(range.upper / range.lower, fraction) : 1.5;
    axis->setRange(range.lower / factor, range.upper * factor);
    return;
  }
  const double span = range.size() > 0 ? range.size() : (range.lower != 0 ? std::abs(range.lower) * 2 : 2);
  axis->setRange(range.lower - span * fraction, range.upper + span * fraction);
}

// The data point of `g` nearest to `pixel` among the two around `key`, if nearer than `best`
// (a squared pixel distance, updated).
std::optional<QCPGraphData> nearerPoint(QCPGraph* g, double key, QPoint pixel, double& best) {
  if (!g->visible() || g->data()->isEmpty()) return std::nullopt;
  std::optional<QCPGraphData> out;
  auto it = g->data()->findBegin(key);
  for (int i = 0; i < 2 && it != g->data()->constEnd(); ++i, ++it) {
    const QPointF p = g->coordsToPixels(it->key, it->value);
    const double d = std::pow(p.x() - pixel.x(), 2) + std::pow(p.y() - pixel.y(), 2);
    if (d < best) {
      best = d;
      out = *it;
    }
  }
  return out;
}

QString number(double v, int precision = 4) { return QString::number(v, 'g', precision); }

// A character model's loss: "1.921 nats · 2.771 bits/char · perplexity 6.83".
QString textLoss(double nats) {
  return TrainingPlots::tr("%1 nats · %2 bits/char · perplexity %3")
      .arg(number(nats), number(train::nats_to_bits(nats)), number(train::perplexity(nats), 3));
}

// RFC 4180: quoted only when needed.
QString csvField(const QString& s) {
  if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) && !s.contains(QLatin1Char('\n')) &&
      !s.contains(QLatin1Char('\r')))
    return s;
  return QLatin1Char('"') + QString(s).replace(QLatin1String("\""), QLatin1String("\"\"")) + QLatin1Char('"');
}

QToolButton* toolButton(QWidget* parent, const QString& objectName, const QString& text, const QString& tip,
                        const QString& iconName = {}) {
  auto* button = new QToolButton(parent);
  button->setObjectName(objectName);
  button->setText(text);
  button->setToolTip(tip);
  button->setAutoRaise(true);
  if (!iconName.isEmpty()) {
    button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    button->setIcon(icon(iconName));
    // Icons are tinted for the theme, so they are fetched again when it changes.
    QObject::connect(&ThemeManager::instance(), &ThemeManager::changed, button,
                     [button, iconName] { button->setIcon(icon(iconName)); });
  }
  return button;
}

// Where a plot's legend goes: beside its title, or on a row of its own below it (the loss plot's
// names every run shown, which would not fit beside the title).
enum class Legend { None, Beside, Below };

void layOutLegend(QCPLegend* legend) {
  legend->setFillOrder(QCPLegend::foColumnsFirst);
  legend->setIconSize(26, 12);
  legend->setIconTextPadding(5);
  legend->setColumnSpacing(14);
}

// `element` on a new row of `grid`, left-aligned: an empty element takes the rest of the row.
QCPLayoutGrid* addLeftAligned(QCustomPlot* plot, QCPLayoutGrid* grid, QCPLayoutElement* element) {
  auto* row = new QCPLayoutGrid;
  grid->addElement(grid->rowCount(), 0, row);  // first, so that the row has the plot to give `element`
  row->addElement(0, 0, element);
  row->addElement(0, 1, new QCPLayoutElement(plot));
  row->setColumnStretchFactor(0, 0.001);
  return row;
}

QCPTextElement* addHeader(QCustomPlot* plot, const QString& title, Legend legend) {
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->setRowStretchFactor(0, 0.001);  // as tall as its contents
  auto* header = new QCPLayoutGrid;
  header->setMargins(QMargins(10, 6, 10, 4));
  plot->plotLayout()->addElement(0, 0, header);
  QFont font = plot->font();
  font.setBold(true);
  auto* text = new QCPTextElement(plot, title, font);
  text->setTextFlags(Qt::AlignLeft | Qt::AlignVCenter);
  plot->legend->setVisible(legend != Legend::None);
  if (legend != Legend::Beside) header->addElement(0, 0, text);
  if (legend != Legend::None) {
    // In the header, never over the curves.
    if (legend == Legend::Beside) {  // a row of its own: rows added below span the whole width
      auto* top = new QCPLayoutGrid;
      header->addElement(0, 0, top);
      top->addElement(0, 0, text);
      top->addElement(0, 1, plot->legend);
      top->setColumnStretchFactor(1, 0.001);
    } else {
      addLeftAligned(plot, header, plot->legend);
    }
    layOutLegend(plot->legend);
  }
  return text;
}

struct Hit {
  int run = -1;  // an index into the runs, not an id
  QCPGraph* graph = nullptr;
  QCPGraphData point;
};

// The point nearest to `pixel` on any of the graphs each run lists, within the hover radius.
template <typename GraphsOf>
Hit nearestHit(int runs, double key, QPoint pixel, GraphsOf graphsOf) {
  Hit hit;
  double best = kHoverRadius * kHoverRadius;
  for (int i = 0; i < runs; ++i)
    for (QCPGraph* g : graphsOf(i))
      if (auto p = nearerPoint(g, key, pixel, best)) hit = {i, g, *p};
  return hit;
}

void showTracer(QCPItemTracer* tracer, const Hit& hit) {
  tracer->setGraph(hit.graph);
  tracer->setGraphKey(hit.point.key);
  QColor colour = hit.graph->pen().color();
  colour.setAlpha(255);  // opaque, even on a faint raw line
  tracer->setPen(QPen(colour, 2));
  tracer->setVisible(true);
}

QCPItemTracer* makeTracer(QCustomPlot* plot) {
  auto* t = new QCPItemTracer(plot);
  t->setLayer(QStringLiteral("overlay"));  // buffered on its own: moving it redraws nothing else
  t->setStyle(QCPItemTracer::tsCircle);
  t->setSize(9);
  t->setInterpolating(false);
  t->setVisible(false);
  return t;
}

}  // namespace

TrainingPlots::TrainingPlots(QWidget* parent)
    : QWidget(parent), loss_(new QCustomPlot), epoch_(new QCustomPlot), lr_(new QCustomPlot) {
  buildToolBar();
  setUpPlots();
  replotTimer_.setSingleShot(true);
  replotTimer_.setInterval(kReplotIntervalMs);
  connect(&replotTimer_, &QTimer::timeout, this, &TrainingPlots::replotNow);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &TrainingPlots::applyTheme);
  applyTheme();
}

TrainingPlots::~TrainingPlots() = default;

void TrainingPlots::buildToolBar() {
  auto* fitButton =
      toolButton(this, QStringLiteral("fitButton"), tr("Fit"),
                 tr("Show every point and follow new ones (or double-click a plot)"), QStringLiteral("zoom-fit"));
  logButton_ = toolButton(this, QStringLiteral("logScaleButton"), tr("Log scale"), tr("Logarithmic loss axes"));
  logButton_->setCheckable(true);
  auto* pngButton = toolButton(this, QStringLiteral("exportPngButton"), tr("PNG…"),
                               tr("Export the plots as a PNG image"), QStringLiteral("save"));
  auto* csvButton = toolButton(this, QStringLiteral("exportCsvButton"), tr("CSV…"),
                               tr("Export every point of every run as CSV"), QStringLiteral("save"));
  connect(fitButton, &QToolButton::clicked, this, &TrainingPlots::fit);
  connect(logButton_, &QToolButton::toggled, this, &TrainingPlots::setLogScale);
  connect(pngButton, &QToolButton::clicked, this, &TrainingPlots::exportPngWithDialog);
  connect(csvButton, &QToolButton::clicked, this, &TrainingPlots::exportCsvWithDialog);

  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(0, 0, 0, 0);
  bar->setSpacing(2);
  for (QToolButton* b : {fitButton, logButton_}) bar->addWidget(b);
  bar->addStretch();
  for (QToolButton* b : {pngButton, csvButton}) bar->addWidget(b);

  splitter_ = new QSplitter(Qt::Vertical, this);
  splitter_->setChildrenCollapsible(false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(bar);
  layout->addWidget(splitter_, 1);
}

void TrainingPlots::setUpPlots() {
  titles_ = {addHeader(loss_, tr("Training loss per batch  (thin: raw, thick: smoothed)"), Legend::Below),
             addHeader(epoch_, tr("Per epoch"), Legend::Beside), addHeader(lr_, tr("Learning rate"), Legend::None)};
  setUpAxes();
  const std::array<int, 3> stretch = {3, 3, 2};
  for (QCustomPlot* plot : {loss_, epoch_, lr_}) {
    setUpInteractions(plot);
    splitter_->addWidget(plot);
    splitter_->setStretchFactor(splitter_->count() - 1, stretch[size_t(splitter_->count() - 1)]);
  }
  // Raw batch losses go below every run's smoothed line, and loss nodes' lines below the totals.
  loss_->addLayer(QStringLiteral("raw"), loss_->layer(QStringLiteral("main")), QCustomPlot::limBelow);
  for (QCustomPlot* plot : {loss_, epoch_})
    plot->addLayer(QStringLiteral("lossNodes"), plot->layer(QStringLiteral("main")), QCustomPlot::limBelow);
  for (size_t i = 0; i < 2; ++i) {
    QCustomPlot* plot = i == 0 ? loss_ : epoch_;
    auto* header = qobject_cast<QCPLayoutGrid*>(plot->plotLayout()->element(0, 0));
    auto* legend = new QCPLegend;
    auto* row = addLeftAligned(plot, header, legend);
    legend->setLayer(QStringLiteral("legend"));  // a layer of its plot's
    layOutLegend(legend);
    lossNodeLegends_[i] = {header, row, legend};
    showLossNodeLegend(lossNodeLegends_[i], false);  // until a run has loss nodes
  }

  for (Series s : {Series::EvalLoss, Series::EvalAccuracy, Series::TrainLoss, Series::TrainAccuracy}) {
    const bool accuracy = s == Series::EvalAccuracy || s == Series::TrainAccuracy;
    QCPGraph* key = newGraph(epoch_, accuracy ? epoch_->yAxis2 : nullptr);
    // Short names: the legend shares a row with the title and must fit beside it.
    key->setName(s == Series::EvalLoss       ? tr("val loss")
                 : s == Series::EvalAccuracy ? tr("val acc")
                 : s == Series::TrainLoss    ? tr("train loss")
                                             : tr("train acc"));
    styleKey_.push_back({s, key});
  }
  lossTracer_ = makeTracer(loss_);
  epochTracer_ = makeTracer(epoch_);
  lrTracer_ = makeTracer(lr_);
}

// Out of the header, not just empty: an empty legend would still take a row's height. The plot
// grows taller by the row rather than squeeze its curves (or, short, clip its headers).
void TrainingPlots::showLossNodeLegend(LossNodeLegend& l, bool shown) {
  l.legend->setVisible(shown);  // a legend out of the layout would still draw where it was
  if (shown == (l.row->layout() == l.header)) return;
  if (shown) {
    l.header->addElement(l.header->rowCount(), 0, l.row);
  } else {
    l.header->take(l.row);
    l.header->simplify();
  }
  const int row = l.row->minimumOuterSizeHint().height() + l.header->rowSpacing();
  l.legend->parentPlot()->setMinimumHeight(kPlotMinimumHeight + (shown ? row : 0));
}

void TrainingPlots::setUpAxes() {
  loss_->xAxis->setLabel(tr("batch"));
  loss_->yAxis->setLabel(tr("loss"));
  epoch_->xAxis->setLabel(tr("epoch"));
  epoch_->yAxis->setLabel(tr("loss"));
  epoch_->yAxis2->setLabel(tr("accuracy (%)"));
  epoch_->yAxis2->setTickLabels(true);  // off by default on the secondary axes
  lr_->xAxis->setLabel(tr("batch"));
  lr_->yAxis->setLabel(tr("learning rate"));

  auto epochTicker = QSharedPointer<QCPAxisTickerFixed>::create();
  epochTicker->setTickStep(1);  // whole epochs only, more apart when there are many
  epochTicker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  epoch_->xAxis->setTicker(epochTicker);
  epoch_->axisRect()->setRangeDragAxes({epoch_->xAxis}, {epoch_->yAxis, epoch_->yAxis2});
  epoch_->axisRect()->setRangeZoomAxes({epoch_->xAxis}, {epoch_->yAxis, epoch_->yAxis2});

  // In text units the right axes are the left ones in bits: they follow every change.
  for (QCustomPlot* plot : {loss_, epoch_})
    connect(plot->yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), plot, [this, plot] { showInBits(plot); });

  // The loss and learning-rate plots share their x axis: zoom one, the other follows.
  connect(loss_->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), lr_, [this](const QCPRange& r) {
    lr_->xAxis->setRange(r);
    lr_->replot(QCustomPlot::rpQueuedReplot);
  });
  connect(lr_->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), loss_, [this](const QCPRange& r) {
    loss_->xAxis->setRange(r);
    loss_->replot(QCustomPlot::rpQueuedReplot);
  });
}

void TrainingPlots::setUpInteractions(QCustomPlot* plot) {
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot->setNoAntialiasingOnDrag(true);
  plot->setAutoAddPlottableToLegend(false);
  plot->setMinimumHeight(kPlotMinimumHeight);
  plot->setMouseTracking(true);  // hover without a button pressed
  plot->axisRect()->setMinimumMargins(kAxisMargins);
  plot->installEventFilter(this);  // to hide the hover on leave
  connect(plot, &QCustomPlot::mouseWheel, this, &TrainingPlots::stopFollowing);
  connect(plot, &QCustomPlot::mouseDoubleClick, this, &TrainingPlots::fit);
  connect(plot, &QCustomPlot::mouseMove, this, [this, plot](QMouseEvent* e) { hover(plot, e); });
}

QCPGraph* TrainingPlots::newGraph(QCustomPlot* plot, QCPAxis* valueAxis) {
  QCPGraph* g = plot->addGraph(plot->xAxis, valueAxis ? valueAxis : plot->yAxis);
  g->setSelectable(QCP::stNone);
  return g;
}

// ---- runs --------------------------------------------------------------------------------

TrainingPlots::Run* TrainingPlots::find(int run) {
  const auto it = std::find_if(runs_.begin(), runs_.end(), [run](const Run& r) { return r.id == run; });
  return it == runs_.end() ? nullptr : &*it;
}

const TrainingPlots::Run* TrainingPlots::find(int run) const {
  return const_cast<TrainingPlots*>(this)->find(run);
}

std::vector<int> TrainingPlots::runIds() const {
  std::vector<int> ids;
  for (const Run& run : runs_) ids.push_back(run.id);
  return ids;
}

int TrainingPlots::beginRun(const QString& name, const QString& settingsSummary) {
  Run run;
  run.id = nextId_++;
  run.name = name;
  run.settings = settingsSummary;
  run.status = tr("running");
  run.raw = newGraph(loss_);
  run.raw->setLayer(QStringLiteral("raw"));
  run.raw->setAntialiased(false);  // thin, faint and dense: smoothing its edges costs most of a replot
  run.smooth = newGraph(loss_);
  run.smooth->setName(name);
  run.lr = newGraph(lr_);
  run.trainLoss = newGraph(epoch_);
  run.trainAccuracy = newGraph(epoch_, epoch_->yAxis2);
  run.evalLoss = newGraph(epoch_);
  run.evalAccuracy = newGraph(epoch_, epoch_->yAxis2);
  runs_.push_back(run);
  const int id = run.id;
  styleRun(runs_.back());
  updateRunVisibility(runs_.back());
  rebuildLegends();
  emit runAdded(id);
  scheduleReplot();
  return id;
}

double TrainingPlots::Ema::add(double value) {
  sum = kSmoothing * sum + (1 - kSmoothing) * value;
  decay *= kSmoothing;
  return sum / (1 - decay);
}

void TrainingPlots::addBatches(int id, const std::vector<train::BatchEnd>& batches) {
  Run* run = find(id);
  if (!run || batches.empty()) return;
  const size_t knownNodes = run->lossNodes.size();
  QVector<double> steps, raw, smooth, lr;
  for (QVector<double>* v : {&steps, &raw, &smooth, &lr}) v->reserve(qsizetype(batches.size()));
  std::vector<std::pair<QVector<double>, QVector<double>>> nodePoints;  // per loss node: steps, smoothed
  for (const train::BatchEnd& b : batches) {
    run->batchesPerEpoch = b.batches;
    const double step = double(int64_t(b.epoch - 1) * b.batches + b.batch);
    steps << step;
    raw << b.loss;
    smooth << run->ema.add(b.loss);
    lr << b.lr;
    for (const train::LossPart& part : b.losses) {
      const size_t i = lossNode(*run, part.node);
      LossNode& node = run->lossNodes[i];
      node.raw << part.value;
      if (nodePoints.size() <= i) nodePoints.resize(i + 1);
      nodePoints[i].first << step;
      nodePoints[i].second << node.ema.add(part.value);
    }
  }
  // Steps only grow, so these are appends, not re-sorts.
  run->raw->addData(steps, raw, true);
  run->smooth->addData(steps, smooth, true);
  run->lr->addData(steps, lr, true);
  for (size_t i = 0; i < nodePoints.size(); ++i)
    run->lossNodes[i].smooth->addData(nodePoints[i].first, nodePoints[i].second, true);
  if (run->lossNodes.size() != knownNodes) rebuildLegends();
  scheduleReplot({loss_, lr_});  // the per-epoch plot has nothing new
}

size_t TrainingPlots::lossNode(Run& run, const std::string& id) {
  const QString node = qstr(id);
  for (size_t i = 0; i < run.lossNodes.size(); ++i)
    if (run.lossNodes[i].id == node) return i;
  LossNode n;
  n.id = node;
  n.name = qstr(train::node_label(run.lossNames, id));
  n.smooth = newGraph(loss_);
  n.trainLoss = newGraph(epoch_);
  n.evalLoss = newGraph(epoch_);
  for (QCPGraph* g : {n.smooth, n.trainLoss, n.evalLoss}) {
    g->setLayer(QStringLiteral("lossNodes"));
    g->setName(n.name);
  }
  run.lossNodes.push_back(n);
  styleLossNode(run, run.lossNodes.back());
  updateRunVisibility(run);
  return run.lossNodes.size() - 1;
}

void TrainingPlots::setLossNames(int id, const train::NodeInfos& names) {
  if (Run* run = find(id)) run->lossNames = names;
}

QStringList TrainingPlots::lossNodes(int id) const {
  QStringList out;
  if (const Run* run = find(id))
    for (const LossNode& n : run->lossNodes) out << n.id;
  return out;
}

QCPGraph* TrainingPlots::lossNodeGraph(int id, const QString& node, Series series) const {
  const Run* run = find(id);
  if (!run) return nullptr;
  for (const LossNode& n : run->lossNodes)
    if (n.id == node) return graphOf(n, series);
  return nullptr;
}

QCPGraph* TrainingPlots::graphOf(const LossNode& node, Series series) {
  return series == Series::SmoothedLoss ? node.smooth
         : series == Series::TrainLoss  ? node.trainLoss
         : series == Series::EvalLoss   ? node.evalLoss
                                        : nullptr;
}

std::vector<QCPGraph*> TrainingPlots::lossNodeGraphs(const Run& run, Series series) {
  std::vector<QCPGraph*> out;
  for (const LossNode& n : run.lossNodes) out.push_back(graphOf(n, series));
  return out;
}

void TrainingPlots::addEpoch(int id, const train::EpochEnd& e) {
  Run* run = find(id);
  if (!run) return;
  // Regression runs report accuracy 0; a classification run has a class count or hits.
  run->hasAccuracy = run->hasAccuracy || e.classes > 0 || e.train_accuracy > 0 || e.eval_accuracy > 0;
  run->epochs.push_back({e.epoch, e.train_loss, e.train_accuracy, e.eval_loss, e.eval_accuracy, e.lr, e.has_eval,
                         e.train_losses, e.has_eval ? e.eval_losses : std::vector<train::LossPart>{}});
  for (const train::LossPart& part : e.train_losses)
    run->lossNodes[lossNode(*run, part.node)].trainLoss->addData(e.epoch, part.value);
  if (e.has_eval)
    for (const train::LossPart& part : e.eval_losses)
      run->lossNodes[lossNode(*run, part.node)].evalLoss->addData(e.epoch, part.value);
  run->trainLoss->addData(e.epoch, e.train_loss);
  run->trainAccuracy->addData(e.epoch, 100 * e.train_accuracy);
  if (e.has_eval) {
    run->evalLoss->addData(e.epoch, e.eval_loss);
    run->evalAccuracy->addData(e.epoch, 100 * e.eval_accuracy);
    if (run->hasAccuracy) run->bestEvalAccuracy = std::max(run->bestEvalAccuracy.value_or(0.0), e.eval_accuracy);
    run->bestEvalLoss = std::min(run->bestEvalLoss.value_or(e.eval_loss), e.eval_loss);
  }
  updateRunVisibility(*run);
  rebuildLegends();
  emit runChanged(id);
  scheduleReplot({epoch_});
}

void TrainingPlots::addMarker(int id, double step, double epoch, const QString& tip) {
  Run* run = find(id);
  if (!run) return;
  Marker m{step, epoch, tip, new QCPItemStraightLine(loss_), new QCPItemStraightLine(epoch_)};
  m.loss->point1->setCoords(step, 0);
  m.loss->point2->setCoords(step, 1);
  m.perEpoch->point1->setCoords(epoch, 0);
  m.perEpoch->point2->setCoords(epoch, 1);
  for (QCPItemStraightLine* line : {m.loss, m.perEpoch}) line->setSelectable(false);
  run->markers.push_back(m);
  styleRun(*run);
  updateRunVisibility(*run);
  scheduleReplot({loss_, epoch_});
}

std::vector<std::pair<double, QString>> TrainingPlots::markers(int id) const {
  std::vector<std::pair<double, QString>> out;
  if (const Run* run = find(id))
    for (const Marker& m : run->markers) out.emplace_back(m.step, m.tip);
  return out;
}

void TrainingPlots::finishRun(int id, const QString& status) {
  Run* run = find(id);
  if (!run) return;
  run->status = status;
  run->active = false;
  emit runChanged(id);
}

void TrainingPlots::setRunVisible(int id, bool visible) {
  Run* run = find(id);
  if (!run || run->visible == visible) return;
  run->visible = visible;
  hideHover();  // its tracer may sit on a graph that goes
  updateRunVisibility(*run);
  rebuildLegends();
  emit runChanged(id);
  scheduleReplot();
}

void TrainingPlots::setRunName(int id, const QString& name) {
  Run* run = find(id);
  const QString trimmed = name.trimmed();
  if (!run || trimmed.isEmpty() || trimmed == run->name) return;
  run->name = trimmed;
  run->smooth->setName(trimmed);  // the legend entry
  emit runChanged(id);
  scheduleReplot();
}

void TrainingPlots::setRunOrigin(int id, const RunOrigin& origin) {
  Run* run = find(id);
  if (!run) return;
  run->origin = origin;
  emit runChanged(id);
}

void TrainingPlots::removeGraphs(const Run& run) {
  for (QCPGraph* g : {run.raw, run.smooth}) loss_->removeGraph(g);
  lr_->removeGraph(run.lr);
  for (QCPGraph* g : {run.trainLoss, run.trainAccuracy, run.evalLoss, run.evalAccuracy}) epoch_->removeGraph(g);
  for (const LossNode& n : run.lossNodes) {
    loss_->removeGraph(n.smooth);
    for (QCPGraph* g : {n.trainLoss, n.evalLoss}) epoch_->removeGraph(g);
  }
  for (const Marker& m : run.markers) {
    loss_->removeItem(m.loss);
    epoch_->removeItem(m.perEpoch);
  }
}

void TrainingPlots::removeRun(int id) {
  const Run* run = find(id);
  if (!run) return;
  hideHover();  // its tracer may sit on a graph that goes
  removeGraphs(*run);
  runs_.erase(runs_.begin() + (run - runs_.data()));
  rebuildLegends();
  emit runRemoved(id);
  scheduleReplot();
}

void TrainingPlots::clear() {
  hideHover();
  for (const Run& run : runs_) removeGraphs(run);
  runs_.clear();
  nextId_ = 0;
  rebuildLegends();
  following_ = true;
  emit cleared();
  scheduleReplot();
}

int TrainingPlots::pointCount(int id) const {
  const Run* run = find(id);
  return run ? run->raw->dataCount() : 0;
}

TrainingPlots::RunInfo TrainingPlots::runInfo(int id) const {
  const Run* run = find(id);
  if (!run) return {};
  return {run->name,          run->settings,         run->status, runColour(id, ThemeManager::instance().theme().dark),
          run->visible,       run->active,           run->bestEvalAccuracy,
          run->bestEvalLoss,  run->origin};
}

QCPGraph* TrainingPlots::graph(int id, Series series) const {
  const Run* run = find(id);
  return run ? graphOf(*run, series) : nullptr;
}

QCPGraph* TrainingPlots::graphOf(const Run& run, Series series) {
  switch (series) {
    case Series::RawLoss:
      return run.raw;
    case Series::SmoothedLoss:
      return run.smooth;
    case Series::LearningRate:
      return run.lr;
    case Series::TrainLoss:
      return run.trainLoss;
    case Series::TrainAccuracy:
      return run.trainAccuracy;
    case Series::EvalLoss:
      return run.evalLoss;
    case Series::EvalAccuracy:
      return run.evalAccuracy;
  }
  return nullptr;
}

void TrainingPlots::updateRunVisibility(Run& run) {
  for (QCPGraph* g : {run.raw, run.smooth, run.lr, run.trainLoss, run.evalLoss}) g->setVisible(run.visible);
  for (QCPGraph* g : {run.trainAccuracy, run.evalAccuracy}) g->setVisible(run.visible && showsAccuracy(run));
  for (const LossNode& n : run.lossNodes)
    for (QCPGraph* g : {n.smooth, n.trainLoss, n.evalLoss}) g->setVisible(run.visible);
  for (const Marker& m : run.markers)
    for (QCPItemStraightLine* line : {m.loss, m.perEpoch}) line->setVisible(run.visible);
}

// Loss legend: one entry per shown run. Epoch legend: which line style is which series, for
// the series some shown run has.
void TrainingPlots::rebuildLegends() {
  loss_->legend->clearItems();
  for (const Run& run : runs_)
    if (run.visible) run.smooth->addToLegend();
  epoch_->legend->clearItems();
  for (const auto& [series, key] : styleKey_)
    for (const Run& run : runs_)
      if (const QCPGraph* g = graphOf(run, series); g->visible() && !g->data()->isEmpty()) {
        key->addToLegend();
        break;
      }
  // The names of the loss nodes some shown run has points of, in each plot.
  auto& [batchKeys, epochKeys] = lossNodeLegends_;
  for (LossNodeLegend* l : {&batchKeys, &epochKeys}) l->legend->clearItems();
  for (const LossNodeKey& key : lossNodeKeys_) {
    bool perBatch = false, perEpoch = false;
    for (const Run& run : runs_)
      for (const LossNode& n : run.lossNodes)
        if (run.visible && n.name == key.name) {
          perBatch = perBatch || !n.smooth->data()->isEmpty();
          perEpoch = perEpoch || !n.trainLoss->data()->isEmpty() || !n.evalLoss->data()->isEmpty();
        }
    if (perBatch) key.loss->addToLegend(batchKeys.legend);
    if (perEpoch) key.perEpoch->addToLegend(epochKeys.legend);
  }
  for (LossNodeLegend* l : {&batchKeys, &epochKeys}) showLossNodeLegend(*l, l->legend->itemCount() > 0);
  epoch_->yAxis2->setVisible(textUnits_ || std::any_of(runs_.begin(), runs_.end(), [this](const Run& run) {
                               return run.visible && showsAccuracy(run);
                             }));
}

// ---- look ----------------------------------------------------------------------------------

void TrainingPlots::applyTheme() {
  const PlotColours c = plotColours(ThemeManager::instance().theme());
  for (QCustomPlot* plot : {loss_, epoch_, lr_}) {
    plot->setBackground(c.background);
    for (QCPAxis* axis : plot->axisRect()->axes()) styleAxis(axis, c);
  }
  for (QCPLegend* legend : {loss_->legend, epoch_->legend, lr_->legend, lossNodeLegends_[0].legend,
                            lossNodeLegends_[1].legend}) {
    legend->setBrush(Qt::NoBrush);
    legend->setBorderPen(Qt::NoPen);
    legend->setTextColor(c.text);
  }
  epoch_->yAxis2->grid()->setVisible(false);  // one grid is enough
  for (QCPTextElement* title : titles_) title->setTextColor(c.text);
  for (QCPItemTracer* t : {lossTracer_, epochTracer_, lrTracer_}) t->setBrush(c.background);
  for (const auto& [series, key] : styleKey_) {
    const bool accuracy = series == Series::EvalAccuracy || series == Series::TrainAccuracy;
    const bool training = series == Series::TrainLoss || series == Series::TrainAccuracy;
    key->setPen(epochPen(c.muted, training));
    key->setScatterStyle(epochMarker(c.muted, c.background, accuracy, training));
  }
  for (size_t i = 0; i < lossNodeKeys_.size(); ++i) styleLossNodeKey(i);
  for (Run& run : runs_) styleRun(run);
  scheduleReplot();
}

void TrainingPlots::styleRun(Run& run) {
  const Theme& theme = ThemeManager::instance().theme();
  const QColor colour = runColour(run.id, theme.dark);
  const QColor background = plotColours(theme).background;
  QColor faint = colour;
  faint.setAlpha(theme.dark ? 90 : 85);
  run.raw->setPen(QPen(faint, 1));
  run.smooth->setPen(QPen(colour, 2.4));
  run.lr->setPen(QPen(colour, 1.8));
  for (QCPGraph* g : {run.trainLoss, run.trainAccuracy, run.evalLoss, run.evalAccuracy}) {
    const bool accuracy = g == run.trainAccuracy || g == run.evalAccuracy;
    const bool training = g == run.trainLoss || g == run.trainAccuracy;
    g->setPen(epochPen(colour, training));
    g->setScatterStyle(epochMarker(colour, training ? background : colour, accuracy, training));
  }
  for (const Marker& m : run.markers)
    for (QCPItemStraightLine* line : {m.loss, m.perEpoch}) line->setPen(QPen(colour, 1.5, Qt::DashLine));
  for (const LossNode& n : run.lossNodes) styleLossNode(run, n);
}

void TrainingPlots::styleLossNode(const Run& run, const LossNode& node) {
  const Theme& theme = ThemeManager::instance().theme();
  const PlotColours c = plotColours(theme);
  const size_t style = lossNodeStyle(node.name);
  const QColor colour = lossNodeShade(runColour(run.id, theme.dark), c, style);
  node.smooth->setPen(lossNodeBatchPen(colour, style));
  for (QCPGraph* g : {node.trainLoss, node.evalLoss}) {
    const bool training = g == node.trainLoss;
    g->setPen(lossNodeEpochPen(colour, training));
    g->setScatterStyle(lossNodeMarker(colour, training ? c.background : colour, style, training));
  }
}

// The keys show the look in the muted colour, as the epoch plot's keys of the totals do.
size_t TrainingPlots::lossNodeStyle(const QString& name) {
  for (size_t i = 0; i < lossNodeKeys_.size(); ++i)
    if (lossNodeKeys_[i].name == name) return i;
  LossNodeKey key{name, newGraph(loss_), newGraph(epoch_)};
  for (QCPGraph* g : {key.loss, key.perEpoch}) g->setName(name);
  lossNodeKeys_.push_back(key);
  styleLossNodeKey(lossNodeKeys_.size() - 1);
  return lossNodeKeys_.size() - 1;
}

void TrainingPlots::styleLossNodeKey(size_t style) {
  const PlotColours c = plotColours(ThemeManager::instance().theme());
  const LossNodeKey& key = lossNodeKeys_[style];
  key.loss->setPen(lossNodeBatchPen(c.muted, style));
  key.perEpoch->setPen(lossNodeEpochPen(c.muted, false));
  key.perEpoch->setScatterStyle(lossNodeMarker(c.muted, c.background, style, false));
}

void TrainingPlots::showInBits(QCustomPlot* plot) {
  if (!textUnits_) return;
  const QCPRange nats = plot->yAxis->range();
  plot->yAxis2->setRange(train::nats_to_bits(nats.lower), train::nats_to_bits(nats.upper));
}

void TrainingPlots::setLinear(QCPAxis* axis) {
  axis->setScaleType(QCPAxis::stLinear);
  axis->setTicker(QSharedPointer<QCPAxisTicker>::create());
}

void TrainingPlots::styleLossAxis(QCPAxis* axis) {
  if (!logScale_) {
    setLinear(axis);
  } else {
    axis->setScaleType(QCPAxis::stLogarithmic);
    axis->setTicker(QSharedPointer<QCPAxisTicker>(new LogTicker));
  }
  // Bits span 1.44 times the nats' range: as many ticks would crowd a short plot.
  if (axis->axisType() == QCPAxis::atRight) axis->ticker()->setTickCount(3);
}

void TrainingPlots::setTextUnits(bool on) {
  if (on == textUnits_) return;
  textUnits_ = on;
  const QString loss = on ? tr("loss (nats)") : tr("loss");
  loss_->yAxis->setLabel(loss);
  epoch_->yAxis->setLabel(loss);
  epoch_->yAxis2->setLabel(on ? tr("bits/char") : tr("accuracy (%)"));
  loss_->yAxis2->setLabel(tr("bits/char"));
  loss_->yAxis2->setVisible(on);
  loss_->yAxis2->setTickLabels(on);
  for (QCPAxis* axis : {loss_->yAxis2, epoch_->yAxis2})
    if (on)
      styleLossAxis(axis);
    else  // accuracy, in %
      setLinear(axis);
  // The right axis follows the left one: dragging it as well would move it twice.
  const QList<QCPAxis*> valueAxes = on ? QList<QCPAxis*>{epoch_->yAxis} : QList<QCPAxis*>{epoch_->yAxis, epoch_->yAxis2};
  epoch_->axisRect()->setRangeDragAxes({epoch_->xAxis}, valueAxes);
  epoch_->axisRect()->setRangeZoomAxes({epoch_->xAxis}, valueAxes);
  for (QCustomPlot* plot : {loss_, epoch_}) showInBits(plot);
  for (Run& run : runs_) updateRunVisibility(run);
  rebuildLegends();
  for (Run& run : runs_) emit runChanged(run.id);  // the run list's best figure changes its unit
  fit();
}

void TrainingPlots::setLogScale(bool on) {
  logScale_ = on;
  {
    const QSignalBlocker block(logButton_);
    logButton_->setChecked(on);
  }
  for (QCPAxis* axis : {loss_->yAxis, epoch_->yAxis}) styleLossAxis(axis);
  if (textUnits_)
    for (QCPAxis* axis : {loss_->yAxis2, epoch_->yAxis2}) styleLossAxis(axis);
  fit();  // a linear range makes no sense on a log axis (and the other way round)
}

// ---- ranges and replots ------------------------------------------------------------------

void TrainingPlots::fit() {
  following_ = true;
  replotNow();
}

// Data usually arrive about ten times a second: replotting in the same wake-up of the UI
// thread (rather than on a timer of its own) keeps the thread asleep between deliveries.
void TrainingPlots::scheduleReplot(std::initializer_list<QCustomPlot*> plots) {
  // Drawing is the dashboard's main cost on the UI thread: only plots with news are redrawn.
  if (plots.size() == 0)
    dirty_ << loss_ << epoch_ << lr_;
  for (QCustomPlot* plot : plots) dirty_.insert(plot);
  if (replotTimer_.isActive()) return;
  const qint64 since = lastReplot_.isValid() ? lastReplot_.elapsed() : kReplotIntervalMs;
  if (since >= kReplotIntervalMs)
    replotNow();
  else
    replotTimer_.start(int(kReplotIntervalMs - since));
}

void TrainingPlots::replotNow() {
  replotTimer_.stop();
  lastReplot_.start();
  if (following_) fitRanges();
  // Queued: the loss and lr plots' synced x ranges ask for one too; Qt merges them.
  for (QCustomPlot* plot : dirty_) plot->replot(QCustomPlot::rpQueuedReplot);
  dirty_.clear();
}

void TrainingPlots::fitRanges() {
  std::vector<QCPGraph*> batchLoss, lr, epochLoss, accuracy;
  for (const Run& run : runs_) {
    batchLoss.insert(batchLoss.end(), {run.raw, run.smooth});
    lr.push_back(run.lr);
    epochLoss.insert(epochLoss.end(), {run.trainLoss, run.evalLoss});
    // A node's own loss may be above the total: the total weighs it.
    for (const LossNode& n : run.lossNodes) {
      batchLoss.push_back(n.smooth);
      epochLoss.insert(epochLoss.end(), {n.trainLoss, n.evalLoss});
    }
    accuracy.insert(accuracy.end(), {run.trainAccuracy, run.evalAccuracy});
  }
  const QCP::SignDomain lossDomain = logScale_ ? QCP::sdPositive : QCP::sdBoth;
  if (auto r = keyRange(batchLoss)) setPaddedRange(loss_->xAxis, *r, 0.01);  // lr_ follows
  if (auto r = valueRange(batchLoss, lossDomain)) setPaddedRange(loss_->yAxis, *r, 0.05);
  if (auto r = valueRange(lr, QCP::sdBoth)) setPaddedRange(lr_->yAxis, *r, 0.08);
  if (auto r = keyRange(epochLoss)) epoch_->xAxis->setRange(r->lower - 0.5, r->upper + 0.5);
  if (auto r = valueRange(epochLoss, lossDomain)) setPaddedRange(epoch_->yAxis, *r, 0.08);
  if (auto r = valueRange(accuracy, QCP::sdBoth); r && !textUnits_) {
    setPaddedRange(epoch_->yAxis2, *r, 0.08);
    epoch_->yAxis2->setRange(epoch_->yAxis2->range().bounded(0, 101));  // room for a marker at 100%
  }
}

// ---- hover -----------------------------------------------------------------------------------

bool TrainingPlots::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Leave) hideHover();
  return QWidget::eventFilter(watched, event);
}

void TrainingPlots::hover(QCustomPlot* plot, QMouseEvent* event) {
  if (event->buttons() != Qt::NoButton) {  // dragging: the user takes over the view
    stopFollowing();
    hideHover();
    return;
  }
  const QPoint pixel = event->position().toPoint();
  const double key = plot->xAxis->pixelToCoord(pixel.x());
  const QString marker = markerHover(plot, pixel);
  const QString text = !marker.isEmpty() ? marker
                       : plot == loss_   ? lossHover(key, pixel)
                       : plot == epoch_ ? epochHover(key, pixel)
                                        : lrHover(key, pixel);
  if (text.isEmpty()) {
    hideHover();
    return;
  }
  QToolTip::showText(plot->mapToGlobal(pixel + QPoint(12, 12)), text, plot);
  plot->layer(QStringLiteral("overlay"))->replot();
}

void TrainingPlots::hideHover() {
  for (QCPItemTracer* t : {lossTracer_, epochTracer_, lrTracer_}) {
    if (!t->visible()) continue;
    t->setVisible(false);
    t->setGraph(nullptr);
    t->parentPlot()->layer(QStringLiteral("overlay"))->replot();
  }
  QToolTip::hideText();
}

// "■ name" in the run's colour: the first line of every hover text.
QString TrainingPlots::hoverHeading(const Run& run) const {
  return QStringLiteral("<span style='color:%1'>&#9632;</span> <b>%2</b>")
      .arg(runColour(run.id, ThemeManager::instance().theme().dark).name(), run.name.toHtmlEscaped());
}

// The tip of a shown run's marker under the pointer, "" when none is.
QString TrainingPlots::markerHover(QCustomPlot* plot, QPoint pixel) const {
  if (plot == lr_) return {};
  for (const Run& run : runs_) {
    if (!run.visible) continue;
    for (const Marker& m : run.markers) {
      const double x = plot->xAxis->coordToPixel(plot == loss_ ? m.step : m.epoch);
      if (std::abs(x - pixel.x()) <= kMarkerRadius)
        return hoverHeading(run) + QStringLiteral("<br>") + m.tip.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"));
    }
  }
  return {};
}

QString TrainingPlots::lossHover(double key, QPoint pixel) {
  const Hit hit = nearestHit(runCount(), key, pixel, [this](int i) {
    const Run& r = runs_[size_t(i)];
    std::vector<QCPGraph*> graphs{r.smooth, r.raw};
    for (QCPGraph* g : lossNodeGraphs(r, Series::SmoothedLoss)) graphs.push_back(g);
    return graphs;
  });
  if (!hit.graph) return {};
  showTracer(lossTracer_, hit);
  const Run& run = runs_[size_t(hit.run)];
  const auto index = run.raw->data()->findBegin(hit.point.key, false) - run.raw->data()->constBegin();
  const double step = hit.point.key;
  QString text = hoverHeading(run) + tr("<br>step %1").arg(qint64(step));
  if (run.batchesPerEpoch > 0) text += tr(" · epoch %1").arg(qint64(step - 1) / run.batchesPerEpoch + 1);
  const double raw = run.raw->data()->at(int(index))->value, smooth = run.smooth->data()->at(int(index))->value;
  const auto loss = [this](double v) { return textUnits_ ? textLoss(v) : number(v); };
  text += tr("<br>loss %1<br>smoothed %2").arg(loss(raw), loss(smooth));
  // Each loss node's own at this step, the one under the pointer in bold.
  for (const LossNode& n : run.lossNodes) {
    const auto at = n.smooth->data()->findBegin(step, false);
    if (at == n.smooth->data()->constEnd() || at->key != step) continue;
    const QString line = tr("%1: loss %2 · smoothed %3")
                             .arg(n.name.toHtmlEscaped(), number(n.raw[at - n.smooth->data()->constBegin()]),
                                  number(at->value));
    text += QStringLiteral("<br>") + (n.smooth == hit.graph ? QStringLiteral("<b>%1</b>").arg(line) : line);
  }
  return text;
}

QString TrainingPlots::epochHover(double key, QPoint pixel) {
  const Hit hit = nearestHit(runCount(), key, pixel, [this](int i) {
    const Run& r = runs_[size_t(i)];
    std::vector<QCPGraph*> graphs{r.evalLoss, r.evalAccuracy, r.trainLoss, r.trainAccuracy};
    for (Series s : {Series::EvalLoss, Series::TrainLoss})
      for (QCPGraph* g : lossNodeGraphs(r, s)) graphs.push_back(g);
    return graphs;
  });
  if (!hit.graph) return {};
  showTracer(epochTracer_, hit);
  const Run& run = runs_[size_t(hit.run)];
  const auto e = std::find_if(run.epochs.rbegin(), run.epochs.rend(),
                              [&](const EpochPoint& p) { return p.epoch == int(std::lround(hit.point.key)); });
  if (e == run.epochs.rend()) return {};
  QString text = hoverHeading(run) + tr(" · epoch %1").arg(e->epoch);
  auto line = [&](const QString& what, double loss, double accuracy, const std::vector<train::LossPart>& parts,
                  bool training) {
    text += QStringLiteral("<br>%1: loss %2").arg(what, textUnits_ ? textLoss(loss) : number(loss));
    if (showsAccuracy(run)) text += tr(" · accuracy %1").arg(percentText(accuracy));
    if (textUnits_ && run.hasAccuracy) text += tr(" · next-character accuracy %1").arg(percentText(accuracy));
    // Each loss node's own below, indented; the one under the pointer in bold.
    for (const train::LossPart& part : parts) {
      const auto n = std::find_if(run.lossNodes.begin(), run.lossNodes.end(),
                                  [&](const LossNode& n) { return n.id == qstr(part.node); });
      if (n == run.lossNodes.end()) continue;
      const QString nodeLine = QStringLiteral("%1: %2").arg(n->name.toHtmlEscaped(), number(part.value));
      const bool under = hit.graph == (training ? n->trainLoss : n->evalLoss);
      text += QStringLiteral("<br>&nbsp;&nbsp;&nbsp;") + (under ? QStringLiteral("<b>%1</b>").arg(nodeLine) : nodeLine);
    }
  };
  line(tr("training"), e->trainLoss, e->trainAccuracy, e->trainParts, true);
  if (e->hasEval) line(tr("validation"), e->evalLoss, e->evalAccuracy, e->evalParts, false);
  return text;
}

QString TrainingPlots::lrHover(double key, QPoint pixel) {
  const Hit hit = nearestHit(runCount(), key, pixel, [this](int i) { return std::array{runs_[size_t(i)].lr}; });
  if (!hit.graph) return {};
  showTracer(lrTracer_, hit);
  return hoverHeading(runs_[size_t(hit.run)]) +
         tr("<br>step %1<br>learning rate %2").arg(qint64(hit.point.key)).arg(number(hit.point.value));
}

// ---- export ------------------------------------------------------------------------------

bool TrainingPlots::exportPng(const QString& path, QSize size) {
  if (size.isEmpty()) size = isVisible() ? splitter_->size() : QSize(1200, 900);
  if (following_) fitRanges();  // the image shows the latest points, not the last replot's
  const std::array plots = {loss_, epoch_, lr_};
  // Each plot keeps its share of the height, as on screen.
  QList<int> shares = splitter_->sizes();
  if (std::any_of(shares.begin(), shares.end(), [](int h) { return h <= 0; })) shares = {3, 3, 2};
  const double total = std::accumulate(shares.begin(), shares.end(), 0.0);

  QImage image(size, QImage::Format_ARGB32_Premultiplied);
  image.fill(plotColours(ThemeManager::instance().theme()).background);
  QPainter painter(&image);
  int y = 0;
  for (size_t i = 0; i < plots.size(); ++i) {
    const int h = i + 1 < plots.size() ? int(size.height() * shares[qsizetype(i)] / total) : size.height() - y;
    painter.drawPixmap(0, y, plots[i]->toPixmap(size.width(), h));
    y += h;
  }
  painter.end();
  QSaveFile file(path);
  return file.open(QIODevice::WriteOnly) && image.save(&file, "PNG") && file.commit();
}

bool TrainingPlots::exportCsv(const QString& path) const {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) return false;
  QTextStream out(&file);
  out << "run,kind,step,epoch,loss,smoothed_loss,lr,train_loss,train_accuracy,eval_loss,eval_accuracy,node\n";
  const QString none;
  for (const Run& run : runs_) {
    const QString name = csvField(run.name);
    const auto raw = run.raw->data(), smooth = run.smooth->data(), lr = run.lr->data();
    // Where each loss node's points are up to: they are the total's steps, but a node may have
    // begun reporting later (or not every batch).
    std::vector<int> next(run.lossNodes.size(), 0);
    for (int i = 0; i < raw->size(); ++i) {
      const auto step = qint64(raw->at(i)->key);
      const qint64 epoch = run.batchesPerEpoch > 0 ? (step - 1) / run.batchesPerEpoch + 1 : 0;
      const QString head = name + QStringLiteral(",batch,%1,%2,").arg(step).arg(epoch);
      out << head << number(raw->at(i)->value, 10) << ',' << number(smooth->at(i)->value, 10) << ','
          << number(lr->at(i)->value, 10) << ",,,,,\n";
      for (size_t k = 0; k < run.lossNodes.size(); ++k) {
        const LossNode& n = run.lossNodes[k];
        int& j = next[k];
        if (j >= n.smooth->dataCount() || qint64(n.smooth->data()->at(j)->key) != step) continue;
        out << head << number(n.raw[j], 10) << ',' << number(n.smooth->data()->at(j)->value, 10) << ",,,,,,"
            << csvField(n.id) << '\n';
        ++j;
      }
    }
    for (const EpochPoint& e : run.epochs) {
      const QString step = run.batchesPerEpoch > 0 ? QString::number(e.epoch * run.batchesPerEpoch) : none;
      const QString head = name + QStringLiteral(",epoch,%1,%2,,,").arg(step).arg(e.epoch);
      const bool evalAccuracy = e.hasEval && run.hasAccuracy;
      out << head << number(e.lr, 10) << ',' << number(e.trainLoss, 10) << ','
          << (run.hasAccuracy ? number(e.trainAccuracy, 10) : none) << ',' << (e.hasEval ? number(e.evalLoss, 10) : none)
          << ',' << (evalAccuracy ? number(e.evalAccuracy, 10) : none) << ",\n";
      for (const LossNode& n : run.lossNodes) {
        const auto of = [&](const std::vector<train::LossPart>& parts) {
          const auto p = std::find_if(parts.begin(), parts.end(), [&](const train::LossPart& p) { return qstr(p.node) == n.id; });
          return p == parts.end() ? none : number(p->value, 10);
        };
        const QString train = of(e.trainParts), eval = of(e.evalParts);
        if (train.isEmpty() && eval.isEmpty()) continue;
        out << head << ',' << train << ",," << eval << ",," << csvField(n.id) << '\n';
      }
    }
  }
  out.flush();
  return out.status() == QTextStream::Ok && file.commit();
}

void TrainingPlots::exportPngWithDialog() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export plots"), QStringLiteral("training.png"), tr("PNG images (*.png)"));
  if (!path.isEmpty() && !exportPng(path))
    QMessageBox::warning(this, tr("Export plots"), tr("Could not write %1.").arg(QDir::toNativeSeparators(path)));
}

void TrainingPlots::exportCsvWithDialog() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export training data"), QStringLiteral("training.csv"),
                                                    tr("CSV files (*.csv)"));
  if (!path.isEmpty() && !exportCsv(path))
    QMessageBox::warning(this, tr("Export training data"),
                         tr("Could not write %1.").arg(QDir::toNativeSeparators(path)));
}

}  // namespace plexus::widgets
