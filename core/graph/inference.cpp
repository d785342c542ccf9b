#include "graph/inference.h"

#include <deque>

#include "util/error.h"

namespace plexus::graph {
namespace {

const std::vector<size_t> kNoEdges;

// Whether every dim is positive and the element count is at most kMaxValuesPerExample.
bool countable(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (d < 1 || __builtin_mul_overflow(n, d, &n) || n > kMaxValuesPerExample) return false;
  return true;
}

}  // namespace

std::string batched(const Shape& s) {
  std::string out = "[N";
  for (int64_t d : s) out += ", " + std::to_string(d);
  return out + "]";
}

GraphIndex::GraphIndex(const Graph& g)
    : graph(g), into(g.nodes.size()), from(g.nodes.size()), source(g.edges.size(), npos), target(g.edges.size(), npos) {
  node.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) node.emplace(g.nodes[i].id, i);
  for (size_t i = 0; i < g.edges.size(); ++i) {
    const Edge& e = g.edges[i];
    if (const auto it = node.find(e.to.node); it != node.end()) into[target[i] = it->second].push_back(i);
    if (const auto it = node.find(e.from.node); it != node.end()) from[source[i] = it->second].push_back(i);
  }
}

const Node* GraphIndex::find(std::string_view id) const {
  const auto it = node.find(id);
  return it == node.end() ? nullptr : &graph.nodes[it->second];
}

const std::vector<size_t>& GraphIndex::edges_into(std::string_view id) const {
  const auto it = node.find(id);
  return it == node.end() ? kNoEdges : into[it->second];
}

const std::vector<size_t>& GraphIndex::edges_from(std::string_view id) const {
  const auto it = node.find(id);
  return it == node.end() ? kNoEdges : from[it->second];
}

std::vector<char> GraphIndex::feeding(std::vector<size_t> ends) const {
  std::vector<char> marked(graph.nodes.size(), 0);
  for (size_t n : ends) marked[n] = 1;
  while (!ends.empty()) {
    const size_t n = ends.back();
    ends.pop_back();
    for (size_t e : into[n]) {
      const size_t src = source[e];
      if (src != npos && !marked[src]) marked[src] = 1, ends.push_back(src);
    }
  }
  return marked;
}

std::vector<std::pair<const PortSpec*, std::vector<size_t>>> input_edges(const GraphIndex& index, const Node& node,
                                                                          const LayerType& type) {
  const std::vector<size_t>& into = index.edges_into(node.id);
  std::vector<std::pair<const PortSpec*, std::vector<size_t>>> out;
  out.reserve(type.inputs.size());
  for (const PortSpec& port : type.inputs) {
    std::vector<size_t> edges;
    for (size_t i : into)
      if (index.graph.edges[i].to.port == port.name) edges.push_back(i);
    out.emplace_back(&port, std::move(edges));
  }
  return out;
}

std::vector<Shape> input_shapes(const GraphIndex& index, const InferenceResult& shapes, const Node& node,
                                const LayerType& type) {
  std::vector<Shape> inputs;
  for (const auto& [port, edges] : input_edges(index, node, type))
    for (size_t e : edges) inputs.push_back(*shapes.edge_shapes[e]);
  return inputs;
}

std::vector<std::pair<const PortSpec*, std::vector<size_t>>> input_edges(const Graph& graph, const Node& node,
                                                                          const LayerType& type) {
  std::vector<std::pair<const PortSpec*, std::vector<size_t>>> out;
  for (const PortSpec& port : type.inputs) {
    std::vector<size_t> edges;
    for (size_t i = 0; i < graph.edges.size(); ++i)
      if (graph.edges[i].to.node == node.id && graph.edges[i].to.port == port.name) edges.push_back(i);
    out.emplace_back(&port, std::move(edges));
  }
  return out;
}

InferenceResult infer_shapes(const Graph& graph, const DatasetInfo* dataset) {
  return infer_shapes(GraphIndex(graph), dataset);
}

