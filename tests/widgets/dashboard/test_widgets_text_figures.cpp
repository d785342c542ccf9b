// A character model's figures: each split's loss in nats, bits per character and perplexity,
// and, for a graph with several loss nodes, each node's own loss under its split's total,
// named by its label where the figures know it, else by its id.
#include <QTest>

#include <cmath>

#include "dashboard/text_figures.h"

using namespace plexus::widgets;
using plexus::train::EpochEnd;
using F = TextFigures;

namespace {

EpochEnd epochOf(int n, double trainLoss, double evalLoss) {
  EpochEnd e;
  e.epoch = n;
  e.epochs = 3;
  e.train_loss = trainLoss;
  e.eval_loss = evalLoss;
  e.has_eval = true;
  e.train_accuracy = 0.4;
  e.eval_accuracy = 0.35;
  return e;
}

}  // namespace

class TestWidgetsTextFigures : public QObject {
  Q_OBJECT

 private slots:
  void eachLossNodesLatestLossStandsUnderItsSplitsTotal() {
    TextFigures figures;
    figures.show();
    QVERIFY(QTest::qWaitForWindowExposed(&figures));
    figures.setLossNames({{"next", {"CrossEntropy", "CrossEntropy 'next'", false}}});  // "style" unnamed
    EpochEnd e = epochOf(1, std::log(8.0) + 0.1, std::log(4.0) + 0.12);
    e.train_losses = {{"next", std::log(8.0)}, {"style", 0.2}};
    e.eval_losses = {{"next", std::log(4.0)}, {"style", 0.24}};
    figures.setEpoch(e);
    QCOMPARE(figures.text(F::Validation, F::Nats), QString("1.506"));  // the total, as before
    QCOMPARE(figures.lossNodesText(F::Training), QString("CrossEntropy 'next' 2.079 · style 0.200"));
    QCOMPARE(figures.lossNodesText(F::Validation), QString("CrossEntropy 'next' 1.386 · style 0.240"));
    auto* trainingNodes = figures.findChild<QWidget*>("textLossNodes0");
    QVERIFY(trainingNodes && trainingNodes->isVisible());
    // Under its split's total.
    QVERIFY(trainingNodes->y() > figures.findChild<QWidget*>("textFigure00")->y());
    QVERIFY(trainingNodes->y() < figures.findChild<QWidget*>("textFigure10")->y());

    // The latest epoch's; an epoch without validation clears the validation row's.
    e = epochOf(2, 1.0, 0);
    e.has_eval = false;
    e.train_losses = {{"next", 0.9}, {"style", 0.1}};
    figures.setEpoch(e);
    QCOMPARE(figures.lossNodesText(F::Training), QString("CrossEntropy 'next' 0.900 · style 0.100"));
    QCOMPARE(figures.lossNodesText(F::Validation), QString());
    QVERIFY(!figures.findChild<QWidget*>("textLossNodes1")->isVisible());

    // A one-loss model has no such lines; clear() takes them too.
    figures.setEpoch(epochOf(3, 0.8, 0.9));
    QCOMPARE(figures.lossNodesText(F::Training), QString());
    QVERIFY(!trainingNodes->isVisible());
    figures.setEpoch(e);
    figures.clear();
    QCOMPARE(figures.lossNodesText(F::Training), QString());
    QVERIFY(!trainingNodes->isVisible());
  }
};

QTEST_MAIN(TestWidgetsTextFigures)
#include "test_widgets_text_figures.moc"
