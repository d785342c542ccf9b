#pragma once
// The open project as the editor sees it: the single truth behind the canvas, the palette, the
// property panel and the problems panel. It owns a graph::Graph, and every edit goes through a
// QUndoStack command made of primitive graph operations (graph_edit.h), so everything can be
// undone. Views listen to the fine-grained signals and never change the graph themselves.
// After each edit that can change meaning (not a pure move) the graph is validated again and
// validated() tells views to refresh shapes and problems.
#include <QObject>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QUndoStack>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "editor/model/graph_edit.h"
#include "graph/dataset_info.h"
#include "graph/graph.h"
#include "graph/layout.h"
#include "graph/validate.h"

namespace plexus::widgets {

// How messages and undo entries name a port: "conv1.out".
QString portText(const graph::PortRef& p);

class GraphDocument : public QObject {
  Q_OBJECT

 public:
  explicit GraphDocument(QObject* parent = nullptr);
  ~GraphDocument() override;

  const graph::Graph& graph() const { return graph_; }
  const graph::Node* node(const QString& id) const;
  const graph::Block* block(const QString& id) const;
  QUndoStack* undoStack() { return &undo_; }

  // ---- the file -------------------------------------------------------------------------
  QString filePath() const { return path_; }  // "" for a project never saved
  QString displayName() const;                // file name, or "Untitled"
  bool isModified() const;
  // Replaces the project; the undo history starts afresh. `modified`: the graph is not what the
  // file holds (a recovered autosave).
  void reset(graph::Graph graph, const QString& path, bool modified = false);
  // Reads a project file. Throws (IoError/ProjectError) and leaves this document untouched.
  void load(const QString& path);
  // Atomic save (temp file, fsync, rename); on success the document is clean and takes `path`.
  void save(const QString& path);
  // The editor's view state, kept in the file verbatim; not an edit (no undo, not dirtying).
  void setViewState(const std::string& json) { graph_.view = json; }

  // ---- validation (current after every edit) --------------------------------------------
  const graph::Validation& validation() const { return validation_; }
  std::optional<Shape> edgeShape(const graph::Edge& edge) const;  // per example; null if unknown
  std::vector<graph::Problem> problemsFor(const QString& node) const;
  // The bound dataset as validation sees it: its description when readable, else why not.
  const std::optional<graph::DatasetInfo>& datasetInfo() const { return dataset_info_; }
  QString datasetStatus() const { return dataset_status_; }
  // Where the binding's path leads: a relative path is looked up next to the project file
  // first (graph::locate_dataset).
  graph::DatasetLocation datasetLocation() const;

  // ---- edits: each is one undo step; a refused edit changes nothing ----------------------
  // A node of a registry type at `pos` (top-left, scene units); returns its id ("" if unknown type).
  QString addNode(const QString& type, QPointF pos);
  // Deletes nodes (with every edge touching them), edges and blocks (with everything inside
  // them), as one step. A block left without members goes too.
  void remove(const QStringList& nodes, const std::vector<graph::Edge>& edges, const QStringList& blocks = {});
  // Nodes to new positions and blocks to new positions, each block with everything inside it
  // moving by the same amount (unless given a position of its own), as one step.
  void moveNodes(const std::map<QString, graph::Position>& positions,
                 const std::map<QString, graph::Position>& block_positions = {});
  // Why wiring from -> to is not allowed ("" = allowed): ports that do not exist, the wrong
  // direction, the same node, a wire that is already there, or one that would close a cycle.
  // An input that takes one wire and already has one is allowed: connecting replaces it.
  QString connectionProblem(const graph::PortRef& from, const graph::PortRef& to) const;
  bool connectPorts(const graph::PortRef& from, const graph::PortRef& to, QString* why = nullptr);
  void disconnect(const graph::Edge& edge);
  void setParam(const QString& node, const QString& name, const graph::ParamValue& value);
  // Back to the type's default: the parameter is dropped from the file.
  void resetParam(const QString& node, const QString& name);
  void rename(const QString& node, const QString& name);
  // One of the node's own training settings (graph/node_settings.h: "lr_mult", ...); throws
  // ValueError, changing nothing, for a value the setting refuses.
  void setNodeSetting(const QString& node, const QString& name, const graph::ParamValue& value);
  // Freezes or unfreezes the nodes among `nodes` that learn values (graph::Node::frozen), as one
  // step; the others, and those already so, are left. Returns how many changed.
  int setFrozen(const QStringList& nodes, bool frozen);
  // Adds a fragment (graph::extract_fragment) shifted by `offset`, its blocks with it; returns
  // the new node ids, then the ids of its outermost new blocks.
  QStringList paste(const graph::Graph& fragment, graph::Position offset, const QString& text);

