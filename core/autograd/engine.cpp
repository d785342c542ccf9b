// Reverse-mode engine: order the recorded nodes topologically from the root, push each
// node's output gradient through its closure, accumulate into inputs, and free the graph.
#include <unordered_map>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "ops/kernels.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus {

namespace {
thread_local bool g_grad_enabled = true;

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
std::vector<std::shared_ptr<GradNode>> topological_order(const std::shared_ptr<GradNode>& root) {
  std::vector<std::shared_ptr<GradNode>> post;
  std::unordered_map<GradNode*, bool> visited;
  std::vector<std::pair<std::shared_ptr<GradNode>, size_t>> stack{{root, 0}};
  visited[root.get()] = true;
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
  return {post.rbegin(), post.rend()};
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
  const std::vector<std::shared_ptr<GradNode>> order = topological_order(root.grad_fn());
  for (const auto& n : order)
    if (n->released)
      throw AutogradError(std::string("backward(): trying to backward through the graph a second time (node '") +
                          n->name + "' was freed by the previous backward); pass retain_graph=true the first time");

  std::unordered_map<GradNode*, Tensor> pending{{order.front().get(), g0}};
  for (const auto& node : order) {
    auto it = pending.find(node.get());
    if (it == pending.end()) continue;  // no gradient flows here
    Tensor g = std::move(it->second);
    pending.erase(it);
    Grads grads = node->backward(g);
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
        accumulate_leaf(*e.leaf, std::move(gi));
      }
    }
    if (!retain_graph) {
      node->backward = nullptr;  // frees saved tensors
      node->released = true;
    }
  }
  if (!retain_graph)
    for (const auto& node : order) node->next.clear();  // and the rest of the graph
}

void Tensor::backward(const Tensor& grad_output, bool retain_graph) const {
  run_backward(*this, grad_output, retain_graph);
}

}  // namespace plexus
