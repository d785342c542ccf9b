// Try It for a text project in the main window: the prompt takes the drawing panel's place, and
// a loaded checkpoint continues the prompt off the UI thread (text_fixture.h's model, greedy).
// For labelled texts the panel takes typed text instead of a drawing: live weights during a run,
// the last ones after it and a loaded checkpoint each classify what is typed, as core's
// TrainedModel classifies the text's encoding (data::encode_typed_text), and a character the
// model does not know is named in the panel.
#include <QtTest/QtTest>

#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QToolButton>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "graph/project.h"
#include "main_window.h"
#include "ops/ops.h"
#include "session/data_pipeline.h"
#include "tryit/probability_bars.h"
#include "tryit/digit_canvas.h"
#include "support/text_fixture.h"
#include "training_controller.h"
#include "support/app_fixture.h"
#include "tryit/text_prompt.h"
#include "tryit/tryit_panel.h"
#include "tryit_page.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

using Window = testing::TestWindow;

// What core makes of `text` with the model of `checkpoint`: its class probabilities.
std::vector<float> coreProbabilities(const graph::Graph& project, const QString& checkpoint, const fs::path& dir,
                                     const QString& text) {
  const session::TrainedModel m = session::load_trained_model(project, checkpoint.toStdString(), {dir});
  const Tensor x = data::encode_typed_text(*session::text_encoding(m), text.toStdString());
  return softmax(m.forward(x.unsqueeze(0)), 1).to_vector();
}

bool near(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::abs(a[i] - b[i]) > 1e-5) return false;
  return true;
}

}  // namespace

