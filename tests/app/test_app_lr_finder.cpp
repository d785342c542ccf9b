// Run ▸ Find Learning Rate… in the real window, offscreen: the finder runs on its thread while
// the window stays responsive, its plot fills with the ramp's steps and marks the suggestion;
// Use This Rate sets the project's lr as one undo step, and Undo restores it; nothing else of the
// project changes and no run folder appears. While a run trains, the finder cannot start.
#include <QAction>
#include <QLabel>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <filesystem>

#include "dashboard/lr_finder_plot.h"
#include "data/synthetic_digits.h"
#include "editor/model/graph_document.h"
#include "graph/project.h"
#include "lr_finder_dialog.h"
#include "main_window.h"
#include "session/run_log.h"
#include "support/app_fixture.h"

using namespace plexus;
namespace fs = std::filesystem;

class TestAppLrFinder : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString project_;

 private slots:
  void initTestCase() {
    testing::isolate_app(dir_.filePath(QStringLiteral("recovery")));
    data::write_synthetic_digits(fs::path(dir_.filePath(QStringLiteral("digits")).toStdString()), 300, 40);
    // 270 training pictures (after the validation tenth) in batches of 10: 27 steps a pass.
    project_ = testing::save_example_mlp(dir_.filePath(QStringLiteral("mlp.plexus")), "digits", 1, 10);
  }

  void findsAndUsesTheRateAsOneUndoStep() {
    testing::TestWindow w;
    QVERIFY(w.openFile(project_));
    const graph::Graph before = w.document()->graph();
    QUndoStack* undo = w.document()->undoStack();
    const int steps_before = undo->count();

    app::LrFinderDialog* dialog = w.findLearningRate();
    QVERIFY(dialog);
    QVERIFY(dialog->isVisible());
    QVERIFY(!dialog->useButton()->isEnabled());  // nothing to use yet
    dialog->findButton()->click();
    QVERIFY(dialog->isRunning());
    QVERIFY(!dialog->findButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(!dialog->isRunning(), 120000);
    QVERIFY2(dialog->suggestion().has_value(), qPrintable(dialog->status()->text()));
    QVERIFY(dialog->plot()->pointCount() >= 8 && dialog->plot()->pointCount() <= 27);
    QVERIFY2(dialog->plot()->suggestionText().startsWith(QStringLiteral("suggested ")),
             qPrintable(dialog->plot()->suggestionText()));
    QVERIFY2(dialog->status()->text().contains(QStringLiteral("Suggested lr")), qPrintable(dialog->status()->text()));
    // Finding changed nothing: the project as it was, no undo step, no run folder.
    QVERIFY(w.document()->graph() == before);
    QCOMPARE(undo->count(), steps_before);
    QVERIFY(session::list_runs(project_.toStdString()).empty());

    QVERIFY(dialog->useButton()->isEnabled());
    dialog->useButton()->click();
    const double used = QString::number(*dialog->suggestion(), 'g', 3).toDouble();
    QCOMPARE(w.document()->graph().training.lr, used);
    QVERIFY(used != before.training.lr);
    QCOMPARE(undo->count(), steps_before + 1);
    graph::Graph expected = before;
    expected.training.lr = used;
    QVERIFY(w.document()->graph() == expected);  // the lr alone
    undo->undo();
    QCOMPARE(w.document()->graph().training.lr, before.training.lr);
    QVERIFY(w.document()->graph() == before);
  }

  void cancelStopsAtOnceAndTheDialogCanFindAgain() {
    testing::TestWindow w;
    QVERIFY(w.openFile(project_));
    app::LrFinderDialog* dialog = w.findLearningRate();
    QVERIFY(dialog);
    dialog->find();
    dialog->cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!dialog->isRunning(), 60000);
    QVERIFY2(dialog->status()->text().startsWith(QStringLiteral("Cancelled")), qPrintable(dialog->status()->text()));
    QVERIFY(!dialog->suggestion());
    QVERIFY(!dialog->useButton()->isEnabled());
    QVERIFY(dialog->findButton()->isEnabled());
  }

  void cannotStartWhileARunTrains() {
    testing::TestWindow w;
    QVERIFY(w.openFile(project_));
    auto* action = w.findChild<QAction*>(QStringLiteral("lrFinderAction"));
    QVERIFY(action);
    QVERIFY(action->isEnabled());
    QVERIFY(w.startTraining());
    QVERIFY(!action->isEnabled());
    QVERIFY(!w.findLearningRate());
    w.training()->waitForFinished(-1);
    QTRY_VERIFY_WITH_TIMEOUT(action->isEnabled(), 10000);
  }
};

QTEST_MAIN(TestAppLrFinder)
#include "test_app_lr_finder.moc"
