// Try It's explanation views with made-up values, driven as a user drives them: the colour map
// rises in brightness; the attribution view's choosers ask again (Grad-CAM's node only for
// Grad-CAM), its opacity slider blends the heat (by its maximum) over the picture, typed text is tinted per
// character, errors are shown in place; the attention view shows every head, one, or their
// average (rows that sum to 1), with the characters on its axes and the weight under the pointer.
#include <QComboBox>
#include <QSlider>
#include <QtTest/QtTest>
#include <cmath>
#include <numeric>

#include "tryit/attention_view.h"
#include "explain/attribution.h"
#include "tryit/attribution_view.h"
#include "tryit/heat_colours.h"

using namespace plexus;
using widgets::AttentionView;
using widgets::AttributionView;

namespace {

// A 4 x 4 gray picture, raw ([0, 1]), a gradient; and a heat hot in its top-left corner only.
Tensor grayPicture() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[size_t(i)] = float(i) / 16.f;
  return from_vector(v, {1, 4, 4});
}

Tensor cornerHeat() {
  std::vector<float> h(16, 0.f);
  h[0] = 2.f;
  h[1] = 1.f;
  return from_vector(h, {4, 4});
}

}  // namespace

class TestWidgetsExplain : public QObject {
  Q_OBJECT

 private slots:
  void theColourMapBrightensSteadily() {
    double last = -1;
    for (int i = 0; i <= 20; ++i) {
      const QColor c = widgets::heatColour(i / 20.0);
      const double l = 0.2126 * c.redF() + 0.7152 * c.greenF() + 0.0722 * c.blueF();  // luminance
      QVERIFY2(l > last, qPrintable(QString("lightness falls at %1").arg(i / 20.0)));
      last = l;
    }
    QCOMPARE(widgets::heatColour(-1), widgets::heatColour(0));
    QCOMPARE(widgets::heatColour(2), widgets::heatColour(1));
  }

  void theAttributionViewAsksAgainAndShowsWhatComes() {
    AttributionView v;
    v.resize(360, 600);
    v.show();
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    QSignalSpy asked(&v, &AttributionView::requestChanged);
    v.setClasses({"cat", "dog"});
    v.setNodes({"conv1", "conv2"});
    QCOMPARE(asked.count(), 0);          // what the model offers is no new request
    QCOMPARE(v.request().target, -1);    // the top class, until another is chosen
    QVERIFY(!v.nodeBox()->isVisible());  // saliency needs no node

    const int gradcam = v.methodBox()->findData(int(explain::AttributionMethod::GradCam));
    v.methodBox()->setCurrentIndex(gradcam);
    QCOMPARE(asked.count(), 1);
    QVERIFY(v.nodeBox()->isVisible());
    QCOMPARE(v.request().node, QString("conv2"));  // the last picture-shaped node
    v.nodeBox()->setCurrentIndex(0);
    QCOMPARE(asked.count(), 2);
    QCOMPARE(v.request().node, QString("conv1"));
    v.chooseClass(1);
    QCOMPARE(asked.count(), 3);
    QCOMPARE(v.request().target, 1);
    QCOMPARE(v.classBox()->currentText(), QString("dog"));
    v.setClasses({"cat", "dog"});  // the same model's new weights keep the choice
    QCOMPARE(v.request().target, 1);
    v.setNodes({"conv1", "conv2"});
    QCOMPARE(v.request().node, QString("conv1"));

    v.showPicture(grayPicture(), cornerHeat(), "Grad-CAM at conv1 for “dog”");
    QCOMPARE(v.shownImage().size(), QSize(4, 4));
    QCOMPARE(v.caption(), QString("Grad-CAM at conv1 for “dog”"));
    QVERIFY(v.opacitySlider()->isVisible());
    const QImage before = v.shownImage();
    v.opacitySlider()->setValue(0);
    QVERIFY(v.shownImage() != before);
    for (int i = 0; i < 16; ++i)  // the picture alone
      QCOMPARE(qGray(v.shownImage().pixel(i % 4, i / 4)), int(std::lround(255.0 * i / 16)));
    v.opacitySlider()->setValue(100);  // the heat alone, by its maximum
    QCOMPARE(QColor(v.shownImage().pixel(0, 0)), widgets::heatColour(1.0));
    QCOMPARE(QColor(v.shownImage().pixel(1, 0)), widgets::heatColour(0.5));
    QCOMPARE(QColor(v.shownImage().pixel(3, 3)), widgets::heatColour(0.0));
    v.opacitySlider()->setValue(50);
    QVERIFY(std::abs(qRed(v.shownImage().pixel(0, 0)) - widgets::heatColour(1.0).red() / 2) <= 1);
    QCOMPARE(asked.count(), 3);  // opacity only redraws

    v.showText({"a", "b", "b", "a"}, {0.f, 1.f, 0.5f, 0.f}, "Saliency for “long”");
    QVERIFY(v.shownImage().isNull());
    QCOMPARE(v.heat(), (std::vector<float>{0.f, 1.f, 0.5f, 0.f}));
    QCOMPARE(v.characterTints().size(), size_t(4));
    QCOMPARE(v.characterTints()[1], widgets::heatColour(1.0));
    QCOMPARE(v.characterTints()[2], widgets::heatColour(0.5));
    QCOMPARE(v.characterTints()[0], widgets::heatColour(0.0));
    QVERIFY(!v.opacitySlider()->isVisible());

    v.showError("Grad-CAM needs a node");
    QCOMPARE(v.errorText(), QString("Grad-CAM needs a node"));
    QVERIFY(v.characterTints().empty());
    v.showMessage("Draw a digit");
    QCOMPARE(v.errorText(), QString());
    QCOMPARE(v.caption(), QString("Draw a digit"));
  }

