// Comparing two runs in the real window, offscreen: two run folders of a project (written by
// the run log as a training run writes them), selected together in the dashboard's run list,
// Compare Runs: the dashboard shows both runs' curves with their data, the structural
// difference of their graphs on the canvas and the settings that differ; Close Comparison goes
// back to the runs, and a run that cannot be read is reported.
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

#include <chrono>
#include <filesystem>

#include "dashboard.h"
#include "dashboard/run_comparison.h"
#include "dashboard/run_list.h"
#include "dashboard/training_plots.h"
#include "support/app_fixture.h"
#include "support/diff_fixture.h"
#include "editor/diff_marks.h"
#include "editor/graph_diff_canvas.h"
#include "editor/node_item.h"
#include "editor/node_scene.h"
#include "graph/project.h"
#include "main_window.h"
#include "session/run_log.h"
#include "training_controller.h"

using namespace plexus;
using plexus::app::MainWindow;
using widgets::DiffKind;
using widgets::RunList;
using widgets::TrainingPlots;
namespace fs = std::filesystem;

namespace {

struct Window : testing::TestWindow {
  Window() : TestWindow({1440, 900}) {}
};

// Epoch lines of a finished classification run whose losses fall from `start`.
std::vector<train::EpochEnd> epochs(int n, double start) {
  std::vector<train::EpochEnd> out;
  for (int e = 1; e <= n; ++e) {
    train::EpochEnd end;
    end.epoch = e;
    end.epochs = n;
    end.train_loss = start / e;
    end.train_accuracy = 0.6 + 0.05 * e;
    end.has_eval = true;
    end.eval_loss = start / e + 0.05;
    end.eval_accuracy = 0.55 + 0.05 * e;
    end.classes = 10;
    out.push_back(end);
  }
  return out;
}

// A run of `graph` kept where the project's runs go, as a training run leaves it.
fs::path writeRun(const QString& project, const graph::Graph& graph, const std::vector<train::EpochEnd>& history,
                  std::chrono::system_clock::time_point when) {
  const fs::path folder = session::new_run_folder(project.toStdString(), {}, when);
  session::RunHeader header;
  header.project = project.toStdString();
  header.settings = graph.training;
  session::RunLog log(folder, graph, header);
  for (const train::EpochEnd& e : history) log.record(e);
  train::RunResult result;
  result.epochs_completed = int(history.size());
  result.history = history;
  log.end(result);
  return folder;
}

std::vector<double> values(const QCPGraph* g) {
  std::vector<double> out;
  for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) out.push_back(it->value);
  return out;
}

}  // namespace

class TestAppCompare : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString project_;
  fs::path run_a_, run_b_;
  std::vector<train::EpochEnd> epochs_a_ = epochs(3, 2.0), epochs_b_ = epochs(4, 1.5);

 private slots:
  void initTestCase() {
    testing::isolate_app(dir_.path() + "/recovery");
    project_ = dir_.filePath("mlp.plexus");
    graph::save_project(project_.toStdString(), testing::diff_after());
    const auto now = std::chrono::system_clock::now();
    run_a_ = writeRun(project_, testing::diff_before(), epochs_a_, now - std::chrono::hours(2));
    run_b_ = writeRun(project_, testing::diff_after(), epochs_b_, now - std::chrono::hours(1));
  }

  void compareTwoSelectedRuns() {
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy loaded(w.dashboard(), &app::Dashboard::runsLoaded);
    QVERIFY(w.openFile(project_));
    QVERIFY(loaded.wait(20000));
    w.showDashboard();
    RunList* list = w.dashboard()->runs();
    TrainingPlots* plots = w.dashboard()->plots();
    QCOMPARE(plots->runCount(), 2);
    const std::vector<int> ids = plots->runIds();  // oldest first: "Run 1" is run A's folder

    // Click the newer run, Ctrl+click the older: the order of selection does not matter.
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(list->itemForRun(ids[1])).center());
    QVERIFY(!list->compareAction()->isEnabled());
    QTest::mouseClick(list->viewport(), Qt::LeftButton, Qt::ControlModifier,
                      list->visualItemRect(list->itemForRun(ids[0])).center());
    QVERIFY(list->compareAction()->isEnabled());
    QSignalSpy shown(w.dashboard(), &app::Dashboard::comparisonShown);
    list->compareAction()->trigger();
    QVERIFY(shown.wait(20000));
    QVERIFY(w.dashboard()->isComparing());
    QVERIFY(w.errors.isEmpty());

    widgets::RunComparison* comparison = w.dashboard()->comparison();
    QVERIFY(comparison->isVisible());
    const TrainingPlots* curves = comparison->plots();
    const std::vector<int> sides = curves->runIds();
    QCOMPARE(sides.size(), size_t(2));
    QCOMPARE(curves->runInfo(sides[0]).name, QString("A: Run 1"));
    QCOMPARE(curves->runInfo(sides[1]).name, QString("B: Run 2"));
    for (size_t i = 0; i < 2; ++i) {
      std::vector<double> eval, accuracy;
      for (const train::EpochEnd& e : i == 0 ? epochs_a_ : epochs_b_) {
        eval.push_back(e.eval_loss);
        accuracy.push_back(100 * e.eval_accuracy);
      }
      QCOMPARE(values(curves->graph(sides[i], TrainingPlots::Series::EvalLoss)), eval);
      QCOMPARE(values(curves->graph(sides[i], TrainingPlots::Series::EvalAccuracy)), accuracy);
    }

    // Run B's graph against run A's.
    widgets::GraphDiffCanvas* canvas = comparison->canvas();
    QVERIFY(canvas->isVisible());
    QCOMPARE(canvas->nodeMark("drop2")->kind(), DiffKind::Added);
    QCOMPARE(canvas->nodeMark("drop")->kind(), DiffKind::Removed);
    QCOMPARE(canvas->scene()->nodeItem("drop")->pos(), QPointF(280, 220));
    QCOMPARE(canvas->nodeMark("fc1")->note().back().text(), QString("out_features 128 → 64"));
    QCOMPARE(comparison->settingsTable()->rowCount(), 4);
    QVERIFY(comparison->summaryText().startsWith("1 node added, 1 removed"));

    // The dashboard's own runs are as they were; Close Comparison goes back to them.
    QCOMPARE(plots->runCount(), 2);
    QTest::mouseClick(comparison->findChild<QPushButton*>("closeComparison"), Qt::LeftButton);
    QVERIFY(!w.dashboard()->isComparing());
    QVERIFY(list->isVisible());
  }

  void aRunThatCannotBeReadIsReported() {
    Window w;
    w.show();
    QSignalSpy failed(w.dashboard(), &app::Dashboard::runOpenFailed);
    w.dashboard()->compareRunFolders(QString::fromStdString(run_a_.string()), dir_.filePath("gone"));
    QVERIFY(failed.wait(20000));
    QVERIFY2(w.errors.size() == 1 && w.errors[0].contains("gone"), qPrintable(w.errors.join('\n')));
    QVERIFY(!w.dashboard()->isComparing());
  }
};

QTEST_MAIN(TestAppCompare)
#include "test_app_compare.moc"
