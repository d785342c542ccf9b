#include "editor/node_scene.h"

#include <QClipboard>
#include <QGraphicsPathItem>
#include <QGraphicsSceneMouseEvent>
#include <QGuiApplication>
#include <QLocale>
#include <QMimeData>
#include <QPixmapCache>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <utility>
#include <limits>
#include <unordered_map>

#include "common/qt_text.h"
#include "common/theme.h"
#include "editor/block_item.h"
#include "editor/edge_item.h"
#include "editor/node_item.h"
#include "graph/blocks.h"
#include "graph/fragment.h"
#include "graph/memory.h"

namespace plexus::widgets {
namespace {

constexpr qreal kPasteShift = 40;  // a paste without a position lands this far right and down
// Auto layout keeps this much more than its column gap free right of each card, so that the
// shape labels of the wires between columns fit at full size.
constexpr qreal kLabelRoom = 30;
constexpr qreal kWireZ = 1e12;  // above every node, however often nodes were raised

}  // namespace

NodeScene::NodeScene(GraphDocument* document, QObject* parent) : QGraphicsScene(parent), doc_(document) {
  // Nodes are cached as device pixmaps; the default 10 MB holds too few of them on a
  // high-DPI screen, and a cache that thrashes re-renders every node on every frame.
  QPixmapCache::setCacheLimit(std::max(QPixmapCache::cacheLimit(), 64 * 1024));
  connect(doc_, &GraphDocument::graphReset, this, &NodeScene::rebuild);
  connect(doc_, &GraphDocument::nodeAdded, this, &NodeScene::addNodeItem);
  connect(doc_, &GraphDocument::nodeRemoved, this, &NodeScene::removeNodeItem);
  connect(doc_, &GraphDocument::nodeChanged, this, &NodeScene::updateNodeItem);
  connect(doc_, &GraphDocument::nodeMoved, this, &NodeScene::moveNodeItem);
  connect(doc_, &GraphDocument::edgeAdded, this, &NodeScene::addEdgeItem);
  connect(doc_, &GraphDocument::edgeRemoved, this, &NodeScene::removeEdgeItem);
  connect(doc_, &GraphDocument::validated, this, &NodeScene::refreshValidation);
  connect(doc_, &GraphDocument::blocksChanged, this, &NodeScene::refreshBlocks);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &NodeScene::refreshTheme);
  rebuild();
}

// The items go while this scene is whole, and quietly: removing selected items emits
// selectionChanged, whose listeners would otherwise meet a half-destroyed scene (and maybe an
// already destroyed document).
NodeScene::~NodeScene() {
  blockSignals(true);
  clear();
}

// ---- lookups -------------------------------------------------------------------------------

NodeItem* NodeScene::nodeItem(const QString& id) const { return nodes_.value(id); }

EdgeItem* NodeScene::edgeItem(const graph::Edge& edge) const {
  const NodeItem* from = nodeItem(qstr(edge.from.node));
  if (!from) return nullptr;
  for (EdgeItem* e : from->edges())
    if (e->edge() == edge) return e;
  return nullptr;
}

BlockItem* NodeScene::blockItem(const QString& id) const { return blocks_.value(id); }

BlockItem* NodeScene::proxyFor(const std::string& node) const {
  const graph::Block* hiding = graph::hiding_block(doc_->graph(), node);
  return hiding ? blockItem(qstr(hiding->id)) : nullptr;
}

QPointF NodeScene::portScenePos(const graph::PortRef& port, bool input) const {
  if (const BlockItem* proxy = proxyFor(port.node)) return proxy->portScenePos(port, input);
  const NodeItem* node = nodeItem(qstr(port.node));
  return node ? node->portScenePos(port.port, input) : QPointF();
}

QSizeF NodeScene::nodeSize(const graph::Node& node) { return nodeCardSize(node); }

