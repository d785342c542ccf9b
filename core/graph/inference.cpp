#include "graph/inference.h"

#include <deque>

#include "util/error.h"

namespace plexus::graph {

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
  InferenceResult r;
  r.edge_shapes.resize(graph.edges.size());
  const Registry& registry = Registry::instance();

  // Kahn's algorithm over edges whose both ends exist.
  std::unordered_map<std::string, size_t> index, indegree;
  for (size_t i = 0; i < graph.nodes.size(); ++i) index.emplace(graph.nodes[i].id, i);
  std::unordered_map<std::string, std::vector<size_t>> out_edges;
  for (size_t i = 0; i < graph.edges.size(); ++i) {
    const Edge& e = graph.edges[i];
    if (!index.count(e.from.node) || !index.count(e.to.node)) continue;
    ++indegree[e.to.node];
    out_edges[e.from.node].push_back(i);
  }
  std::deque<std::string> ready;
  for (const Node& n : graph.nodes)
    if (!indegree[n.id]) ready.push_back(n.id);
  while (!ready.empty()) {
    const std::string id = ready.front();
    ready.pop_front();
    r.order.push_back(id);
    for (size_t e : out_edges[id])
      if (--indegree[graph.edges[e].to.node] == 0) ready.push_back(graph.edges[e].to.node);
  }
  for (const Node& n : graph.nodes)
    if (indegree[n.id] > 0) r.in_cycle.push_back(n.id);

  for (const std::string& id : r.order) {
    const Node& node = graph.nodes[index.at(id)];
    const LayerType* type = registry.find(node.type);
    if (!type || !check_params(node, *type).empty()) continue;  // the validator explains these
    Params params(node, type->params);
    ShapeContext ctx{node, params, {}, {}, {}, dataset};
    bool complete = true;
    for (const auto& [port, edges] : input_edges(graph, node, *type)) {
      if ((edges.empty() && port->required) || (edges.size() > 1 && !port->variadic)) complete = false;
      for (size_t e : edges) {
        const Edge& edge = graph.edges[e];
        const auto src = r.outputs.find(edge.from.node);
        const LayerType* src_type = src == r.outputs.end() ? nullptr : registry.find(graph.nodes[index.at(edge.from.node)].type);
        const PortSpec* out_port = src_type ? src_type->output(edge.from.port) : nullptr;
        if (!out_port) {
          complete = false;
          continue;
        }
        const size_t k = size_t(out_port - src_type->outputs.data());
        ctx.inputs.push_back(src->second.at(k));
        ctx.input_ports.push_back(port->name);
        const Node& from = graph.nodes[index.at(edge.from.node)];
        ctx.input_sources.push_back("'" + (from.name.empty() ? from.id : from.name) + "'");
      }
    }
    if (!complete) continue;
    try {
      std::vector<Shape> shapes = type->shape(ctx);
      shapes.resize(type->outputs.size());
      r.outputs.emplace(id, std::move(shapes));
    } catch (const ShapeProblem& p) {
      r.problems.push_back({Severity::Error, id, p.port, p.message});
    } catch (const Error& e) {
      r.problems.push_back({Severity::Error, id, "", e.what()});
    }
  }

  for (size_t i = 0; i < graph.edges.size(); ++i) {
    const Edge& e = graph.edges[i];
    const auto it = r.outputs.find(e.from.node);
    if (it == r.outputs.end()) continue;
    const LayerType* t = registry.find(graph.nodes[index.at(e.from.node)].type);
    const PortSpec* port = t ? t->output(e.from.port) : nullptr;
    if (port) r.edge_shapes[i] = it->second.at(size_t(port - t->outputs.data()));
  }
  return r;
}

}  // namespace plexus::graph
