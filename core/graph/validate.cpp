#include "graph/validate.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <unordered_set>

#include "graph/inputs.h"
#include "graph/node_settings.h"
#include "util/system_memory.h"
#include "util/text.h"

namespace plexus::graph {
namespace {

std::string port_list(const std::vector<PortSpec>& ports) {
  if (ports.empty()) return "none";
  std::string s;
  for (const PortSpec& p : ports) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

// The registry's loss types, for the hint when a graph has none.
std::vector<std::string> loss_type_names() {
  std::vector<std::string> names;
  for (const LayerType& t : Registry::instance().types())
    if (t.is_loss()) names.push_back(t.name);
  return names;
}

std::string quoted(const GraphIndex& index, const std::string& id) {
  const Node* n = index.find(id);
  return "'" + (n && !n->name.empty() ? n->name : id) + "'";
}

// Case-insensitive edit distance, for "did you mean" hints.
size_t distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same =
          std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      const size_t next = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

// The known type closest to an unknown one, if it is close enough to be a typo.
std::string closest_type(const std::string& unknown) {
  std::string best;
  size_t best_d = 3;  // at most 2 edits
  for (const LayerType& t : Registry::instance().types()) {
    const size_t d = distance(unknown, t.name);
    if (d < best_d && 2 * d < t.name.size()) best = t.name, best_d = d;
  }
  return best;
}

// Nodes that can reach themselves (not merely sit behind a cycle).
std::vector<std::string> nodes_on_cycles(const GraphIndex& index, const std::vector<std::string>& candidates) {
  const Graph& g = index.graph;
  std::vector<std::string> out;
  for (const std::string& start : candidates) {
    std::unordered_set<std::string_view> seen;
    std::vector<std::string_view> stack;
    for (size_t e : index.edges_from(start)) stack.push_back(g.edges[e].to.node);
    bool found = false;
    while (!stack.empty() && !found) {
      const std::string_view n = stack.back();
      stack.pop_back();
      if (n == start) found = true;
      else if (seen.insert(n).second)
        for (size_t e : index.edges_from(n)) stack.push_back(g.edges[e].to.node);
    }
    if (found) out.push_back(start);
  }
  return out;
}

// A count as messages write it: every digit while a double holds it exactly, else three.
std::string count_text(double n) {
  if (n < 9007199254740992.0) return std::to_string(int64_t(n));
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", n);
  return buffer;
}

// The problem, if any, of a graph whose training would not fit in `memory` bytes (an error)
// or would take more than half of them (a warning), put on the node that holds the most and
// saying what of it takes the memory and what to change.
std::optional<Problem> memory_problem(const GraphIndex& index, const Validation& v, const DatasetInfo* dataset,
                                      uint64_t memory) {
  const MemoryEstimate& m = v.memory;
  const NodeMemory* big = m.largest();
  if (!memory || !big || m.bytes <= double(memory) / 2) return std::nullopt;
  const bool error = m.bytes > double(memory);
  const Node& node = *index.find(big->node);
  std::string message = node.label() + ": training needs about " + memory_text(m.bytes) +
                        " of memory with batch size " + std::to_string(m.batch_size) + ", more than " +
                        (error ? "" : "half of ") + "the " + memory_text(double(memory)) + " this machine has; ";
  const double most = std::max({big->parameter_bytes, big->activation_bytes, big->dataset_bytes});
  const std::string share = memory_text(most) + " of it";
  if (most == big->parameter_bytes) {
    message += "this layer's " + count_text(big->parameters) + " learned values take " + share +
               " (with their gradients" + (m.optimizer_state ? " and the optimizer's state" : "") +
               "): make the layer smaller";
  } else if (most == big->dataset_bytes) {
    message += "the dataset's " + std::to_string(dataset->examples) + " examples take " + share +
               " as float32: use a smaller dataset";
  } else {
    const Shape& out = v.shapes.outputs.at(big->node).at(0);
    const bool input = Registry::instance().find(node.type)->is_input();
    message += (input ? "its examples " + batched(out) + " for a batch take " + share + ": use a smaller batch size"
                      : "its output " + batched(out) + " for a batch takes " + share +
                            " (kept for the backward pass, with its gradient): use a smaller batch size or make the "
                            "output smaller");
  }
  return Problem{error ? Severity::Error : Severity::Warning, node.id, "", std::move(message)};
}

}  // namespace

Validation validate(const Graph& g, const DatasetInfo* dataset, const ValidationOptions& options) {
  Validation v;
  auto error = [&](const std::string& node, const std::string& port, std::string msg) {
    v.problems.push_back({Severity::Error, node, port, std::move(msg)});
  };
  const Registry& registry = Registry::instance();
  const GraphIndex index(g);

  // Node ids: valid and unique (they name the parameters in checkpoints).
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!valid_node_id(n.id))
      error(n.id, "",
            "node id '" + n.id + "' is not valid: use letters, digits, '_' and '-', starting with a letter or '_'");
    else if (index.node.at(n.id) != i)
      error(n.id, "", n.label() + " has the id '" + n.id + "', which " + g.nodes[index.node.at(n.id)].label() +
                          " already has; node ids must be unique");
  }