QStringList NodeScene::selectedNodeIds() const {
  QStringList ids;
  for (const graph::Node& n : doc_->graph().nodes)
    if (const NodeItem* item = nodeItem(qstr(n.id)); item && item->isSelected()) ids << item->id();
  return ids;
}

QStringList NodeScene::selectedBlockIds() const {
  QStringList ids;
  for (const graph::Block& b : doc_->graph().blocks)
    if (const BlockItem* item = blockItem(qstr(b.id)); item && item->isSelected()) ids << item->id();
  return ids;
}

QStringList NodeScene::selectedItemIds() const { return selectedNodeIds() + selectedBlockIds(); }

std::vector<std::string> NodeScene::selectionNodes() const {
  std::set<std::string> chosen;
  for (const QString& id : selectedNodeIds()) chosen.insert(id.toStdString());
  for (const QString& id : selectedBlockIds())
    for (std::string& n : graph::block_nodes(doc_->graph(), *doc_->block(id))) chosen.insert(std::move(n));
  std::vector<std::string> ids;
  for (const graph::Node& n : doc_->graph().nodes)
    if (chosen.contains(n.id)) ids.push_back(n.id);
  return ids;
}

std::vector<graph::Edge> NodeScene::selectedEdges() const {
  std::vector<graph::Edge> edges;
  for (QGraphicsItem* item : selectedItems())
    if (const auto* e = qgraphicsitem_cast<EdgeItem*>(item)) edges.push_back(e->edge());
  return edges;
}

void NodeScene::selectNodes(const QStringList& ids) {
  clearSelection();
  for (const QString& id : ids)
    if (NodeItem* item = nodeItem(id); item && item->isVisible())
      item->setSelected(true);
    else if (BlockItem* block = blockItem(id))
      block->setSelected(true);
}

QPointF NodeScene::snapped(QPointF p) const {
  if (!snap_) return p;
  return {std::round(p.x() / kGrid) * kGrid, std::round(p.y() / kGrid) * kGrid};
}

QPointF NodeScene::dragPosition(QPointF wanted) const {
  return drag_start_.empty() && block_drag_start_.empty() ? wanted : snapped(wanted);
}

// ---- following the document ----------------------------------------------------------------

void NodeScene::rebuild() {
  cancelWire();
  drag_start_.clear();
  // Forgotten before they go: deleting a selected item emits selectionChanged, whose listeners
  // look nodes up (the new graph's ids may name items being deleted).
  block_drag_start_.clear();
  nodes_.clear();
  blocks_.clear();
  clear();
  for (const graph::Node& n : doc_->graph().nodes) addNodeItem(qstr(n.id));
  for (const graph::Edge& e : doc_->graph().edges) addEdgeItem(e);
  refreshValidation();
}

void NodeScene::addNodeItem(const QString& id) {
  const graph::Node* node = doc_->node(id);
  if (!node || nodes_.contains(id)) return;
  auto* item = new NodeItem(*node);
  item->setZValue(top_z_);
  addItem(item);
  nodes_.insert(id, item);
}

void NodeScene::removeNodeItem(const QString& id) {
  NodeItem* item = nodes_.take(id);
  if (!item) return;
  cancelWire();  // its ports may be part of the wire being drawn
  drag_start_.erase(id);
  for (EdgeItem* e : std::vector<EdgeItem*>(item->edges())) removeEdgeItem(e->edge());
  delete item;  // also leaves the scene
}

void NodeScene::updateNodeItem(const QString& id) {
  const graph::Node* node = doc_->node(id);
  if (NodeItem* item = nodeItem(id); item && node) item->setNode(*node);
}

void NodeScene::moveNodeItem(const QString& id) {
  const graph::Node* node = doc_->node(id);
  NodeItem* item = nodeItem(id);
  if (!node || !item) return;
  const QPointF pos(node->position.x, node->position.y);
  if (item->pos() != pos) item->setPos(pos);  // after our own drag the item is already there
  // The frames around it follow (a hidden node's card moves with its block's own change).
  const std::string key = id.toStdString();
  if (graph::parent_block(doc_->graph(), key) && !graph::hiding_block(doc_->graph(), key)) refreshBlocks();
}

