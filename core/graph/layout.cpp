#include "graph/layout.h"

#include "graph/blocks.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace plexus::graph {
namespace {

constexpr int kSweeps = 4;  // rounds of down and up barycenter sweeps; more rarely helps

using Columns = std::vector<std::vector<size_t>>;  // per layer: node numbers, top to bottom

// Reorders every column but the first (down) or the last (up) by the mean rank of each node's
// neighbours in the columns already swept; `rank` is a node's place relative to its column's
// middle, so columns of different sizes compare as they will be drawn (centred).
void sweep(Columns& columns, const std::vector<std::vector<size_t>>& neighbours, std::vector<double>& rank, bool down) {
  for (size_t step = 1; step < columns.size(); ++step) {
    std::vector<size_t>& column = columns[down ? step : columns.size() - 1 - step];
    std::vector<std::pair<double, size_t>> keyed;
    keyed.reserve(column.size());
    for (size_t v : column) {
      double sum = 0;
      for (size_t u : neighbours[v]) sum += rank[u];
      keyed.emplace_back(neighbours[v].empty() ? rank[v] : sum / double(neighbours[v].size()), v);
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < column.size(); ++i) {
      column[i] = keyed[i].second;
      rank[column[i]] = double(i) - double(column.size() - 1) / 2;
    }
  }
}

}  // namespace

std::map<std::string, Position> auto_layout(const Graph& graph, const LayoutOptions& options) {
  // Nodes are numbered in graph order; a repeated id names nothing new in the result, so only
  // its first node takes part.
  std::unordered_map<std::string_view, size_t> number;
  std::vector<const Node*> nodes;
  for (const Node& n : graph.nodes)
    if (number.emplace(n.id, nodes.size()).second) nodes.push_back(&n);
  const size_t count = nodes.size();

  // Edges between existing nodes, and weakly connected components (union-find).
  std::vector<std::vector<size_t>> out(count);
  std::vector<size_t> parent(count);
  for (size_t v = 0; v < count; ++v) parent[v] = v;
  auto root = [&](size_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  for (const Edge& e : graph.edges) {
    const auto from = number.find(e.from.node), to = number.find(e.to.node);
    if (from == number.end() || to == number.end()) continue;
    out[from->second].push_back(to->second);
    const size_t a = root(from->second), b = root(to->second);
    parent[std::max(a, b)] = std::min(a, b);  // a component's root is its first node
  }

  // Depth-first search in node order (iterative: a long chain must not exhaust the stack).
  // Edges back to a node still on the stack close cycles and are left out; the rest form a DAG,
  // whose topological order is the reverse of the finishing order.
  enum : char { kNew, kOpen, kDone };
  std::vector<char> state(count, kNew);
  std::vector<std::vector<size_t>> succ(count), pred(count);
  std::vector<size_t> finished;
  finished.reserve(count);
  std::vector<std::pair<size_t, size_t>> stack;  // node, next out-edge to follow
  for (size_t start = 0; start < count; ++start) {
    if (state[start] != kNew) continue;
    state[start] = kOpen;
    stack.emplace_back(start, 0);
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      if (next == out[v].size()) {
        state[v] = kDone;
        finished.push_back(v);
        stack.pop_back();
        continue;
      }
      const size_t w = out[v][next++];
      if (state[w] == kOpen) continue;  // a back edge
      succ[v].push_back(w);
      pred[w].push_back(v);
      if (state[w] == kNew) {
        state[w] = kOpen;
        stack.emplace_back(w, 0);  // invalidates v and next; they are not used again
      }
    }
  }

  // Layer = longest path from a source, so every edge of the DAG points right.
  std::vector<size_t> layer(count, 0);
  for (auto it = finished.rbegin(); it != finished.rend(); ++it)
    for (size_t w : succ[*it]) layer[w] = std::max(layer[w], layer[*it] + 1);

  // Components in the order of their first node, columns initially in graph order.
  std::vector<Columns> components;
  std::vector<size_t> component(count);
  for (size_t v = 0; v < count; ++v) {
    if (root(v) == v) {
      component[v] = components.size();
      components.emplace_back();
    } else {
      component[v] = component[root(v)];  // the root comes first, so it is numbered already
    }
    Columns& columns = components[component[v]];
    if (columns.size() <= layer[v]) columns.resize(layer[v] + 1);
    columns[layer[v]].push_back(v);
  }

  std::vector<double> rank(count);
  for (Columns& columns : components) {
    for (const auto& column : columns)
      for (size_t i = 0; i < column.size(); ++i) rank[column[i]] = double(i) - double(column.size() - 1) / 2;
    for (int i = 0; i < kSweeps; ++i) {
      sweep(columns, pred, rank, true);
      sweep(columns, succ, rank, false);
    }
  }

  std::vector<LayoutSize> size(count);
  for (size_t v = 0; v < count; ++v) size[v] = options.node_size ? options.node_size(*nodes[v]) : LayoutSize{};

  std::map<std::string, Position> positions;
  double top = 0;
  for (const Columns& columns : components) {
    std::vector<double> width(columns.size(), 0), height(columns.size(), 0);
    for (size_t c = 0; c < columns.size(); ++c) {
      for (size_t v : columns[c]) {
        width[c] = std::max(width[c], size[v].width);
        height[c] += size[v].height;
      }
      height[c] += options.row_gap * double(columns[c].size() - 1);  // no column is empty
    }
    const double total_height = *std::max_element(height.begin(), height.end());
    double x = 0;
    for (size_t c = 0; c < columns.size(); ++c) {
      double y = top + (total_height - height[c]) / 2;
      for (size_t v : columns[c]) {
        positions.emplace(nodes[v]->id, Position{std::round(x), std::round(y)});
        y += size[v].height + options.row_gap;
      }
      x += width[c] + options.column_gap;
    }
    top += total_height + options.component_gap;
  }
  return positions;
}

ShownLayout auto_layout_shown(const Graph& graph, const LayoutOptions& options,
                              const std::function<LayoutSize(const Block&)>& block_size) {
  Graph shown;
  std::map<std::string, const Block*> cards;
  const auto shown_as = [&](const std::string& id) {
    const Block* b = hiding_block(graph, id);
    return b ? b->id : id;
  };
  for (const Node& n : graph.nodes) {
    const Block* b = hiding_block(graph, n.id);
    if (!b)
      shown.nodes.push_back(n);
    else if (cards.emplace(b->id, b).second)
      shown.nodes.push_back(Node{b->id, {}, b->name, {}, b->position});
  }
  for (const Edge& e : graph.edges) {
    Edge drawn{{shown_as(e.from.node), e.from.port}, {shown_as(e.to.node), e.to.port}};
    if (drawn.from.node != drawn.to.node) shown.edges.push_back(std::move(drawn));
  }
  LayoutOptions shown_options = options;
  shown_options.node_size = [&](const Node& n) {
    if (const auto card = cards.find(n.id); card != cards.end()) return block_size ? block_size(*card->second) : LayoutSize{};
    return options.node_size ? options.node_size(n) : LayoutSize{};
  };
  ShownLayout out;
  for (const auto& [id, position] : auto_layout(shown, shown_options))
    (cards.count(id) ? out.blocks : out.nodes)[id] = position;
  return out;
}

}  // namespace plexus::graph
