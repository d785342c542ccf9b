#include "editor/model/graph_document.h"

#include <QFileInfo>

#include <algorithm>
#include <deque>
#include <limits>
#include <set>
#include <unordered_set>

#include "common/qt_text.h"
#include "graph/blocks.h"
#include "graph/dataset_info.h"
#include "graph/fragment.h"
#include "graph/node_settings.h"
#include "graph/project.h"
#include "graph/registry.h"

namespace plexus::widgets {
namespace {

std::string edgeKey(const graph::Edge& e) {
  return e.from.node + '\x1f' + e.from.port + '\x1f' + e.to.node + '\x1f' + e.to.port;
}

std::filesystem::path fsPath(const QString& path) { return std::filesystem::path(path.toStdString()); }

}  // namespace

QString portText(const graph::PortRef& p) { return qstr(p.node + "." + p.port); }

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

const graph::Block* GraphDocument::block(const QString& id) const {
  const auto index = blockIndex(id);
  return index ? &graph_.blocks[*index] : nullptr;
}

std::optional<size_t> GraphDocument::blockIndex(const QString& id) const {
  const std::string key = id.toStdString();
  for (size_t i = 0; i < graph_.blocks.size(); ++i)
    if (graph_.blocks[i].id == key) return i;
  return std::nullopt;
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
  const QString absolute = QFileInfo(path).absoluteFilePath();
  const bool moved_folder = QFileInfo(absolute).absolutePath() != QFileInfo(path_).absolutePath() || path_.isEmpty();
  // A dataset next to the project stays the project's dataset from the new folder.
  graph::Graph saved = graph_;
  if (moved_folder && !path_.isEmpty())
    saved.dataset.path =
        graph::moved_dataset_path(graph_.dataset.path, projectDir(), fsPath(QFileInfo(absolute).absolutePath()));
  graph::save_project(fsPath(path), saved);
  const bool rebased = saved.dataset.path != graph_.dataset.path;
  graph_.dataset.path = saved.dataset.path;
  if (rebased) emit settingsChanged();
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
    dataset_info_ = graph::describe_dataset(graph::resolve_dataset(binding, projectDir(), /*must_exist=*/false),
                                            graph_.training.seed, graph_.training.validation_fraction);
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
  bool meaning = false, blocks = false;
  for (const GraphOp& op : ops) {
    applyOne(op);
    meaning = meaning || changesMeaning(op);
    blocks = blocks || changesBlocks(op);
  }
  if (blocks) emit blocksChanged();  // once the whole edit is in: blocks and nodes agree again
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
  } else if (const auto* o = std::get_if<InsertBlock>(&op)) {
    graph_.blocks.insert(graph_.blocks.begin() + std::ptrdiff_t(o->index), o->block);
  } else if (const auto* o = std::get_if<EraseBlock>(&op)) {
    graph_.blocks.erase(graph_.blocks.begin() + std::ptrdiff_t(o->index));
  } else if (const auto* o = std::get_if<ReplaceBlock>(&op)) {
    graph::Block& b = graph_.blocks[o->index];
    const bool collapsed = b.collapsed;  // view state: undo does not open or close blocks
    b = o->after;
    b.collapsed = collapsed;
  } else if (const auto* o = std::get_if<ReplaceSettings>(&op)) {
    graph_.training = o->training_after;
    if (!(graph_.dataset == o->dataset_after)) {
      graph_.dataset = o->dataset_after;
      describeDataset();
    }
    emit settingsChanged();
  } else if (const auto* o = std::get_if<ReplaceSweep>(&op)) {
    graph_.sweep = o->after;
    emit sweepChanged();
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

void GraphDocument::remove(const QStringList& nodes, const std::vector<graph::Edge>& edges, const QStringList& blocks) {
  std::set<std::string> doomed_nodes, doomed_blocks;
  for (const QString& id : nodes)
    if (node(id)) doomed_nodes.insert(id.toStdString());
  for (const QString& id : blocks) {
    const graph::Block* b = block(id);
    if (!b) continue;
    doomed_blocks.insert(b->id);
    for (const std::string& inner : graph::block_descendants(graph_, *b)) doomed_blocks.insert(inner);
    for (const std::string& n : graph::block_nodes(graph_, *b)) doomed_nodes.insert(n);
  }
  // Surviving blocks lose the doomed members; one left empty goes too, which its parent loses.
  std::vector<graph::Block> kept = graph_.blocks;
  for (bool emptied = true; emptied;) {
    emptied = false;
    for (graph::Block& b : kept)
      std::erase_if(b.members, [&](const std::string& m) { return doomed_nodes.contains(m) || doomed_blocks.contains(m); });
    std::erase_if(kept, [&](const graph::Block& b) {
      const bool gone = doomed_blocks.contains(b.id) || b.members.empty();
      if (gone && doomed_blocks.insert(b.id).second) emptied = true;
      return gone;
    });
  }
  std::set<size_t> doomed_edges;
  for (size_t i = 0; i < graph_.edges.size(); ++i) {
    const graph::Edge& e = graph_.edges[i];
    if (doomed_nodes.count(e.from.node) || doomed_nodes.count(e.to.node) ||
        std::find(edges.begin(), edges.end(), e) != edges.end())
      doomed_edges.insert(i);
  }
  // Blocks first (no block names a node that is gone), then edges and nodes, each erased from
  // the back so every recorded index is the one the item had when erased.
  std::vector<GraphOp> ops = blockEdits(graph_.blocks, kept);
  for (auto it = doomed_edges.rbegin(); it != doomed_edges.rend(); ++it) ops.push_back(EraseEdge{*it, graph_.edges[*it]});
  std::vector<size_t> node_indices;
  for (const std::string& id : doomed_nodes) node_indices.push_back(node_index_.at(id));
  std::sort(node_indices.rbegin(), node_indices.rend());
  for (size_t i : node_indices) ops.push_back(EraseNode{i, graph_.nodes[i]});

  QString text;
  if (blocks.size() == 1 && nodes.isEmpty() && edges.empty() && !ops.empty())
    text = tr("Delete block '%1'").arg(blocks[0]);
  else if (doomed_nodes.size() == 1)
    text = tr("Delete %1").arg(qstr(graph_.nodes[node_indices[0]].label()));
  else if (doomed_nodes.empty())
    text = doomed_edges.size() == 1 ? tr("Delete wire") : tr("Delete %1 wires").arg(doomed_edges.size());
  else
    text = tr("Delete %1 nodes").arg(doomed_nodes.size());
  push(text, std::move(ops));
}

void GraphDocument::moveNodes(const std::map<QString, graph::Position>& positions,
                              const std::map<QString, graph::Position>& block_positions) {
  move(positions, block_positions, {});
}

void GraphDocument::move(const std::map<QString, graph::Position>& positions,
                         const std::map<QString, graph::Position>& block_positions, QString text) {
  // Where everything goes: given positions first; then what lies inside a moved block follows
  // it, by the shift of the innermost moved block around it.
  std::map<std::string, graph::Position> node_to, block_to;
  for (const auto& [id, position] : positions)
    if (node(id)) node_to[id.toStdString()] = position;
  std::vector<std::pair<const graph::Block*, graph::Position>> shifts;  // block, shift
  for (const auto& [id, position] : block_positions)
    if (const graph::Block* b = block(id)) {
      block_to[b->id] = position;
      shifts.emplace_back(b, graph::Position{position.x - b->position.x, position.y - b->position.y});
    }
  const auto shift_of = [&](const std::string& id) -> std::optional<graph::Position> {
    for (const graph::Block* p = graph::parent_block(graph_, id); p; p = graph::parent_block(graph_, p->id))
      for (const auto& [b, shift] : shifts)
        if (b == p) return shift;
    return std::nullopt;
  };
  for (const graph::Block& b : graph_.blocks)
    if (!block_to.contains(b.id))
      if (const auto shift = shift_of(b.id)) block_to[b.id] = {b.position.x + shift->x, b.position.y + shift->y};
  for (const graph::Node& n : graph_.nodes)
    if (!node_to.contains(n.id))
      if (const auto shift = shift_of(n.id)) node_to[n.id] = {n.position.x + shift->x, n.position.y + shift->y};

  std::vector<GraphOp> ops;
  for (const auto& [id, position] : node_to) {
    const size_t index = node_index_.at(id);
    if (graph_.nodes[index].position == position) continue;
    graph::Node after = graph_.nodes[index];
    after.position = position;
    ops.push_back(ReplaceNode{index, graph_.nodes[index], std::move(after)});
  }
  std::vector<graph::Block> blocks = graph_.blocks;
  for (graph::Block& b : blocks)
    if (const auto it = block_to.find(b.id); it != block_to.end()) b.position = it->second;
  std::vector<GraphOp> block_ops = blockEdits(graph_.blocks, blocks);
  if (text.isEmpty()) {
    if (block_positions.size() == 1 && positions.empty() && !block_ops.empty())
      text = tr("Move block '%1'").arg(qstr(block(block_positions.begin()->first)->name));
    else if (ops.size() == 1 && block_ops.empty())
      text = tr("Move %1").arg(qstr(std::get<ReplaceNode>(ops[0]).after.label()));
    else
      text = tr("Move %1 nodes").arg(ops.size());
  }
  ops.insert(ops.end(), block_ops.begin(), block_ops.end());
  push(text, std::move(ops));
}

QString GraphDocument::connectionProblem(const graph::PortRef& from, const graph::PortRef& to) const {
  const auto& registry = graph::Registry::instance();
  const graph::Node* source = node(qstr(from.node));
  const graph::Node* target = node(qstr(to.node));
  if (!source || !target) return tr("the node no longer exists");
  const graph::LayerType* source_type = registry.find(source->type);
  const graph::LayerType* target_type = registry.find(target->type);
  if (!source_type || !source_type->output_index(*source, from.port))
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

void GraphDocument::setNodeSetting(const QString& id, const QString& name, const graph::ParamValue& value) {
  const auto index = nodeIndex(id);
  if (!index) return;
  const graph::Node& before = graph_.nodes[*index];
  graph::Node after = before;
  graph::set_node_setting(after, name.toStdString(), value);
  if (after == before) return;
  push(tr("Set %1 of %2").arg(name, qstr(before.label())), {ReplaceNode{*index, before, std::move(after)}});
}

int GraphDocument::setFrozen(const QStringList& nodes, bool frozen) {
  std::vector<GraphOp> ops;
  const graph::Node* last = nullptr;
  for (const QString& id : nodes) {
    const auto index = nodeIndex(id);
    if (!index) continue;
    const graph::Node& before = graph_.nodes[*index];
    if (!graph::node_settings_apply(before) || before.frozen == frozen) continue;
    graph::Node after = before;
    after.frozen = frozen;
    ops.push_back(ReplaceNode{*index, before, std::move(after)});
    last = &before;
  }
  if (ops.empty()) return 0;
  const int count = int(ops.size());
  const QString what = count == 1 ? qstr(last->label()) : tr("%n nodes", nullptr, count);
  push(frozen ? tr("Freeze %1").arg(what) : tr("Unfreeze %1").arg(what), std::move(ops));
  return count;
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
  const size_t first_block = graph_.blocks.size();
  for (size_t i = 0; i < pasted.blocks.size(); ++i) ops.push_back(InsertBlock{first_block + i, pasted.blocks[i]});
  push(text, std::move(ops));
  for (const graph::Block& b : pasted.blocks)
    if (!graph::parent_block(graph_, b.id)) ids << qstr(b.id);
  return ids;
}

// ---- blocks --------------------------------------------------------------------------------

std::vector<graph::Block> GraphDocument::canonicalBlocks(std::vector<graph::Block> blocks) const {
  graph::Graph order;  // this graph's nodes with the blocks after the edit
  order.nodes = graph_.nodes;
  order.blocks = blocks;
  for (graph::Block& b : blocks) b.members = graph::canonical_members(order, b.members);
  return blocks;
}

QString GraphDocument::groupProblem(const QStringList& members) const {
  if (members.isEmpty()) return tr("nothing is selected");
  std::optional<const graph::Block*> parent;
  for (const QString& id : members) {
    if (!node(id) && !block(id)) return tr("there is no node or block '%1'").arg(id);
    const graph::Block* p = graph::parent_block(graph_, id.toStdString());
    if (parent && *parent != p) return tr("the selection spans different blocks; select within one block");
    parent = p;
  }
  return {};
}

QString GraphDocument::group(const QStringList& members, const QString& name) {
  if (!groupProblem(members).isEmpty()) return {};
  graph::Block b;
  b.id = graph::unique_node_id(graph_, "block1");
  b.name = name.isEmpty() ? b.id : name.toStdString();
  const std::set<std::string> chosen = [&] {
    std::set<std::string> ids;
    for (const QString& id : members) ids.insert(id.toStdString());
    return ids;
  }();
  b.members.assign(chosen.begin(), chosen.end());
  // The card goes where the members' top-left corner was.
  double x = std::numeric_limits<double>::max(), y = x;
  for (const std::string& id : chosen) {
    const graph::Position p = node(qstr(id)) ? node(qstr(id))->position : block(qstr(id))->position;
    x = std::min(x, p.x);
    y = std::min(y, p.y);
  }
  b.position = {x, y};
  std::vector<graph::Block> blocks = graph_.blocks;
  if (const graph::Block* parent = graph::parent_block(graph_, *chosen.begin())) {
    graph::Block& p = blocks[size_t(parent - graph_.blocks.data())];
    std::erase_if(p.members, [&](const std::string& m) { return chosen.contains(m); });
    p.members.push_back(b.id);
  }
  blocks.push_back(b);
  push(tr("Group into block '%1'").arg(qstr(b.name)), blockEdits(graph_.blocks, canonicalBlocks(std::move(blocks))));
  return qstr(b.id);
}

void GraphDocument::ungroup(const QString& id) {
  const auto index = blockIndex(id);
  if (!index) return;
  const graph::Block gone = graph_.blocks[*index];
  std::vector<graph::Block> blocks = graph_.blocks;
  blocks.erase(blocks.begin() + std::ptrdiff_t(*index));
  for (graph::Block& p : blocks)
    if (std::erase(p.members, gone.id)) p.members.insert(p.members.end(), gone.members.begin(), gone.members.end());
  push(tr("Ungroup block '%1'").arg(qstr(gone.name)), blockEdits(graph_.blocks, canonicalBlocks(std::move(blocks))));
}

void GraphDocument::renameBlock(const QString& id, const QString& name) {
  const auto index = blockIndex(id);
  if (!index || graph_.blocks[*index].name == name.toStdString()) return;
  graph::Block after = graph_.blocks[*index];
  after.name = name.toStdString();
  push(tr("Rename block '%1' to '%2'").arg(qstr(graph_.blocks[*index].name), name),
       {ReplaceBlock{*index, graph_.blocks[*index], std::move(after)}});
}

void GraphDocument::setBlockCollapsed(const QString& id, bool collapsed) {
  const auto index = blockIndex(id);
  if (!index || graph_.blocks[*index].collapsed == collapsed) return;
  graph_.blocks[*index].collapsed = collapsed;
  emit blocksChanged();
}

void GraphDocument::autoLayout(const std::function<graph::LayoutSize(const graph::Node&)>& size,
                               const std::function<graph::LayoutSize(const graph::Block&)>& block_size) {
  graph::LayoutOptions options;
  options.node_size = size;
  const graph::ShownLayout layout = graph::auto_layout_shown(graph_, options, block_size);
  std::map<QString, graph::Position> positions, block_positions;
  for (const auto& [id, position] : layout.nodes) positions[qstr(id)] = position;
  for (const auto& [id, position] : layout.blocks) block_positions[qstr(id)] = position;
  move(positions, block_positions, tr("Auto layout"));
}

void GraphDocument::setDataset(const graph::DatasetBinding& dataset) { setDataset(dataset, {}); }

void GraphDocument::setDataset(const graph::DatasetBinding& dataset, const std::vector<graph::Node>& nodes) {
  std::vector<GraphOp> ops;
  if (dataset != graph_.dataset) ops.push_back(ReplaceSettings{graph_.dataset, dataset, graph_.training, graph_.training});
  for (const graph::Node& after : nodes) {
    const std::optional<size_t> index = nodeIndex(qstr(after.id));
    if (!index || graph_.nodes[*index] == after) continue;
    const graph::Node& before = graph_.nodes[*index];
    if (before.type == after.type) {
      ops.push_back(ReplaceNode{*index, before, after});
      continue;
    }
    // Another type is another card on the canvas: the node goes and comes back, its wires with it.
    std::vector<size_t> wires;
    for (size_t e = 0; e < graph_.edges.size(); ++e)
      if (graph_.edges[e].from.node == after.id || graph_.edges[e].to.node == after.id) wires.push_back(e);
    for (auto e = wires.rbegin(); e != wires.rend(); ++e) ops.push_back(EraseEdge{*e, graph_.edges[*e]});
    ops.push_back(EraseNode{*index, before});
    ops.push_back(InsertNode{*index, after});
    for (const size_t e : wires) ops.push_back(InsertEdge{e, graph_.edges[e]});
  }
  push(tr("Change dataset"), std::move(ops));
}

void GraphDocument::setTraining(const graph::TrainingSettings& training) {
  if (training == graph_.training) return;
  push(tr("Change training settings"), {ReplaceSettings{graph_.dataset, graph_.dataset, graph_.training, training}});
}

void GraphDocument::setSweep(const graph::SweepSettings& sweep) {
  if (sweep == graph_.sweep) return;
  push(tr("Change sweep"), {ReplaceSweep{graph_.sweep, sweep}});
}

bool GraphDocument::adoptSettings(const graph::Graph& from, const QString& text) {
  std::vector<GraphOp> ops;
  if (!(from.dataset == graph_.dataset) || !(from.training == graph_.training))
    ops.push_back(ReplaceSettings{graph_.dataset, from.dataset, graph_.training, from.training});
  for (const graph::Node& after : from.nodes) {
    const std::optional<size_t> index = nodeIndex(qstr(after.id));
    if (!index || graph_.nodes[*index].type != after.type) continue;
    graph::Node node = graph_.nodes[*index];
    node.params = after.params;
    node.frozen = after.frozen;
    node.lr_mult = after.lr_mult;
    node.weight_decay_mult = after.weight_decay_mult;
    if (!(node == graph_.nodes[*index])) ops.push_back(ReplaceNode{*index, graph_.nodes[*index], node});
  }
  if (ops.empty()) return false;
  push(text, std::move(ops));
  return true;
}

}  // namespace plexus::widgets
