#pragma once
// TrainingPlots: the curves of the training dashboard, for every run shown (this session's,
// live, and past runs read from their folders) overlaid in its own colour. Three plots, stacked with a shared look:
//   loss     training loss per batch, raw (thin, translucent) and smoothed (EMA, thick), vs the
//            global step (epoch - 1) * batches + batch;
//   epoch    per epoch: validation loss and accuracy (solid), training loss and accuracy
//            (dashed); loss on the left axis, accuracy in % on the right;
//   lr       the learning rate per batch, on the loss plot's x range.
// For a character model (setTextUnits) the loss axes read in nats with bits per character on
// the right (the same curves on a second scale), the hover adds perplexity, and accuracy is
// left off the plot: how often the most likely next character is right says little.
// A run of a graph with several loss nodes (BatchEnd::losses, EpochEnd::train_losses and
// ::eval_losses) also gets each node's own loss, unweighted, in its colour but paler or darker
// and thinner than the total: a smoothed line per batch, dash-patterned per node, and per epoch
// a line per split (training dashed, validation solid) with the node's own marker shape. The
// nodes are named by setLossNames (their labels, "MSE 'reconstruct'"), else by their ids; each
// name keeps one pattern and shape in every run, and the legends show the names shown. A run
// with one loss looks as it always has.
// A run may carry markers: a dashed vertical line across the loss and epoch plots where
// something happened to it (an edit made while paused), explained on hover.
// Wheel zooms, drag pans, double click fits; hovering shows the values under the pointer.
// Points are appended (never re-set) and the plots replot at most ~20 times a second, however
// fast the points arrive. It follows ThemeManager.
#include <QColor>
#include <QDateTime>
#include <QString>
#include <QStringList>
#include <QElapsedTimer>
#include <QSet>
#include <QTimer>
#include <QVector>
#include <QWidget>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "train/events.h"
#include "train/health.h"

class QCustomPlot;
class QCPAxis;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemTracer;
class QCPLayoutGrid;
class QCPLegend;
class QCPTextElement;
class QMouseEvent;
class QSplitter;
class QToolButton;

namespace plexus::widgets {

class TrainingPlots : public QWidget {
  Q_OBJECT

 public:
  enum class Series { RawLoss, SmoothedLoss, LearningRate, TrainLoss, TrainAccuracy, EvalLoss, EvalAccuracy };

  // Where a run is kept, as the dashboard knows it; the plots only pass it on to the run list.
  struct RunOrigin {
    QString folder;            // its run folder; "" when it has none
    QDateTime started;
    bool past = false;         // read from its folder, not trained in this session
    bool continuable = false;  // it has a final checkpoint to continue from
    QString note;              // more for its tool tip (test figures, what it continues)
    bool resumable = false;    // it stopped short and has a `last` checkpoint to resume from, in its folder
  };

  struct RunInfo {
    QString name, settings, status;  // status: "running", then what finishRun() said
    QColor colour;
    bool visible = true;
    bool active = false;  // begun and not finished
    std::optional<double> bestEvalAccuracy;  // a fraction; none before a validated epoch
    std::optional<double> bestEvalLoss;      // none before a validated epoch
    RunOrigin origin;
  };

  explicit TrainingPlots(QWidget* parent = nullptr);
  ~TrainingPlots() override;

  // A run's id is its own (removed runs' ids are not given out again); its colour follows from it.
  int beginRun(const QString& name, const QString& settingsSummary);  // the run's id
  void addBatches(int run, const std::vector<train::BatchEnd>& batches);
  void addEpoch(int run, const train::EpochEnd& epoch);
  void finishRun(int run, const QString& status);  // "completed", "stopped", "failed: …"
  // A marker of the run at `step` on the loss plot's axis and at `epoch` (fractional: 2.5 is
  // half-way through epoch 3) on the epoch plot's, with `tip` (plain text, lines apart) on hover.
  void addMarker(int run, double step, double epoch, const QString& tip);
  std::vector<std::pair<double, QString>> markers(int run) const;  // step and tip, in order
  void setRunVisible(int run, bool visible);
  void setRunName(int run, const QString& name);
  void setRunOrigin(int run, const RunOrigin& origin);
  void removeRun(int run);  // its curves and its row in the run list go
  void clear();

  int runCount() const { return int(runs_.size()); }
  std::vector<int> runIds() const;  // in the order the runs began
  int pointCount(int run) const;   // raw batch points
  RunInfo runInfo(int run) const;  // a default RunInfo for an unknown id
  QCPGraph* graph(int run, Series series) const;

  QCustomPlot* lossPlot() const { return loss_; }
  QCustomPlot* epochPlot() const { return epoch_; }
  QCustomPlot* lrPlot() const { return lr_; }

  // Loss as a character model's: nats on the left, bits/char on the right, no accuracy curves.
  void setTextUnits(bool on);
  bool textUnits() const { return textUnits_; }

  bool logScale() const { return logScale_; }
  void setLogScale(bool on);  // the loss axes of the loss and epoch plots

  // Back to following the data: every visible point in view, as while training.
  void fit();

  // What the run's loss nodes are called in the legends and the hover (node id -> label);
  // a node not named is called by its id. Set before the run's points come.
  void setLossNames(int run, const train::NodeInfos& names);
  // A several-loss run's loss nodes, ids in graph order as the points named them; none for a
  // run with one loss.
  QStringList lossNodes(int run) const;
  // A loss node's own curve: SmoothedLoss (per batch), TrainLoss or EvalLoss (per epoch); null
  // for another series or an unknown node.
  QCPGraph* lossNodeGraph(int run, const QString& node, Series series) const;

