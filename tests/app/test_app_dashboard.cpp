// The training loop in the GUI, offscreen and end to end: open a project on a small generated
// dataset, click Train, wait; stop mid-epoch; a diverging run; closing while training; the files
// of an image folder a run leaves out.
#include <QCheckBox>
#include <QDirIterator>
#include <QLabel>
#include <QListView>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>
#include <QToolButton>
#include <QUndoStack>

#include <filesystem>
#include <fstream>

#include "dashboard/class_report_view.h"
#include "dashboard/confusion_matrix.h"
#include "dashboard.h"
#include "dataset/dataset_preview.h"
#include "graph/dataset_info.h"
#include "graph/project.h"
#include "io/safetensors.h"
#include "editor/model/graph_document.h"
#include "layers/compiler.h"
#include "main_window.h"
#include "data/image_file.h"
#include "data/synthetic_digits.h"
#include "train/checkpoint.h"
#include "training_controller.h"
#include "dashboard/training_plots.h"
#include "dashboard/training_progress.h"
#include "support/app_fixture.h"
#include "support/wide_project.h"
#include "util/out_of_memory.h"

using namespace plexus;
using plexus::app::MainWindow;
using plexus::app::TrainingController;

namespace {

constexpr int64_t kTrain = 600, kTest = 200, kBatch = 50;
// The default validation fraction (0.1) holds 60 of the training images out; 540 train.
constexpr int64_t kVal = 60, kFit = kTrain - kVal;

// Its questions answered `answer` (Discard unless a test says otherwise) and recorded.
struct Window : testing::TestWindow {
  QMessageBox::StandardButton answer = QMessageBox::Discard;
  QStringList asked;
  Window() {
    ask = [this](const QString&, const QString& text, QMessageBox::StandardButtons) {
      asked << text;
      return answer;
    };
  }
};

// The runs of this session in the plots (the project's past runs, read when it opens, aside).
int sessionRuns(const MainWindow& w) {
  const widgets::TrainingPlots* plots = w.dashboard()->plots();
  const std::vector<int> ids = plots->runIds();
  return int(std::count_if(ids.begin(), ids.end(), [&](int id) { return !plots->runInfo(id).origin.past; }));
}

QStringList filesUnder(const QString& dir, const QString& pattern) {
  QStringList out;
  QDirIterator it(dir, {pattern}, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) out << it.next();
  return out;
}

}  // namespace

