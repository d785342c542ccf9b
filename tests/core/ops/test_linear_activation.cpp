// A Linear with its ReLU or GELU fused (ops/linear_activation.h): the same values and gradients
// as linear then the activation (within 1e-6 relative) for shapes of one and many row blocks,
// with and without bias, in a training step and without gradients; a numerical gradient check;
// and the graph compiler's rule (layers/compiler.cpp: GraphModel::fuse_linear_activation),
// which fuses a Linear only where the activation alone reads it and gives the node-by-node
// plan's loss and gradients.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "graph/validate.h"
#include "layers/compiler.h"
#include "ops/linear_activation.h"
#include "plexus.h"
#include "support/check.h"
#include "support/graph_fixture.h"
#include "support/test_support.h"

using namespace plexus;
using namespace plexus::graph;
using namespace plexus::layers;
using testing::cat;
using testing::edge;
using testing::node;

namespace {

struct Case {
  std::vector<int64_t> x_shape;
  int64_t out;
  bool bias;
};

// One row block and a partial one (out 256: 72 rows a block), many blocks on the pool's
// threads, a narrow output (one block), no bias.
std::vector<Case> cases() {
  return {{{3, 50, 64}, 256, true}, {{600, 64}, 256, true}, {{2, 300, 20}, 10, true}, {{97, 33}, 40, false}};
}

// Largest |a − b| over the largest |b|: 0 for equal tensors.
double relative_gap(const Tensor& a, const Tensor& b) {
  const std::vector<float> av = a.to_vector(), bv = b.to_vector();
  double gap = 0, scale = 0;
  for (size_t i = 0; i < av.size(); ++i) {
    gap = std::max(gap, std::fabs(double(av[i]) - bv[i]));
    scale = std::max(scale, std::fabs(double(bv[i])));
  }
  return scale == 0 ? gap : gap / scale;
}

Tensor unfused(const Tensor& x, const Tensor& w, const Tensor& b, Activation act) {
  const Tensor z = linear(x, w, b);
  return act == Activation::Gelu ? gelu(z) : relu(z);
}

}  // namespace

TEST(fusedMatchesUnfusedValuesAndGradients) {
  Generator gen(3);
  for (const Case& c : cases())
    for (const Activation act : {Activation::Relu, Activation::Gelu}) {
      const std::string name = cat("x ", to_string(c.x_shape), " out ", c.out, c.bias ? "" : " no bias",
                                   act == Activation::Gelu ? " gelu" : " relu");
      const Tensor x = randn(c.x_shape, &gen), w = randn({c.out, c.x_shape.back()}, &gen) * 0.2f;
      const Tensor b = c.bias ? randn({c.out}, &gen) : Tensor();
      Shape y_shape = c.x_shape;
      y_shape.back() = c.out;
      const Tensor g = randn(y_shape, &gen);
      std::vector<std::vector<Tensor>> grads;
      std::vector<Tensor> ys;
      for (const bool fused : {true, false}) {
        std::vector<Tensor> leaves{x.detach(), w.detach()};
        if (c.bias) leaves.push_back(b.detach());
        for (Tensor& t : leaves) t.requires_grad_(true);
        const Tensor bias = c.bias ? leaves[2] : Tensor();
        const Tensor y =
            fused ? linear_activation(leaves[0], leaves[1], bias, act) : unfused(leaves[0], leaves[1], bias, act);
        y.backward(g);
        ys.push_back(y.detach());
        grads.emplace_back();
        for (const Tensor& t : leaves) grads.back().push_back(t.grad());
      }
      VERIFY2(relative_gap(ys[0], ys[1]) <= 1e-6, cat(name, ": y differs by ", relative_gap(ys[0], ys[1])));
      for (size_t i = 0; i < grads[0].size(); ++i)
        VERIFY2(relative_gap(grads[0][i], grads[1][i]) <= 1e-6,
                cat(name, ": gradient ", i, " differs by ", relative_gap(grads[0][i], grads[1][i])));
      // Without gradients nothing is kept and the activation runs in place: the same values.
      const Tensor y_eval = linear_activation(x, w, b, act);
      VERIFY2(relative_gap(y_eval, ys[1]) <= 1e-6, cat(name, ": y without gradients differs"));
    }
}

