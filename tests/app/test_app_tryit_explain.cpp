// Try It's explanations in the real window, offscreen, with checkpoints of fresh weights: a
// digit drawn for LeNet gets the heat map of explain::attribute (saliency first, then Grad-CAM
// at each picture-shaped node, for the class chosen in the box or by clicking its bar), which
// the opacity slider blends over the input; Grad-CAM on a model without feature maps says why
// in place; typed text for a labelled-texts model is tinted per character; a text project's
// prompt gets the attention maps of explain::attention_map, every head or their average.
#include <QComboBox>
#include <QLineEdit>
#include <QSlider>
#include <QtTest/QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "tryit/attention_view.h"
#include "explain/attribution.h"
#include "tryit/attribution_view.h"
#include "tryit/heat_colours.h"
#include "explain/probe.h"
#include "graph/project.h"
#include "main_window.h"
#include "session/data_pipeline.h"
#include "support/app_fixture.h"
#include "support/draw_digit.h"
#include "support/text_fixture.h"
#include "tryit/digit_canvas.h"
#include "tryit/probability_bars.h"
#include "tryit/text_prompt.h"
#include "tryit/tryit_panel.h"
#include "tryit_explainer.h"
#include "tryit_page.h"

using namespace plexus;
namespace fs = std::filesystem;
using widgets::AttributionView;

namespace {

using Window = testing::TestWindow;

bool near(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::abs(a[i] - b[i]) > 1e-5f * (1.f + std::abs(b[i]))) return false;
  return true;
}

std::vector<float> coreHeat(const session::TrainedModel& m, const Tensor& input, explain::AttributionMethod method,
                            int64_t target = -1, const std::string& node = {}) {
  explain::AttributionOptions o;
  o.method = method;
  o.target = target;
  o.node = node;
  return explain::attribute(m, input, o).heat.contiguous().to_vector();
}

// A project file and a checkpoint of its fresh weights, in `dir`.
struct Saved {
  QString project, checkpoint;
};
Saved save(const fs::path& dir, const std::string& name, const graph::Graph& g, const graph::DatasetInfo& info,
           const std::vector<std::string>& class_names, const std::vector<std::string>& vocabulary = {}) {
  const fs::path project = dir / (name + ".plexus"), checkpoint = dir / (name + ".safetensors");
  graph::save_project(project.string(), g);
  testing::write_run_checkpoint(checkpoint, g, info, class_names, vocabulary);
  return {QString::fromStdString(project.string()), QString::fromStdString(checkpoint.string())};
}

// `w` shown with `saved`'s project open on its Try It page, the checkpoint loading; null when it
// would not open.
app::TryItPage* tryCheckpoint(Window& w, const Saved& saved) {
  w.show();
  if (!QTest::qWaitForWindowExposed(&w) || !w.openFile(saved.project)) return nullptr;
  w.showTryIt();
  w.tryIt()->loadCheckpoint(saved.checkpoint);
  return w.tryIt();
}

std::vector<std::string> digits() {
  std::vector<std::string> d;
  for (int i = 0; i < 10; ++i) d.push_back(std::to_string(i));
  return d;
}

int methodIndex(const AttributionView* view, explain::AttributionMethod method) {
  return view->methodBox()->findData(int(method));
}

}  // namespace