void NodeScene::addEdgeItem(const graph::Edge& edge) {
  NodeItem* from = nodeItem(qstr(edge.from.node));
  NodeItem* to = nodeItem(qstr(edge.to.node));
  if (!from || !to) return;  // a wire to a missing node: the validator reports it
  auto* item = new EdgeItem(edge, from, to);
  item->setLabel(shapeLabel(doc_->edgeShape(edge)));
  addItem(item);
  from->attach(item);
  if (to != from) to->attach(item);
  refreshWireLabels(from, edge.from.port);
}

// The wires that leave one output port all carry its shape: the first attached shows the label,
// the others would print it again (two wires into one block, side by side, overlap theirs).
void NodeScene::refreshWireLabels(NodeItem* node, const std::string& port) {
  bool first = true;
  for (EdgeItem* e : node->edges())
    if (e->fromNode() == node && e->edge().from.port == port) {
      e->setLabelShown(first);
      first = false;
    }
}

void NodeScene::removeEdgeItem(const graph::Edge& edge) {
  EdgeItem* item = edgeItem(edge);
  if (!item) return;
  for (const BlockItem* proxy : {item->fromProxy(), item->toProxy()})
    if (proxy) blockItem(proxy->id())->detach(item);
  NodeItem* from = item->fromNode();
  const std::string port = edge.from.port;  // `edge` may be the item's own
  from->detach(item);
  item->toNode()->detach(item);
  delete item;
  refreshWireLabels(from, port);
}

void NodeScene::refreshValidation() {
  std::unordered_map<std::string, std::vector<graph::Problem>> problems;
  for (const graph::Problem& p : doc_->validation().problems) problems[p.node].push_back(p);
  for (NodeItem* node : std::as_const(nodes_)) {
    const auto it = problems.find(node->id().toStdString());
    node->setProblems(it == problems.end() ? std::vector<graph::Problem>{} : it->second);
    for (EdgeItem* e : node->edges())
      if (e->fromNode() == node) e->setLabel(shapeLabel(doc_->edgeShape(e->edge())));
  }
  refreshBlocks();  // open ports, problems and parameter counts follow the flat graph
}