  // ---- blocks (graph/blocks.h): an annotation over the flat graph; what trains never changes.
  // Why `members` (node and block ids) cannot become a block ("" = they can): unknown ids, none,
  // or members of different blocks (a new block goes inside the block its members were in).
  QString groupProblem(const QStringList& members) const;
  // A new collapsed block of `members` named `name` (its id if empty) at their top-left; one
  // step. Returns its id, "" when refused (groupProblem says why).
  QString group(const QStringList& members, const QString& name = {});
  // Removes the block, its members going to the block around it (if any); one step. Grouping
  // and then ungrouping gives back exactly the graph there was.
  void ungroup(const QString& block);
  void renameBlock(const QString& block, const QString& name);
  // Opening and closing a block is view state, like the zoom: saved with the project but not
  // an edit (no undo step, not a change to save), because it changes nothing the graph means.
  void setBlockCollapsed(const QString& block, bool collapsed);
  // Lays out what the canvas shows (graph::auto_layout): a closed block is one card of
  // `block_size`, and everything inside it moves with it; one step.
  void autoLayout(const std::function<graph::LayoutSize(const graph::Node&)>& size = {},
                  const std::function<graph::LayoutSize(const graph::Block&)>& block_size = {});
  void setDataset(const graph::DatasetBinding& dataset);
  // The dataset with nodes changed to fit it (same ids; a node of another type comes back with
  // its wires), as one step: a CSV target of another kind with the head fitted to it (task_head.h).
  void setDataset(const graph::DatasetBinding& dataset, const std::vector<graph::Node>& nodes);
  void setTraining(const graph::TrainingSettings& training);
  // The project's sweep definition (graph::SweepSettings): its settings and swept parameters.
  void setSweep(const graph::SweepSettings& sweep);
  // From `from`, the same graph with other settings (sweep::apply_assignment's result): its
  // training and dataset settings and its nodes' parameters and settings, as one step named
  // `text`. False, with no step, when nothing differs.
  bool adoptSettings(const graph::Graph& from, const QString& text);

  // Applies primitive operations and tells the views; used by EditCommand only.
  void apply(const std::vector<GraphOp>& ops);

 signals:
  void graphReset();
  void nodeAdded(const QString& id);
  void nodeRemoved(const QString& id);
  void nodeChanged(const QString& id);  // name or parameters
  void nodeMoved(const QString& id);
  void edgeAdded(const plexus::graph::Edge& edge);
  void edgeRemoved(const plexus::graph::Edge& edge);
  void blocksChanged();  // any block added, removed, changed, opened or closed
  void settingsChanged();  // dataset binding or training settings
  void sweepChanged();     // the sweep definition
  void validated();
  void modifiedChanged(bool modified);
  void filePathChanged(const QString& path);

 private:
  void push(const QString& text, std::vector<GraphOp> ops);
  // One parameter set (value) or removed (nullptr).
  void changeParam(const QString& node, const QString& name, const graph::ParamValue* value);
  void applyOne(const GraphOp& op);
  void reindex();
  std::filesystem::path projectDir() const;  // "" for a project never saved
  void describeDataset();
  void revalidate();
  std::optional<size_t> nodeIndex(const QString& id) const;
  std::optional<size_t> blockIndex(const QString& id) const;
  // moveNodes as an undo step named `text` ("" = named after what moves).
  void move(const std::map<QString, graph::Position>& positions, const std::map<QString, graph::Position>& block_positions,
            QString text);
  // `blocks` (the blocks an edit leaves) with each block's members in canonical order
  // (graph::canonical_members) among this graph's nodes and those blocks.
  std::vector<graph::Block> canonicalBlocks(std::vector<graph::Block> blocks) const;

  graph::Graph graph_;
  QUndoStack undo_;
  QString path_;
  bool recovered_ = false;  // modified without any undo step (see reset)
  std::unordered_map<std::string, size_t> node_index_;
  graph::Validation validation_;
  std::unordered_map<std::string, size_t> validated_edges_;  // edge key -> index into edge_shapes
  std::optional<graph::DatasetInfo> dataset_info_;
  QString dataset_status_;
};

}  // namespace plexus::widgets
