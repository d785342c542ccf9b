// The dashboard of a text project: the samples each epoch's event brings (as the training
// controller hands them over) replace the image preview, beside the plots, the newest shown as
// it arrives and earlier epochs chosen with the keyboard; an image project gets its preview
// back. Its loss reads per character (nats, bits/char, perplexity), and a matrix of too many
// classes to read gives way to the top confusions. Labelled texts are no text project: the
// preview shows their examples with their classes. A model with several loss nodes shows each
// node's loss, named by its label in the run's graph, in the plots, the figures and the test
// figures.
#include <QtTest/QtTest>

#include <QComboBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QTabBar>
#include <QTemporaryDir>

#include <cmath>
#include <optional>

#include <qcustomplot.h>

#include "dashboard.h"
#include "dashboard/confusion_matrix.h"
#include "dashboard/reconstructions.h"
#include "dashboard/run_list.h"
#include "dashboard/text_figures.h"
#include "dashboard/text_samples.h"
#include "dashboard/top_confusions.h"
#include "dashboard/training_plots.h"
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

// An evaluated epoch of `classes` classes: every class right 10 times, and class c taken for
// class 0 c times, so the last classes make the most mistakes; losses in nats.
train::EpochEnd evaluated(int n, int classes, double train_loss, double eval_loss) {
  train::EpochEnd e;
  e.epoch = n;
  e.epochs = 5;
  e.train_loss = train_loss;
  e.eval_loss = eval_loss;
  e.has_eval = true;
  e.train_accuracy = 0.25;
  e.eval_accuracy = 0.3;
  e.classes = classes;
  e.confusion.assign(size_t(classes * classes), 0);
  for (int c = 0; c < classes; ++c) {
    e.confusion[size_t(c * classes + c)] = 10;
    if (c > 0) e.confusion[size_t(c * classes)] = c;
  }
  return e;
}

// A dashboard as the app has it, listening to a training controller and a run follower, shown
// (at `size`, else its own).
struct Shown {
  app::TrainingController controller;
  app::RunFollower follower;
  app::Dashboard dashboard{&controller, &follower};
  explicit Shown(std::optional<QSize> size = std::nullopt) {
    if (size) dashboard.resize(*size);
    dashboard.show();
  }
};

}  // namespace

class TestAppTextSamples : public QObject {
  Q_OBJECT

 private slots:
  // An autoencoder's epochs bring pictures: validation inputs above their reconstructions, in
  // the confusion matrix's place, the newest shown as it arrives, earlier ones on request.
  void anAutoencoderRunShowsItsReconstructions() {
    Shown app_view(QSize{1200, 800});
    QVERIFY(QTest::qWaitForWindowExposed(&app_view.dashboard));
    app::Dashboard& dashboard = app_view.dashboard;
    dashboard.beginRun(request("mnist"), "ae");
    widgets::ReconstructionsView* view = dashboard.reconstructions();
    const auto pairs = [](float level) {
      train::Reconstructions r;
      r.example = {1, 4, 4};
      for (int i = 0; i < 3; ++i)
        for (int p = 0; p < 16; ++p) {
          r.inputs.push_back(p == i ? 1.f : 0.f);
          r.outputs.push_back(p == i ? level : 0.f);
        }
      return r;
    };
    for (int n = 1; n <= 2; ++n) {
      train::EpochEnd e;
      e.epoch = n;
      e.epochs = 5;
      e.reconstructions = pairs(0.5f * float(n));
      emit app_view.controller.epochEnded(e);
    }
    QVERIFY(view->isVisible());
    QCOMPARE(view->shownEpoch(), 2);
    QCOMPARE(view->pairCount(), 3);
    QCOMPARE(qGray(view->input(2).pixel(2, 0)), 255);
    QCOMPARE(qGray(view->output(2).pixel(2, 0)), 255);  // epoch 2: 1.0
    QCOMPARE(qGray(view->output(2).pixel(3, 0)), 0);
    auto* epochs = view->findChild<QComboBox*>("reconstructionEpoch");
    epochs->setFocus();
    QTest::keyClick(epochs, Qt::Key_Down);  // the earlier epoch
    QCOMPARE(view->shownEpoch(), 1);
    QCOMPARE(qGray(view->output(2).pixel(2, 0)), 128);  // epoch 1: 0.5
    QVERIFY(view->findChild<QLabel*>("reconstructionTitle")->text().contains("epoch 1"));
    // A classifier's run takes the place back for its confusion matrix.
    dashboard.beginRun(request("mnist"), "classifier");
    emit app_view.controller.epochEnded(evaluated(1, 10, 0.5, 0.4));
    QVERIFY(!view->isVisible());
    QCOMPARE(view->pairCount(), 0);
  }