void NodeScene::refreshBlocks() {
  const graph::Graph& g = doc_->graph();
  if (g.blocks.empty() && blocks_.empty()) return;
  cancelWire();  // its ports may be a card's
  const QStringList selected = selectedBlockIds();
  std::vector<EdgeItem*> edges;
  for (QGraphicsItem* item : items())
    if (auto* e = qgraphicsitem_cast<EdgeItem*>(item)) {
      e->setProxies(nullptr, nullptr);  // before the cards they point at go
      edges.push_back(e);
    }
  // Out of the table before they go: deleting a selected item tells selection listeners.
  for (BlockItem* b : std::exchange(blocks_, {})) delete b;

  for (NodeItem* node : std::as_const(nodes_)) {
    const bool hidden = graph::hiding_block(g, node->id().toStdString()) != nullptr;
    if (hidden) node->setSelected(false);
    node->setVisible(!hidden);
  }

  std::unordered_map<std::string, std::vector<graph::Problem>> problems;
  for (const graph::Problem& p : doc_->validation().problems) problems[p.node].push_back(p);
  std::unordered_map<std::string, double> learned;  // node id -> parameters, where counted
  for (const graph::NodeMemory& m : doc_->validation().memory.nodes) learned[m.node] = m.parameters;
  const auto summary = [&](const graph::Block& b) {
    const std::vector<std::string> inside = graph::block_nodes(g, b);
    double parameters = 0;
    bool counted = true;
    for (const std::string& id : inside) {
      const graph::LayerType* type = graph::Registry::instance().find(g.find(id)->type);
      if (!type || !type->parameter_count) continue;
      const auto it = learned.find(id);
      counted = counted && it != learned.end();
      if (it != learned.end()) parameters += it->second;
    }
    QString text = inside.size() == 1 ? tr("1 layer") : tr("%1 layers").arg(inside.size());
    if (counted && parameters > 0)
      text += QStringLiteral(" · ") + tr("%1 parameters").arg(QLocale().toString(qlonglong(parameters)));
    return std::pair{text, inside};
  };

  // Cards first: the frames around them need their size.
  for (const graph::Block& b : g.blocks) {
    if (!b.collapsed || graph::hiding_block(g, b.id)) continue;
    const auto [text, inside] = summary(b);
    BlockItem::Card card{qstr(b.name), text, {}, {}};
    const graph::BlockPorts open = graph::open_ports(g, b);
    for (const bool input : {true, false})
      for (const graph::PortRef& ref : input ? open.inputs : open.outputs) {
        const graph::Node& member = *g.find(ref.node);
        const graph::LayerType* type = graph::Registry::instance().find(member.type);
        const std::vector<graph::PortSpec> outputs = type ? type->outputs_of(member) : std::vector<graph::PortSpec>{};
        const std::optional<size_t> out = input || !type ? std::nullopt : type->output_index(member, ref.port);
        const graph::PortSpec* spec = !type ? nullptr : input ? type->input(ref.port) : out ? &outputs[*out] : nullptr;
        const bool several = !type || (input ? type->inputs.size() : outputs.size()) > 1;
        QString label = qstr(member.name.empty() ? member.id : member.name);
        if (several) label += QStringLiteral(" · ") + qstr(ref.port);
        const bool connected = std::any_of(g.edges.begin(), g.edges.end(),
                                           [&](const graph::Edge& e) { return (input ? e.to : e.from) == ref; });
        (input ? card.inputs : card.outputs)
            .push_back({ref, spec ? *spec : graph::PortSpec{ref.port, {}, false, false}, label, connected});
      }
    auto* item = new BlockItem(qstr(b.id), card, QPointF(b.position.x, b.position.y));
    item->setZValue(top_z_);
    std::vector<graph::Problem> hidden_problems;
    for (const std::string& id : inside)
      if (const auto it = problems.find(id); it != problems.end())
        hidden_problems.insert(hidden_problems.end(), it->second.begin(), it->second.end());
    item->setProblems(hidden_problems);
    addItem(item);
    blocks_.insert(item->id(), item);
  }
  // Then the open frames, each around what it shows of its members (inner frames first).
  std::function<QRectF(const graph::Block&)> shown_rect = [&](const graph::Block& b) {
    QRectF rect;
    for (const std::string& m : b.members) {
      if (const NodeItem* node = nodeItem(qstr(m)))
        rect |= node->sceneCardRect();
      else if (const BlockItem* card = blockItem(qstr(m)); card && card->isCollapsed())
        rect |= card->sceneCardRect();
      else if (const graph::Block* inner = g.find_block(m))
        rect |= shown_rect(*inner).adjusted(-BlockItem::kFramePadding, -BlockItem::kFramePadding - BlockItem::kFrameTitle,
                                            BlockItem::kFramePadding, BlockItem::kFramePadding);
    }
    return rect.isNull() ? QRectF(b.position.x, b.position.y, 160, 40) : rect;
  };
  for (const graph::Block& b : g.blocks) {
    if (b.collapsed || graph::hiding_block(g, b.id)) continue;
    int depth = 0;
    for (const graph::Block* p = graph::parent_block(g, b.id); p && depth <= int(g.blocks.size()); p = graph::parent_block(g, p->id))
      ++depth;
    auto* item = new BlockItem(qstr(b.id), qstr(b.name), summary(b).first, shown_rect(b), depth);
    addItem(item);
    blocks_.insert(item->id(), item);
  }

  // Wires: inside one card they are hidden, else drawn to the proxies of the hidden ends.
  std::unordered_map<BlockItem*, std::vector<EdgeItem*>> routed;
  for (EdgeItem* e : edges) {
    BlockItem* from = proxyFor(e->edge().from.node);
    BlockItem* to = proxyFor(e->edge().to.node);
    e->setVisible(!(from && from == to));
    e->setProxies(from, to);
    if (from) routed[from].push_back(e);
    if (to && to != from) routed[to].push_back(e);
  }
  for (auto& [card, wires] : routed) card->setRoutedEdges(std::move(wires));
  for (const QString& id : selected)
    if (BlockItem* item = blockItem(id)) item->setSelected(true);
}