  void theAttentionViewShowsHeadsAveragedOrAll() {
    AttentionView v;
    v.resize(500, 500);
    v.show();
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    QSignalSpy asked(&v, &AttentionView::nodeChanged);
    v.setNodes({"attn1", "attn2"});
    QCOMPARE(v.node(), QString("attn1"));
    // Two heads over "abc", causal: row t spreads over keys 0..t.
    const int H = 2, T = 3;
    std::vector<float> w(size_t(H * T * T), 0.f);
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < T; ++t)
        for (int s = 0; s <= t; ++s)
          w[size_t((h * T + t) * T + s)] = h == 0 ? 1.f / float(t + 1) : (s == t ? 1.f : 0.f);
    v.showWeights(w, H, T, T, {"a", "b", " "});
    QCOMPARE(v.heads(), H);
    QCOMPARE(v.grid()->maps().size(), size_t(H));  // all heads side by side, by default
    QCOMPARE(v.grid()->maps()[1].values, std::vector<float>(w.begin() + T * T, w.end()));

    v.chooseHeads(AttentionView::kAverage);
    QCOMPARE(v.grid()->maps().size(), size_t(1));
    const std::vector<float>& mean = v.grid()->maps()[0].values;
    for (int t = 0; t < T; ++t)
      QVERIFY(std::abs(std::accumulate(mean.begin() + t * T, mean.begin() + (t + 1) * T, 0.f) - 1.f) < 1e-6f);
    QCOMPARE(mean[size_t(1 * T + 0)], 0.25f);  // (1/2 + 0) / 2
    v.chooseHeads(1);
    QCOMPARE(v.grid()->maps()[0].title, QString("Head 2"));
    QCOMPARE(v.grid()->maps()[0].values[size_t(2 * T + 2)], 1.f);

    // The cell under the pointer: its characters and weight.
    const QRect cell = v.grid()->cellRect(0, 2, 1);
    int map = -1, query = -1, key = -1;
    QVERIFY(cell.width() > 4);
    QVERIFY(v.grid()->cellAt(cell.center(), &map, &query, &key));
    QCOMPARE(map, 0);
    QCOMPARE(query, 2);
    QCOMPARE(key, 1);
    QCOMPARE(v.grid()->describe(0, 2, 1), QString("Head 2: query 3 “␣” → key 2 “b”: 0.000"));
    QCOMPARE(v.grid()->describe(0, 1, 1), QString("Head 2: query 2 “b” → key 2 “b”: 1.000"));
    QVERIFY(!v.grid()->cellAt(QPoint(0, 0), &map, &query, &key));  // the axis, not a cell

    QCOMPARE(asked.count(), 0);
    v.nodeBox()->setCurrentIndex(1);
    QCOMPARE(asked.count(), 1);
    QCOMPARE(v.node(), QString("attn2"));

    v.showError("'!' is not one of the characters");
    QCOMPARE(v.errorText(), QString("'!' is not one of the characters"));
    QVERIFY(v.grid()->maps().empty());
  }
};

QTEST_MAIN(TestWidgetsExplain)
#include "test_widgets_explain.moc"
