// Try It's prompt for text projects, driven as a user drives it: Generate waits for a model,
// the prompt, temperature and count typed in reach the request, Generate waits for the answer,
// and the samples or the error are shown.
#include <QtTest/QtTest>

#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>

#include "tryit/text_prompt.h"

using namespace plexus;

class TestWidgetsTextPrompt : public QObject {
  Q_OBJECT

 private slots:
  void aPromptBecomesARequestAndItsAnswerIsShown() {
    widgets::TextPrompt w;
    w.resize(600, 400);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* prompt = w.findChild<QLineEdit*>("textPrompt");
    auto* temperature = w.findChild<QDoubleSpinBox*>("textTemperature");
    auto* count = w.findChild<QSpinBox*>("textCount");
    auto* generate = w.findChild<QPushButton*>("textGenerate");
    auto* model = w.findChild<QLabel*>("textModel");
    QVERIFY(prompt && temperature && count && generate && model);
    QSignalSpy requests(&w, &widgets::TextPrompt::generateRequested);

    QVERIFY(!generate->isEnabled());  // no model yet
    QVERIFY(model->text().contains("No model yet"));
    w.setModel("Checkpoint: final.safetensors");
    QVERIFY(generate->isEnabled());
    QCOMPARE(model->text(), QString("Checkpoint: final.safetensors"));

    QTest::keyClicks(prompt, QString::fromUtf8("Ém"));
    temperature->selectAll();
    QTest::keyClicks(temperature, "0.5");
    count->selectAll();
    QTest::keyClicks(count, "12");
    QTest::mouseClick(generate, Qt::LeftButton);
    QCOMPARE(requests.count(), 1);
    QCOMPARE(requests[0][0].toString(), QString::fromUtf8("Ém"));
    QCOMPARE(requests[0][1].toDouble(), 0.5);
    QCOMPARE(requests[0][2].toInt(), 12);

    // One request at a time: Generate and Return wait for the answer.
    QVERIFY(!generate->isEnabled());
    QTest::keyClick(prompt, Qt::Key_Return);
    QCOMPARE(requests.count(), 1);
    w.showSamples({QString::fromUtf8("Émma"), QString::fromUtf8("Émile")});
    QCOMPARE(w.generatedText(), QString::fromUtf8("Émma\nÉmile"));
    QVERIFY(generate->isEnabled());

    QTest::keyClick(prompt, Qt::Key_Return);  // Return asks too
    QCOMPARE(requests.count(), 2);
    w.showError("sample: prime: character 0 of the text, 'x', is not in the model's vocabulary of 5 characters");
    QVERIFY(w.errorText().contains("'x'"));
    QVERIFY(w.findChild<QLabel*>("textError")->isVisible());
    QVERIFY(generate->isEnabled());
    QCOMPARE(w.generatedText(), QString::fromUtf8("Émma\nÉmile"));  // the last answer stays
  }
};

QTEST_MAIN(TestWidgetsTextPrompt)
#include "test_widgets_text_prompt.moc"