  // Edges must join existing nodes through existing ports.
  for (size_t i = 0; i < g.edges.size(); ++i) {
    const Edge& e = g.edges[i];
    const Node* from = index.source[i] == GraphIndex::npos ? nullptr : &g.nodes[index.source[i]];
    const Node* to = index.target[i] == GraphIndex::npos ? nullptr : &g.nodes[index.target[i]];
    if (!from || !to) {
      const std::string text =
          "the edge from " + e.from.node + "." + e.from.port + " to " + e.to.node + "." + e.to.port;
      // Attach it to the end that exists, so the editor can show it.
      if (from) error(from->id, e.from.port, text + " leads to node '" + e.to.node + "', which does not exist");
      else if (to) error(to->id, e.to.port, text + " comes from node '" + e.from.node + "', which does not exist");
      else error("", "", text + " joins nodes '" + e.from.node + "' and '" + e.to.node + "', which do not exist");
      continue;
    }
    const LayerType *ft = registry.find(from->type), *tt = registry.find(to->type);
    if (ft && !ft->output_index(*from, e.from.port)) {
      error(from->id, e.from.port, from->label() + " has no output '" + e.from.port + "' (outputs: " +
                                       port_list(ft->outputs_of(*from)) + ")" +
                                       (ft->output_ports ? "; its parameters decide its outputs" : ""));
    }
    if (tt && !tt->input(e.to.port)) {
      error(to->id, e.to.port, to->label() + " has no input '" + e.to.port + "' (inputs: " + port_list(tt->inputs) + ")");
    }
    // The labels are for the loss only: a layer fed from them would learn from the answers
    // (and the model, which receives only x, could not run it).
    if (ft && ft->is_input() && e.from.port == "y" && tt && tt->input(e.to.port) &&
        !(tt->is_loss() && e.to.port == "target"))
      error(to->id, e.to.port, to->label() + ": " + e.to.port + " is connected to the labels (y) of " + from->label() +
                                   "; only a loss's target takes the labels, layers take the examples (x)");
  }

