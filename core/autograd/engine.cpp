// Reverse-mode engine (backward() and autograd::grad): order the recorded nodes topologically
// from the roots, push each node's output gradient through its closure, hand the gradients
// to leaves (accumulated into .grad, or collected by grad()), and free the graph.
#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>

#include "autograd/grad.h"
#include "autograd/grad_mode.h"
#include "autograd/leaf_ready.h"
#include "autograd/node.h"
#include "ops/kernels.h"
#include "ops/ops.h"
#include "util/error.h"
#include "util/out_of_memory.h"

namespace plexus {

namespace {
thread_local bool g_grad_enabled = true;
thread_local LeafReady g_leaf_ready;

// A gradient nothing else refers to (the usual case: a backward closure's fresh result)
// becomes the leaf's .grad as it is; one that may alias other gradients or views is copied.
bool exclusively_owned(const Tensor& g) {
  return g.impl_ptr().use_count() == 1 && g.storage().use_count() == 1 && g.offset() == 0 &&
         g.storage()->numel == g.numel() && g.is_contiguous();
}

void accumulate_leaf(TensorImpl& leaf, Tensor&& g) {
  if (leaf.grad) {
    Tensor(leaf.grad).add_(g);
  } else if (exclusively_owned(g)) {
    leaf.grad = g.impl_ptr();
  } else {
    note_hidden_copy(g.numel());
    leaf.grad = g.clone().impl_ptr();
  }
}

// Reverse post-order of a DFS = every node before the nodes it feeds gradients into.
// Owning pointers: freeing one node's edges must not destroy a node still to be visited.
std::vector<std::shared_ptr<GradNode>> topological_order(const std::vector<std::shared_ptr<GradNode>>& roots) {
  std::vector<std::shared_ptr<GradNode>> post;
  std::unordered_map<GradNode*, bool> visited;
  for (const std::shared_ptr<GradNode>& root : roots) {
    if (visited[root.get()]) continue;
    visited[root.get()] = true;
    std::vector<std::pair<std::shared_ptr<GradNode>, size_t>> stack{{root, 0}};
    while (!stack.empty()) {
      auto& [node, i] = stack.back();
      if (i < node->next.size()) {
        const std::shared_ptr<GradNode>& child = node->next[i++].fn;
        if (child && !visited[child.get()]) {
          visited[child.get()] = true;
          stack.push_back({child, 0});
        }
      } else {
        post.push_back(node);
        stack.pop_back();
      }
    }
  }
  return {post.rbegin(), post.rend()};
}

// What one reverse pass does with the gradients it forms, besides passing them on.
struct Sinks {
  // Every node's total output gradient, before its backward runs (null: not wanted).
  std::function<void(GradNode&, const Tensor&)> at_node;
  // Whether the node's backward runs at all (null: every node's does).
  std::function<bool(GradNode&)> runs;
  // A gradient reaching a leaf.
  std::function<void(TensorImpl&, Tensor&&)> at_leaf;
  // After the node at this index of the order was passed (run or not: no gradient flowed).
  std::function<void(size_t)> after_node;
};

// The reverse pass from nodes `roots[i]` seeded with gradients `seeds[i]`, over `order`
// (topological_order of the roots).
void propagate(const std::vector<std::shared_ptr<GradNode>>& order, const std::vector<std::shared_ptr<GradNode>>& roots,
               const std::vector<Tensor>& seeds, bool retain_graph, const char* who, const Sinks& sinks) {
  // A freed node is an error where it would run, and at a root (a freed root has no edges
  // left, so grad()'s `runs` cannot tell it leads anywhere).
  auto is_root = [&roots](const GradNode& n) {
    return std::any_of(roots.begin(), roots.end(), [&n](const auto& r) { return r.get() == &n; });
  };
  for (const auto& n : order)
    if (n->released && (!sinks.runs || sinks.runs(*n) || is_root(*n)))
      throw AutogradError(std::string(who) + ": trying to backward through the graph a second time (node '" + n->name +
                          "' was freed by the previous backward); pass retain_graph=true the first time");
  std::unordered_map<GradNode*, Tensor> pending;
  for (size_t i = 0; i < roots.size(); ++i) {
    auto [slot, fresh] = pending.try_emplace(roots[i].get(), seeds[i]);
    if (!fresh) slot->second = slot->second + seeds[i];
  }
  std::vector<GradNode*> ran;
  // One node: its gradient (if any flows here) through its closure to its inputs.
  auto pass = [&](const std::shared_ptr<GradNode>& node) {
    auto it = pending.find(node.get());
    if (it == pending.end()) return;  // no gradient flows here
    Tensor g = std::move(it->second);
    pending.erase(it);
    if (sinks.at_node) sinks.at_node(*node, g);
    if (sinks.runs && !sinks.runs(*node)) return;
    Grads grads = node->backward(g);
    ran.push_back(node.get());
    g = Tensor();  // a view of g passed on (reshape's gradient) then owns its storage alone
    for (size_t i = 0; i < node->next.size(); ++i) {
      const GradEdge& e = node->next[i];
      if (!e.connected() || i >= grads.size() || !grads[i].defined()) continue;
      Tensor gi = std::move(grads[i]);
      if (gi.shape() != node->input_shapes[i]) gi = sum_to(gi, node->input_shapes[i]);
      if (e.fn) {
        auto [slot, fresh] = pending.try_emplace(e.fn.get(), gi);
        if (!fresh) slot->second = slot->second + gi;
      } else {
        sinks.at_leaf(*e.leaf, std::move(gi));
      }
    }
    if (!retain_graph) {
      node->backward = nullptr;  // frees saved tensors
      node->released = true;
    }
  };
  for (size_t index = 0; index < order.size(); ++index) {
    try {
      pass(order[index]);
    } catch (OutOfMemoryError& e) {  // says whose gradient ran out
      if (e.op.empty()) e.op = order[index]->name;
      throw;
    }
    if (sinks.after_node) sinks.after_node(index);
  }
  // And the rest of the graph: all of it after backward(); after grad() only what ran, so a
  // part it skipped still has its edges for a later pass.
  if (!retain_graph) {
    if (sinks.runs)
      for (GradNode* node : ran) node->next.clear();
    else
      for (const auto& node : order) node->next.clear();
  }
}
}  // namespace

GradNode::~GradNode() {
  // Children whose last owner is this node are moved to a local stack and freed one at a
  // time after their own edges were taken, so no destructor runs more than one level deep.
  std::vector<std::shared_ptr<GradNode>> orphans;
  auto take_children = [&orphans](std::vector<GradEdge>& edges) {
    for (GradEdge& e : edges)
      if (e.fn && e.fn.use_count() == 1) orphans.push_back(std::move(e.fn));
    edges.clear();
  };
  take_children(next);
  while (!orphans.empty()) {
    std::shared_ptr<GradNode> n = std::move(orphans.back());
    orphans.pop_back();
    take_children(n->next);
  }  // n is destroyed here with no edges left
}

bool GradMode::enabled() { return g_grad_enabled; }
void GradMode::set_enabled(bool on) { g_grad_enabled = on; }

Saved::Saved(const Tensor& t) : t_(t.detach()), version_(t.storage()->version) {}

Tensor Saved::get() const {
  if (t_.defined() && t_.storage()->version != version_)
    throw AutogradError(
        "a tensor needed for backward was modified in place after it was used (storage version " +
        std::to_string(version_) + " -> " + std::to_string(t_.storage()->version) + ")");
  return t_;
}

void record(Tensor& out, const char* name, const std::vector<Tensor>& inputs,
            std::function<Grads(const Tensor&)> backward) {
  auto node = std::make_shared<GradNode>();
  node->name = name;
  node->next.reserve(inputs.size());
  node->input_shapes.reserve(inputs.size());
  for (const Tensor& in : inputs) {
    GradEdge e;
    if (in.defined() && in.requires_grad()) {
      if (in.grad_fn()) e.fn = in.grad_fn();
      else e.leaf = in.impl_ptr();
    }
    node->next.push_back(std::move(e));
    node->input_shapes.push_back(in.defined() ? in.shape() : Shape{});
  }
  node->backward = std::move(backward);
  out.unsafe_impl()->requires_grad = true;
  out.unsafe_impl()->grad_fn = std::move(node);
}

void run_backward(const Tensor& root, const Tensor& grad_output, bool retain_graph) {
  if (!root.requires_grad())
    throw AutogradError("backward(): the tensor does not require grad and has no history");
  Tensor g0 = grad_output;
  if (!g0.defined()) {
    if (root.numel() != 1)
      throw AutogradError("backward(): a gradient is only implicit for a scalar; this tensor has shape " +
                          to_string(root.shape()) + ", pass grad_output of that shape");
    g0 = ones(root.shape(), root.device());
  } else if (g0.shape() != root.shape()) {
    throw ShapeError("backward(): grad_output has shape " + to_string(g0.shape()) + ", expected " +
                     to_string(root.shape()));
  }

  NoGradGuard no_grad;
  if (root.is_leaf()) {
    accumulate_leaf(*root.unsafe_impl(), std::move(g0));
    return;
  }
  const std::vector<std::shared_ptr<GradNode>> roots{root.grad_fn()};
  const std::vector<std::shared_ptr<GradNode>> order = topological_order(roots);
  Sinks sinks{nullptr, nullptr, [](TensorImpl& leaf, Tensor&& g) { accumulate_leaf(leaf, std::move(g)); }, nullptr};
  // A leaf's gradient is final once the last node in the order with an edge to it is passed.
  std::vector<std::vector<TensorImpl*>> final_after;
  if (g_leaf_ready) {
    std::unordered_map<TensorImpl*, size_t> last;
    for (size_t i = 0; i < order.size(); ++i)
      for (const GradEdge& e : order[i]->next)
        if (e.leaf) last[e.leaf.get()] = i;
    final_after.resize(order.size());
    for (const auto& [leaf, i] : last) final_after[i].push_back(leaf);
    // Edges are cleared as nodes are freed; the leaves outlive the pass (the caller holds them).
    sinks.after_node = [&final_after](size_t i) {
      for (TensorImpl* leaf : final_after[i]) g_leaf_ready(*leaf);
    };
  }
  propagate(order, roots, {g0}, retain_graph, "backward()", sinks);
}

LeafReadyGuard::LeafReadyGuard(LeafReady ready) : previous_(std::move(g_leaf_ready)) { g_leaf_ready = std::move(ready); }
LeafReadyGuard::~LeafReadyGuard() { g_leaf_ready = std::move(previous_); }

namespace autograd {

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph, bool allow_unused) {
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size())
    throw ValueError("autograd::grad: " + std::to_string(grad_outputs.size()) + " grad_outputs for " +
                     std::to_string(outputs.size()) + " outputs (give one per output, or none for scalar outputs)");
  // Where each input's gradient arrives: at its node (an op's result) or at its leaf.
  std::unordered_map<const GradNode*, std::vector<size_t>> at_node;
  std::unordered_map<const TensorImpl*, std::vector<size_t>> at_leaf;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& in = inputs[i];
    if (!in.defined() || !in.requires_grad())
      throw AutogradError("autograd::grad: input " + std::to_string(i) +
                          " does not require grad, so no gradient is recorded for it");
    if (in.grad_fn()) at_node[in.grad_fn().get()].push_back(i);
    else at_leaf[in.impl_ptr().get()].push_back(i);
  }
  std::vector<Tensor> result(inputs.size());
  auto add_to = [&result](const std::vector<size_t>& slots, const Tensor& g) {
    for (size_t i : slots) result[i] = result[i].defined() ? result[i] + g : g;
  };

  std::vector<std::shared_ptr<GradNode>> roots;
  std::vector<Tensor> seeds;
  NoGradGuard no_grad;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& out = outputs[o];
    const std::string which = "autograd::grad: output " + std::to_string(o);
    if (!out.defined() || !out.requires_grad()) throw AutogradError(which + " does not require grad and has no history");
    Tensor g = grad_outputs.empty() ? Tensor() : grad_outputs[o];
    if (!g.defined()) {
      if (out.numel() != 1)
        throw AutogradError(which + " has shape " + to_string(out.shape()) +
                            ": a gradient is only implicit for a scalar, pass its grad_output");
      g = ones(out.shape(), out.device());
    } else if (g.shape() != out.shape()) {
      throw ShapeError(which + "'s grad_output has shape " + to_string(g.shape()) + ", expected " +
                       to_string(out.shape()));
    }
    if (out.is_leaf()) {
      if (auto it = at_leaf.find(out.impl_ptr().get()); it != at_leaf.end()) add_to(it->second, g);
      continue;
    }
    roots.push_back(out.grad_fn());
    seeds.push_back(g);
  }
  const std::vector<std::shared_ptr<GradNode>> order = topological_order(roots);
  // Only the nodes that lead to an input run: children come after parents in `order`, so a
  // walk from the back sees every child's answer first.
  std::unordered_map<const GradNode*, bool> leads;  // to an input, through its backward
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    bool l = false;
    for (const GradEdge& e : (*it)->next)
      l = l || (e.fn && (leads[e.fn.get()] || at_node.count(e.fn.get()))) || (e.leaf && at_leaf.count(e.leaf.get()));
    leads[it->get()] = l;
  }
  propagate(order, roots, seeds, retain_graph, "autograd::grad",
            Sinks{[&](GradNode& n, const Tensor& g) {
                    if (auto it = at_node.find(&n); it != at_node.end()) add_to(it->second, g);
                  },
                  [&](GradNode& n) { return leads[&n]; },
                  [&](TensorImpl& leaf, Tensor&& g) {
                    if (auto it = at_leaf.find(&leaf); it != at_leaf.end()) add_to(it->second, g);
                  },
                  nullptr});
  if (!allow_unused)
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!result[i].defined())
        throw AutogradError("autograd::grad: input " + std::to_string(i) + " (shape " + to_string(inputs[i].shape()) +
                            ") is not reached from the outputs; pass allow_unused=true to get an undefined tensor for it");
  return result;
}

}  // namespace autograd

void Tensor::backward(const Tensor& grad_output, bool retain_graph) const {
  run_backward(*this, grad_output, retain_graph);
}

}  // namespace plexus