void NodeScene::refreshTheme() {
  // update() on each item, not on the scene: cached nodes must be painted again.
  for (QGraphicsItem* item : items()) item->update();
  if (wire_) wire_->path->setPen(QPen(ThemeManager::instance().theme().wireDragging, 2));
}

// ---- dragging nodes ------------------------------------------------------------------------

void NodeScene::beginNodeDrag() {
  QGraphicsItem* grabbed = mouseGrabberItem();
  const auto* grabbed_block = qgraphicsitem_cast<BlockItem*>(grabbed);
  if (!qgraphicsitem_cast<NodeItem*>(grabbed) && !(grabbed_block && grabbed_block->isCollapsed())) return;
  grabbed->setZValue(++top_z_);
  drag_start_.clear();
  block_drag_start_.clear();
  for (QGraphicsItem* item : selectedItems())
    if (const auto* node = qgraphicsitem_cast<NodeItem*>(item))
      drag_start_[node->id()] = node->pos();
    else if (const auto* block = qgraphicsitem_cast<BlockItem*>(item); block && block->isCollapsed())
      block_drag_start_[block->id()] = block->pos();
}

void NodeScene::commitNodeDrag() {
  // Items moved freely during the drag; the document learns the result in one step.
  std::map<QString, graph::Position> moved;
  for (const auto& [id, start] : drag_start_)
    if (const NodeItem* item = nodeItem(id); item && item->pos() != start)
      moved[id] = graph::Position{item->pos().x(), item->pos().y()};
  std::map<QString, graph::Position> moved_blocks;
  for (const auto& [id, start] : block_drag_start_)
    if (const BlockItem* item = blockItem(id); item && item->pos() != start)
      moved_blocks[id] = graph::Position{item->pos().x(), item->pos().y()};
  drag_start_.clear();
  block_drag_start_.clear();
  if (!moved.empty() || !moved_blocks.empty()) doc_->moveNodes(moved, moved_blocks);
}

// ---- drawing wires -------------------------------------------------------------------------

PortItem* NodeScene::portAt(QPointF scene_pos) const {
  for (QGraphicsItem* item : items(scene_pos, Qt::IntersectsItemShape, Qt::DescendingOrder)) {
    if (wire_ && item == wire_->path) continue;
    return qgraphicsitem_cast<PortItem*>(item);  // only the topmost item counts: not a port under a card
  }
  return nullptr;
}

PortItem* NodeScene::portItem(const graph::PortRef& port, bool input) const {
  if (const BlockItem* proxy = proxyFor(port.node)) return proxy->port(port, input);
  const NodeItem* node = nodeItem(qstr(port.node));
  return node ? node->port(port.port, input) : nullptr;
}

std::vector<PortItem*> NodeScene::allPorts() const {
  std::vector<PortItem*> ports;
  for (const NodeItem* node : nodes_)
    if (node->isVisible()) ports.insert(ports.end(), node->ports().begin(), node->ports().end());
  for (const BlockItem* block : blocks_) ports.insert(ports.end(), block->ports().begin(), block->ports().end());
  return ports;
}

