#include "graph/validate.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace plexus::graph {
namespace {

std::string port_list(const std::vector<PortSpec>& ports) {
  if (ports.empty()) return "none";
  std::string s;
  for (const PortSpec& p : ports) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

std::string quoted(const Graph& g, const std::string& id) {
  const Node* n = g.find(id);
  return "'" + (n && !n->name.empty() ? n->name : id) + "'";
}

// Nodes that can reach themselves (not merely sit behind a cycle).
std::vector<std::string> nodes_on_cycles(const Graph& g, const std::vector<std::string>& candidates) {
  std::unordered_map<std::string, std::vector<std::string>> next;
  for (const Edge& e : g.edges) next[e.from.node].push_back(e.to.node);
  std::vector<std::string> out;
  for (const std::string& start : candidates) {
    std::unordered_set<std::string> seen;
    std::vector<std::string> stack = next[start];
    bool found = false;
    while (!stack.empty() && !found) {
      const std::string n = stack.back();
      stack.pop_back();
      if (n == start) found = true;
      else if (seen.insert(n).second)
        for (const std::string& m : next[n]) stack.push_back(m);
    }
    if (found) out.push_back(start);
  }
  return out;
}

}  // namespace

Validation validate(const Graph& g, const DatasetInfo* dataset) {
  Validation v;
  auto error = [&](const std::string& node, const std::string& port, std::string msg) {
    v.problems.push_back({Severity::Error, node, port, std::move(msg)});
  };
  const Registry& registry = Registry::instance();

  // Edges must join existing nodes through existing ports.
  for (size_t i = 0; i < g.edges.size(); ++i) {
    const Edge& e = g.edges[i];
    const Node *from = g.find(e.from.node), *to = g.find(e.to.node);
    const std::string text = "the edge from " + e.from.node + "." + e.from.port + " to " + e.to.node + "." + e.to.port;
    if (!from || !to) {
      error(from ? e.to.node : e.from.node, "", text + " refers to a node that does not exist");
      continue;
    }
    const LayerType *ft = registry.find(from->type), *tt = registry.find(to->type);
    if (ft && !ft->output(e.from.port)) {
      error(from->id, e.from.port, from->label() + " has no output '" + e.from.port + "' (outputs: " +
                                       port_list(ft->outputs) + ")");
    }
    if (tt && !tt->input(e.to.port)) {
      error(to->id, e.to.port, to->label() + " has no input '" + e.to.port + "' (inputs: " + port_list(tt->inputs) + ")");
    }
  }

  // Nodes: known type, valid parameters, ports connected as the type requires.
  std::vector<const Node*> inputs, losses;
  for (const Node& n : g.nodes) {
    const LayerType* t = registry.find(n.type);
    if (!t) {
      error(n.id, "", "node " + n.id + " has the unknown type '" + n.type + "'");
      continue;
    }
    if (t->is_input()) inputs.push_back(&n);
    if (t->is_loss()) losses.push_back(&n);
    for (std::string& m : check_params(n, *t)) error(n.id, "", std::move(m));
    for (const auto& [port, edges] : input_edges(g, n, *t)) {
      if (edges.empty() && port->required) error(n.id, port->name, n.label() + ": " + port->name + " is not connected");
      if (edges.size() > 1 && !port->variadic)
        error(n.id, port->name, n.label() + ": " + port->name + " has " + std::to_string(edges.size()) +
                                    " incoming edges; it takes one");
    }
  }

  v.shapes = infer_shapes(g, dataset);
  for (const std::string& id : nodes_on_cycles(g, v.shapes.in_cycle))
    error(id, "", g.find(id)->label() + " is part of a cycle; data must flow one way");
  for (Problem& p : v.shapes.problems) v.problems.push_back(p);

  // One Input, one loss, and the loss's target wired to the labels.
  if (inputs.empty()) error("", "", "the graph has no Input node: add one to bring in the dataset");
  for (size_t i = 1; i < inputs.size(); ++i)
    error(inputs[i]->id, "", inputs[i]->label() + " is a second Input node; a graph has exactly one");
  if (losses.empty())
    error("", "", "the graph has no loss node: connect the output to CrossEntropy, MSE or BCEWithLogits");
  for (size_t i = 1; i < losses.size(); ++i)
    error(losses[i]->id, "", losses[i]->label() + " is a second loss node; a graph trains one loss");
  for (const Node* loss : losses)
    for (const Edge* e : g.edges_into(loss->id)) {
      if (e->to.port != "target") continue;
      const Node* src = g.find(e->from.node);
      if (src && registry.find(src->type) && !(registry.find(src->type)->is_input() && e->from.port == "y"))
        error(loss->id, "target", loss->label() + ": target must come from the Input's labels (y), not from " +
                                      quoted(g, src->id) + "." + e->from.port);
    }

  // Nodes that do not feed the loss are left out of the model: say so.
  if (losses.size() == 1) {
    std::unordered_set<std::string> useful{losses[0]->id};
    std::vector<std::string> stack{losses[0]->id};
    while (!stack.empty()) {
      const std::string n = stack.back();
      stack.pop_back();
      for (const Edge* e : g.edges_into(n))
        if (useful.insert(e->from.node).second) stack.push_back(e->from.node);
    }
    for (const Node& n : g.nodes)
      if (!useful.count(n.id) && registry.find(n.type))
        v.problems.push_back({Severity::Warning, n.id, "", n.label() + " does not lead to the loss; it is not used"});
  }

  // Keep the problems in node order (then graph-wide ones), errors before warnings.
  std::unordered_map<std::string, size_t> rank;
  for (size_t i = 0; i < g.nodes.size(); ++i) rank.emplace(g.nodes[i].id, i);
  std::stable_sort(v.problems.begin(), v.problems.end(), [&](const Problem& a, const Problem& b) {
    if (a.severity != b.severity) return a.severity == Severity::Error;
    const size_t ra = a.node.empty() ? g.nodes.size() : rank.count(a.node) ? rank.at(a.node) : g.nodes.size();
    const size_t rb = b.node.empty() ? g.nodes.size() : rank.count(b.node) ? rank.at(b.node) : g.nodes.size();
    return ra < rb;
  });
  return v;
}

}  // namespace plexus::graph
