#include "editor/model/graph_edit.h"

#include <algorithm>
#include <unordered_set>

#include "editor/model/graph_document.h"

namespace plexus::widgets {

GraphOp inverse(const GraphOp& op) {
  struct Invert {
    GraphOp operator()(const InsertNode& o) const { return EraseNode{o.index, o.node}; }
    GraphOp operator()(const EraseNode& o) const { return InsertNode{o.index, o.node}; }
    GraphOp operator()(const ReplaceNode& o) const { return ReplaceNode{o.index, o.after, o.before}; }
    GraphOp operator()(const InsertEdge& o) const { return EraseEdge{o.index, o.edge}; }
    GraphOp operator()(const EraseEdge& o) const { return InsertEdge{o.index, o.edge}; }
    GraphOp operator()(const InsertBlock& o) const { return EraseBlock{o.index, o.block}; }
    GraphOp operator()(const EraseBlock& o) const { return InsertBlock{o.index, o.block}; }
    GraphOp operator()(const ReplaceBlock& o) const { return ReplaceBlock{o.index, o.after, o.before}; }
    GraphOp operator()(const ReplaceSettings& o) const {
      return ReplaceSettings{o.dataset_after, o.dataset_before, o.training_after, o.training_before};
    }
    GraphOp operator()(const ReplaceSweep& o) const { return ReplaceSweep{o.after, o.before}; }
  };
  return std::visit(Invert{}, op);
}

bool changesMeaning(const GraphOp& op) {
  if (const auto* r = std::get_if<ReplaceNode>(&op)) {
    graph::Node moved = r->before;
    moved.position = r->after.position;
    return !(moved == r->after);
  }
  return !changesBlocks(op);
}

bool changesBlocks(const GraphOp& op) {
  return std::holds_alternative<InsertBlock>(op) || std::holds_alternative<EraseBlock>(op) ||
         std::holds_alternative<ReplaceBlock>(op);
}

std::vector<GraphOp> blockEdits(const std::vector<graph::Block>& before, const std::vector<graph::Block>& after) {
  std::unordered_set<std::string> kept;
  for (const graph::Block& b : after) kept.insert(b.id);
  std::vector<GraphOp> ops;
  std::vector<graph::Block> current = before;
  for (size_t i = before.size(); i-- > 0;)  // from the back: every index is the block's when erased
    if (!kept.contains(before[i].id)) {
      ops.push_back(EraseBlock{i, before[i]});
      current.erase(current.begin() + std::ptrdiff_t(i));
    }
  for (size_t i = 0; i < current.size(); ++i)
    if (!(current[i] == after[i])) ops.push_back(ReplaceBlock{i, current[i], after[i]});
  for (size_t i = current.size(); i < after.size(); ++i) ops.push_back(InsertBlock{i, after[i]});
  return ops;
}

EditCommand::EditCommand(GraphDocument* document, const QString& text, std::vector<GraphOp> ops)
    : QUndoCommand(text), document_(document), ops_(std::move(ops)) {
  inverse_.reserve(ops_.size());
  for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) inverse_.push_back(inverse(*it));
}

void EditCommand::redo() { document_->apply(ops_); }
void EditCommand::undo() { document_->apply(inverse_); }

}  // namespace plexus::widgets
