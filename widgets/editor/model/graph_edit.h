#pragma once
// Edits as data. Every change to a graph is a list of primitive operations, each of which
// carries what it needs to be reversed; undo applies the inverses in reverse order. One
// QUndoCommand class (EditCommand) therefore serves add, delete, move, connect, disconnect,
// parameter changes, paste, auto-layout and grouping into blocks alike.
#include <QUndoCommand>

#include <variant>
#include <vector>

#include "graph/graph.h"

namespace plexus::widgets {

class GraphDocument;

struct InsertNode { size_t index; graph::Node node; };
struct EraseNode { size_t index; graph::Node node; };
struct ReplaceNode { size_t index; graph::Node before, after; };  // same id: name, parameters, position
struct InsertEdge { size_t index; graph::Edge edge; };
struct EraseEdge { size_t index; graph::Edge edge; };
struct InsertBlock { size_t index; graph::Block block; };
struct EraseBlock { size_t index; graph::Block block; };
// Same id: name, members, position. Whether it is collapsed is view state, which edits keep.
struct ReplaceBlock { size_t index; graph::Block before, after; };
struct ReplaceSettings {
  graph::DatasetBinding dataset_before, dataset_after;
  graph::TrainingSettings training_before, training_after;
};
struct ReplaceSweep { graph::SweepSettings before, after; };
using GraphOp = std::variant<InsertNode, EraseNode, ReplaceNode, InsertEdge, EraseEdge, InsertBlock, EraseBlock,
                             ReplaceBlock, ReplaceSettings, ReplaceSweep>;

GraphOp inverse(const GraphOp& op);
// True when the operation can change what the graph means: anything but a node's position
// and the blocks, which only annotate the flat graph.
bool changesMeaning(const GraphOp& op);
bool changesBlocks(const GraphOp& op);

// The operations turning the blocks `before` into `after`, where `after` holds the blocks of
// `before` that remain, in the same order (changed or not), and then any new ones.
std::vector<GraphOp> blockEdits(const std::vector<graph::Block>& before, const std::vector<graph::Block>& after);

class EditCommand : public QUndoCommand {
 public:
  EditCommand(GraphDocument* document, const QString& text, std::vector<GraphOp> ops);
  void redo() override;
  void undo() override;

 private:
  GraphDocument* document_;
  std::vector<GraphOp> ops_, inverse_;
};

}  // namespace plexus::widgets
