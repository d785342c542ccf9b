#include "graph/diff.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <set>

#include "graph/dataset_params.h"
#include "graph/node_settings.h"
#include "graph/registry.h"
#include "graph/training_params.h"
#include "util/text.h"

namespace plexus::graph {

namespace {

// Equal as values: a whole number written for a real parameter ("p": 1) equals that real.
bool same_value(const ParamValue& a, const ParamValue& b) {
  const auto real = [](const ParamValue& v) -> std::optional<double> {
    if (const double* d = std::get_if<double>(&v)) return *d;
    if (const int64_t* i = std::get_if<int64_t>(&v)) return double(*i);
    return std::nullopt;
  };
  if (a.index() != b.index() && real(a) && real(b)) return *real(a) == *real(b);
  return a == b;
}

// The shortest text that reads back as exactly `v`.
std::string exact_text(double v) {
  std::array<char, 32> buf{};
  const auto end = std::to_chars(buf.data(), buf.data() + buf.size(), v).ptr;
  return std::string(buf.data(), end);
}

// A change of `name` from `a` to `b` (null: the default of a type the registry does not
// know), if they differ. Reals to_string prints alike (it keeps six digits) are printed exactly.
void add_change(std::vector<ParamChange>& out, std::string name, const ParamValue* a, const ParamValue* b) {
  if (a && b ? same_value(*a, *b) : a == b) return;
  std::string ta = a ? to_string(*a) : "default", tb = b ? to_string(*b) : "default";
  if (ta == tb && std::holds_alternative<double>(*a) && std::holds_alternative<double>(*b)) {
    ta = exact_text(std::get<double>(*a));
    tb = exact_text(std::get<double>(*b));
  }
  out.push_back({std::move(name), std::move(ta), std::move(tb)});
}

// Parameters that differ, the type's defaults filled in; an unknown type compares what is set.
std::vector<ParamChange> param_changes(const Node& before, const Node& after) {
  std::vector<ParamChange> out;
  const LayerType* type = before.type == after.type ? Registry::instance().find(after.type) : nullptr;
  if (type) {
    for (const ParamSpec& spec : type->params)
      add_change(out, spec.name, &param_value(before, spec), &param_value(after, spec));
    return out;
  }
  std::set<std::string> names;
  for (const auto& [k, v] : before.params) names.insert(k);
  for (const auto& [k, v] : after.params) names.insert(k);
  const auto value = [](const Node& n, const std::string& k) {
    const auto it = n.params.find(k);
    return it == n.params.end() ? nullptr : &it->second;
  };
  for (const std::string& k : names) add_change(out, k, value(before, k), value(after, k));
  return out;
}

bool contains(const std::vector<Edge>& edges, const Edge& e) {
  return std::find(edges.begin(), edges.end(), e) != edges.end();
}

template <class S>
void setting_changes(const std::vector<SettingRow<S>>& table, const std::string& prefix, const S& a, const S& b,
                     std::vector<ParamChange>& out) {
  for (const SettingRow<S>& row : table) {
    const ParamValue va = setting_value(a, row.field), vb = setting_value(b, row.field);
    add_change(out, prefix + row.name(), &va, &vb);
  }
}

std::string edge_text(const Edge& e) {
  return e.from.node + "." + e.from.port + " → " + e.to.node + "." + e.to.port;
}

}  // namespace

bool GraphDiff::same_structure() const {
  if (!added.empty() || !removed.empty() || !edges_added.empty() || !edges_removed.empty()) return false;
  return std::all_of(changed.begin(), changed.end(),
                     [](const NodeChange& c) { return !c.retyped() && c.params.empty(); });
}

bool GraphDiff::any_renamed() const {
  return std::any_of(changed.begin(), changed.end(), [](const NodeChange& c) { return c.renamed(); });
}

bool GraphDiff::any_node_settings() const {
  return std::any_of(changed.begin(), changed.end(), [](const NodeChange& c) { return !c.settings.empty(); });
}

const NodeChange* GraphDiff::change(const std::string& id) const {
  for (const NodeChange& c : changed)
    if (c.id == id) return &c;
  return nullptr;
}

GraphDiff diff(const Graph& before, const Graph& after) {
  GraphDiff d;
  for (const Node& n : before.nodes)
    if (!after.find(n.id)) d.removed.push_back(n.id);
  for (const Node& n : after.nodes) {
    const Node* old = before.find(n.id);
    if (!old) {
      d.added.push_back(n.id);
      continue;
    }
    NodeChange c{n.id, old->type, n.type, old->name, n.name, param_changes(*old, n), {}};
    setting_changes(node_settings(), "", *old, n, c.settings);
    if (c.retyped() || c.renamed() || !c.params.empty() || !c.settings.empty()) d.changed.push_back(std::move(c));
  }
  for (const Edge& e : after.edges)
    if (!contains(before.edges, e)) d.edges_added.push_back(e);
  for (const Edge& e : before.edges)
    if (!contains(after.edges, e)) d.edges_removed.push_back(e);

  // The dataset's binding: what the table does not describe first, then the table.
  const DatasetBinding &da = before.dataset, &db = after.dataset;
  const auto text = [&](const std::string& key, const std::string& a, const std::string& b) {
    if (a != b) d.settings.push_back({"dataset." + key, a, b});
  };
  text("kind", da.kind, db.kind);
  text("path", da.path, db.path);
  text("target", da.target, db.target);
  text("task", da.task, db.task);
  text("features", join(da.features), join(db.features));
  setting_changes(dataset_settings(), "dataset.", da, db, d.settings);
  setting_changes(training_settings(), "training.", before.training, after.training, d.settings);
  return d;
}

namespace {

// "2 nodes added, 1 removed": the noun with the first count that is not zero.
void count_phrase(std::vector<std::string>& parts, const char* one, const char* many,
                  std::initializer_list<std::pair<size_t, const char*>> counts) {
  bool named = false;
  for (const auto& [n, what] : counts) {
    if (n == 0) continue;
    parts.push_back(std::to_string(n) + (named ? "" : std::string(" ") + (n == 1 ? one : many)) + " " + what);
    named = true;
  }
}

}  // namespace

std::string summary(const GraphDiff& d) {
  size_t retyped = 0, renamed = 0, params = 0, settings = d.settings.size();
  for (const NodeChange& c : d.changed) {
    retyped += c.retyped();
    renamed += c.renamed();
    if (!c.retyped()) params += c.params.size();
    settings += c.settings.size();
  }
  std::vector<std::string> parts;
  count_phrase(parts, "node", "nodes",
               {{d.added.size(), "added"}, {d.removed.size(), "removed"}, {retyped, "retyped"}, {renamed, "renamed"}});
  count_phrase(parts, "parameter", "parameters", {{params, "changed"}});
  count_phrase(parts, "wire", "wires", {{d.edges_added.size(), "added"}, {d.edges_removed.size(), "removed"}});
  if (settings > 0) parts.push_back(std::to_string(settings) + (settings == 1 ? " setting differs" : " settings differ"));
  return parts.empty() ? "no differences" : join(parts);
}

Graph union_graph(const Graph& before, const Graph& after) {
  Graph u;
  u.nodes = after.nodes;
  u.edges = after.edges;
  for (const Node& n : before.nodes)
    if (!after.find(n.id)) u.nodes.push_back(n);
  for (const Edge& e : before.edges)
    if (!contains(after.edges, e)) u.edges.push_back(e);
  return u;
}

std::vector<std::string> describe(const GraphDiff& d, const Graph& before, const Graph& after) {
  std::vector<std::string> lines;
  for (const std::string& id : d.added) lines.push_back("added " + after.find(id)->label());
  for (const std::string& id : d.removed) lines.push_back("removed " + before.find(id)->label());
  for (const NodeChange& c : d.changed) {
    const Node& n = *after.find(c.id);
    if (c.retyped()) {
      lines.push_back(before.find(c.id)->label() + " became " + n.label());
      continue;
    }
    if (c.renamed())
      lines.push_back("'" + (c.name_before.empty() ? c.id : c.name_before) + "' renamed to '" +
                      (c.name_after.empty() ? c.id : c.name_after) + "'");
    for (const std::vector<ParamChange>* changes : {&c.params, &c.settings})
      for (const ParamChange& p : *changes)
        lines.push_back(n.label() + ": " + p.name + " " + p.before + " → " + p.after);
  }
  for (const Edge& e : d.edges_added) lines.push_back("wire " + edge_text(e) + " added");
  for (const Edge& e : d.edges_removed) lines.push_back("wire " + edge_text(e) + " removed");
  for (const ParamChange& s : d.settings) lines.push_back(s.name + " " + s.before + " → " + s.after);
  return lines;
}

}  // namespace plexus::graph