graph::Edge NodeScene::orient(const WireDrag& wire, const graph::PortRef& port) {
  return wire.anchor_is_input ? graph::Edge{port, wire.anchor} : graph::Edge{wire.anchor, port};
}

bool NodeScene::wireAccepts(const PortItem* port) const {
  if (port->isInput() == wire_->anchor_is_input) return false;
  const graph::Edge edge = orient(*wire_, port->ref());
  if (wire_->picked && edge == *wire_->picked) return true;  // back where it came from
  return doc_->connectionProblem(edge.from, edge.to).isEmpty();
}

void NodeScene::startWire(PortItem* port, QPointF scene_pos) {
  WireDrag wire;
  wire.anchor = port->ref();
  wire.anchor_is_input = port->isInput();
  // Pressing on a wired single-wire input lifts that wire's end off it (as in Blender).
  if (port->isInput() && !port->takesManyWires()) {
    for (const graph::Edge& e : doc_->graph().edges) {
      if (!(e.to == wire.anchor)) continue;
      wire.picked = e;
      wire.anchor = e.from;
      wire.anchor_is_input = false;
      if (EdgeItem* item = edgeItem(e)) item->setVisible(false);
      break;
    }
  }
  wire.path = new QGraphicsPathItem;
  wire.path->setPen(QPen(ThemeManager::instance().theme().wireDragging, 2));
  wire.path->setZValue(kWireZ);
  addItem(wire.path);
  wire_ = wire;

  const PortItem* anchor = portItem(wire_->anchor, wire_->anchor_is_input);
  for (PortItem* p : allPorts())
    p->setWireState(p == anchor ? PortItem::WireState::Idle
                                : wireAccepts(p) ? PortItem::WireState::Accepts : PortItem::WireState::Refuses);
  moveWire(scene_pos);
}

void NodeScene::moveWire(QPointF scene_pos) {
  PortItem* over = portAt(scene_pos);
  const bool accepts = over && (over->wireState() == PortItem::WireState::Accepts ||
                                over->wireState() == PortItem::WireState::Target);
  PortItem* target = accepts ? over : nullptr;
  if (target != wire_->target) {
    if (wire_->target) wire_->target->setWireState(PortItem::WireState::Accepts);
    if (target) target->setWireState(PortItem::WireState::Target);
    wire_->target = target;
  }
  const QPointF loose = target ? target->scenePos() : scene_pos;  // snaps onto an accepting port
  const QPointF fixed = portScenePos(wire_->anchor, wire_->anchor_is_input);
  wire_->path->setPath(wire_->anchor_is_input ? wirePath(loose, fixed) : wirePath(fixed, loose));
}

void NodeScene::cancelWire() {
  if (!wire_) return;
  for (PortItem* p : allPorts()) p->setWireState(PortItem::WireState::Idle);
  if (wire_->picked)
    if (EdgeItem* e = edgeItem(*wire_->picked)) e->setVisible(true);
  delete wire_->path;
  wire_.reset();
}

void NodeScene::finishWire(QPointF scene_pos) {
  const PortItem* over = portAt(scene_pos);
  const WireDrag wire = *wire_;
  const std::optional<graph::PortRef> target = over ? std::optional(over->ref()) : std::nullopt;
  const bool target_is_input = over && over->isInput();
  cancelWire();  // before editing: the edit's signals must find a quiet scene
  if (target) {
    connectWire(wire, *target, target_is_input);
  } else if (wire.picked) {
    doc_->disconnect(*wire.picked);  // a lifted wire dropped on the canvas goes away
  }
}

