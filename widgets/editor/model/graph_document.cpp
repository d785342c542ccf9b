#include "editor/model/graph_document.h"

#include <QFileInfo>

#include <algorithm>
#include <deque>
#include <set>
#include <unordered_set>

#include "common/qt_text.h"
#include "graph/dataset_info.h"
#include "graph/fragment.h"
#include "graph/project.h"
#include "graph/registry.h"

namespace plexus::widgets {
namespace {

std::string edgeKey(const graph::Edge& e) {
  return e.from.node + '\x1f' + e.from.port + '\x1f' + e.to.node + '\x1f' + e.to.port;
}

std::filesystem::path fsPath(const QString& path) { return std::filesystem::path(path.toStdString()); }


QString portText(const graph::PortRef& p) { return qstr(p.node + "." + p.port); }

}  // namespace

GraphDocument::GraphDocument(QObject* parent) : QObject(parent) {
  connect(&undo_, &QUndoStack::cleanChanged, this, [this](bool clean) { emit modifiedChanged(!clean); });
  describeDataset();
  revalidate();
}

// Destroying the undo stack says "clean changed"; nobody may hear that from a document (and
// perhaps a window) half torn down.
GraphDocument::~GraphDocument() { undo_.disconnect(this); }

const graph::Node* GraphDocument::node(const QString& id) const {
  const auto index = nodeIndex(id);
  return index ? &graph_.nodes[*index] : nullptr;
}

std::optional<size_t> GraphDocument::nodeIndex(const QString& id) const {
  const auto it = node_index_.find(id.toStdString());
  if (it == node_index_.end()) return std::nullopt;
  return it->second;
}

QString GraphDocument::displayName() const {
  return path_.isEmpty() ? QStringLiteral("Untitled") : QFileInfo(path_).fileName();
}

bool GraphDocument::isModified() const { return !undo_.isClean(); }

void GraphDocument::reset(graph::Graph graph, const QString& path, bool modified) {
  const bool was_modified = isModified();
  graph_ = std::move(graph);
  undo_.clear();
  if (modified) undo_.resetClean();  // no step leads back to the file's content
  const bool new_path = path != path_;
  path_ = path;
  reindex();
  describeDataset();
  revalidate();
  // Listeners see the whole new state, whichever signal they hear first.
  emit graphReset();
  emit validated();
  if (new_path) emit filePathChanged(path_);
  if (was_modified != isModified()) emit modifiedChanged(isModified());
}

void GraphDocument::load(const QString& path) {
  graph::Graph loaded = graph::load_project(fsPath(path));  // throws before anything changes
  reset(std::move(loaded), QFileInfo(path).absoluteFilePath());
}

void GraphDocument::save(const QString& path) {
  graph::save_project(fsPath(path), graph_);
  const QString absolute = QFileInfo(path).absoluteFilePath();
  const bool moved_folder = QFileInfo(absolute).absolutePath() != QFileInfo(path_).absolutePath() || path_.isEmpty();
  if (absolute != path_) {
    path_ = absolute;
    emit filePathChanged(path_);
  }
  undo_.setClean();
  if (moved_folder) {  // relative dataset paths are looked up next to the project file
    describeDataset();
    revalidate();
    emit validated();
  }
}

// ---- validation ----------------------------------------------------------------------------

std::filesystem::path GraphDocument::projectDir() const {
  return path_.isEmpty() ? std::filesystem::path() : fsPath(QFileInfo(path_).absolutePath());
}

graph::DatasetLocation GraphDocument::datasetLocation() const {
  return graph::locate_dataset(graph_.dataset.path, projectDir());
}

void GraphDocument::describeDataset() {
  dataset_info_.reset();
  const graph::DatasetBinding& binding = graph_.dataset;
  if (binding.kind.empty()) {
    dataset_status_ = tr("No dataset bound: shapes that depend on it are unknown");
    return;
  }
  const graph::DatasetLocation where = datasetLocation();
  try {
    dataset_info_ = graph::describe_dataset(graph::resolve_dataset(binding, projectDir(), /*must_exist=*/false));
    dataset_status_ = where.found ? tr("Dataset: %1 (%2)").arg(qstr(binding.kind), qstr(where.path.string()))
                                  : tr("Dataset %1 not found (looked in %2): training needs it")
                                        .arg(qstr(binding.path), qstr(where.looked));
  } catch (const std::exception& e) {
    dataset_status_ = tr("Dataset cannot be read: %1").arg(qstr(e.what()));
  }
}

void GraphDocument::revalidate() {
  validation_ = graph::validate(graph_, dataset_info_ ? &*dataset_info_ : nullptr);
  validated_edges_.clear();
  for (size_t i = 0; i < graph_.edges.size(); ++i) validated_edges_.emplace(edgeKey(graph_.edges[i]), i);
}

std::optional<Shape> GraphDocument::edgeShape(const graph::Edge& edge) const {
  const auto it = validated_edges_.find(edgeKey(edge));
  if (it == validated_edges_.end() || it->second >= validation_.shapes.edge_shapes.size()) return std::nullopt;
  return validation_.shapes.edge_shapes[it->second];
}

std::vector<graph::Problem> GraphDocument::problemsFor(const QString& node) const {
  std::vector<graph::Problem> out;
  const std::string id = node.toStdString();
  for (const graph::Problem& p : validation_.problems)
    if (p.node == id) out.push_back(p);
  return out;
}

// ---- applying operations -------------------------------------------------------------------

void GraphDocument::reindex() {
  node_index_.clear();
  for (size_t i = 0; i < graph_.nodes.size(); ++i) node_index_.emplace(graph_.nodes[i].id, i);
}

void GraphDocument::apply(const std::vector<GraphOp>& ops) {
  bool meaning = false;
  for (const GraphOp& op : ops) {
    applyOne(op);
    meaning = meaning || changesMeaning(op);
  }
  if (meaning) {
    revalidate();
    emit validated();
  }
}

void GraphDocument::applyOne(const GraphOp& op) {
  auto& nodes = graph_.nodes;
  auto& edges = graph_.edges;
  if (const auto* o = std::get_if<InsertNode>(&op)) {
    nodes.insert(nodes.begin() + std::ptrdiff_t(o->index), o->node);
    reindex();
    emit nodeAdded(qstr(o->node.id));
  } else if (const auto* o = std::get_if<EraseNode>(&op)) {
    nodes.erase(nodes.begin() + std::ptrdiff_t(o->index));
    reindex();
    emit nodeRemoved(qstr(o->node.id));
  } else if (const auto* o = std::get_if<ReplaceNode>(&op)) {
    nodes[o->index] = o->after;
    const bool moved = !(o->before.position == o->after.position);
    if (changesMeaning(op)) emit nodeChanged(qstr(o->after.id));
    if (moved) emit nodeMoved(qstr(o->after.id));
  } else if (const auto* o = std::get_if<InsertEdge>(&op)) {
    edges.insert(edges.begin() + std::ptrdiff_t(o->index), o->edge);
    emit edgeAdded(o->edge);
  } else if (const auto* o = std::get_if<EraseEdge>(&op)) {
    edges.erase(edges.begin() + std::ptrdiff_t(o->index));
    emit edgeRemoved(o->edge);
  } else if (const auto* o = std::get_if<ReplaceSettings>(&op)) {
    graph_.training = o->training_after;
    if (!(graph_.dataset == o->dataset_after)) {
      graph_.dataset = o->dataset_after;
      describeDataset();
    }
    emit settingsChanged();
  }
}

void GraphDocument::push(const QString& text, std::vector<GraphOp> ops) {
  if (ops.empty()) return;
  undo_.push(new EditCommand(this, text, std::move(ops)));  // push() runs redo(): the edit happens now
}

// ---- edits ---------------------------------------------------------------------------------

QString GraphDocument::addNode(const QString& type, QPointF pos) {
  const graph::LayerType* spec = graph::Registry::instance().find(type.toStdString());
  if (!spec) return {};
  graph::Node n;
  n.id = graph::new_node_id(graph_, spec->name);
  n.type = spec->name;
  n.name = n.id;
  n.position = {pos.x(), pos.y()};
  push(tr("Add %1").arg(qstr(spec->display_name)), {InsertNode{graph_.nodes.size(), n}});
  return qstr(n.id);
}

void GraphDocument::remove(const QStringList& nodes, const std::vector<graph::Edge>& edges) {
  std::set<std::string> doomed_nodes;
  for (const QString& id : nodes)
    if (node(id)) doomed_nodes.insert(id.toStdString());
  std::set<size_t> doomed_edges;
  for (size_t i = 0; i < graph_.edges.size(); ++i) {
    const graph::Edge& e = graph_.edges[i];
    if (doomed_nodes.count(e.from.node) || doomed_nodes.count(e.to.node) ||
        std::find(edges.begin(), edges.end(), e) != edges.end())
      doomed_edges.insert(i);
  }
  // Erase from the back so every recorded index is the one the item had when erased.
  std::vector<GraphOp> ops;
  for (auto it = doomed_edges.rbegin(); it != doomed_edges.rend(); ++it) ops.push_back(EraseEdge{*it, graph_.edges[*it]});
  std::vector<size_t> node_indices;
  for (const std::string& id : doomed_nodes) node_indices.push_back(node_index_.at(id));
  std::sort(node_indices.rbegin(), node_indices.rend());
  for (size_t i : node_indices) ops.push_back(EraseNode{i, graph_.nodes[i]});

  QString text;
  if (doomed_nodes.size() == 1)
    text = tr("Delete %1").arg(qstr(graph_.nodes[node_indices[0]].label()));
  else if (doomed_nodes.empty())
    text = doomed_edges.size() == 1 ? tr("Delete wire") : tr("Delete %1 wires").arg(doomed_edges.size());
  else
    text = tr("Delete %1 nodes").arg(doomed_nodes.size());
  push(text, std::move(ops));
}

void GraphDocument::moveNodes(const std::map<QString, graph::Position>& positions) {
  std::vector<GraphOp> ops;
  for (const auto& [id, position] : positions) {
    const auto index = nodeIndex(id);
    if (!index || graph_.nodes[*index].position == position) continue;
    graph::Node after = graph_.nodes[*index];
    after.position = position;
    ops.push_back(ReplaceNode{*index, graph_.nodes[*index], std::move(after)});
  }
  const QString text = ops.size() == 1 ? tr("Move %1").arg(qstr(std::get<ReplaceNode>(ops[0]).after.label()))
                                       : tr("Move %1 nodes").arg(ops.size());
  push(text, std::move(ops));
}

QString GraphDocument::connectionProblem(const graph::PortRef& from, const graph::PortRef& to) const {
  const auto& registry = graph::Registry::instance();
  const graph::Node* source = node(qstr(from.node));
  const graph::Node* target = node(qstr(to.node));
  if (!source || !target) return tr("the node no longer exists");
  const graph::LayerType* source_type = registry.find(source->type);
  const graph::LayerType* target_type = registry.find(target->type);
  if (!source_type || !source_type->output(from.port))
    return tr("%1 has no output '%2'").arg(qstr(source->label()), qstr(from.port));
  if (!target_type || !target_type->input(to.port))
    return tr("%1 has no input '%2'").arg(qstr(target->label()), qstr(to.port));
  if (from.node == to.node) return tr("a node cannot feed itself");
  if (std::find(graph_.edges.begin(), graph_.edges.end(), graph::Edge{from, to}) != graph_.edges.end())
    return tr("%1 is already wired to %2").arg(portText(from), portText(to));
  // A cycle would close if the source is already downstream of the target.
  std::unordered_set<std::string> seen{to.node};
  std::deque<std::string> queue{to.node};
  while (!queue.empty()) {
    const std::string current = queue.front();
    queue.pop_front();
    for (const graph::Edge& e : graph_.edges) {
      if (e.from.node != current || !seen.insert(e.to.node).second) continue;
      if (e.to.node == from.node)
        return tr("it would make a cycle: %1 already feeds %2").arg(qstr(target->label()), qstr(source->label()));
      queue.push_back(e.to.node);
    }
  }
  return {};
}

bool GraphDocument::connectPorts(const graph::PortRef& from, const graph::PortRef& to, QString* why) {
  const QString problem = connectionProblem(from, to);
  if (!problem.isEmpty()) {
    if (why) *why = tr("Cannot connect %1 to %2: %3").arg(portText(from), portText(to), problem);
    return false;
  }
  std::vector<GraphOp> ops;
  const graph::LayerType* target_type = graph::Registry::instance().find(node(qstr(to.node))->type);
  if (!target_type->input(to.port)->variadic) {  // a single-wire input: the new wire replaces the old
    for (size_t i = graph_.edges.size(); i-- > 0;)
      if (graph_.edges[i].to == to) ops.push_back(EraseEdge{i, graph_.edges[i]});
  }
  ops.push_back(InsertEdge{graph_.edges.size() - (ops.size()), graph::Edge{from, to}});
  push(tr("Connect %1 to %2").arg(portText(from), portText(to)), std::move(ops));
  return true;
}

void GraphDocument::disconnect(const graph::Edge& edge) {
  const auto it = std::find(graph_.edges.begin(), graph_.edges.end(), edge);
  if (it == graph_.edges.end()) return;
  push(tr("Disconnect %1 from %2").arg(portText(edge.from), portText(edge.to)),
       {EraseEdge{size_t(it - graph_.edges.begin()), edge}});
}

void GraphDocument::setParam(const QString& id, const QString& name, const graph::ParamValue& value) {
  changeParam(id, name, &value);
}

void GraphDocument::resetParam(const QString& id, const QString& name) { changeParam(id, name, nullptr); }

void GraphDocument::changeParam(const QString& id, const QString& name, const graph::ParamValue* value) {
  const auto index = nodeIndex(id);
  if (!index) return;
  const graph::Node& before = graph_.nodes[*index];
  graph::Node after = before;
  if (value)
    after.params[name.toStdString()] = *value;
  else
    after.params.erase(name.toStdString());
  if (after == before) return;
  push(tr("Set %1 of %2").arg(name, qstr(before.label())), {ReplaceNode{*index, before, std::move(after)}});
}

void GraphDocument::rename(const QString& id, const QString& name) {
  const auto index = nodeIndex(id);
  if (!index || graph_.nodes[*index].name == name.toStdString()) return;
  const graph::Node& before = graph_.nodes[*index];
  graph::Node after = before;
  after.name = name.toStdString();
  push(tr("Rename %1 to '%2'").arg(qstr(before.label()), name), {ReplaceNode{*index, before, std::move(after)}});
}

QStringList GraphDocument::paste(const graph::Graph& fragment, graph::Position offset, const QString& text) {
  graph::Pasted pasted = graph::paste_fragment(graph_, fragment, offset);
  std::vector<GraphOp> ops;
  QStringList ids;
  for (graph::Node& n : pasted.nodes) {
    ids << qstr(n.id);
    ops.push_back(InsertNode{graph_.nodes.size() + ops.size(), std::move(n)});
  }
  const size_t first_edge = graph_.edges.size();
  for (size_t i = 0; i < pasted.edges.size(); ++i) ops.push_back(InsertEdge{first_edge + i, pasted.edges[i]});
  push(text, std::move(ops));
  return ids;
}

void GraphDocument::autoLayout(const std::function<graph::LayoutSize(const graph::Node&)>& size) {
  graph::LayoutOptions options;
  options.node_size = size;
  std::vector<GraphOp> ops;
  for (const auto& [id, position] : graph::auto_layout(graph_, options)) {
    const size_t index = node_index_.at(id);
    if (graph_.nodes[index].position == position) continue;
    graph::Node after = graph_.nodes[index];
    after.position = position;
    ops.push_back(ReplaceNode{index, graph_.nodes[index], std::move(after)});
  }
  push(tr("Auto layout"), std::move(ops));
}

void GraphDocument::setDataset(const graph::DatasetBinding& dataset) {
  if (dataset == graph_.dataset) return;
  push(tr("Change dataset"), {ReplaceSettings{graph_.dataset, dataset, graph_.training, graph_.training}});
}

void GraphDocument::setTraining(const graph::TrainingSettings& training) {
  if (training == graph_.training) return;
  push(tr("Change training settings"), {ReplaceSettings{graph_.dataset, graph_.dataset, graph_.training, training}});
}

}  // namespace plexus::widgets
