#pragma once
// The node statistics panel: for the node selected on the canvas, what the training run has
// measured in it over the steps (NodeStatsModel), top to bottom:
//   its health issues with their reasons;
//   output      the mean with a ±std band;
//   zeros       the share of output values that are zero and of units that are dead, in %;
//   gradients   the gradient norm and the update/weight ratio (log axis, ~1e-3 marked), for
//               nodes with parameters only;
//   over time   the output's distribution as a heat map: x the step, y the value, colour the
//               share of values there;
//   latest      the last sample's histogram.
// Without a node, or before a run measured it, it says so. It redraws when the model changes
// while it is visible, and when shown again after changes it missed. It follows ThemeManager.
#include <QString>
#include <QWidget>

#include <vector>

class QCPBars;
class QCPColorMap;
class QCPGraph;
class QCPItemStraightLine;
class QCPTextElement;
class QCustomPlot;
class QLabel;
class QStackedWidget;

namespace plexus::widgets {

class NodeStatsModel;

class NodeStatsPanel : public QWidget {
  Q_OBJECT

 public:
  enum class Series { Mean, StdUpper, StdLower, Zeros, Dead, GradNorm, UpdateRatio };

  explicit NodeStatsPanel(NodeStatsModel* model, QWidget* parent = nullptr);

  void setNode(const QString& node);  // "" for none
  QString node() const { return node_; }

  // What it shows, for tests and scripts.
  bool showsStatistics() const;  // false: the empty state
  QString message() const;       // the empty state's text
  QString issuesText() const { return issuesPlain_; }  // the issues' reasons, one a line
  bool showsGradients() const;   // the gradient plot is there (a node with parameters)
  QCPGraph* graph(Series series) const;
  QCPColorMap* distribution() const { return distribution_; }
  QCPBars* latestHistogram() const { return latest_; }

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  QCustomPlot* addPlot(const QString& title);
  QCPGraph* addGraph(QCustomPlot* plot, const QString& name);
  void refresh();
  void fillDistribution();
  void fillLatest();
  void applyTheme();

  NodeStatsModel* model_;
  QString node_;
  bool stale_ = false;  // the model changed while hidden
  QStackedWidget* pages_;
  QLabel* empty_;
  QLabel* title_;
  QLabel* issues_;
  QString issuesPlain_;
  std::vector<QCustomPlot*> plots_;  // top to bottom
  std::vector<QCPTextElement*> titles_;
  QCustomPlot *output_, *zeros_, *gradients_, *overTime_, *latestPlot_;
  QCPGraph *mean_, *upper_, *lower_, *zeroShare_, *deadShare_, *gradNorm_, *updateRatio_;
  QCPItemStraightLine* ratioMark_;  // the update/weight ratio healthy training is near
  QCPColorMap* distribution_;
  QCPBars* latest_;
};

}  // namespace plexus::widgets
