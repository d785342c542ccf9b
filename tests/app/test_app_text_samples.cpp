// The dashboard of a text project: the samples each epoch's event brings (as the training
// controller hands them over) replace the image preview, the newest shown as it arrives and
// earlier epochs chosen with the keyboard; an image project gets its preview back.
#include <QtTest/QtTest>

#include <QComboBox>
#include <QLabel>
#include <QPlainTextEdit>

#include "dashboard.h"
#include "dashboard/text_samples.h"
#include "dataset/dataset_preview.h"
#include "run_follower.h"
#include "training_controller.h"

using namespace plexus;

namespace {

app::TrainingRequest request(const std::string& kind) {
  app::TrainingRequest r;
  r.graph.dataset.kind = kind;
  r.graph.dataset.path = kind == "text" ? "names.txt" : "data/mnist";
  return r;
}

train::EpochEnd epoch(int n, std::vector<std::string> samples) {
  train::EpochEnd e;
  e.epoch = n;
  e.epochs = 5;
  e.samples = std::move(samples);
  return e;
}

}  // namespace

class TestAppTextSamples : public QObject {
  Q_OBJECT

 private slots:
  void aTextRunShowsItsSamplesEveryEpoch() {
    app::TrainingController controller;
    app::RunFollower follower;
    app::Dashboard dashboard(&controller, &follower);
    dashboard.resize(1200, 800);
    dashboard.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dashboard));
    widgets::TextSamplesView* view = dashboard.textSamples();
    auto* combo = view->findChild<QComboBox*>(QStringLiteral("sampleEpoch"));
    auto* text = view->findChild<QPlainTextEdit*>(QStringLiteral("sampleText"));
    auto* title = view->findChild<QLabel*>(QStringLiteral("sampleTitle"));
    QVERIFY(combo && text && title);

    dashboard.beginRun(request("text"));
    QVERIFY(view->isVisible());
    QVERIFY(!dashboard.preview()->isVisible());
    QCOMPARE(text->font().styleHint(), QFont::Monospace);

    emit controller.epochEnded(epoch(1, {"anna", "bélá"}));
    QCOMPARE(text->toPlainText(), QString::fromUtf8("anna\nbélá"));
    QCOMPARE(title->text(), QString("Generated after epoch 1"));
    emit controller.epochEnded(epoch(2, {"nena", "ada"}));
    QCOMPARE(text->toPlainText(), QString("nena\nada"));
    QCOMPARE(view->shownEpoch(), 2);

    // Back to epoch 1 (the list is newest first): the view stays there as epoch 3 arrives.
    combo->setFocus();
    QTest::keyClick(combo, Qt::Key_Down);
    QCOMPARE(view->shownEpoch(), 1);
    QCOMPARE(text->toPlainText(), QString::fromUtf8("anna\nbélá"));
    emit controller.epochEnded(epoch(3, {"enna"}));
    QCOMPARE(text->toPlainText(), QString::fromUtf8("anna\nbélá"));
    QCOMPARE(combo->count(), 3);
    QTest::keyClick(combo, Qt::Key_Home);  // the newest again
    QCOMPARE(view->shownEpoch(), 3);
    QCOMPARE(text->toPlainText(), QString("enna"));

    // A new run starts empty; an image project's run shows its pictures again.
    dashboard.beginRun(request("text"));
    QCOMPARE(combo->count(), 0);
    QCOMPARE(text->toPlainText(), QString());
    dashboard.beginRun(request("mnist"));
    QVERIFY(!view->isVisible());
    QVERIFY(dashboard.preview()->isVisible());
  }

  // Before any run, opening a text project swaps the (empty) samples view in as well.
  void aTextProjectHasNoPicturePreview() {
    app::TrainingController controller;
    app::RunFollower follower;
    app::Dashboard dashboard(&controller, &follower);
    dashboard.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dashboard));
    dashboard.previewDataset(request("text").graph, QString());
    QVERIFY(dashboard.textSamples()->isVisible());
    QVERIFY(!dashboard.preview()->isVisible());
    QCOMPARE(dashboard.textSamples()->findChild<QLabel*>(QStringLiteral("sampleTitle"))->text(),
             QString("Samples appear after each epoch"));
    dashboard.previewDataset(request("mnist").graph, QString());
    QVERIFY(!dashboard.textSamples()->isVisible());
    QVERIFY(dashboard.preview()->isVisible());
  }
};

QTEST_MAIN(TestAppTextSamples)
#include "test_app_text_samples.moc"