void NodeScene::connectWire(const WireDrag& wire, const graph::PortRef& target, bool target_is_input) {
  if (target_is_input == wire.anchor_is_input) {
    if (target == wire.anchor) return;  // a click on a port, no drag
    emit statusMessage(tr("Cannot connect %1 to %2: both are %3; wire an output to an input")
                           .arg(portText(wire.anchor), portText(target),
                                target_is_input ? tr("inputs") : tr("outputs")));
    return;
  }
  const graph::Edge edge = orient(wire, target);
  if (wire.picked && edge == *wire.picked) return;  // put back where it was
  if (wire.picked && doc_->connectionProblem(edge.from, edge.to).isEmpty()) {
    doc_->undoStack()->beginMacro(tr("Move wire to %1").arg(portText(edge.to)));
    doc_->disconnect(*wire.picked);
    doc_->connectPorts(edge.from, edge.to);
    doc_->undoStack()->endMacro();
    return;
  }
  QString why;
  if (!doc_->connectPorts(edge.from, edge.to, &why)) emit statusMessage(why);
}

// ---- events --------------------------------------------------------------------------------

void NodeScene::mousePressEvent(QGraphicsSceneMouseEvent* event) {
  if (event->button() == Qt::LeftButton && !wire_) {
    if (PortItem* port = portAt(event->scenePos())) {
      startWire(port, event->scenePos());
      event->accept();
      return;
    }
  }
  QGraphicsScene::mousePressEvent(event);
  if (event->button() == Qt::LeftButton) beginNodeDrag();
}

void NodeScene::mouseMoveEvent(QGraphicsSceneMouseEvent* event) {
  if (wire_) {
    moveWire(event->scenePos());
    event->accept();
    return;
  }
  QGraphicsScene::mouseMoveEvent(event);
}

void NodeScene::mouseReleaseEvent(QGraphicsSceneMouseEvent* event) {
  if (wire_ && event->button() == Qt::LeftButton) {
    finishWire(event->scenePos());
    event->accept();
    return;
  }
  QGraphicsScene::mouseReleaseEvent(event);
  if (event->button() == Qt::LeftButton) commitNodeDrag();
}

// Here rather than in the block's item: opening or closing replaces the block items.
void NodeScene::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) {
  if (event->button() == Qt::LeftButton) {
    const QList<QGraphicsItem*> under = items(event->scenePos(), Qt::IntersectsItemShape, Qt::DescendingOrder);
    if (const auto* block = under.isEmpty() ? nullptr : qgraphicsitem_cast<BlockItem*>(under.first())) {
      toggleBlock(block->id());
      event->accept();
      return;
    }
  }
  QGraphicsScene::mouseDoubleClickEvent(event);
}

// ---- selection edits -----------------------------------------------------------------------

void NodeScene::deleteSelection() {
  const QStringList ids = selectedNodeIds();
  const QStringList blocks = selectedBlockIds();
  const std::vector<graph::Edge> edges = selectedEdges();
  if (ids.isEmpty() && blocks.isEmpty() && edges.empty()) return;
  doc_->remove(ids, edges, blocks);
}

QMimeData* NodeScene::copySelection() const {
  const std::vector<std::string> node_ids = selectionNodes();
  if (node_ids.empty()) return nullptr;
  const graph::Graph fragment = graph::extract_fragment(doc_->graph(), node_ids);
  const QByteArray text = QByteArray::fromStdString(graph::fragment_to_text(fragment));
  auto* data = new QMimeData;
  data->setData(QString::fromLatin1(kGraphMimeType), text);
  data->setText(QString::fromUtf8(text));  // through the system clipboard into another window, or a text editor
  return data;
}

void NodeScene::copyToClipboard() {
  if (QMimeData* data = copySelection()) QGuiApplication::clipboard()->setMimeData(data);
}

void NodeScene::cutToClipboard() {
  if (selectionNodes().empty()) return;
  copyToClipboard();
  doc_->undoStack()->beginMacro(tr("Cut"));
  deleteSelection();
  doc_->undoStack()->endMacro();
}

