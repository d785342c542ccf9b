// File > Export > ONNX in the real window, offscreen: the checkpoint dialog starts in the
// project's latest run, the export runs off the UI thread and the status bar says what was
// written; a failure is shown and writes nothing. File > Export > PyTorch Code and C++ Code the
// same way.
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include "data/synthetic_digits.h"
#include "graph/project.h"
#include "main_window.h"
#include "training_controller.h"
#include "support/app_fixture.h"

using namespace plexus;
using plexus::app::MainWindow;
using plexus::app::TrainingController;

namespace {

struct Window : testing::TestWindow {
  QStringList captions;
  QString checkpoint, onnx, code;  // the dialogs' answers
  QStringList suffixes;             // asked of the code dialog
  Window() {
    chooseCheckpoint = [this](const QString& caption) {
      captions << caption;
      return checkpoint;
    };
    chooseOnnxPath = [this](const QString& caption) {
      captions << caption;
      return onnx;
    };
    chooseCodePath = [this](const QString& caption, const QString& suffix) {
      captions << caption;
      suffixes << suffix;
      return code;
    };
  }
  void clickExportOnnx() { findChild<QAction*>(QStringLiteral("exportOnnxAction"))->trigger(); }
  void click(const char* action) { findChild<QAction*>(QString::fromLatin1(action))->trigger(); }
};

}  // namespace

class TestAppOnnxExport : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString project_, run_;

 private slots:
  // A project on a small generated dataset, trained once in the window: the run to export.
  void initTestCase() {
    testing::isolate_app(dir_.path() + "/recovery");
    data::write_synthetic_digits(std::filesystem::path(dir_.path().toStdString()) / "tiny", 300, 100);
    graph::Graph g = graph::load_project(PLEXUS_SOURCE_DIR "/examples/mnist_mlp.plexus");
    g.dataset.path = "tiny";
    g.training.epochs = 1;
    g.training.batch_size = 50;
    project_ = dir_.filePath("tiny_mlp.plexus");
    graph::save_project(project_.toStdString(), g);

    Window w;
    QVERIFY(w.openFile(project_));
    QSignalSpy finished(w.training(), &TrainingController::finished);
    QVERIFY(w.startTraining());
    QVERIFY(finished.wait(120000));
    const QStringList runs = QDir(dir_.filePath("tiny_mlp.runs")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QCOMPARE(runs.size(), 1);
    run_ = dir_.filePath("tiny_mlp.runs/" + runs[0]);
  }

  void exportsACheckpointOfTheRun() {
    Window w;
    QVERIFY(w.openFile(project_));
    QCOMPARE(w.latestRunDirectory(), run_);  // where the checkpoint dialog starts
    w.checkpoint = run_ + "/final.safetensors";
    w.onnx = dir_.filePath("tiny.onnx");
    w.clickExportOnnx();
    QCOMPARE(w.captions.size(), 2);  // a checkpoint, then where to write
    QTRY_VERIFY_WITH_TIMEOUT(w.statusBar()->currentMessage().startsWith("Exported"), 30000);
    QCOMPARE(w.statusBar()->currentMessage(),
             "Exported " + QDir::toNativeSeparators(w.onnx) + " (x float32 [N, 1, 28, 28] -> logits float32 [N, 10])");
    QVERIFY(QFileInfo(w.onnx).size() > 0);
    QVERIFY(w.errors.isEmpty());
  }

  void exportsPytorchAndCppCode() {
    Window w;
    QVERIFY(w.openFile(project_));
    w.checkpoint = run_ + "/final.safetensors";
    const struct {
      const char* action;
      QString suffix, starts;
    } cases[] = {{"exportPytorchAction", ".py", "\"\"\"tiny_mlp: a PyTorch model"},
                 {"exportCppAction", ".cpp", "// tiny_mlp: a Plexus model exported as C++"}};
    for (const auto& c : cases) {
      w.statusBar()->clearMessage();
      w.code = dir_.filePath("tiny_mlp" + c.suffix);
      w.click(c.action);
      QCOMPARE(w.suffixes.last(), c.suffix);
      QTRY_VERIFY_WITH_TIMEOUT(w.statusBar()->currentMessage().startsWith("Exported"), 30000);
      QVERIFY2(w.statusBar()->currentMessage().contains("(class TinyMlp, "), qPrintable(w.statusBar()->currentMessage()));
      QFile f(w.code);
      QVERIFY(f.open(QIODevice::ReadOnly));
      QVERIFY2(f.readAll().startsWith(c.starts.toUtf8()), qPrintable(w.code));
    }
    QCOMPARE(w.captions.size(), 4);  // a checkpoint, then where to write, for each
    QVERIFY(w.errors.isEmpty());
  }

  void aFailedExportIsShownAndWritesNothing() {
    Window w;
    QVERIFY(w.openFile(project_));
    w.checkpoint = dir_.filePath("tiny_mlp.plexus");  // not a checkpoint
    w.onnx = dir_.filePath("failed.onnx");
    QFuture<QString> done = w.exportOnnx(w.checkpoint, w.onnx);
    QTRY_VERIFY_WITH_TIMEOUT(done.isFinished(), 30000);
    QCOMPARE(w.errors.size(), 1);
    QVERIFY2(w.errors[0].contains("tiny_mlp.plexus"), qPrintable(w.errors[0]));
    QCOMPARE(done.result(), w.errors[0]);
    QVERIFY(!QFileInfo::exists(w.onnx));
  }

  void cancellingTheDialogExportsNothing() {
    Window w;
    QVERIFY(w.openFile(project_));
    w.clickExportOnnx();  // the checkpoint dialog answers "" (cancel)
    QCOMPARE(w.captions.size(), 1);
    QVERIFY(w.errors.isEmpty());
    QVERIFY(!w.statusBar()->currentMessage().startsWith("Exporting"));
  }
};

QTEST_MAIN(TestAppOnnxExport)
#include "test_app_onnx_export.moc"
