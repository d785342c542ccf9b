#pragma once
// Two past runs side by side: their curves overlaid in TrainingPlots (run A and run B in two
// colours, the legend naming them), the structural difference of their graphs on a read-only
// canvas (GraphDiffCanvas), a summary line ("1 node added, 1 parameter changed, 2 settings
// differ") and a table of the dataset and training settings that differ. Run A is the older
// run: the difference reads "what B changed".
#include <QWidget>

#include "graph/diff.h"
#include "graph/graph.h"
#include "session/run_log.h"

class QLabel;
class QTableWidget;

namespace plexus::widgets {

class GraphDiffCanvas;
class TrainingPlots;

struct ComparedRun {
  QString name;  // as the run list calls it ("Run 2"), or its folder's name
  session::RunRecord record;
  graph::Graph graph;  // the project it trained (its folder's project.plexus)
};

class RunComparison : public QWidget {
  Q_OBJECT

 public:
  explicit RunComparison(QWidget* parent = nullptr);

  // Shows `a` against `b`, replacing what was shown.
  void compare(const ComparedRun& a, const ComparedRun& b);

  TrainingPlots* plots() const { return plots_; }
  GraphDiffCanvas* canvas() const { return canvas_; }
  QTableWidget* settingsTable() const { return settings_; }
  QString titleText() const;
  QString summaryText() const;

 signals:
  void closeRequested();

 private:
  void showTitle();
  void showSettings();

  TrainingPlots* plots_;
  GraphDiffCanvas* canvas_;
  QTableWidget* settings_;
  QLabel* title_;
  QLabel* summary_;
  QLabel* same_settings_;
  graph::GraphDiff diff_;
  QString side_a_, side_b_;  // "A: Run 1", "B: Run 3"
  QString started_a_, started_b_;
};

}  // namespace plexus::widgets