InferenceResult infer_shapes(const GraphIndex& index, const DatasetInfo* dataset) {
  const Graph& graph = index.graph;
  InferenceResult r;
  r.edge_shapes.resize(graph.edges.size());
  const Registry& registry = Registry::instance();
  const size_t n_nodes = graph.nodes.size();

  // A node whose id an earlier node already has is left out (the validator reports it); the
  // edges naming that id belong to the first one.
  const auto first = [&](size_t i) { return index.node.at(graph.nodes[i].id) == i; };

  // Kahn's algorithm over edges whose both ends exist.
  std::vector<size_t> indegree(n_nodes, 0);
  for (size_t i = 0; i < n_nodes; ++i)
    for (size_t e : index.into[i])
      if (index.source[e] != GraphIndex::npos) ++indegree[i];
  std::deque<size_t> ready;
  for (size_t i = 0; i < n_nodes; ++i)
    if (!indegree[i] && first(i)) ready.push_back(i);
  std::vector<size_t> order;
  order.reserve(n_nodes);
  while (!ready.empty()) {
    const size_t i = ready.front();
    ready.pop_front();
    order.push_back(i);
    r.order.push_back(graph.nodes[i].id);
    for (size_t e : index.from[i]) {
      const size_t to = index.target[e];
      if (to != GraphIndex::npos && --indegree[to] == 0) ready.push_back(to);
    }
  }
  for (size_t i = 0; i < n_nodes; ++i)
    if (indegree[i] > 0) r.in_cycle.push_back(graph.nodes[i].id);

  // The output shapes of each node by index (empty: not inferred), then by id for the result.
  std::vector<std::vector<Shape>> outputs(n_nodes);
  std::vector<char> known(n_nodes, 0);
  std::vector<const LayerType*> types(n_nodes, nullptr);
  for (size_t i : order) {
    const Node& node = graph.nodes[i];
    const LayerType* type = types[i] = registry.find(node.type);
    if (!type || !check_params(node, *type).empty()) continue;  // the validator explains these
    ShapeContext ctx{node, {}, {}, {}, dataset, !graph.dataset.kind.empty()};
    bool complete = true;
    for (const auto& [port, edges] : input_edges(index, node, *type)) {
      if ((edges.empty() && port->required) || (edges.size() > 1 && !port->variadic)) complete = false;
      for (size_t e : edges) {
        const Edge& edge = graph.edges[e];
        const size_t src = index.source[e];
        const std::optional<size_t> out_port =
            src != GraphIndex::npos && known[src] ? types[src]->output_index(graph.nodes[src], edge.from.port)
                                                  : std::nullopt;
        if (!out_port) {
          complete = false;
          continue;
        }
        ctx.inputs.push_back(outputs[src][*out_port]);
        ctx.input_ports.push_back(port->name);
        const Node& from = graph.nodes[src];
        ctx.input_sources.push_back("'" + (from.name.empty() ? from.id : from.name) + "'");
      }
    }
    if (!complete) continue;
    try {
      std::vector<Shape> shapes = type->shape(ctx);
      shapes.resize(type->outputs_of(node).size());
      bool fits = true;
      for (const Shape& s : shapes)
        if (fits && !countable(s)) {
          r.problems.push_back({Severity::Error, node.id, "",
                                node.label() + " would output " + batched(s) +
                                    ": too many values per example (more than 2^62); use smaller sizes"});
          fits = false;
        }
      if (!fits) continue;
      outputs[i] = std::move(shapes);
      known[i] = 1;
    } catch (const ShapeUnknown&) {
      // Not a problem of the graph: what it depends on (the dataset) cannot be read now.
    } catch (const ShapeProblem& p) {
      r.problems.push_back({Severity::Error, node.id, p.port, p.message});
    } catch (const Error& e) {
      r.problems.push_back({Severity::Error, node.id, "", e.what()});
    }
  }

  for (size_t i = 0; i < graph.edges.size(); ++i) {
    const size_t src = index.source[i];
    if (src == GraphIndex::npos || !known[src]) continue;
    if (const std::optional<size_t> port = types[src]->output_index(graph.nodes[src], graph.edges[i].from.port))
      r.edge_shapes[i] = outputs[src][*port];
  }
  for (size_t i : order)
    if (known[i]) r.outputs.emplace(graph.nodes[i].id, std::move(outputs[i]));
  return r;
}

}  // namespace plexus::graph
