// Editing helpers of the node editor: auto layout, copy and paste, new node ids.
#include "support/check.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <set>

#include "graph/fragment.h"
#include "graph/layout.h"
#include "support/test_support.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::graph;

namespace {

Node node(std::string id, std::string type = "ReLU") {
  return Node{id, std::move(type), id, {}, {}};
}
// "n<i>", built by appending (GCC 12 reports false -Wrestrict positives on "literal" + std::string).
std::string numbered(const char* stem, size_t i) {
  std::string s = stem;
  s += std::to_string(i);
  return s;
}
Edge edge(std::string from, std::string to) { return Edge{{std::move(from), "output"}, {std::move(to), "input"}}; }

Graph graph_of(std::vector<std::string> ids, std::vector<std::pair<std::string, std::string>> links) {
  Graph g;
  for (auto& id : ids) g.nodes.push_back(node(id));
  for (auto& [from, to] : links) g.edges.push_back(edge(from, to));
  return g;
}

struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// Every node has a position, all whole numbers, the drawing starts at (0, 0) and no two boxes
// overlap.
void check_layout(const Graph& g, const std::map<std::string, Position>& pos, const LayoutOptions& options = {}) {
  COMPARE(pos.size(), g.nodes.size());
  std::vector<Box> boxes;
  double min_x = 1e300, min_y = 1e300;
  for (const Node& n : g.nodes) {
    VERIFY2(pos.contains(n.id), n.id.c_str());
    const Position p = pos.at(n.id);
    COMPARE(p.x, std::round(p.x));
    COMPARE(p.y, std::round(p.y));
    const LayoutSize s = options.node_size ? options.node_size(n) : LayoutSize{};
    boxes.push_back({p.x, p.y, p.x + s.width, p.y + s.height});
    min_x = std::min(min_x, p.x);
    min_y = std::min(min_y, p.y);
  }
  if (!g.nodes.empty()) {
    COMPARE(min_x, 0.0);
    COMPARE(min_y, 0.0);
  }
  for (size_t i = 0; i < boxes.size(); ++i)
    for (size_t j = i + 1; j < boxes.size(); ++j)
      VERIFY2(!boxes[i].overlaps(boxes[j]), (g.nodes[i].id + " overlaps " + g.nodes[j].id).c_str());
}

}  // namespace

TEST(layoutOfAChain) {
  const Graph g = graph_of({"a", "b", "c", "d"}, {{"a", "b"}, {"b", "c"}, {"c", "d"}});
  const auto pos = auto_layout(g);
  check_layout(g, pos);
  for (const char* pair : {"ab", "bc", "cd"}) {
    const Position p = pos.at(std::string(1, pair[0])), q = pos.at(std::string(1, pair[1]));
    VERIFY(p.x < q.x);
    COMPARE(p.y, q.y);
  }
  COMPARE(pos.at("b").x, 180.0 + 70);  // default width and column gap
}

TEST(layoutFollowsEdgesNotGraphOrder) {
  // The loss is listed first but fed by the others: it ends up rightmost, the input leftmost.
  const Graph g = graph_of({"loss", "fc", "in"}, {{"in", "fc"}, {"fc", "loss"}, {"in", "loss"}});
  const auto pos = auto_layout(g);
  check_layout(g, pos);
  COMPARE(pos.at("in").x, 0.0);
  VERIFY(pos.at("fc").x < pos.at("loss").x);
}

TEST(layoutOfADiamond) {
  const Graph g = graph_of({"a", "b", "c", "d"}, {{"a", "b"}, {"a", "c"}, {"b", "d"}, {"c", "d"}});
  const auto pos = auto_layout(g);
  check_layout(g, pos);
  COMPARE(pos.at("b").x, pos.at("c").x);
  VERIFY(pos.at("b").y != pos.at("c").y);
  VERIFY(pos.at("a").x < pos.at("b").x);
  VERIFY(pos.at("d").x > pos.at("b").x);
  // Single-node columns sit on the centre line between b and c.
  COMPARE(pos.at("a").y, pos.at("d").y);
  COMPARE(pos.at("a").y, (pos.at("b").y + pos.at("c").y) / 2);
}

TEST(layoutReducesCrossings) {
  // a1 -> b2 and a2 -> b1 cross in graph order; the sweeps straighten them.
  const Graph g = graph_of({"src", "a1", "a2", "b1", "b2"}, {{"src", "a1"}, {"src", "a2"}, {"a1", "b2"}, {"a2", "b1"}});
  const auto pos = auto_layout(g);
  check_layout(g, pos);
  COMPARE(pos.at("a1").y < pos.at("a2").y, pos.at("b2").y < pos.at("b1").y);
}

TEST(layoutOfCycles) {
  Graph g = graph_of({"a", "b", "c", "d"}, {{"a", "b"}, {"b", "c"}, {"c", "a"}, {"c", "d"}});
  g.edges.push_back(edge("d", "d"));  // a self-loop
  g.edges.push_back(edge("d", "ghost"));  // an edge to a missing node
  const auto pos = auto_layout(g);
  check_layout(g, pos);
  // The back edge c -> a is ignored, so the cycle is drawn as the chain a, b, c.
  VERIFY(pos.at("a").x < pos.at("b").x);
  VERIFY(pos.at("b").x < pos.at("c").x);
  VERIFY(pos.at("c").x < pos.at("d").x);
}