  void aTextRunShowsItsSamplesEveryEpoch() {
    Shown app_view(QSize{1200, 800});
    QVERIFY(QTest::qWaitForWindowExposed(&app_view.dashboard));
    app::Dashboard& dashboard = app_view.dashboard;
    widgets::TextSamplesView* view = dashboard.textSamples();
    auto* combo = view->findChild<QComboBox*>(QStringLiteral("sampleEpoch"));
    auto* text = view->findChild<QPlainTextEdit*>(QStringLiteral("sampleText"));
    auto* title = view->findChild<QLabel*>(QStringLiteral("sampleTitle"));
    QVERIFY(combo && text && title);

    dashboard.beginRun(request("text"));
    QVERIFY(view->isVisible());
    QVERIFY(!dashboard.preview()->isVisible());
    QCOMPARE(text->font().styleHint(), QFont::Monospace);

    emit app_view.controller.epochEnded(epoch(1, {"anna", "bélá"}));
    QCOMPARE(text->toPlainText(), QString::fromUtf8("anna\nbélá"));
    QCOMPARE(title->text(), QString("Generated after epoch 1"));
    emit app_view.controller.epochEnded(epoch(2, {"nena", "ada"}));
    QCOMPARE(text->toPlainText(), QString("nena\nada"));
    QCOMPARE(view->shownEpoch(), 2);

    // Back to epoch 1 (the list is newest first): the view stays there as epoch 3 arrives.
    combo->setFocus();
    QTest::keyClick(combo, Qt::Key_Down);
    QCOMPARE(view->shownEpoch(), 1);
    QCOMPARE(text->toPlainText(), QString::fromUtf8("anna\nbélá"));
    emit app_view.controller.epochEnded(epoch(3, {"enna"}));
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

  // A character model is read in nats, bits per character and perplexity: a validation loss of
  // ln 4 nats is 2 bits a character, as unsure as a choice among 4. Accuracy stays off the plots.
  void aTextRunShowsLossPerCharacter() {
    Shown app_view(QSize{1280, 800});
    QVERIFY(QTest::qWaitForWindowExposed(&app_view.dashboard));
    app::Dashboard& dashboard = app_view.dashboard;
    dashboard.beginRun(request("text"));
    widgets::TextFigures* figures = dashboard.textFigures();
    QVERIFY(figures->isVisible());
    // The samples stand beside the plots, above the run list.
    QVERIFY(dashboard.textSamples()->mapTo(&dashboard, QPoint()).y() < dashboard.runs()->mapTo(&dashboard, QPoint()).y());

    emit app_view.controller.epochEnded(evaluated(1, 54, std::log(8.0), std::log(4.0)));
    using F = widgets::TextFigures;
    QCOMPARE(figures->title(), QString("Epoch 1"));
    QCOMPARE(figures->text(F::Validation, F::Nats), QString("1.386"));
    QCOMPARE(figures->text(F::Validation, F::BitsPerChar), QString("2.000"));
    QCOMPARE(figures->text(F::Validation, F::Perplexity), QString("4.00"));
    QCOMPARE(figures->text(F::Validation, F::Accuracy), QString("30.0 %"));
    QCOMPARE(figures->text(F::Training, F::BitsPerChar), QString("3.000"));
    QCOMPARE(figures->text(F::Training, F::Perplexity), QString("8.00"));

    widgets::TrainingPlots* plots = dashboard.plots();
    QVERIFY(plots->textUnits());
    QCOMPARE(plots->epochPlot()->yAxis->label(), QString("loss (nats)"));
    QCOMPARE(plots->epochPlot()->yAxis2->label(), QString("bits/char"));
    QVERIFY(plots->lossPlot()->yAxis2->visible());
    const int run = plots->runIds().back();
    QVERIFY(plots->graph(run, widgets::TrainingPlots::Series::EvalLoss)->visible());
    QVERIFY(!plots->graph(run, widgets::TrainingPlots::Series::EvalAccuracy)->visible());
    // The right axis is the left one in bits.
    const QCPRange nats = plots->epochPlot()->yAxis->range(), bits = plots->epochPlot()->yAxis2->range();
    QCOMPARE(bits.lower, nats.lower / std::log(2.0));
    QCOMPARE(bits.upper, nats.upper / std::log(2.0));
    QCOMPARE(dashboard.runs()->topLevelItem(0)->text(3), QString("2.000 bits/char"));

    // An image project's run: plain loss and accuracy again.
    dashboard.beginRun(request("mnist"));
    QVERIFY(!plots->textUnits());
    QVERIFY(!figures->isVisible());
    QCOMPARE(plots->epochPlot()->yAxis2->label(), QString("accuracy (%)"));
  }

  // 54 symbols make a matrix of unreadable cells: the most frequent mistakes are listed
  // instead; up to kMatrixMaxClasses classes keep the matrix.
  void aSeveralLossRunShowsEachLossNodeByItsLabel() {
    Shown app_view(QSize{1280, 800});
    QVERIFY(QTest::qWaitForWindowExposed(&app_view.dashboard));
    app::Dashboard& dashboard = app_view.dashboard;
    app::TrainingRequest r = request("text");
    r.graph.nodes = {{"next", "CrossEntropy", "next char", {}, {}}, {"style", "MSE", "", {}, {}}};
    dashboard.beginRun(r);
    train::BatchEnd b;
    b.epoch = b.epochs = b.batch = b.batches = 1;
    b.loss = 1.5;
    b.losses = {{"next", 1.4}, {"style", 0.2}};
    emit app_view.controller.batches({b});
    train::EpochEnd e = evaluated(1, 54, 1.5, 1.6);
    e.train_losses = b.losses;
    e.eval_losses = {{"next", 1.5}, {"style", 0.2}};
    emit app_view.controller.epochEnded(e);

    widgets::TrainingPlots* plots = dashboard.plots();
    const int run = plots->runIds().back();
    QCOMPARE(plots->lossNodes(run), QStringList({"next", "style"}));
    QCOMPARE(plots->lossNodeGraph(run, "next", widgets::TrainingPlots::Series::SmoothedLoss)->name(),
             QString("CrossEntropy 'next char'"));
    QCOMPARE(plots->lossNodeGraph(run, "style", widgets::TrainingPlots::Series::EvalLoss)->name(), QString("MSE 'style'"));
    QCOMPARE(plots->lossNodeGraph(run, "style", widgets::TrainingPlots::Series::EvalLoss)->data()->at(0)->value, 0.2);
    using F = widgets::TextFigures;
    QCOMPARE(dashboard.textFigures()->lossNodesText(F::Validation), QString("CrossEntropy 'next char' 1.500 · MSE 'style' 0.200"));

    train::TestEnd test;
    test.figures.eval_loss = 1.62;
    test.figures.eval_losses = {{"next", 1.52}, {"style", 0.2}};
    emit app_view.controller.tested(test);
    QVERIFY2(dashboard.testText().endsWith("loss 1.62 (next 1.52, style 0.2)"), qPrintable(dashboard.testText()));
    QVERIFY2(plots->runInfo(run).origin.note.contains("loss 1.62 (next 1.52, style 0.2)"),
             qPrintable(plots->runInfo(run).origin.note));
  }

  void manyClassesListTheTopConfusionsFewShowTheMatrix() {
    Shown app_view(QSize{1280, 800});
    QVERIFY(QTest::qWaitForWindowExposed(&app_view.dashboard));
    app::Dashboard& dashboard = app_view.dashboard;
    dashboard.beginRun(request("text"));
    emit app_view.controller.epochEnded(evaluated(1, 54, 1, 1));
    widgets::TopConfusionsView* top = dashboard.topConfusions();
    QVERIFY(top->isVisible());
    QVERIFY(!dashboard.confusion()->isVisible());
    QCOMPARE(top->rows(), int(widgets::TopConfusionsView::kShown));
    // Class c was taken for class 0 c times: 53 first, of its 63 examples.
    QCOMPARE(top->rowText(0), (QStringList{"53", "0", "53", "84.1 %"}));
    QCOMPARE(top->rowText(19).first(), QString("34"));

    const int few = app::Dashboard::kMatrixMaxClasses;
    dashboard.beginRun(request("mnist"));
    emit app_view.controller.epochEnded(evaluated(1, few, 1, 1));
    QVERIFY(dashboard.confusion()->isVisible());
    QVERIFY(!top->isVisible());
    QCOMPARE(dashboard.confusion()->classes(), few);
    emit app_view.controller.epochEnded(evaluated(2, few + 1, 1, 1));  // an image dataset of many classes too
    QVERIFY(top->isVisible());
    QVERIFY(!dashboard.confusion()->isVisible());
    QCOMPARE(top->rowText(0).first(), QString::number(few));
  }

  // Before any run, opening a text project swaps the (empty) samples view in as well.
  void aTextProjectHasNoPicturePreview() {
    Shown app_view;
    QVERIFY(QTest::qWaitForWindowExposed(&app_view.dashboard));
    app::Dashboard& dashboard = app_view.dashboard;
    dashboard.previewDataset(request("text").graph, QString());
    QVERIFY(dashboard.textSamples()->isVisible());
    QVERIFY(!dashboard.preview()->isVisible());
    QCOMPARE(dashboard.textSamples()->findChild<QLabel*>(QStringLiteral("sampleTitle"))->text(),
             QString("Samples appear after each epoch"));
    dashboard.previewDataset(request("mnist").graph, QString());
    QVERIFY(!dashboard.textSamples()->isVisible());
    QVERIFY(dashboard.preview()->isVisible());
  }

  void labelledTextsShowInThePreview() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("names/male")));
    for (const auto& [file, text] : {std::pair{"names/female.txt", "Anna\nEve\nZoë\n"}, std::pair{"names/male.txt", "Bob\n"},
                                     std::pair{"names/male/tom.txt", "Tom\n"}}) {
      QFile f(dir.filePath(QString::fromUtf8(file)));
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(text);
    }
    Shown app_view;
    QVERIFY(QTest::qWaitForWindowExposed(&app_view.dashboard));
    app::Dashboard& dashboard = app_view.dashboard;
    graph::Graph g;
    g.dataset = {.kind = "text_classes", .path = "names"};
    dashboard.previewDataset(g, dir.path());
    QVERIFY(!dashboard.textSamples()->isVisible());
    QVERIFY(dashboard.preview()->isVisible());
    widgets::DatasetPreview* preview = dashboard.preview();
    QVERIFY(QTest::qWaitFor([&] { return preview->splitCount() == 2 && !preview->isLoading(); }, 10000));
    QCOMPARE(preview->splitBar()->tabText(0), QStringLiteral("Training (4)"));  // 5 examples: 4 train, 1 test
    preview->showSplit(0);
    const QString shown = preview->findChild<QPlainTextEdit*>(QStringLiteral("previewWindows"))->toPlainText();
    QCOMPARE(shown.count(QLatin1Char('\n')), 3);
    QVERIFY2(QRegularExpression(QStringLiteral("^#0  (female|male  )  [A-Z][a-zë]+$"),
                                QRegularExpression::MultilineOption).match(shown).hasMatch(), qPrintable(shown));
    QCOMPARE(preview->histogramCount(0) + preview->histogramCount(1), 4);
  }
};

QTEST_MAIN(TestAppTextSamples)
#include "test_app_text_samples.moc"