class TestAppTextTryIt : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

 private slots:
  void initTestCase() {
    testing::isolate_app(dir_.path() + "/recovery");
  }

  void aTextProjectGetsAPromptThatTheModelContinues() {
    const QString project = dir_.filePath("names.plexus");
    std::ofstream(project.toStdString()) << testing::text_project_json();
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openFile(project));
    w.showTryIt();
    app::TryItPage* page = w.tryIt();
    widgets::TextPrompt* prompt = page->textPrompt();
    QVERIFY(prompt->isVisible());
    QVERIFY(!page->panel()->isVisible());
    auto* generate = prompt->findChild<QPushButton*>("textGenerate");
    QVERIFY(!generate->isEnabled());  // nothing to generate with yet

    const fs::path ckpt = fs::path(dir_.path().toStdString()) / "final.safetensors";
    testing::write_text_checkpoint(ckpt);
    page->loadCheckpoint(QString::fromStdString(ckpt.string()));
    QTRY_VERIFY_WITH_TIMEOUT(generate->isEnabled(), 10000);
    QTest::keyClicks(prompt->findChild<QLineEdit*>("textPrompt"), "ne");
    auto* temperature = prompt->findChild<QDoubleSpinBox*>("textTemperature");
    temperature->selectAll();
    QTest::keyClicks(temperature, "0");  // greedy: every sample the same
    QSignalSpy shown(page, &app::TryItPage::textGenerated);
    QTest::mouseClick(generate, Qt::LeftButton);
    QVERIFY(shown.wait(10000));
    const QStringList samples = prompt->generatedText().split('\n');
    QCOMPARE(samples.size(), 5);  // the default count
    for (const QString& s : samples) {
      QVERIFY2(s.startsWith("ne"), qPrintable(s));
      QCOMPARE(s, samples[0]);
    }
    QCOMPARE(prompt->errorText(), QString());
  }

  void aLabelledTextsModelClassifiesWhatIsTyped() {
    const fs::path dir = fs::path(dir_.path().toStdString()) / "labelled";
    // A run of a few seconds: the live weights have time to answer.
    testing::write_text_classes(dir / "words", 600);
    const QString project = QString::fromStdString((dir / "words.plexus").string());
    std::ofstream(project.toStdString()) << testing::text_classes_project_json("words", 150);
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openFile(project));
    w.showTryIt();
    app::TryItPage* page = w.tryIt();
    widgets::TryItPanel* panel = page->panel();
    // Before any model: the text field in the drawing's place, and nothing fed.
    QVERIFY(panel->isVisible() && !page->textPrompt()->isVisible());
    QVERIFY(panel->textInput());
    auto* field = panel->findChild<QLineEdit*>("tryItText");
    QVERIFY(field && field->isVisible());
    QVERIFY(!panel->canvas()->isVisible());
    QVERIFY(!panel->hasModel());
    QTest::keyClicks(field, "AbBa");
    QVERIFY(!panel->input().defined());

    // Live: the run's weights classify the typed text as they come.
    QSignalSpy finished(w.training(), &app::TrainingController::finished);
    QSignalSpy checkpoints(w.training(), &app::TrainingController::checkpointSaved);
    int live = 0;
    connect(page, &app::TryItPage::predictionShown, this, [&] {
      if (panel->modelStatus().startsWith("Live weights")) ++live;
    });
    QVERIFY(w.startTraining());
    QTest::keyClick(&w, Qt::Key_3, Qt::AltModifier);  // Show Try It: training showed the dashboard
    QVERIFY(page->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(live >= 1 || !finished.isEmpty(), 60000);
    QVERIFY2(live >= 1, "no prediction of the live weights during the run");
    QVERIFY(!finished.isEmpty() || finished.wait(120000));
    // The ids of "abba" (lowercased, padded to the model's 7): a-j are ids 1-10.
    QTRY_VERIFY_WITH_TIMEOUT(panel->modelStatus().startsWith("The last run's weights"), 10000);
    QCOMPARE(panel->input().to_vector(), (std::vector<float>{1, 2, 2, 1, 0, 0, 0}));

    // The last weights are the final checkpoint's, as core uses it: "abba" is long.
    QString final_checkpoint;
    for (const QList<QVariant>& c : checkpoints)
      if (c.at(1).toString() == "final") final_checkpoint = c.at(0).toString();
    QVERIFY(!final_checkpoint.isEmpty());
    const graph::Graph graph = graph::load_project(project.toStdString());
    const std::vector<float> abba = coreProbabilities(graph, final_checkpoint, dir, "AbBa");
    QTRY_VERIFY_WITH_TIMEOUT(near(panel->bars()->probabilities(), abba), 10000);
    QCOMPARE(panel->bars()->classNames(), QStringList({"long", "short"}));
    QCOMPARE(panel->bars()->topClass(), 0);

    // A loaded checkpoint answers each edit of the text, as core does.
    page->chooseCheckpoint = [&] { return final_checkpoint; };
    QSignalSpy shown(page, &app::TryItPage::predictionShown);
    QTest::mouseClick(panel->findChild<QToolButton*>("loadCheckpoint"), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(panel->modelStatus() == "Checkpoint: final.safetensors" && !shown.isEmpty(), 30000);
    QVERIFY(panel->textInput());
    QVERIFY(near(panel->bars()->probabilities(), abba));
    field->selectAll();
    QTest::keyClicks(field, "fgH");
    QTRY_VERIFY_WITH_TIMEOUT(near(panel->bars()->probabilities(), coreProbabilities(graph, final_checkpoint, dir, "fgH")),
                             10000);
    QCOMPARE(panel->bars()->topClass(), 1);  // short
    QCOMPARE(panel->errorText(), QString());

    // A character the model does not know: named, and no output for it; taken out, the output is back.
    QTest::keyClicks(field, "!");
    QVERIFY2(panel->errorText().contains("'!', character 4 of \"fgH!\", is not one of the 10 characters"),
             qPrintable(panel->errorText()));
    QVERIFY(panel->bars()->probabilities().empty());
    QTest::keyClick(field, Qt::Key_Backspace);
    QCOMPARE(panel->errorText(), QString());
    QTRY_VERIFY_WITH_TIMEOUT(near(panel->bars()->probabilities(), coreProbabilities(graph, final_checkpoint, dir, "fgH")),
                             10000);
    // An empty field feeds nothing.
    field->clear();
    QVERIFY(!panel->input().defined());
    QVERIFY(panel->bars()->probabilities().empty());
  }
};

QTEST_MAIN(TestAppTextTryIt)
#include "test_app_text_tryit.moc"