TEST(layoutHonoursNodeSizes) {
  // One wide column of nodes of different heights and widths.
  Graph g = graph_of({"in"}, {});
  for (int i = 0; i < 6; ++i) {
    const std::string id = numbered("n", size_t(i));
    g.nodes.push_back(node(id));
    g.edges.push_back(edge("in", id));
    g.edges.push_back(edge(id, "out"));
  }
  g.nodes.push_back(node("out"));
  LayoutOptions options;
  options.node_size = [](const Node& n) {
    const size_t h = std::hash<std::string>{}(n.id);
    return LayoutSize{double(100 + h % 150), double(30 + h % 200)};
  };
  options.row_gap = 10;
  const auto pos = auto_layout(g, options);
  check_layout(g, pos, options);
  double widest = 0;
  for (int i = 0; i < 6; ++i) {
    const Node& n = g.nodes[size_t(i) + 1];
    COMPARE(pos.at(n.id).x, options.node_size(g.nodes[0]).width + options.column_gap);
    widest = std::max(widest, options.node_size(n).width);
  }
  COMPARE(pos.at("out").x, pos.at("n0").x + widest + options.column_gap);
}

TEST(layoutSeparatesComponents) {
  const Graph g = graph_of({"a", "x", "b", "y", "z", "lone"}, {{"a", "b"}, {"x", "y"}, {"x", "z"}});
  const auto pos = auto_layout(g);
  check_layout(g, pos);
  // Stacked in the order of their first node: {a, b}, then {x, y, z}, then lone.
  COMPARE(pos.at("a").y, 0.0);
  VERIFY(pos.at("x").y > pos.at("a").y + 100);
  COMPARE(pos.at("x").x, 0.0);
  VERIFY(pos.at("lone").y >= std::max(pos.at("y").y, pos.at("z").y) + 100 + 80);
}

TEST(layoutIsDeterministic) {
  std::mt19937 rng(7);
  Graph g;
  for (int i = 0; i < 60; ++i) g.nodes.push_back(node(numbered("n", size_t(i))));
  for (int i = 0; i < 120; ++i)
    g.edges.push_back(edge(numbered("n", rng() % 60), numbered("n", rng() % 60)));  // cycles too
  const auto first = auto_layout(g);
  check_layout(g, first);
  VERIFY(first == auto_layout(g));
  VERIFY(auto_layout(Graph{}).empty());
}

TEST(layoutOfALargeGraph) {
  std::mt19937 rng(11);
  Graph g;
  const int n = 2000;
  for (int i = 0; i < n; ++i) g.nodes.push_back(node(numbered("n", size_t(i))));
  for (int i = 1; i < n; ++i)
    for (int k = 0; k < 2; ++k)
      g.edges.push_back(edge(numbered("n", size_t(std::max(0, i - 1 - int(rng() % 30)))), numbered("n", size_t(i))));
  const auto start = std::chrono::steady_clock::now();
  const auto pos = auto_layout(g);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  std::printf("INFO   : auto_layout of %d nodes, %zu edges: %lld ms\n", n, g.edges.size(), (long long)ms.count());
  COMPARE(pos.size(), size_t(n));
  for (const Edge& e : g.edges) VERIFY(pos.at(e.from.node).x < pos.at(e.to.node).x);
}

TEST(newNodeIds) {
  Graph g;
  COMPARE(new_node_id(g, "Linear"), std::string("linear1"));
  g.nodes.push_back(node("linear1", "Linear"));
  COMPARE(new_node_id(g, "Linear"), std::string("linear2"));
  g.nodes.push_back(node("linear2", "Linear"));
  g.nodes.push_back(node("linear4", "Linear"));
  COMPARE(new_node_id(g, "Linear"), std::string("linear3"));  // the smallest free number
  COMPARE(new_node_id(g, "Conv2d"), std::string("conv2d1"));
  COMPARE(new_node_id(g, ""), std::string("node1"));
  COMPARE(new_node_id(g, "Odd Type"), std::string("node1"));
  VERIFY(valid_node_id(new_node_id(g, std::string(300, 'X'))));
}

TEST(uniqueNodeIds) {
  const Graph g = graph_of({"fc", "fc1", "node1"}, {});
  COMPARE(unique_node_id(g, "conv"), std::string("conv"));
  COMPARE(unique_node_id(g, "fc"), std::string("fc2"));
  COMPARE(unique_node_id(g, "fc1"), std::string("fc2"));  // the stem drops trailing digits
  COMPARE(unique_node_id(g, "fc", {"fc2", "fc3"}), std::string("fc4"));
  COMPARE(unique_node_id(g, "conv", {"conv"}), std::string("conv1"));
  COMPARE(unique_node_id(g, ""), std::string("node2"));
  COMPARE(unique_node_id(g, "9abc"), std::string("node2"));
  COMPARE(unique_node_id(g, "a b"), std::string("node2"));
  COMPARE(unique_node_id(g, "123"), std::string("node2"));
  VERIFY(valid_node_id(unique_node_id(g, std::string(200, 'y'))));
}