QStringList NodeScene::paste(const QMimeData* data, std::optional<QPointF> at) {
  const QString mime = QString::fromLatin1(kGraphMimeType);
  const QByteArray text = !data ? QByteArray() : data->hasFormat(mime) ? data->data(mime) : data->text().toUtf8();
  if (text.trimmed().isEmpty()) {
    emit statusMessage(tr("Nothing to paste"));
    return {};
  }
  graph::Graph fragment;
  try {
    fragment = graph::fragment_from_text(std::string_view(text.constData(), size_t(text.size())));
  } catch (const std::exception& e) {
    emit statusMessage(
        tr("Cannot paste: the clipboard does not hold Plexus nodes (%1)").arg(QString::fromUtf8(e.what())));
    return {};
  }
  if (fragment.nodes.empty()) {
    emit statusMessage(tr("Nothing to paste"));
    return {};
  }
  QPointF offset(kPasteShift, kPasteShift);
  if (at) {
    QPointF top_left(std::numeric_limits<qreal>::max(), std::numeric_limits<qreal>::max());
    for (const graph::Node& n : fragment.nodes)
      top_left = QPointF(std::min(top_left.x(), n.position.x), std::min(top_left.y(), n.position.y));
    offset = snapped(*at) - top_left;
  }
  return pasteFragment(fragment, offset, tr("Paste"));
}

void NodeScene::pasteFromClipboard(std::optional<QPointF> at) { paste(QGuiApplication::clipboard()->mimeData(), at); }

void NodeScene::duplicateSelection() {
  const std::vector<std::string> ids = selectionNodes();
  if (ids.empty()) return;
  pasteFragment(graph::extract_fragment(doc_->graph(), ids), QPointF(kPasteShift, kPasteShift), tr("Duplicate"));
}

QStringList NodeScene::pasteFragment(const graph::Graph& fragment, QPointF offset, const QString& text) {
  const QStringList ids = doc_->paste(fragment, graph::Position{offset.x(), offset.y()}, text);
  selectNodes(ids);
  return ids;
}

QString NodeScene::groupSelection(const QString& name) {
  // An open block selected with some of its members: the block is what is grouped.
  QStringList members;
  const QStringList blocks = selectedBlockIds();
  for (const QString& id : selectedItemIds()) {
    const bool inside_selected = std::any_of(blocks.begin(), blocks.end(), [&](const QString& b) {
      return b != id && graph::block_contains(doc_->graph(), *doc_->block(b), id.toStdString());
    });
    if (!inside_selected) members << id;
  }
  if (const QString why = doc_->groupProblem(members); !why.isEmpty()) {
    emit statusMessage(tr("Cannot group into a block: %1").arg(why));
    return {};
  }
  const QString id = doc_->group(members, name);
  selectNodes({id});
  return id;
}

void NodeScene::ungroupSelection() {
  const QStringList blocks = selectedBlockIds();
  if (blocks.isEmpty()) return;
  QStringList members;
  for (const QString& id : blocks)
    for (const std::string& m : doc_->block(id)->members) members << qstr(m);
  if (blocks.size() > 1) doc_->undoStack()->beginMacro(tr("Ungroup %1 blocks").arg(blocks.size()));
  for (const QString& id : blocks) doc_->ungroup(id);
  if (blocks.size() > 1) doc_->undoStack()->endMacro();
  selectNodes(members);
}

void NodeScene::toggleBlock(const QString& id) {
  if (const graph::Block* b = doc_->block(id)) doc_->setBlockCollapsed(id, !b->collapsed);
}

void NodeScene::autoLayout() {
  const auto with_label_room = [](QSizeF size) { return graph::LayoutSize{size.width() + kLabelRoom, size.height()}; };
  doc_->autoLayout([&](const graph::Node& node) { return with_label_room(nodeCardSize(node)); },
                   [&](const graph::Block& block) {
                     const graph::BlockPorts ports = graph::open_ports(doc_->graph(), block);
                     return with_label_room(BlockItem::cardSize(std::max(ports.inputs.size(), ports.outputs.size())));
                   });
}

}  // namespace plexus::widgets
