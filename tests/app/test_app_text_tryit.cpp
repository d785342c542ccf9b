// Try It for a text project in the main window: the prompt takes the drawing panel's place, and
// a loaded checkpoint continues the prompt off the UI thread (text_fixture.h's model, greedy).
#include <QtTest/QtTest>

#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>

#include <filesystem>
#include <fstream>

#include "main_window.h"
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
};

QTEST_MAIN(TestAppTextTryIt)
#include "test_app_text_tryit.moc"