class TestAppTryItExplain : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  fs::path root() const { return dir_.path().toStdString(); }

 private slots:
  void initTestCase() { testing::isolate_app(dir_.path() + "/recovery"); }

  void aDrawnDigitGetsHeatMapsOfTheChosenMethodClassAndNode() {
    const graph::Graph g = graph::load_project(PLEXUS_SOURCE_DIR "/examples/mnist_lenet.plexus");
    const Saved lenet = save(root(), "lenet", g, {{1, 28, 28}, {}, 10}, digits());
    Window w;
    app::TryItPage* page = tryCheckpoint(w, lenet);
    QVERIFY(page);
    widgets::TryItPanel* panel = page->panel();
    AttributionView* view = page->explainer()->attributions();
    QVERIFY(view->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(panel->hasModel(), 30000);
    QTRY_VERIFY_WITH_TIMEOUT(view->caption().contains("Draw"), 10000);  // nothing to explain yet
    QVERIFY(view->shownImage().isNull());

    testing::draw_one(panel->canvas());
    QVERIFY(panel->input().defined());
    const session::TrainedModel m = session::load_trained_model(g, lenet.checkpoint.toStdString(), {});
    const Tensor input = panel->input();
    using M = explain::AttributionMethod;
    const std::vector<float> saliency = coreHeat(m, input, M::Saliency);
    QTRY_VERIFY_WITH_TIMEOUT(near(view->heat(), saliency), 30000);
    QCOMPARE(view->shownImage().size(), QSize(28, 28));
    const int top = explain::attribute(m, input, {}).target;
    QVERIFY2(view->caption().startsWith(QString("Saliency for “%1”").arg(top)), qPrintable(view->caption()));
    QVERIFY(!page->explainer()->attention()->isVisible());  // LeNet has no attention

    // Grad-CAM: the node chooser lists the picture-shaped nodes, the last one first.
    QStringList nodes;
    for (const std::string& n : explain::picture_nodes(m)) nodes << QString::fromStdString(n);
    QVERIFY(nodes.size() >= 2);
    QVERIFY(!view->nodeBox()->isVisible());
    view->methodBox()->setCurrentIndex(methodIndex(view, M::GradCam));
    QVERIFY(view->nodeBox()->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(view->caption().startsWith("Grad-CAM at " + nodes.last()), 30000);
    QStringList offered;
    for (int i = 0; i < view->nodeBox()->count(); ++i) offered << view->nodeBox()->itemText(i);
    QCOMPARE(offered, nodes);
    QCOMPARE(view->nodeBox()->currentText(), nodes.last());
    QVERIFY(near(view->heat(), coreHeat(m, input, M::GradCam, -1, nodes.last().toStdString())));
    view->nodeBox()->setCurrentIndex(0);
    QTRY_VERIFY_WITH_TIMEOUT(view->caption().startsWith("Grad-CAM at " + nodes.first()), 30000);
    QVERIFY(near(view->heat(), coreHeat(m, input, M::GradCam, -1, nodes.first().toStdString())));

    // Another class, clicked in the probability bars: chosen in the box, explained.
    widgets::ProbabilityBars* bars = panel->bars();
    const int other = top == 3 ? 4 : 3;
    QTest::mouseClick(bars, Qt::LeftButton, {}, bars->trackRect(other).center());
    QCOMPARE(view->classBox()->currentText(), QString::number(other));
    QTRY_VERIFY_WITH_TIMEOUT(view->caption().contains(QString("for “%1”").arg(other)), 30000);
    QVERIFY(near(view->heat(), coreHeat(m, input, M::GradCam, other, nodes.first().toStdString())));

    // Integrated gradients says what its attributions add up to.
    view->methodBox()->setCurrentIndex(methodIndex(view, M::IntegratedGradients));
    QTRY_VERIFY_WITH_TIMEOUT(view->caption().startsWith("Integrated gradients for"), 30000);
    QVERIFY2(view->caption().contains("From a black picture"), qPrintable(view->caption()));
    QVERIFY(near(view->heat(), coreHeat(m, input, M::IntegratedGradients, other)));

    // The opacity: 0 shows the input alone, 100 the heat alone.
    QSlider* opacity = view->opacitySlider();
    opacity->setValue(0);
    const QImage plain = view->shownImage();
    for (int y = 0; y < 28; ++y)
      for (int x = 0; x < 28; ++x) QCOMPARE(qGray(plain.pixel(x, y)), qGray(panel->inputImage().pixel(x, y)));
    opacity->setValue(100);
    QVERIFY(view->shownImage() != plain);
    QCOMPARE(view->errorText(), QString());
  }

  void gradCamWithoutFeatureMapsSaysSoInPlace() {
    const graph::Graph g = graph::load_project(PLEXUS_SOURCE_DIR "/examples/mnist_mlp.plexus");
    const Saved mlp = save(root(), "mlp", g, {{1, 28, 28}, {}, 10}, digits());
    Window w;
    app::TryItPage* page = tryCheckpoint(w, mlp);
    QVERIFY(page);
    AttributionView* view = page->explainer()->attributions();
    QTRY_VERIFY_WITH_TIMEOUT(page->panel()->hasModel(), 30000);
    testing::draw_one(page->panel()->canvas());
    QTRY_VERIFY_WITH_TIMEOUT(view->caption().startsWith("Saliency for"), 30000);
    view->methodBox()->setCurrentIndex(methodIndex(view, explain::AttributionMethod::GradCam));
    QTRY_VERIFY_WITH_TIMEOUT(!view->errorText().isEmpty(), 30000);
    QVERIFY(view->shownImage().isNull());
    QCOMPARE(view->nodeBox()->count(), 0);
    QVERIFY(w.errors.isEmpty());  // in place, no dialog
    // Back to saliency: the heat map again, the error gone.
    view->methodBox()->setCurrentIndex(methodIndex(view, explain::AttributionMethod::Saliency));
    QTRY_VERIFY_WITH_TIMEOUT(!view->shownImage().isNull(), 30000);
    QCOMPARE(view->errorText(), QString());
  }

  void typedTextIsTintedPerCharacter() {
    const graph::Graph g = graph::parse_project(testing::text_classes_project_json("words", 1), "words.plexus");
    std::vector<std::string> letters;
    for (char c = 'a'; c <= 'j'; ++c) letters.push_back(std::string(1, c));
    const Saved words = save(root(), "words", g, {{7}, {}, 2}, {"long", "short"}, letters);
    Window w;
    app::TryItPage* page = tryCheckpoint(w, words);
    QVERIFY(page);
    AttributionView* view = page->explainer()->attributions();
    QTRY_VERIFY_WITH_TIMEOUT(page->panel()->hasModel(), 30000);
    QTest::keyClicks(page->panel()->textField(), "AbBa");
    QTRY_VERIFY_WITH_TIMEOUT(view->characterTints().size() == 4, 30000);  // a b b a, lowercased
    const session::TrainedModel m = session::load_trained_model(g, words.checkpoint.toStdString(), {});
    const std::vector<float> heat = coreHeat(m, page->panel()->input(), explain::AttributionMethod::Saliency);
    QVERIFY(near(view->heat(), heat));
    const float most = *std::max_element(heat.begin(), heat.begin() + 4);
    for (size_t i = 0; i < 4; ++i) QCOMPARE(view->characterTints()[i], widgets::heatColour(heat[i] / most));
    QVERIFY(view->shownImage().isNull());
  }

  void aPromptGetsTheAttentionMapsOfEachHead() {
    const graph::Graph g = graph::parse_project(R"({"format": 1, "nodes": [
      {"id": "in", "type": "Input", "name": "in", "params": {}, "position": [0, 0]},
      {"id": "embed", "type": "Embedding", "name": "embed", "params": {"num_embeddings": 5, "embedding_dim": 8}, "position": [200, 0]},
      {"id": "attn", "type": "MultiheadAttention", "name": "attn", "params": {"num_heads": 2, "causal": true}, "position": [400, 0]},
      {"id": "out", "type": "Linear", "name": "out", "params": {"out_features": 5}, "position": [600, 0]},
      {"id": "loss", "type": "CrossEntropy", "name": "loss", "params": {}, "position": [800, 0]}],
    "edges": [{"from": ["in", "x"], "to": ["embed", "input"]}, {"from": ["embed", "output"], "to": ["attn", "input"]},
              {"from": ["attn", "output"], "to": ["out", "input"]},
              {"from": ["out", "output"], "to": ["loss", "input"]}, {"from": ["in", "y"], "to": ["loss", "target"]}],
    "dataset": {"kind": "text", "path": "names.txt", "seq_len": 8},
    "training": {"epochs": 1, "seed": 3}})",
                                                "attention.plexus");
    const Saved text =
        save(root(), "attention", g, {{testing::kTextSeqLen}, {testing::kTextSeqLen}, 5}, testing::kTextSymbols);
    Window w;
    app::TryItPage* page = tryCheckpoint(w, text);
    QVERIFY(page);
    widgets::AttentionView* view = page->explainer()->attention();
    QVERIFY(page->textPrompt()->isVisible());
    QVERIFY(!page->explainer()->attributions()->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(view->isVisible(), 30000);
    QCOMPARE(view->nodeBox()->currentText(), QString("attn"));
    QTRY_VERIFY_WITH_TIMEOUT(view->caption().contains("Type a prompt"), 10000);

    QTest::keyClicks(page->textPrompt()->promptField(), "ane");
    QTRY_VERIFY_WITH_TIMEOUT(view->heads() == 2, 30000);
    const session::TrainedModel m = session::load_trained_model(g, text.checkpoint.toStdString(), {});
    const explain::AttentionMap core = explain::attention_map(m, std::string("ane"), "attn");
    QCOMPARE(core.weights.shape(), (Shape{2, 3, 3}));
    const std::vector<float> weights = core.weights.contiguous().to_vector();
    const auto& maps = view->grid()->maps();  // every head, side by side
    QCOMPARE(maps.size(), size_t(2));
    for (size_t h = 0; h < 2; ++h)
      QVERIFY(near(maps[h].values, std::vector<float>(weights.begin() + std::ptrdiff_t(9 * h),
                                                      weights.begin() + std::ptrdiff_t(9 * (h + 1)))));
    view->chooseHeads(widgets::AttentionView::kAverage);
    QCOMPARE(view->grid()->maps().size(), size_t(1));
    const std::vector<float>& mean = view->grid()->maps()[0].values;
    for (int t = 0; t < 3; ++t) {
      QVERIFY(std::abs(std::accumulate(mean.begin() + 3 * t, mean.begin() + 3 * (t + 1), 0.f) - 1.f) < 1e-5f);
      for (int s = t + 1; s < 3; ++s) QCOMPARE(mean[size_t(3 * t + s)], 0.f);  // causal: no later key
    }
    QVERIFY2(view->grid()->describe(0, 2, 1).contains("query 3 “e” → key 2 “n”"),
             qPrintable(view->grid()->describe(0, 2, 1)));

    // A character the model does not know: said in place.
    QTest::keyClicks(page->textPrompt()->promptField(), "x");
    QTRY_VERIFY_WITH_TIMEOUT(!view->errorText().isEmpty(), 30000);
    QVERIFY(view->grid()->maps().empty());
    QVERIFY(w.errors.isEmpty());
  }
};

QTEST_MAIN(TestAppTryItExplain)
#include "test_app_tryit_explain.moc"
