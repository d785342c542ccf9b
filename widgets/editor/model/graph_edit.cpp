#include "editor/model/graph_edit.h"

#include <algorithm>

#include "editor/model/graph_document.h"

namespace plexus::widgets {

GraphOp inverse(const GraphOp& op) {
  struct Invert {
    GraphOp operator()(const InsertNode& o) const { return EraseNode{o.index, o.node}; }
    GraphOp operator()(const EraseNode& o) const { return InsertNode{o.index, o.node}; }
    GraphOp operator()(const ReplaceNode& o) const { return ReplaceNode{o.index, o.after, o.before}; }
    GraphOp operator()(const InsertEdge& o) const { return EraseEdge{o.index, o.edge}; }
    GraphOp operator()(const EraseEdge& o) const { return InsertEdge{o.index, o.edge}; }
    GraphOp operator()(const ReplaceSettings& o) const {
      return ReplaceSettings{o.dataset_after, o.dataset_before, o.training_after, o.training_before};
    }
  };
  return std::visit(Invert{}, op);
}

bool changesMeaning(const GraphOp& op) {
  if (const auto* r = std::get_if<ReplaceNode>(&op)) {
    graph::Node moved = r->before;
    moved.position = r->after.position;
    return !(moved == r->after);
  }
  return true;
}

EditCommand::EditCommand(GraphDocument* document, const QString& text, std::vector<GraphOp> ops)
    : QUndoCommand(text), document_(document), ops_(std::move(ops)) {
  inverse_.reserve(ops_.size());
  for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) inverse_.push_back(inverse(*it));
}

void EditCommand::redo() { document_->apply(ops_); }
void EditCommand::undo() { document_->apply(inverse_); }

}  // namespace plexus::widgets
