// bench_editor: how smooth dragging a node is in a big graph, against a 60 fps frame budget.
//
//   bench_editor
//
// Builds 25 chains of Input -> 20 alternating Linear / ReLU nodes (525 nodes, 500 wires) in a
// GraphDocument, shows it in a 1600 x 1000 NodeView (offscreen unless QT_QPA_PLATFORM says
// otherwise; software raster), presses on a node's header and moves it 300 times, each move
// followed by a synchronous repaint of the whole viewport. Each frame (move + pending events
// + repaint) is timed. The same is done with the graph zoomed to fit (every node painted) and
// for a scene holding only the dragged node (the reference). Prints mean, median, p95 and max
// frame milliseconds, the ratio to the reference, and "PASS: p95 < 16 ms" or "FAIL: ...".
// Always exits 0: it measures, it does not test.
#include <QApplication>
#include <QElapsedTimer>
#include <QMouseEvent>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "editor/model/graph_document.h"
#include "editor/node_item.h"
#include "editor/node_scene.h"
#include "editor/node_view.h"

using namespace plexus;
using namespace plexus::widgets;

namespace {

constexpr int kChains = 25, kChainLength = 20, kMoves = 300;
constexpr double kBudgetMs = 16;

graph::Node node(const std::string& id, const std::string& type, double x, double y) {
  return graph::Node{id, type, id, {}, {x, y}};
}

// "<stem><i>", built by appending (GCC 12 reports false -Wrestrict positives on "literal" + std::string).
std::string numbered(const char* stem, int i) {
  std::string s = stem;
  s += std::to_string(i);
  return s;
}

graph::Graph chains() {
  graph::Graph g;
  for (int c = 0; c < kChains; ++c) {
    const double y = c * 180;
    std::string last = numbered("in", c), port = "x";
    g.nodes.push_back(node(last, "Input", 0, y));
    for (int i = 0; i < kChainLength; ++i) {
      const std::string id = numbered("n", c) + numbered("_", i);
      g.nodes.push_back(node(id, i % 2 ? "ReLU" : "Linear", (i + 1) * 240, y));
      g.edges.push_back({{last, port}, {id, "input"}});
      last = id;
      port = "output";
    }
  }
  return g;
}

graph::Graph single() {
  graph::Graph g;
  g.nodes.push_back(node("n12_9", "Linear", 0, 0));
  return g;
}

struct Stats {
  double mean, median, p95, max;
};

Stats stats(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / double(ms.size());
  return {mean, ms[ms.size() / 2], ms[size_t(double(ms.size() - 1) * 0.95)], ms.back()};
}

void send(QWidget* widget, QEvent::Type type, QPoint pos, Qt::MouseButton button, Qt::MouseButtons held) {
  QMouseEvent event(type, pos, widget->mapToGlobal(pos), button, held, Qt::NoModifier);
  QApplication::sendEvent(widget, &event);
}

// Drags node `id` around a circle, timing every frame.
Stats dragFrames(const graph::Graph& graph, const QString& id, const std::function<void(NodeView&)>& frame_view) {
  GraphDocument doc;
  doc.reset(graph, "");
  NodeScene scene(&doc);
  scene.setSnapToGrid(false);  // every move changes the geometry: the worst case
  NodeView view(&scene);
  view.resize(1600, 1000);
  view.show();
  QApplication::processEvents();
  view.centerOn(scene.nodeItem(id));
  frame_view(view);
  view.viewport()->repaint();  // caches warm, as after the first frame on screen

  QWidget* viewport = view.viewport();
  const QPoint grab = view.mapFromScene(scene.nodeItem(id)->scenePos() + QPointF(60, 12));
  send(viewport, QEvent::MouseButtonPress, grab, Qt::LeftButton, Qt::LeftButton);
  std::vector<double> ms;
  QElapsedTimer timer;
  QPoint pos = grab;
  for (int i = 1; i <= kMoves; ++i) {
    const double t = 2 * M_PI * i / 120;  // two and a half turns: it ends away from the start
    pos = grab + QPoint(int(std::lround(120 * std::sin(t))), int(std::lround(80 * (1 - std::cos(t)))));
    timer.start();
    send(viewport, QEvent::MouseMove, pos, Qt::NoButton, Qt::LeftButton);
    QApplication::processEvents();
    viewport->repaint();
    ms.push_back(double(timer.nsecsElapsed()) / 1e6);
  }
  send(viewport, QEvent::MouseButtonRelease, pos, Qt::LeftButton, Qt::NoButton);
  if (doc.undoStack()->count() != 1) std::printf("warning: the drag made %d undo steps\n", doc.undoStack()->count());
  return stats(ms);
}

void print(const char* what, const Stats& s) {
  std::printf("%-34s mean %6.2f  median %6.2f  p95 %6.2f  max %6.2f ms\n", what, s.mean, s.median, s.p95, s.max);
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const graph::Graph big = chains();
  std::printf("dragging one node, %d moves, 1600x1000 view, %zu nodes, %zu wires\n", kMoves, big.nodes.size(),
              big.edges.size());

  const auto as_is = [](NodeView&) {};
  const Stats reference = dragFrames(single(), "n12_9", as_is);
  const Stats normal = dragFrames(big, "n12_9", as_is);
  const Stats fitted = dragFrames(big, "n12_9", [](NodeView& view) { view.fitAll(); });
  print("reference (only that node), 100%", reference);
  print("500-node graph, 100%", normal);
  print("500-node graph, all in view", fitted);
  std::printf("ratio to reference (median): %.2f at 100%%, %.2f all in view\n", normal.median / reference.median,
              fitted.median / reference.median);
  const double worst = std::max(normal.p95, fitted.p95);
  if (worst < kBudgetMs)
    std::printf("PASS: p95 < %.0f ms (%.2f ms)\n", kBudgetMs, worst);
  else
    std::printf("FAIL: p95 %.2f ms >= %.0f ms\n", worst, kBudgetMs);
  return 0;
}