  // Nodes: known type, valid parameters, ports connected as the type requires.
  std::vector<const Node*> inputs, losses;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (index.node.at(n.id) != i) continue;  // a repeated id, reported above
    const LayerType* t = registry.find(n.type);
    if (!t) {
      const std::string near = closest_type(n.type);
      error(n.id, "", "node '" + (n.name.empty() ? n.id : n.name) + "' has the unknown type '" + n.type + "'" +
                          (near.empty() ? " (docs/layers.md lists the layer types)"
                                        : " (did you mean '" + near + "'?)"));
      continue;
    }
    if (t->is_input()) inputs.push_back(&n);
    if (t->is_loss()) losses.push_back(&n);
    for (std::string& m : check_params(n, *t)) error(n.id, "", std::move(m));
    if (std::optional<std::string> m = node_settings_problem(n)) error(n.id, "", std::move(*m));
    for (const auto& [port, edges] : input_edges(index, n, *t)) {
      if (edges.empty() && port->required) error(n.id, port->name, n.label() + ": " + port->name + " is not connected");
      if (edges.size() > 1 && !port->variadic) {
        std::vector<std::string> sources;
        for (size_t e : edges) sources.push_back(quoted(index, g.edges[e].from.node));
        error(n.id, port->name, n.label() + ": " + port->name + " has " + std::to_string(edges.size()) +
                                    " incoming edges (from " + join(sources, ", ", " and ") + "); it takes one");
      }
    }
  }

  // A loss's target must be the labels (y) or, for a reconstruction, the examples (x). When it
  // is wired to something else, that is the problem to report; the loss's complaint about the
  // shape of those targets would only repeat it.
  std::unordered_set<std::string_view> miswired;
  for (const Node* loss : losses)
    for (size_t i : index.edges_into(loss->id)) {
      const Edge& e = g.edges[i];
      if (e.to.port != "target") continue;
      const Node* src = index.find(e.from.node);
      const LayerType* st = src ? registry.find(src->type) : nullptr;
      if (st && !st->is_input() && st->output_index(*src, e.from.port)) {
        error(loss->id, "target",
              loss->label() + ": target must be connected to the Input, its labels (y) or its examples (x) for a "
                              "reconstruction, not to " +
                  (st->outputs_of(*src).size() == 1 ? src->label() : e.from.port + " of " + src->label()));
        miswired.insert(loss->id);
      }
    }

  v.shapes = infer_shapes(index, dataset);
  for (const std::string& id : nodes_on_cycles(index, v.shapes.in_cycle))
    error(id, "", index.find(id)->label() + " is part of a cycle; data must flow one way");
  for (Problem& p : v.shapes.problems)
    if (!(p.port == "target" && miswired.count(p.node))) v.problems.push_back(p);

  // Training that cannot fit is refused here, before the compiler allocates anything.
  v.memory = estimate_memory(index, v.shapes, dataset);
  if (auto p = memory_problem(index, v, dataset, options.memory.value_or(machine_memory())))
    v.problems.push_back(std::move(*p));

  // An Input (several may read a table's columns apart); at least one loss, each with something
  // to learn.
  if (inputs.empty()) error("", "", "the graph has no Input node: add one to bring in the dataset");
  if (inputs.size() > 1)
    if (auto conflict = standardized_columns(g, dataset ? dataset->feature_names : std::vector<std::string>{}).conflict)
      error(conflict->first, "", std::move(conflict->second));
  // A table's standardised columns are no whole numbers: a port taking indices (an Embedding's)
  // could not look them up.
  if (dataset && !dataset->feature_names.empty())
    for (const InputRead& read : input_reads(g)) {
      if (!read.standardize) continue;
      for (size_t e : index.edges_from(read.node->id)) {
        const Node* to = index.find(g.edges[e].to.node);
        const LayerType* tt = to ? registry.find(to->type) : nullptr;
        const PortSpec* port = tt ? tt->input(g.edges[e].to.port) : nullptr;
        if (g.edges[e].from.port == "x" && port && port->indices)
          error(to->id, g.edges[e].to.port,
                to->label() + " looks up indices, but " + read.node->label() +
                    " standardises its columns, so they are no whole numbers: turn standardize off on " +
                    read.node->label());
      }
    }
  if (losses.empty())
    error("", "", "the graph has no loss node: connect the output to " + join(loss_type_names(), ", ", " or "));
  for (const Node* loss : losses) {
    const std::vector<char> feeding = index.feeding({index.node.at(loss->id)});
    const bool learns = std::any_of(g.nodes.begin(), g.nodes.end(), [&](const Node& n) {
      const LayerType* t = registry.find(n.type);
      return feeding[index.node.at(n.id)] && t && t->parameter_count;
    });
    // A warning, as a model of fixed functions still evaluates and exports.
    if (!learns && !index.edges_into(loss->id).empty())
      v.problems.push_back({Severity::Warning, loss->id, "input",
                            loss->label() + " has nothing to learn: no layer with parameters leads to its prediction, "
                                            "so training cannot lower it"});
  }

  // Nodes that do not feed a loss are left out of the model: say so.
  if (!losses.empty()) {
    std::vector<size_t> ends;
    for (const Node* loss : losses) ends.push_back(index.node.at(loss->id));  // by first node with an id
    const std::vector<char> useful = index.feeding(ends);
    for (const Node& n : g.nodes)
      if (!useful[index.node.at(n.id)] && registry.find(n.type))
        v.problems.push_back({Severity::Warning, n.id, "", n.label() + " does not lead to a loss; it is not used"});
  }

  for (Problem& p : v.problems) p.message = one_line(p.message);
  // Keep the problems in node order (then graph-wide ones), errors before warnings.
  std::stable_sort(v.problems.begin(), v.problems.end(), [&](const Problem& a, const Problem& b) {
    if (a.severity != b.severity) return a.severity == Severity::Error;
    const auto rank = [&](const Problem& p) {
      const auto it = p.node.empty() ? index.node.end() : index.node.find(p.node);
      return it == index.node.end() ? g.nodes.size() : it->second;
    };
    return rank(a) < rank(b);
  });
  return v;
}

}  // namespace plexus::graph
