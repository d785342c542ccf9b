#include "graph/diff.h"

#include <algorithm>
#include <set>

#include "graph/dataset_params.h"
#include "graph/registry.h"
#include "graph/training_params.h"
#include "util/text.h"

namespace plexus::graph {

namespace {

// Parameters that differ, the type's defaults filled in; an unknown type compares what is set.
std::vector<ParamChange> param_changes(const Node& before, const Node& after) {
  std::vector<ParamChange> out;
  const LayerType* type = before.type == after.type ? Registry::instance().find(after.type) : nullptr;
  if (type) {
    const Params a(before, type->params), b(after, type->params);
    for (const ParamSpec& spec : type->params)
      if (a.value(spec.name) != b.value(spec.name))
        out.push_back({spec.name, to_string(a.value(spec.name)), to_string(b.value(spec.name))});
    return out;
  }
  std::set<std::string> names;
  for (const auto& [k, v] : before.params) names.insert(k);
  for (const auto& [k, v] : after.params) names.insert(k);
  for (const std::string& k : names) {
    const auto a = before.params.find(k), b = after.params.find(k);
    const std::string va = a == before.params.end() ? "default" : to_string(a->second);
    const std::string vb = b == after.params.end() ? "default" : to_string(b->second);
    if (va != vb) out.push_back({k, va, vb});
  }
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
    if (va != vb) out.push_back({prefix + row.name(), to_string(va), to_string(vb)});
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
    NodeChange c{n.id, old->type, n.type, old->name, n.name, param_changes(*old, n)};
    if (c.retyped() || c.renamed() || !c.params.empty()) d.changed.push_back(std::move(c));
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
    for (const ParamChange& p : c.params) lines.push_back(n.label() + ": " + p.name + " " + p.before + " → " + p.after);
  }
  for (const Edge& e : d.edges_added) lines.push_back("wire " + edge_text(e) + " added");
  for (const Edge& e : d.edges_removed) lines.push_back("wire " + edge_text(e) + " removed");
  for (const ParamChange& s : d.settings) lines.push_back(s.name + " " + s.before + " → " + s.after);
  return lines;
}

}  // namespace plexus::graph
