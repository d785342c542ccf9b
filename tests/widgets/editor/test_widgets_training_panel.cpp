// The training settings panel edits the project's settings one undo step at a time with the
// same checked fields as layer parameters; the progress strip follows a run's events.
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QSpinBox>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>

#include "dashboard/training_progress.h"
#include "editor/device_selector.h"
#include "editor/model/graph_document.h"
#include "editor/param_editor.h"
#include "editor/training_panel.h"

using namespace plexus;
using namespace plexus::widgets;

namespace {

// Types `text` into a setting's field and presses Enter, as a user does.
void type(TrainingPanel& panel, const char* name, const QString& text) {
  QWidget* field = panel.editor(name)->editor();
  auto* line = qobject_cast<QLineEdit*>(field);
  if (auto* spin = qobject_cast<QAbstractSpinBox*>(field)) line = spin->findChild<QLineEdit*>();
  QVERIFY2(line, name);
  line->setFocus();
  line->selectAll();
  QTest::keyClicks(line, text);
  QTest::keyClick(line, Qt::Key_Return);
}

}  // namespace

class TestTrainingPanel : public QObject {
  Q_OBJECT

 private slots:
  void typedSettingsAreOneUndoStepEach() {
    GraphDocument doc;
    TrainingPanel panel(&doc);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    type(panel, "lr", "0.001");
    QCOMPARE(doc.graph().training.lr, 0.001);
    type(panel, "epochs", "12");
    QCOMPARE(doc.graph().training.epochs, int64_t(12));
    QCOMPARE(doc.undoStack()->count(), 2);
    doc.undoStack()->undo();
    QCOMPARE(doc.graph().training.epochs, graph::TrainingSettings{}.epochs);
    QCOMPARE(panel.editor("epochs")->error(), QString());
  }

  void outOfRangeTextIsRefusedWithTheReason() {
    GraphDocument doc;
    TrainingPanel panel(&doc);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    type(panel, "lr", "-1");
    QCOMPARE(doc.graph().training.lr, graph::TrainingSettings{}.lr);
    QVERIFY2(panel.editor("lr")->error().contains("between"), qPrintable(panel.editor("lr")->error()));
    QCOMPARE(doc.undoStack()->count(), 0);
    type(panel, "lr", "1e6");  // allowed: a diverging run is the trainer's to report
    QCOMPARE(doc.graph().training.lr, 1e6);
  }

  void choicesEnableWhatApplies() {
    GraphDocument doc;
    TrainingPanel panel(&doc);
    QVERIFY(panel.editor("momentum")->isEnabled());
    auto* optimizer = qobject_cast<QComboBox*>(panel.editor("optimizer")->editor());
    QVERIFY(optimizer);
    optimizer->setFocus();
    while (optimizer->currentText() != "adam" && optimizer->currentIndex() + 1 < optimizer->count())
      QTest::keyClick(optimizer, Qt::Key_Down);  // keyboard choice, as a user picks it
    QCOMPARE(doc.graph().training.optimizer, std::string("adam"));
    QVERIFY(!panel.editor("momentum")->isEnabled());
    QVERIFY(!panel.editor("gamma")->isEnabled());
    doc.undoStack()->undo();
    QCOMPARE(optimizer->currentText(), QStringLiteral("sgd"));
    QVERIFY(panel.editor("momentum")->isEnabled());
  }

  void followsTheDocumentAndLocks() {
    GraphDocument doc;
    TrainingPanel panel(&doc);
    graph::Graph g;
    g.training.batch_size = 64;
    g.training.device = "cuda:7";
    doc.reset(g, QString());
    auto* batch = qobject_cast<QSpinBox*>(panel.editor("batch_size")->editor());
    QVERIFY(batch);
    QCOMPARE(batch->value(), 64);
    QVERIFY(panel.editor("batch_size")->resetButton()->isEnabled());
    panel.setLocked(true);
    QVERIFY(!panel.editor("batch_size")->isEnabled());
    QVERIFY(!panel.deviceSelector()->isEnabled());
    panel.setLocked(false);
    QVERIFY(panel.editor("batch_size")->isEnabled());
    QCOMPARE(panel.deviceSelector()->currentDevice(), Device::cpu());  // no cuda:7 here
  }

  void progressFollowsARun() {
    TrainingProgress p;
    p.begin(3, 50, "CPU", "2026-11-25");
    train::BatchEnd b;
    b.epoch = 2;
    b.epochs = 3;
    b.batch = 25;
    b.batches = 50;
    b.samples_per_second = 1234;
    b.eta_seconds = 75;
    p.update(b);
    QCOMPARE(p.epochBar()->value(), 1);
    QCOMPARE(p.batchBar()->value(), 25);
    // A model whose products were not counted shows its rate alone.
    QCOMPARE(p.speedText(), QLocale().toString(1234) + " samples/s");
    b.samples_per_second = 41200;
    b.gflops = 98.4;
    b.peak_gflops = 228;
    p.update(b);
    QCOMPARE(p.speedText(), QLocale().toString(41200) + " samples/s · " + QLocale().toString(98.4, 'f', 1) +
                                " GFLOP/s · 43 % of this machine's peak (228 GFLOP/s, measured 2026-11-25)");
    b.peak_gflops = 51000;  // a GPU's peak: a small model's share keeps its digits
    p.update(b);
    QVERIFY2(p.speedText().endsWith(" GFLOP/s · 0.19 % of this machine's peak (" + QLocale().toString(51000) +
                                    " GFLOP/s, measured 2026-11-25)"),
             qPrintable(p.speedText()));
    b.gflops = 2040;
    p.update(b);
    QVERIFY2(p.speedText().contains(" GFLOP/s · 4.0 % of this machine's peak"), qPrintable(p.speedText()));
    b.gflops = 240;  // recorded above its peak (an older version): shown at 100 %, never more
    b.peak_gflops = 228;
    p.update(b);
    QVERIFY2(p.speedText().contains(" GFLOP/s · 100 % of this machine's peak (228 GFLOP/s"), qPrintable(p.speedText()));
    // The speed's tooltip says what the peak is of; a new run starts without one.
    auto* speed = p.findChild<QLabel*>(QStringLiteral("trainingSpeed"));
    QVERIFY(speed);
    p.setPeakDescription("the fastest our matrix product ran here");
    QCOMPARE(speed->toolTip(), QStringLiteral("The share of peak is of the fastest our matrix product ran here"));
    b.gflops = 98.4;
    b.peak_gflops = 0;  // a peak that could not be measured
    b.gflops = 1234.5;
    p.update(b);
    QCOMPARE(p.speedText(), QLocale().toString(41200) + " samples/s · " + QLocale().toString(1235) + " GFLOP/s");
    QVERIFY(p.findChildren<QLabel*>().size() >= 5);
    p.begin(3, 50, "CPU", "2026-11-25");
    QCOMPARE(speed->toolTip(), QString());
    p.finish("Completed", true);
    QCOMPARE(p.epochBar()->value(), 3);
    QCOMPARE(p.batchBar()->value(), 50);
    QCOMPARE(p.statusText(), QStringLiteral("Completed"));
    QCOMPARE(TrainingProgress::duration(42), QStringLiteral("42 s"));
    QCOMPARE(TrainingProgress::duration(185), QStringLiteral("3 min 05 s"));
    QCOMPARE(TrainingProgress::duration(3720), QStringLiteral("1 h 02 min"));
  }
};

QTEST_MAIN(TestTrainingPanel)
#include "test_widgets_training_panel.moc"