TEST(linearActivationGradcheck) {
  Generator gen(11);
  for (const Activation act : {Activation::Relu, Activation::Gelu}) {
    std::vector<Tensor> inputs{randn({4, 5}, &gen), randn({3, 5}, &gen), randn({3}, &gen)};
    for (Tensor& t : inputs) t.requires_grad_();
    const GradcheckResult r =
        gradcheck([act](const std::vector<Tensor>& v) { return linear_activation(v[0], v[1], v[2], act); }, inputs);
    VERIFY2(r.ok, r.message);
    COMPARE(r.checked, int64_t(4 * 5 + 3 * 5 + 3));
  }
}

TEST(linearActivationShapeErrors) {
  VERIFY_THROWS(ShapeError, linear_activation(zeros({2, 3}), zeros({4, 5}), Tensor(), Activation::Gelu));
  VERIFY_THROWS(ShapeError, linear_activation(zeros({2, 5}), zeros({4, 5}), zeros({3}), Activation::Relu));
  VERIFY_THROWS(ShapeError, linear_activation(zeros({2, 5}), zeros({4}), Tensor(), Activation::Relu));
}

// fc1 → GELU and fc2 → ReLU fuse; fc3's output is read by its ReLU and by an Add, so it does not.
// The fused plan's loss and gradients are the node-by-node plan's, which an observer gets.
TEST(graphFusesLinearWhereOnlyItsActivationReads) {
  Graph g;
  g.nodes = {node("in", "Input"),
             node("fc1", "Linear", {{"out_features", int64_t(16)}}),
             node("g1", "GELU"),
             node("fc2", "Linear", {{"out_features", int64_t(12)}}),
             node("r2", "ReLU"),
             node("fc3", "Linear", {{"out_features", int64_t(12)}}),
             node("r3", "ReLU"),
             node("sum", "Add"),
             node("out", "Linear", {{"out_features", int64_t(3)}}),
             node("loss", "CrossEntropy")};
  g.edges = {edge("in", "x", "fc1"),
             edge("fc1", "output", "g1"),
             edge("g1", "output", "fc2"),
             edge("fc2", "output", "r2"),
             edge("r2", "output", "fc3"),
             edge("fc3", "output", "r3"),
             edge("r3", "output", "sum", "inputs"),
             edge("fc3", "output", "sum", "inputs"),
             edge("sum", "output", "out"),
             edge("out", "output", "loss"),
             edge("in", "y", "loss", "target")};
  const DatasetInfo info{{5}, {}, 3};
  VERIFY(validate(g, &info).ok());
  const CompiledGraph c = compile(g, info, 5);
  COMPARE(c.model->fused_chains(), (std::vector<std::vector<std::string>>{{"fc1", "g1"}, {"fc2", "r2"}}));
  Generator gen(4);
  const Tensor x = randn({7, 5}, &gen), y = from_vector({0, 2, 1, 1, 0, 2, 2}, {7});
  auto loss_and_grads = [&](bool observed) {
    if (observed) c.model->set_observer([](const std::string&, const Tensor&) {});
    for (const Tensor& p : c.model->parameters()) p.set_grad(Tensor());
    const Tensor loss = c.loss((*c.model)(x), y);
    loss.backward();
    c.model->set_observer(nullptr);
    std::vector<Tensor> out{loss.detach()};
    for (const Tensor& p : c.model->parameters()) out.push_back(p.grad());
    return out;
  };
  const std::vector<Tensor> fused = loss_and_grads(false), plain = loss_and_grads(true);
  for (size_t t = 0; t < fused.size(); ++t)
    VERIFY2(relative_gap(fused[t], plain[t]) <= 1e-6,
            cat("tensor ", t, " differs by ", relative_gap(fused[t], plain[t])));
}

// A Linear whose only reader is the loss fuses with nothing, even when the graph's first step is
// a GELU (the reader bookkeeping once took "read by the loss" for "read by step 0").
TEST(linearReadByTheLossAloneIsNotFused) {
  Graph g;
  g.nodes = {node("in", "Input"), node("g0", "GELU"), node("fc", "Linear", {{"out_features", int64_t(3)}}),
             node("loss", "CrossEntropy")};
  g.edges = {edge("in", "x", "g0"), edge("g0", "output", "fc"), edge("fc", "output", "loss"),
             edge("in", "y", "loss", "target")};
  const DatasetInfo info{{5}, {}, 3};
  VERIFY(validate(g, &info).ok());
  const CompiledGraph c = compile(g, info, 5);
  VERIFY(c.model->fused_chains().empty());
  Generator gen(4);
  const Tensor y = (*c.model)(randn({7, 5}, &gen));
  VERIFY(y.defined());
  COMPARE(y.shape(), (Shape{7, 3}));
}
