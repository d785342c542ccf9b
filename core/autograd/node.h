#pragma once
// The recorded graph. Each op that sees an input requiring grad attaches a GradNode to its
// output: one GradEdge per input (to the input's own GradNode, or to the leaf it accumulates
// into) and a backward closure mapping the output's gradient to one gradient per input.
// (Grad-prefixed so they never clash with the model graph's graph::Node and graph::Edge.)
#include <functional>
#include <memory>
#include <vector>

#include "tensor/tensor.h"

namespace plexus {

struct GradEdge {
  std::shared_ptr<GradNode> fn;      // input produced by an op
  std::shared_ptr<TensorImpl> leaf;  // or a leaf that requires grad
  bool connected() const { return fn || leaf; }
};

using Grads = std::vector<Tensor>;  // one per input; undefined = no gradient

struct GradNode {
  const char* name = "";
  std::vector<GradEdge> next;
  std::vector<Shape> input_shapes;  // the engine sums broadcast gradients back to these
  std::function<Grads(const Tensor& grad_output)> backward;
  bool released = false;  // backward ran and freed what it saved

  GradNode() = default;
  GradNode(const GradNode&) = delete;
  GradNode& operator=(const GradNode&) = delete;
  // Frees the nodes only this one keeps alive iteratively (engine.cpp): the default,
  // recursive destruction overflows the stack on a long chain dropped without backward.
  ~GradNode();
};

// A tensor kept for backward. It remembers the storage version at save time so that
// an in-place write in between is reported instead of silently giving wrong gradients.
class Saved {
 public:
  Saved() = default;
  explicit Saved(const Tensor& t);
  Tensor get() const;
  bool defined() const { return t_.defined(); }

 private:
  Tensor t_;
  uint64_t version_ = 0;
};

// True if grad mode is on and any defined argument requires grad.
template <class... T>
bool needs_grad(const T&... ts);

// Attaches `backward` to `out` with edges to `inputs` (undefined inputs are skipped).
void record(Tensor& out, const char* name, const std::vector<Tensor>& inputs,
            std::function<Grads(const Tensor&)> backward);

// Runs reverse mode from `root` (engine.cpp).
void run_backward(const Tensor& root, const Tensor& grad_output, bool retain_graph);

}  // namespace plexus

#include "autograd/grad_mode.h"

namespace plexus {
template <class... T>
bool needs_grad(const T&... ts) {
  return GradMode::enabled() && ((ts.defined() && ts.requires_grad()) || ...);
}
}  // namespace plexus
