#pragma once
// Edits as data. Every change to a graph is a list of primitive operations, each of which
// carries what it needs to be reversed; undo applies the inverses in reverse order. One
// QUndoCommand class (EditCommand) therefore serves add, delete, move, connect, disconnect,
// parameter changes, paste and auto-layout alike.
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
struct ReplaceSettings {
  graph::DatasetBinding dataset_before, dataset_after;
  graph::TrainingSettings training_before, training_after;
};
using GraphOp = std::variant<InsertNode, EraseNode, ReplaceNode, InsertEdge, EraseEdge, ReplaceSettings>;

GraphOp inverse(const GraphOp& op);
// True when the operation can change what the graph means (anything but a node's position).
bool changesMeaning(const GraphOp& op);

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
