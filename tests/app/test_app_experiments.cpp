// The Experiments page in the real window, offscreen: the sweep definition edited through its
// form and parameter list (each edit one undo step, a wrong value refused with the reason); a
// real sweep of the MLP on generated digits started with Run ▸ Start Sweep (plexus-cli sweep
// in a process), its table filled as the trials finish, the selected trials' curves overlaid,
// the best trial's settings applied to the project as one undo step; the sweep's folder opened
// in another window.
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <filesystem>
#include <optional>

#include "dashboard/training_plots.h"
#include "data/synthetic_digits.h"
#include "editor/model/graph_document.h"
#include "experiment/experiment_view.h"
#include "experiment/parallel_coordinates.h"
#include "experiment/sweep_editor.h"
#include "experiment/trial_table.h"
#include "experiments_page.h"
#include "graph/project.h"
#include "main_window.h"
#include "support/app_fixture.h"
#include "support/mlp_fixture.h"

using namespace plexus;
using app::ExperimentsPage;
namespace fs = std::filesystem;

namespace {

constexpr int kTimeoutMs = 5 * 60 * 1000;
constexpr int kTrials = 3;

}  // namespace

class TestAppExperiments : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString project_;

  QString path(const QString& name) const { return dir_.filePath(name); }

 private slots:
  void initTestCase() {
    testing::isolate_app(path(QStringLiteral("recovery")));
    data::write_synthetic_digits(fs::path(dir_.path().toStdString()) / "tiny", 600, 100);
    graph::Graph g = testing::mlp_graph("tiny", {{"fc1", 16}, {"fc2", 10}});
    g.training.epochs = 2;
    g.training.batch_size = 50;
    g.training.lr = 0.05;
    g.sweep.method = "random";
    g.sweep.trials = kTrials;
    g.sweep.parallel = 2;
    g.sweep.threads = 1;
    g.sweep.parameters = {{.target = "lr", .min = 0.01, .max = 0.3, .scale = "log"},
                          {.target = "fc1.out_features", .values = {int64_t(8), int64_t(32)}}};
    project_ = path(QStringLiteral("mlp.plexus"));
    graph::save_project(project_.toStdString(), g);
  }

  void theSweepDefinitionIsEditedAsUndoSteps() {
    testing::TestWindow w;
    QVERIFY(w.openFile(project_));
    widgets::GraphDocument* doc = w.document();
    widgets::SweepEditor* editor = w.experiments()->editor();
    QTableWidget* table = editor->parameterTable();
    QCOMPARE(table->rowCount(), 2);
    QCOMPARE(table->item(0, widgets::SweepEditor::TargetColumn)->text(), QStringLiteral("lr"));
    QCOMPARE(table->item(0, widgets::SweepEditor::LogColumn)->checkState(), Qt::Checked);
    QCOMPARE(table->item(1, widgets::SweepEditor::ValuesColumn)->text(), QStringLiteral("8, 32"));
    QVERIFY(editor->targets().contains(QStringLiteral("fc2.out_features")));
    QVERIFY(editor->targets().contains(QStringLiteral("batch_size")));

    // Add Parameter: batch_size, half and twice the project's 50.
    editor->addParameter(QStringLiteral("batch_size"));
    QCOMPARE(doc->graph().sweep.parameters.size(), size_t(3));
    QCOMPARE(doc->graph().sweep.parameters[2].values,
             (std::vector<graph::ParamValue>{int64_t(25), int64_t(50), int64_t(100)}));
    // Values typed into the list.
    table->item(1, widgets::SweepEditor::ValuesColumn)->setText(QStringLiteral("16, 64, 128"));
    QCOMPARE(doc->graph().sweep.parameters[1].values,
             (std::vector<graph::ParamValue>{int64_t(16), int64_t(64), int64_t(128)}));
    // A value that is not one is refused, with the reason, and the list is as it was.
    table->item(1, widgets::SweepEditor::ValuesColumn)->setText(QStringLiteral("16, wide"));
    QVERIFY2(editor->errorText().contains(QStringLiteral("'wide' is not a value")), qPrintable(editor->errorText()));
    QCOMPARE(doc->graph().sweep.parameters[1].values.size(), size_t(3));
    QCOMPARE(table->item(1, widgets::SweepEditor::ValuesColumn)->text(), QStringLiteral("16, 64, 128"));
    // What cannot run is said: a grid over a range.
    auto* method = editor->findChild<QWidget*>(QStringLiteral("method"));
    QVERIFY(method);
    graph::SweepSettings grid = doc->graph().sweep;
    grid.method = "grid";
    doc->setSweep(grid);
    QVERIFY2(editor->errorText().contains(QStringLiteral("a grid needs listed values")),
             qPrintable(editor->errorText()));
    // Each was one step: undone, the project's sweep is as saved.
    for (int i = 0; i < 3; ++i) doc->undoStack()->undo();
    QCOMPARE(doc->graph().sweep, graph::load_project(project_.toStdString()).sweep);
    QCOMPARE(table->rowCount(), 2);
    editor->removeParameter(0);
    QCOMPARE(doc->graph().sweep.parameters.front().target, std::string("fc1.out_features"));
    doc->undoStack()->undo();
    QCOMPARE(doc->graph().sweep.parameters.size(), size_t(2));
  }

  void aSweepRunsFromTheWindowAndItsBestSettingsApply() {
    qputenv("PLEXUS_RUNS_DIR", path(QStringLiteral("runs")).toUtf8());
    testing::TestWindow w;
    QVERIFY(w.openFile(project_));
    ExperimentsPage* page = w.experiments();
    widgets::ExperimentView* view = page->view();
    QVERIFY(page->startAction()->isEnabled());
    QVERIFY(!page->stopAction()->isEnabled());
    page->startAction()->trigger();
    QVERIFY2(w.errors.isEmpty(), qPrintable(w.errors.join('\n')));
    QVERIFY(page->isRunning());
    QVERIFY(page->stopAction()->isEnabled());
    QVERIFY(!page->startAction()->isEnabled());
    QVERIFY(page->folder().startsWith(path(QStringLiteral("runs/sweeps/"))));
    // The definition is fixed while it runs.
    QVERIFY(
        !(page->editor()->parameterTable()->item(0, widgets::SweepEditor::ValuesColumn)->flags() & Qt::ItemIsEditable));
    // The table fills as the trials run and finish.
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), kTrials, kTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(!page->isRunning(), kTimeoutMs);
    QVERIFY2(w.errors.isEmpty(), qPrintable(w.errors.join('\n') + '\n' + page->outputTail(20)));
    QTRY_VERIFY_WITH_TIMEOUT(page->state() && page->state()->complete(), 10000);
    const widgets::TrialTableModel* model = view->model();
    for (int row = 0; row < kTrials; ++row) {
      QCOMPARE(model->index(row, model->column(widgets::TrialTableModel::StatusColumn)).data().toString(),
               QStringLiteral("completed"));
      QCOMPARE(model->index(row, model->column(widgets::TrialTableModel::EpochsColumn)).data().toString(),
               QStringLiteral("2"));
      QVERIFY(!model->index(row, model->column(widgets::TrialTableModel::AccuracyColumn)).data().toString().isEmpty());
    }
    QVERIFY(view->parallel()->axisIsLog(0));  // lr's log range
    const int best = view->bestTrial();
    QVERIFY(best >= 1 && best <= kTrials);
    QCOMPARE(view->parallel()->bestTrial(), best);
    QVERIFY(view->summaryText().contains(QStringLiteral("Best: trial %1").arg(best)));

    // Two trials selected in the table: their curves overlaid, their lines emphasised.
    view->selectTrials({1, 2});
    QCOMPARE(view->selectedTrials().size(), 2);
    QCOMPARE(view->parallel()->selectedTrials(), (QList<int>{1, 2}));
    QCOMPARE(view->plots()->runCount(), 2);
    for (const int run : view->plots()->runIds()) QVERIFY(view->plots()->pointCount(run) > 0);
    // A click on trial 3's line selects it alone.
    w.showExperiments();
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    widgets::ParallelCoordinates* plot = view->parallel();
    // A point of trial 3's line where no other trial's line is nearer: lines cross, so look along it.
    std::optional<QPoint> on3;
    for (int axis = 0; axis + 1 < plot->axisCount() && !on3; ++axis)
      for (int step = 1; step < 20 && !on3; ++step) {
        const QPointF from = *plot->linePoint(3, axis), to = *plot->linePoint(3, axis + 1);
        const QPointF at = from + (to - from) * step / 20.;
        if (plot->trialAt(at.toPoint()) == 3) on3 = at.toPoint();
      }
    QVERIFY2(on3, "trial 3's line is nowhere the nearest: hit-testing picks another line everywhere");
    QTest::mouseClick(plot, Qt::LeftButton, {}, *on3);
    QCOMPARE(view->selectedTrials(), QList<int>{3});
    QCOMPARE(view->plots()->runCount(), 1);

    // Apply Best Settings: the best trial's lr and width in the project, one undo step.
    const sweep::TrialState& trial = page->state()->trials[size_t(best - 1)];
    QVERIFY(trial.assignment);
    const graph::Graph before = w.document()->graph();
    QVERIFY(view->applyBestButton()->isEnabled());
    QTest::mouseClick(view->applyBestButton(), Qt::LeftButton);
    const graph::Graph& after = w.document()->graph();
    for (const sweep::Setting& s : *trial.assignment) {
      if (s.target == "lr") QCOMPARE(after.training.lr, std::get<double>(s.value));
      if (s.target == "fc1.out_features") QCOMPARE(after.find("fc1")->params.at("out_features"), s.value);
    }
    QVERIFY(after.training.lr != before.training.lr);
    w.document()->undoStack()->undo();
    QCOMPARE(w.document()->graph(), before);

    // The folder opened in another window shows the same finished sweep, nothing to resume.
    testing::TestWindow other;
    QString why;
    QVERIFY2(other.experiments()->open(page->folder(), &why), qPrintable(why));
    QCOMPARE(other.experiments()->view()->model()->rowCount(), kTrials);
    QCOMPARE(other.experiments()->view()->bestTrial(), best);
    QVERIFY(!other.experiments()->resumeAction()->isEnabled());
    QVERIFY(!other.experiments()->open(path(QStringLiteral("tiny")), &why));
    QVERIFY2(why.contains(QStringLiteral("sweep.json")), qPrintable(why));
    qunsetenv("PLEXUS_RUNS_DIR");
  }
};

QTEST_MAIN(TestAppExperiments)
#include "test_app_experiments.moc"