  // The three plots stacked, as one image of `size` (default: as on screen).
  bool exportPng(const QString& path, QSize size = {});
  // Every point of every run, one tidy row each: run,kind,step,epoch,loss,smoothed_loss,lr,
  // train_loss,train_accuracy,eval_loss,eval_accuracy,node (accuracies as fractions; empty =
  // n/a). `node` is empty on the rows of the total loss; a several-loss run adds, after each of
  // those, a row per loss node with its id in `node` and that node's own loss in the loss
  // columns (lr and accuracies empty): pandas' df[df.node.isna()] is the totals,
  // df[df.node == "reconstruct"] one node's.
  bool exportCsv(const QString& path) const;

 signals:
  void runAdded(int run);
  void runChanged(int run);  // name, status, visibility, best figures or origin
  void runRemoved(int run);
  void cleared();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  // An exponential moving average of a batch loss, debiased: no ramp up from 0 at the start.
  struct Ema {
    double sum = 0, decay = 1;  // decay: smoothing^n
    double add(double value);   // the average with `value`
  };
  struct EpochPoint {
    int epoch = 0;
    double trainLoss = 0, trainAccuracy = 0, evalLoss = 0, evalAccuracy = 0, lr = 0;
    bool hasEval = false;
    std::vector<train::LossPart> trainParts, evalParts;
  };
  // One loss node's own curves in a several-loss run.
  struct LossNode {
    QString id, name;
    Ema ema;
    QVector<double> raw;  // its batch losses, one per point of `smooth`
    QCPGraph *smooth, *trainLoss, *evalLoss;
  };
  // A loss node's name in the legends: the look every run's node of that name has.
  struct LossNodeKey {
    QString name;
    QCPGraph *loss, *perEpoch;
  };
  // A plot's legend of loss node names, on a row of its plot's header while some shown run has
  // loss nodes.
  struct LossNodeLegend {
    QCPLayoutGrid *header, *row;
    QCPLegend* legend;
  };
  struct Marker {
    double step = 0, epoch = 0;
    QString tip;
    QCPItemStraightLine *loss = nullptr, *perEpoch = nullptr;
  };
  struct Run {
    int id = 0;
    QString name, settings, status;
    bool visible = true;
    bool active = true;
    bool hasAccuracy = false;  // a classification run; regression reports accuracy 0
    int64_t batchesPerEpoch = 0;
    Ema ema;
    std::optional<double> bestEvalAccuracy, bestEvalLoss;
    RunOrigin origin;
    std::vector<EpochPoint> epochs;
    std::vector<Marker> markers;
    train::NodeInfos lossNames;
    std::vector<LossNode> lossNodes;
    QCPGraph *raw, *smooth, *lr, *trainLoss, *trainAccuracy, *evalLoss, *evalAccuracy;
  };

  Run* find(int run);
  const Run* find(int run) const;
  static QCPGraph* graphOf(const Run& run, Series series);
  static QCPGraph* graphOf(const LossNode& node, Series series);
  size_t lossNode(Run& run, const std::string& id);  // its index; made when first reported
  size_t lossNodeStyle(const QString& name);  // its index among every name shown so far
  void styleLossNode(const Run& run, const LossNode& node);
  void styleLossNodeKey(size_t style);
  static std::vector<QCPGraph*> lossNodeGraphs(const Run& run, Series series);
  void showLossNodeLegend(LossNodeLegend& l, bool shown);
  void removeGraphs(const Run& run);
  QCPGraph* newGraph(QCustomPlot* plot, QCPAxis* valueAxis = nullptr);
  void buildToolBar();
  void setUpPlots();
  void setUpAxes();
  void setUpInteractions(QCustomPlot* plot);
  void applyTheme();
  void styleRun(Run& run);
  void updateRunVisibility(Run& run);
  // A loss axis (nats, or bits on the right) as the log toggle says.
  void styleLossAxis(QCPAxis* axis);
  static void setLinear(QCPAxis* axis);
  void showInBits(QCustomPlot* plot);  // text units: the right axis as the left one's range in bits
  bool showsAccuracy(const Run& run) const { return run.hasAccuracy && !textUnits_; }
  void rebuildLegends();
  void scheduleReplot(std::initializer_list<QCustomPlot*> plots = {});  // {} = all
  void replotNow();
  void fitRanges();
  void stopFollowing() { following_ = false; }
  void hover(QCustomPlot* plot, QMouseEvent* event);
  void hideHover();
  QString hoverHeading(const Run& run) const;
  QString lossHover(double key, QPoint pixel);
  QString epochHover(double key, QPoint pixel);
  QString lrHover(double key, QPoint pixel);
  QString markerHover(QCustomPlot* plot, QPoint pixel) const;
  void exportPngWithDialog();
  void exportCsvWithDialog();

  std::vector<Run> runs_;
  int nextId_ = 0;  // never reused while the plots live (clear() aside): an id names one run
  QCustomPlot *loss_, *epoch_, *lr_;
  QSplitter* splitter_ = nullptr;
  std::vector<QCPTextElement*> titles_;
  std::vector<std::pair<Series, QCPGraph*>> styleKey_;  // the epoch plot's legend: which line is which
  std::vector<LossNodeKey> lossNodeKeys_;  // every loss node name shown so far, in order
  LossNodeLegend lossNodeLegends_[2];      // the loss plot's, the epoch plot's
  QCPItemTracer *lossTracer_, *epochTracer_, *lrTracer_;
  QToolButton* logButton_ = nullptr;
  QTimer replotTimer_;
  QElapsedTimer lastReplot_;
  QSet<QCustomPlot*> dirty_;  // plots with changes not drawn yet
  bool following_ = true;  // until the user zooms or pans, the view follows the data
  bool logScale_ = false;
  bool textUnits_ = false;
};

}  // namespace p