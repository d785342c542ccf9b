#pragma once
// The node editor's canvas model: a QGraphicsScene that shows a GraphDocument — one NodeItem
// per node, one EdgeItem per edge, one BlockItem per block that is not hidden — and turns
// gestures into document edits: dragging nodes and collapsed blocks (one undo step on release),
// drawing and re-routing wires, delete, copy, paste, duplicate, auto layout, grouping into
// blocks. It never changes the graph itself; every change goes through the document and comes
// back through its signals. Nodes inside a collapsed block are hidden, and their wires to the
// outside end at the block's proxy ports.
#include <QGraphicsScene>
#include <QHash>
#include <QStringList>

#include <map>
#include <optional>
#include <vector>

#include "editor/model/graph_document.h"
#include "graph/graph.h"

class QGraphicsPathItem;
class QMimeData;

namespace plexus::widgets {

class BlockItem;
class EdgeItem;
class NodeItem;
class PortItem;

// Clipboard format of copied nodes: a fragment as project text (also put there as plain text).
inline constexpr char kGraphMimeType[] = "application/x-plexus-graph";

class NodeScene : public QGraphicsScene {
  Q_OBJECT

 public:
  static constexpr qreal kGrid = 20;  // scene units; the view draws a major line every 5

  explicit NodeScene(GraphDocument* document, QObject* parent = nullptr);
  ~NodeScene() override;

  GraphDocument* document() const { return doc_; }
  NodeItem* nodeItem(const QString& id) const;
  EdgeItem* edgeItem(const graph::Edge& edge) const;
  BlockItem* blockItem(const QString& id) const;  // null for a block hidden inside a collapsed one
  // The centre of a port's circle in scene coordinates (a null point for an unknown node); for
  // a node a collapsed block hides, the centre of the block's proxy port for it.
  QPointF portScenePos(const graph::PortRef& port, bool input) const;
  static QSizeF nodeSize(const graph::Node& node);

  QStringList selectedNodeIds() const;  // in graph order
  QStringList selectedBlockIds() const;  // in graph order
  QStringList selectedItemIds() const;   // nodes, then blocks
  std::vector<graph::Edge> selectedEdges() const;
  void selectNodes(const QStringList& ids);  // node or block ids; replaces the selection

  // ---- edits of the selection (each one undo step) ---------------------------------------
  void deleteSelection();
  QMimeData* copySelection() const;  // null when no node is selected; the caller owns it
  void copyToClipboard();
  void cutToClipboard();
  // Adds the nodes in `data` (from copySelection, or its text from another window) with their
  // top-left at `at`, or 40 units right and down of where they were copied; selects them and
  // returns their ids. Text that is not a fragment changes nothing and says why.
  QStringList paste(const QMimeData* data, std::optional<QPointF> at = std::nullopt);
  void pasteFromClipboard(std::optional<QPointF> at = std::nullopt);
  void duplicateSelection();
  void autoLayout();
  // The selected nodes and blocks into a new block named `name`; returns its id, or "" and says
  // why not (statusMessage). The new block is selected.
  QString groupSelection(const QString& name = {});
  // Ungroups every selected block; their members are selected.
  void ungroupSelection();
  void toggleBlock(const QString& id);  // opens a collapsed block, closes an open one

  // ---- grid --------------------------------------------------------------------------------
  void setSnapToGrid(bool snap) { snap_ = snap; }
  bool snapToGrid() const { return snap_; }
  QPointF snapped(QPointF p) const;  // the nearest grid point when snapping, else p
  // Where a node goes when the mouse drags it to `wanted` (snapped); document moves pass as is.
  QPointF dragPosition(QPointF wanted) const;

  bool isDrawingWire() const { return wire_.has_value(); }
  // Stops drawing a wire and changes nothing (Escape); a lifted wire goes back to its input.
  void cancelWire();

 signals:
  void statusMessage(const QString& text);

 protected:
  void mousePressEvent(QGraphicsSceneMouseEvent* event) override;
  void mouseMoveEvent(QGraphicsSceneMouseEvent* event) override;
  void mouseReleaseEvent(QGraphicsSceneMouseEvent* event) override;
  void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) override;

 private:
  // A wire being drawn: one end stays at `anchor`, the other follows the mouse.
  struct WireDrag {
    graph::PortRef anchor;
    bool anchor_is_input = false;
    std::optional<graph::Edge> picked;  // an existing wire lifted off its input (hidden meanwhile)
    QGraphicsPathItem* path = nullptr;
    PortItem* target = nullptr;         // the accepting port under the mouse
  };

  // Following the document.
  void rebuild();
  void addNodeItem(const QString& id);
  void removeNodeItem(const QString& id);
  void updateNodeItem(const QString& id);
  void moveNodeItem(const QString& id);
  void addEdgeItem(const graph::Edge& edge);
  void removeEdgeItem(const graph::Edge& edge);
  void refreshWireLabels(NodeItem* node, const std::string& port);
  void refreshValidation();
  void refreshTheme();
  // Blocks are drawn anew from the document: cards, frames, hidden nodes, rerouted wires.
  void refreshBlocks();
  BlockItem* proxyFor(const std::string& node) const;  // the card a hidden node is drawn through

  // Dragging nodes.
  void beginNodeDrag();
  void commitNodeDrag();

  // Drawing wires.
  PortItem* portAt(QPointF scene_pos) const;
  PortItem* portItem(const graph::PortRef& port, bool input) const;
  std::vector<PortItem*> allPorts() const;
  void startWire(PortItem* port, QPointF scene_pos);
  void moveWire(QPointF scene_pos);
  void finishWire(QPointF scene_pos);
  bool wireAccepts(const PortItem* port) const;
  static graph::Edge orient(const WireDrag& wire, const graph::PortRef& port);  // output -> input
  void connectWire(const WireDrag& wire, const graph::PortRef& target, bool target_is_input);

  QStringList pasteFragment(const graph::Graph& fragment, QPointF offset, const QString& text);
  std::vector<std::string> selectionNodes() const;  // selected nodes and those in selected blocks

  GraphDocument* doc_;
  QHash<QString, NodeItem*> nodes_;
  QHash<QString, BlockItem*> blocks_;
  bool snap_ = true;
  qreal top_z_ = 1;                           // nodes stack from 1 up; the last one grabbed is on top
  std::map<QString, QPointF> drag_start_;     // nodes being dragged and where they were
  std::map<QString, QPointF> block_drag_start_;  // collapsed blocks likewise
  std::optional<WireDrag> wire_;
};

}  // namespace plexus::widgets