TEST(extractKeepsInternalEdges) {
  Graph g = graph_of({"a", "b", "c", "d"}, {{"a", "b"}, {"b", "c"}, {"c", "d"}, {"a", "c"}});
  g.dataset.kind = "mnist";
  g.training.epochs = 9;
  g.view = "{\"zoom\":2}";
  const Graph f = extract_fragment(g, {"c", "b", "nope"});
  COMPARE(f.nodes.size(), size_t(2));
  COMPARE(f.nodes[0].id, std::string("b"));  // graph order, not selection order
  COMPARE(f.nodes[1].id, std::string("c"));
  COMPARE(f.edges.size(), size_t(1));
  VERIFY(f.edges[0] == edge("b", "c"));
  VERIFY(f.dataset == DatasetBinding{});
  VERIFY(f.training == TrainingSettings{});
  VERIFY(f.view.empty());
}

TEST(pasteRenamesAndRemaps) {
  Graph target = graph_of({"a", "b", "c"}, {{"a", "b"}});
  Graph source = target;
  source.nodes[0].position = {10, 20};
  source.nodes[1].name = "named";
  const Graph fragment = extract_fragment(source, {"a", "b"});

  const Pasted first = paste_fragment(target, fragment, {30, 40});
  COMPARE(first.nodes.size(), size_t(2));
  COMPARE(first.nodes[0].id, std::string("a1"));
  COMPARE(first.nodes[1].id, std::string("b1"));
  COMPARE(first.nodes[1].name, std::string("named"));  // names are kept...
  COMPARE(first.nodes[0].name, std::string("a1"));  // ...unless the name was the id
  COMPARE(first.nodes[1].type, fragment.nodes[1].type);
  VERIFY(first.nodes[0].position == (Position{40, 60}));
  VERIFY(first.nodes[1].position == (Position{30, 40}));
  COMPARE(first.edges.size(), size_t(1));
  VERIFY(first.edges[0] == edge("a1", "b1"));

  // Pasting again into the grown graph gives new ids again.
  for (const Node& n : first.nodes) target.nodes.push_back(n);
  for (const Edge& e : first.edges) target.edges.push_back(e);
  const Pasted second = paste_fragment(target, fragment, {30, 40});
  COMPARE(second.nodes[0].id, std::string("a2"));
  COMPARE(second.nodes[1].id, std::string("b2"));
  VERIFY(second.edges[0] == edge("a2", "b2"));
  for (const Node& n : second.nodes) target.nodes.push_back(n);
  std::set<std::string> ids;
  for (const Node& n : target.nodes) VERIFY2(ids.insert(n.id).second, n.id.c_str());

  // Unused ids are kept; edges leaving the fragment are dropped.
  Graph loose = graph_of({"p", "q"}, {{"p", "q"}, {"p", "outside"}});
  const Pasted kept = paste_fragment(Graph{}, loose, {});
  COMPARE(kept.nodes[0].id, std::string("p"));
  COMPARE(kept.edges.size(), size_t(1));
}

TEST(pasteKeepsIdsUniqueAmongThemselves) {
  // "x" is taken, so fragment "x" becomes x1, and fragment "x1" must not collide with it.
  const Graph target = graph_of({"x"}, {});
  const Graph fragment = graph_of({"x", "x1"}, {{"x", "x1"}});
  const Pasted p = paste_fragment(target, fragment, {});
  COMPARE(p.nodes[0].id, std::string("x1"));
  COMPARE(p.nodes[1].id, std::string("x2"));
  VERIFY(p.edges[0] == edge("x1", "x2"));
}

TEST(fragmentTextRoundTrip) {
  Graph g = graph_of({"in", "fc", "act"}, {{"in", "fc"}, {"fc", "act"}});
  g.nodes[1].type = "Linear";
  g.nodes[1].params = {{"out_features", int64_t(10)}, {"bias", false}, {"scale", 0.5}};
  g.nodes[1].position = {12.5, -3};
  g.dataset.path = "/data";
  const Graph f = extract_fragment(g, {"in", "fc", "act"});
  const std::string text = fragment_to_text(f);
  VERIFY(f == fragment_from_text(text));
  COMPARE(fragment_to_text(fragment_from_text(text)), text);
  VERIFY(fragment_from_text(fragment_to_text(Graph{})) == Graph{});
}

TEST(malformedFragmentTextThrows) {
  using testing::message_of;
  for (const char* bad : {"", "not json", "{\"nodes\": []}", "{\"format\": 1, \"nodes\": [{\"id\": \"9\"}], \"edges\": []}",
                          "{\"format\": 1, \"nodes\": [], \"edges\": [],}"}) {
    const std::string m = message_of<ProjectError>([&] { fragment_from_text(bad); });
    VERIFY2(!m.starts_with("<"), m.c_str());
    VERIFY2(testing::contains(m, "clipboard"), m.c_str());
  }
}