class TestDashboard : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString project_;

 private slots:
  void initTestCase() {
    testing::isolate_app(dir_.path() + "/recovery");
    data::write_synthetic_digits(std::filesystem::path(dir_.path().toStdString()) / "tiny", kTrain, kTest);
    project_ = testing::save_example_mlp(dir_.filePath("tiny_mlp.plexus"), "tiny", 2, kBatch);
  }

  void clickingTrainRunsToTheEndAndShowsEverything() {
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openFile(project_));
    QSignalSpy finished(w.training(), &TrainingController::finished);
    QSignalSpy epochs(w.training(), &TrainingController::epochEnded);
    QSignalSpy started(w.training(), &TrainingController::started);
    QSignalSpy batches(w.training(), &TrainingController::batches);
    w.click(w.trainAction());
    QVERIFY(w.training()->isRunning());
    QVERIFY(!w.trainAction()->isEnabled());
    QVERIFY(finished.wait(120000));
    QCOMPARE(finished.at(0).at(0).value<train::Finished>().cancelled, false);
    QCOMPARE(epochs.count(), 2);

    app::Dashboard* d = w.dashboard();
    // The speed: the last batch's rate, the FLOPs the example's products need at that rate
    // (2 x (2 x 784·128 + 3 x 128·10) per example: graph/compute.h) and the share of this
    // machine's peak, measured by the worker and kept in the user's cache folder.
    const app::RunInfo info = started.at(0).at(0).value<app::RunInfo>();
    QVERIFY2(info.peak.gflops > 0, info.peak.key.c_str());
    QVERIFY(QFile::exists(QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation) +
                          "/plexus/machine-peak.json"));
    const train::BatchEnd last_batch = batches.last().at(0).value<std::vector<train::BatchEnd>>().back();
    QCOMPARE(last_batch.gflops, last_batch.samples_per_second * 409088 / 1e9);
    // The peak shown is the measured one, raised by any faster rate the run reached before this
    // batch (a measurement taken on a busy machine is low): never a share over 100 %.
    double peak = std::max(info.peak.gflops, epochs.at(0).at(0).value<train::EpochEnd>().gflops);
    for (const QList<QVariant>& signal : batches)
      for (const train::BatchEnd& b : signal.at(0).value<std::vector<train::BatchEnd>>()) peak = std::max(peak, b.gflops);
    QCOMPARE(last_batch.peak_gflops, peak);
    const QString speed = d->progress()->speedText();
    const QRegularExpression pattern(R"(^([\d,]+) samples/s · ([\d.,]+) GFLOP/s · ([\d.]+) % of this machine's peak )"
                                   R"(\(([\d,]+) GFLOP/s, measured (\d{4}-\d\d-\d\d)\)$)");
    const QRegularExpressionMatch m = pattern.match(speed);
    QVERIFY2(m.hasMatch(), qPrintable(speed));
    QCOMPARE(m.captured(1), QLocale().toString(last_batch.samples_per_second, 'f', 0));
    const double percent = 100 * last_batch.gflops / peak;
    QCOMPARE(m.captured(3), QString::number(percent, 'f', train::percent_decimals(percent)));
    QCOMPARE(m.captured(4), QLocale().toString(peak, 'f', 0));
    QCOMPARE(m.captured(5), QString::fromStdString(info.peak.measured));
    QCOMPARE(d->plots()->runCount(), 1);
    QCOMPARE(d->plots()->pointCount(0), int(2 * ((kFit + kBatch - 1) / kBatch)));  // every batch, none lost
    QCOMPARE(d->progress()->epochBar()->value(), d->progress()->epochBar()->maximum());
    QCOMPARE(d->progress()->batchBar()->value(), d->progress()->batchBar()->maximum());
    QCOMPARE(d->confusion()->total(), kVal);
    QVERIFY2(d->testText().contains(QLocale().toString(qlonglong(kTest)) + " examples"), qPrintable(d->testText()));
    QVERIFY2(d->testText().contains("accuracy"), qPrintable(d->testText()));
    const auto last = epochs.at(1).at(0).value<train::EpochEnd>();
    QVERIFY2(last.eval_accuracy > 0.5, qPrintable(QString::number(last.eval_accuracy)));
    QCOMPARE(int64_t(d->preview()->predictions().predicted.size()), kVal);
    QVERIFY(d->errorText().isEmpty());
    QVERIFY(w.trainAction()->isEnabled());

    // The run handed over its splits; the predictions are the validation split's alone.
    widgets::DatasetPreview* preview = d->preview();
    QCOMPARE(preview->splitCount(), 3);
    QCOMPARE(preview->splitBar()->tabText(0), QStringLiteral("Training (%1)").arg(kFit));
    QCOMPARE(preview->currentSplit(), 1);
    QCOMPARE(int64_t(preview->shownSamples().size()), kVal);
    QTRY_VERIFY_WITH_TIMEOUT(!preview->isLoading(), 10000);  // pages are read in the background
    QVERIFY(preview->gallery()->model()->index(0, 0).data(widgets::VerdictRole).toInt() != int(widgets::Verdict::None));
    preview->showSplit(2);
    QCOMPARE(int64_t(preview->shownSamples().size()), kTest);
    QTRY_VERIFY_WITH_TIMEOUT(!preview->isLoading(), 10000);
    QCOMPARE(preview->gallery()->model()->index(0, 0).data(widgets::VerdictRole).toInt(), int(widgets::Verdict::None));

    // A click on a confusion-matrix cell shows exactly those samples, of the validation split.
    w.dashboard()->confusion()->show();
    const QRect cell = d->confusion()->cellRect(3, 3);
    QTest::mouseClick(d->confusion(), Qt::LeftButton, {}, cell.center());
    QCOMPARE(d->preview()->currentSplit(), 1);
    QCOMPARE(d->preview()->mode(), widgets::DatasetPreview::Mode::Selection);
    QCOMPARE(int64_t(d->preview()->shownSamples().size()), d->confusion()->count(3, 3));
    QVERIFY(d->confusion()->count(3, 3) > 0);

    // The checkpoints are next to the project and load into a freshly compiled model.
    const QStringList finals = filesUnder(dir_.filePath("tiny_mlp.runs"), "final.safetensors");
    QCOMPARE(finals.size(), 1);
    QCOMPARE(filesUnder(dir_.filePath("tiny_mlp.runs"), "best.safetensors").size(), 1);
    const graph::Graph g = w.document()->graph();
    layers::CompiledGraph fresh = layers::compile(g, graph::DatasetInfo{{1, 28, 28}, {}, 10}, 99);
    train::load_checkpoint(finals[0].toStdString(), *fresh.model);

    // The run's end brought the final model's per-class table to the front beside the plots:
    // ten classes and the two averages, each class's support summing to the test split.
    QCOMPARE(d->figureTabs()->currentWidget(), d->classReport());
    QCOMPARE(d->classReport()->rows(), 12);
    int64_t support = 0;
    for (int row = 0; row < 10; ++row) support += d->classReport()->text(row, 4).toLongLong();
    QCOMPARE(support, kTest);
    const QString macro_f1 = d->classReport()->text(10, 3);

    // Run > Evaluate on Test Set of the final checkpoint shows what the run's end showed.
    const QString shown = d->testText();
    const QString accuracy = shown.mid(shown.indexOf("accuracy"));
    QVERIFY(!accuracy.isEmpty());
    QSignalSpy evaluated(d, &app::Dashboard::testEvaluated);
    w.chooseCheckpoint = [&](const QString&) { return finals[0]; };
    w.findChild<QAction*>("evaluateAction")->trigger();
    QVERIFY(evaluated.wait(60000));
    QVERIFY2(d->testText().startsWith("Test set, final.safetensors ("), qPrintable(d->testText()));
    QCOMPARE(d->testText().mid(d->testText().indexOf("accuracy")), accuracy);
    QCOMPARE(d->classReport()->text(10, 3), macro_f1);
    // A file that is not a checkpoint: the reason, and the app carries on.
    w.chooseCheckpoint = [&](const QString&) { return project_; };
    w.findChild<QAction*>("evaluateAction")->trigger();
    QVERIFY(evaluated.wait(60000));
    QVERIFY2(d->testText().startsWith("Cannot evaluate tiny_mlp.plexus: "), qPrintable(d->testText()));

    // Export the trained weights.
    const QString exported = dir_.filePath("weights.safetensors");
    w.chooseWeightsPath = [&](const QString&) { return exported; };
    QCOMPARE(w.training()->exportWeights(exported), QString());
    QVERIFY(QFileInfo(exported).size() > 0);
  }

  void theTrainingTabShowsTheValidationSamplesBeforeAnyRun() {
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openFile(project_));
    QSignalSpy loaded(w.dashboard(), &app::Dashboard::previewLoaded);
    auto* tabs = w.findChild<QTabWidget*>();
    QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, {}, tabs->tabBar()->tabRect(1).center());
    QCOMPARE(tabs->currentWidget(), w.dashboard());
    QVERIFY(loaded.wait(20000));
    widgets::DatasetPreview* preview = w.dashboard()->preview();
    QCOMPARE(int64_t(preview->shownSamples().size()), kVal);
    QVERIFY(preview->showsImages());
    const auto histogramTotal = [&] {
      int total = 0;
      for (int c = 0; c < 10; ++c) total += preview->histogramCount(c);
      return total;
    };
    QCOMPARE(histogramTotal(), int(kVal));

    // Every split, each with its counts; the project augments nothing.
    QTabBar* splits = preview->splitBar();
    QCOMPARE(splits->count(), 3);
    QCOMPARE(splits->tabText(1), QStringLiteral("Validation (%1)").arg(kVal));
    QCOMPARE(splits->tabText(2), QStringLiteral("Test (%1)").arg(kTest));
    QTest::mouseClick(splits, Qt::LeftButton, {}, splits->tabRect(0).center());
    QCOMPARE(int64_t(preview->shownSamples().size()), kFit);
    QCOMPARE(histogramTotal(), int(kFit));
    QVERIFY(!preview->augmentedBox()->isEnabled());

    // Augmentation set: the preview reloads, and the training images can be shown shifted.
    graph::DatasetBinding shifted = w.document()->graph().dataset;
    shifted.augment_shift = 3;
    w.document()->setDataset(shifted);
    w.dashboard()->previewDataset(w.document()->graph(), dir_.path());
    QVERIFY(loaded.wait(20000));
    preview->showSplit(0);
    QVERIFY(preview->augmentedBox()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(!preview->isLoading(), 10000);
    const auto thumbnails = [&] {
      std::vector<QImage> out;
      for (int row = 0; row < 10; ++row)
        out.push_back(preview->gallery()->model()->index(row, 0).data(Qt::DecorationRole).value<QImage>());
      return out;
    };
    const std::vector<QImage> plain = thumbnails();
    QTest::mouseClick(preview->augmentedBox(), Qt::LeftButton);
    QVERIFY(preview->showsAugmented());
    QTRY_VERIFY_WITH_TIMEOUT(!preview->isLoading(), 10000);
    QVERIFY(thumbnails() != plain);
  }

  void stopMidEpochReturnsWithinABatch() {
    Window w;
    w.show();
    QVERIFY(w.openFile(project_));
    graph::TrainingSettings t = w.document()->graph().training;
    t.epochs = 500;
    t.batch_size = 10;
    w.document()->setTraining(t);
    QSignalSpy batches(w.training(), &TrainingController::batches);
    QSignalSpy finished(w.training(), &TrainingController::finished);
    QVERIFY(w.startTraining());
    QVERIFY(batches.wait(60000));
    w.click(w.stopAction());
    QVERIFY(finished.wait(10000));
    QVERIFY(finished.at(0).at(0).value<train::Finished>().cancelled);
    QVERIFY(!w.training()->isRunning());
    QVERIFY(w.trainAction()->isEnabled());
    QVERIFY(w.dashboard()->progress()->statusText().startsWith("Stopped"));
    w.answer = QMessageBox::Discard;
  }

  void divergingRunShowsAnErrorAndTheAppCarriesOn() {
    Window w;
    w.show();
    QVERIFY(w.openFile(project_));
    graph::TrainingSettings t = w.document()->graph().training;
    t.lr = 1e6;
    w.document()->setTraining(t);
    QSignalSpy failed(w.training(), &TrainingController::failed);
    QVERIFY(w.startTraining());
    QVERIFY(failed.wait(60000));
    const QString shown = w.dashboard()->errorText();
    QVERIFY2(shown.contains("NaN") || shown.contains("infinite"), qPrintable(shown));
    QVERIFY(w.statusBar()->currentMessage().contains("failed"));
    QVERIFY(!w.training()->isRunning());
    QVERIFY(w.trainAction()->isEnabled());
    // The project is intact and can train again.
    w.document()->undoStack()->undo();
    QCOMPARE(w.document()->graph().training.lr, 0.1);
    QSignalSpy finished(w.training(), &TrainingController::finished);
    QVERIFY(w.startTraining());
    QVERIFY(finished.wait(120000));
    QVERIFY(w.dashboard()->errorText().isEmpty());
    QCOMPARE(sessionRuns(w), 2);
  }

  void outOfMemoryShowsTheMessageAndTheAppCarriesOn() {
    // A step the allocator's test hook refuses once training has started (support/wide_project.h:
    // the wide layer's [64, 4096] output is the first request of 1 MiB): the banner says where and
    // how much, and the next run trains.
    const std::filesystem::path dir = std::filesystem::path(dir_.path().toStdString()) / "wide";
    std::filesystem::create_directories(dir);
    const std::filesystem::path project = testing::write_wide_project(dir, 4096, 64, 300);
    const auto hook_off = qScopeGuard([] { refuse_allocations_from(0); });
    Window w;
    w.show();
    QVERIFY(w.openFile(QString::fromStdString(project.string())));
    graph::TrainingSettings t = w.document()->graph().training;
    t.epochs = 1000;
    w.document()->setTraining(t);
    const QMetaObject::Connection arm =
        connect(w.training(), &TrainingController::started, this, [] { refuse_allocations_from(512 << 10); });
    QSignalSpy failed(w.training(), &TrainingController::failed);
    QVERIFY(w.startTraining());
    QVERIFY(failed.wait(120000));
    disconnect(arm);
    const QString shown = w.dashboard()->errorText();
    QVERIFY2(shown.contains("out of memory at epoch ") && shown.contains(", batch ") &&
                 shown.contains("cannot allocate ") && shown.contains(" float32 (the machine has "),
             qPrintable(shown));
    QVERIFY(w.statusBar()->currentMessage().contains("failed"));
    QVERIFY(!w.training()->isRunning());
    QVERIFY(w.trainAction()->isEnabled());
    t.epochs = 1;
    w.document()->setTraining(t);
    QSignalSpy finished(w.training(), &TrainingController::finished);
    QVERIFY(w.startTraining());
    QVERIFY(finished.wait(120000));
    QVERIFY(w.dashboard()->errorText().isEmpty());
  }

  // bf16 asked for on a CPU without AVX512_BF16 (the kernel turned off here): the run computes
  // in FP32 and the dashboard keeps saying so, after the status bar has moved on; the next run
  // starts with no notes. The dashboard says how many parameters train, the second run's with a
  // node frozen.
  void runNotesStayOnTheDashboard() {
    qputenv("PLEXUS_CPU_BF16", "off");
    const auto restore = qScopeGuard([] { qunsetenv("PLEXUS_CPU_BF16"); });
    Window w;
    w.show();
    QVERIFY(w.openFile(project_));
    graph::TrainingSettings t = w.document()->graph().training;
    t.precision = "bf16";
    w.document()->setTraining(t);
    QSignalSpy finished(w.training(), &TrainingController::finished);
    w.click(w.trainAction());
    QVERIFY(finished.wait(120000));
    const QString notes = w.dashboard()->notesText();
    QVERIFY2(notes.contains("precision bf16 needs a CPU with AVX512_BF16 (or PLEXUS_CPU_BF16 is off); this run "
                            "computes in fp32"),
             qPrintable(notes));
    QCOMPARE(w.statusBar()->currentMessage(), QStringLiteral("Training finished"));
    const QLabel* trained = w.dashboard()->findChild<QLabel*>(QStringLiteral("trainedParameters"));
    QCOMPARE(trained->text(), QStringLiteral("all 101,770 parameters train"));
    w.document()->undoStack()->undo();
    QCOMPARE(w.document()->graph().training.precision, std::string("fp32"));
    // With fc1 frozen, the dashboard says how few train.
    QCOMPARE(w.document()->setFrozen({"fc1"}, true), 1);
    QVERIFY(w.startTraining());
    QVERIFY(w.dashboard()->notesText().isEmpty());
    QVERIFY(finished.wait(120000));
    QVERIFY(w.dashboard()->notesText().isEmpty());
    QCOMPARE(trained->text(), QStringLiteral("1,290 of 101,770 parameters train"));
    QVERIFY(trained->isVisible());
  }

  // Train from Checkpoint (Matching Nodes) with fc1 frozen since: the run starts from the first
  // run's weights, and its final fc1 is bit for bit the checkpoint's while fc2 learned on.
  void startingFromACheckpointKeepsAFrozenNodeAsItWas() {
    QTemporaryDir other;  // its own runs folder: the other tests count theirs
    const QString project =
        testing::save_example_mlp(other.filePath("frozen.plexus"), (dir_.path() + "/tiny").toStdString(), 1, kBatch);
    Window w;
    w.show();
    QVERIFY(w.openFile(project));
    QSignalSpy finished(w.training(), &TrainingController::finished);
    QVERIFY(w.startTraining());
    QVERIFY(finished.wait(120000));
    const QStringList first = filesUnder(other.path(), "final.safetensors");
    QCOMPARE(first.size(), 1);
    QCOMPARE(w.document()->setFrozen({"fc1"}, true), 1);
    QVERIFY(w.startTraining({}, {}, first[0]));
    QVERIFY(finished.wait(120000));
    QStringList second = filesUnder(other.path(), "final.safetensors");
    second.removeAll(first[0]);
    QCOMPARE(second.size(), 1);
    const io::SafetensorsFile a = io::load_safetensors(first[0].toStdString());
    const io::SafetensorsFile b = io::load_safetensors(second[0].toStdString());
    const auto values = [](const io::SafetensorsFile& f, const std::string& name) {
      return f.find("model." + name)->to_vector();
    };
    QCOMPARE(values(b, "fc1.weight"), values(a, "fc1.weight"));
    QCOMPARE(values(b, "fc1.bias"), values(a, "fc1.bias"));
    QVERIFY(values(b, "fc2.weight") != values(a, "fc2.weight"));
  }

  void aGraphWithProblemsDoesNotStart() {
    Window w;
    w.show();
    QVERIFY(w.openFile(project_));
    w.document()->remove({}, {w.document()->graph().edges.back()});  // the label no longer reaches the loss
    QVERIFY(!w.document()->validation().ok());
    w.click(w.trainAction());
    QVERIFY(!w.training()->isRunning());
    QVERIFY(w.statusBar()->currentMessage().contains("problems"));
    QCOMPARE(sessionRuns(w), 0);
    w.answer = QMessageBox::Discard;
  }

  void filesLeftOutOfAnImageFolderAreListed() {
    // Ten class folders of digits as PNG, an empty PNG (the scan leaves it out) and one cut off
    // after its header (it passes the scan, then fails to decode while training).
    namespace fs = std::filesystem;
    const fs::path folder = fs::path(dir_.path().toStdString()) / "digits";
    const data::SyntheticDigits digits = data::make_synthetic_digits(60, 7);
    for (size_t i = 0; i < digits.labels.size(); ++i) {
      const fs::path cls = folder / std::to_string(digits.labels[i]);
      fs::create_directories(cls);
      const auto* pixels = digits.images.data() + i * 28 * 28;
      data::write_png(cls / (std::to_string(i) + ".png"), data::Image{28, 28, 1, {pixels, pixels + 28 * 28}});
    }
    std::ofstream(folder / "7" / "empty.png").flush();
    const std::string png = data::encode_png(data::Image{28, 28, 1, {digits.images.begin(), digits.images.begin() + 784}});
    std::ofstream(folder / "3" / "cut.png", std::ios::binary).write(png.data(), 60);

    graph::Graph g = graph::load_project(PLEXUS_SOURCE_DIR "/examples/digits_folder.plexus");
    g.dataset.path = "digits";
    g.dataset.bad_files = "skip";
    g.dataset.stats_sample = 1;  // so the cut picture is first decoded by training, not by the statistics
    g.training.epochs = 1;
    g.training.batch_size = 10;
    const QString project = dir_.filePath("digits_folder.plexus");
    graph::save_project(project.toStdString(), g);

    Window w;
    w.show();
    QVERIFY(w.openFile(project));
    QSignalSpy skipped(w.training(), &TrainingController::filesSkipped);
    QSignalSpy finished(w.training(), &TrainingController::finished);
    QVERIFY(w.startTraining());
    QVERIFY(finished.wait(120000));
    // The scan's at the start, then the picture that failed to decode as well.
    QCOMPARE(skipped.size(), 2);
    QCOMPARE(skipped.first().at(0).value<app::SkippedFiles>().count, 1);
    QCOMPARE(skipped.last().at(0).value<app::SkippedFiles>().count, 2);

    app::Dashboard* d = w.dashboard();
    QCOMPARE(d->skippedText(), QStringLiteral("Left out 2 files of the image folder (bad files: skip)"));
    const QString tip = d->skippedLine()->toolTip();
    QVERIFY2(tip.contains("empty.png: empty file"), qPrintable(tip));
    QVERIFY2(tip.contains("cut.png: "), qPrintable(tip));
    QVERIFY(d->skippedList()->isHidden());
    QTest::mouseClick(d->skippedButton(), Qt::LeftButton);
    QVERIFY(d->skippedList()->isVisible());
    QCOMPARE(d->skippedList()->toPlainText().split('\n').size(), 2);

    // A run of a dataset without left-out files shows none.
    QVERIFY(w.openFile(project_));
    QVERIFY(w.startTraining());
    QVERIFY(d->skippedText().isEmpty());
    w.training()->stop();
    QVERIFY(w.training()->waitForFinished(60000));
  }

  void closingWhileTrainingAsksThenStops() {
    auto* w = new Window;
    w->show();
    QVERIFY(w->openFile(project_));
    graph::TrainingSettings t = w->document()->graph().training;
    t.epochs = 500;
    w->document()->setTraining(t);
    QSignalSpy batches(w->training(), &TrainingController::batches);
    QVERIFY(w->startTraining());
    QVERIFY(batches.wait(60000));
    w->answer = QMessageBox::Cancel;
    QVERIFY(!w->close());
    QVERIFY(w->training()->isRunning());
    // Stop and close; then the unsaved settings change is discarded.
    w->ask = [](const QString&, const QString& text, QMessageBox::StandardButtons) {
      return text.contains("Stop the training") ? QMessageBox::Yes : QMessageBox::Discard;
    };
    QVERIFY(w->close());
    QVERIFY(!w->training()->isRunning());
    delete w;
  }
};

QTEST_MAIN(TestDashboard)
#include "test_app_dashboard.moc"
