// The fused residual op (ops/residual.h: a + dropout(b), and LayerNorm of that sum) against the
// unfused ops: exactly equal in evaluation and with p = 0; with p > 0 against the unfused formula
// with the fused op's own mask, values and gradients (LayerNorm's weight and bias included);
// numerical gradient checks; reproducible masks; LayerNorm's parameter gradients against sums in
// double; and the graph compiler's fused residual steps against the node-by-node plan.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "autograd/grad.h"
#include "autograd/gradcheck.h"
#include "graph/project.h"
#include "layers/compiler.h"
#include "ops/ops.h"
#include "ops/residual.h"
#include "support/check.h"
#include "util/error.h"

using namespace plexus;

namespace {

using check::max_error;

struct Inputs {
  Tensor a, b, weight, bias;
  std::vector<Tensor> all() const { return {a, b, weight, bias}; }
};

// b's entries at least 0.5 away from 0, so a dropped one is told from a kept one by sum - a.
Inputs inputs(const Shape& shape, uint64_t seed) {
  Generator gen(seed);
  const int64_t d = shape.back();
  std::vector<float> b(size_t(numel(shape)));
  std::mt19937 bits{uint32_t(seed)};
  for (float& v : b) v = float(bits() % 2 ? 1 : -1) * (0.5f + float(bits() % 1000) / 1000.f);
  Inputs in{randn(shape, &gen), from_vector(b, shape), randn({d}, &gen), randn({d}, &gen)};
  for (Tensor* t : {&in.a, &in.b, &in.weight, &in.bias}) t->requires_grad_();
  return in;
}

struct Result {
  std::vector<std::vector<float>> values;  // sum, normed, then the gradients of a, b, weight, bias
};

// The gradients of Σ sum·u + Σ normed·v for fixed u and v.
Result gradients(const Inputs& in, const Tensor& sum, const Tensor& normed) {
  Generator gen(99);
  const Tensor u = randn(sum.shape(), &gen), v = randn(sum.shape(), &gen);
  Result r{{sum.to_vector(), normed.to_vector()}};
  for (const Tensor& g : autograd::grad({sum, normed}, in.all(), {u, v})) r.values.push_back(g.to_vector());
  return r;
}

Result fused(const Inputs& in, float p, bool training, Generator* gen) {
  const ResidualOutputs out = residual_dropout(in.a, in.b, p, training, gen, ResidualNorm{in.weight, in.bias, 1e-5f});
  return gradients(in, out.sum, out.normed);
}

// The ops one after another, b scaled by `mask` (a constant).
Result unfused(const Inputs& in, const Tensor& mask) {
  const Tensor sum = in.a + in.b * mask;
  return gradients(in, sum, layer_norm(sum, in.weight, in.bias, 1e-5f));
}

std::string mismatch(const Result& f, const Result& u, double tol) {
  static const char* names[] = {"sum", "normed", "da", "db", "dweight", "dbias"};
  for (size_t i = 0; i < f.values.size(); ++i)
    if (const double e = max_error(f.values[i], u.values[i]); !(e <= tol))
      return std::string(names[i]) + ": error " + std::to_string(e);
  return "";
}

}  // namespace

// Evaluation, and training with p = 0, keep everything: the sum is a + b exactly, and the norm
// and every gradient are those of the unfused ops.
TEST(residualWithoutDropoutIsTheUnfusedOps) {
  const Inputs in = inputs({3, 7, 24}, 1);
  const Result plain = unfused(in, ones({}));
  for (const auto& [p, training] : std::vector<std::pair<float, bool>>{{0.3f, false}, {0.f, true}}) {
    const std::string m = mismatch(fused(in, p, training, nullptr), plain, 0);
    VERIFY2(m.empty(), m + " (p = " + std::to_string(p) + ", training " + std::to_string(training) + ")");
  }
}

// With p > 0 the op's own mask (read off its sum) in the unfused formula gives its values and
// gradients; about p of the values are dropped, the rest scaled by 1/(1-p).
TEST(residualDropoutMatchesTheFormulaWithItsMask) {
  for (const Shape& shape : {Shape{4, 33, 64}, Shape{5, 3}, Shape{1000, 100}}) {
    const Inputs in = inputs(shape, 2);
    const float p = 0.2f;
    Generator gen(3);
    const Result f = fused(in, p, true, &gen);
    std::vector<float> mask(f.values[0].size());
    const std::vector<float> a = in.a.to_vector();
    int64_t dropped = 0;
    for (size_t i = 0; i < mask.size(); ++i) {
      const bool kept = f.values[0][i] != a[i];
      mask[i] = kept ? 1.f / (1.f - p) : 0.f;
      dropped += !kept;
    }
    const std::string m = mismatch(f, unfused(in, from_vector(mask, shape)), 1e-5);
    VERIFY2(m.empty(), m + " for " + to_string(shape));
    if (mask.size() >= 100000) {
      const double rate = double(dropped) / double(mask.size());
      VERIFY2(std::abs(rate - p) < 0.005, "dropped " + std::to_string(rate));
    }
  }
}

// A seed gives the same mask; the next draw a different one; p = 1 drops everything.
TEST(residualDropoutIsReproducible) {
  const Tensor a = zeros({16, 32}), b = ones({16, 32});
  Generator g1(5), g2(5);
  const std::vector<float> first = residual_dropout(a, b, 0.5f, true, &g1).sum.to_vector();
  COMPARE(residual_dropout(a, b, 0.5f, true, &g2).sum.to_vector(), first);
  VERIFY(residual_dropout(a, b, 0.5f, true, &g1).sum.to_vector() != first);
  for (float v : residual_dropout(a, b, 1.f, true, &g1).sum.to_vector()) COMPARE(v, 0.f);
}

TEST(residualDropoutGradcheck) {
  const Inputs in = inputs({3, 5, 6}, 4);
  for (const bool normed : {false, true}) {
    const GradcheckResult r = gradcheck(
        [&](const std::vector<Tensor>& x) {
          Generator gen(6);  // the same mask on every evaluation
          const ResidualOutputs out = residual_dropout(x[0], x[1], 0.3f, true, &gen, ResidualNorm{x[2], x[3], 1e-5f});
          return normed ? out.normed : out.sum;
        },
        in.all());
    VERIFY2(r.ok, r.message);
  }
}

// layer_norm's weight and bias gradients (one pass on the CPU, ops/cpu/layer_norm.cpp) against
// Σ dy·xhat and Σ dy over the rows in double.
TEST(layerNormParameterGradients) {
  const int64_t rows = 300, d = 24;
  Generator gen(9);
  const Tensor x = randn({rows, d}, &gen) * 3.f + 1.f, dy = randn({rows, d}, &gen);
  Tensor w = randn({d}, &gen), bias = randn({d}, &gen);
  w.requires_grad_();
  bias.requires_grad_();
  const std::vector<Tensor> g = autograd::grad({layer_norm(x, w, bias, 1e-5f)}, {w, bias}, {dy});
  const std::vector<float> xv = x.to_vector(), gv = dy.to_vector();
  std::vector<float> gw(size_t(d), 0.f), gb(size_t(d), 0.f);
  std::vector<double> sw(size_t(d), 0.0), sb(size_t(d), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j) mean += xv[size_t(r * d + j)] / double(d);
    for (int64_t j = 0; j < d; ++j) var += std::pow(xv[size_t(r * d + j)] - mean, 2) / double(d);
    for (int64_t j = 0; j < d; ++j) {
      const size_t i = size_t(r * d + j);
      sw[size_t(j)] += gv[i] * (xv[i] - mean) / std::sqrt(var + 1e-5);
      sb[size_t(j)] += gv[i];
    }
  }
  for (int64_t j = 0; j < d; ++j) {
    gw[size_t(j)] = float(sw[size_t(j)]);
    gb[size_t(j)] = float(sb[size_t(j)]);
  }
  VERIFY2(max_error(g[0].to_vector(), gw) < 1e-4, check::show(g[0].to_vector()) + " vs " + check::show(gw));
  VERIFY2(max_error(g[1].to_vector(), gb) < 1e-4, check::show(g[1].to_vector()) + " vs " + check::show(gb));
}

TEST(residualDropoutErrors) {
  const Tensor a = zeros({2, 4});
  VERIFY_THROWS(ShapeError, residual_dropout(a, zeros({2, 5}), 0.1f, true));
  VERIFY_THROWS(ValueError, residual_dropout(a, a, 1.5f, true));
  VERIFY_THROWS(ShapeError, residual_dropout(a, a, 0.1f, true, nullptr, ResidualNorm{zeros({3}), Tensor(), 1e-5f}));
  VERIFY_THROWS(ValueError, residual_dropout(a, a, 0.1f, true, nullptr, ResidualNorm{Tensor(), Tensor(), 0.f}));
}

// The names transformer's four Dropout → Add → LayerNorm steps run fused; in evaluation (no
// dropout) the loss and every parameter's gradient are the node-by-node plan's (an observer's).
TEST(namesTransformerResidualsRunFused) {
  const graph::Graph project =
      graph::load_project(std::filesystem::path(PLEXUS_SOURCE_DIR) / "examples" / "names_transformer.plexus");
  const graph::DatasetInfo info{.input_shape = {32}, .label_shape = {32}, .classes = 54};
  const layers::CompiledGraph c = layers::compile(project, info, 1);
  COMPARE(c.model->fused_chains(), (std::vector<std::vector<std::string>>{{"drop_a1", "add_a1", "norm_m1"},
                                                                          {"drop_m1", "add_m1", "norm_a2"},
                                                                          {"drop_a2", "add_a2", "norm_m2"},
                                                                          {"drop_m2", "add_m2", "norm"},
                                                                          {"mlp_in1", "gelu1"},
                                                                          {"mlp_in2", "gelu2"}}));
  c.model->eval();
  std::mt19937 ids(8);
  auto tokens = [&ids] {
    std::vector<float> t(3 * 32);
    for (float& v : t) v = float(ids() % 54);
    return from_vector(t, {3, 32});
  };
  const Tensor x = tokens(), y = tokens();
  const std::vector<Tensor> params = c.model->parameters();
  auto loss_and_grads = [&](bool observed) {
    if (observed) c.model->set_observer([](const std::string&, const Tensor&) {});
    const Tensor loss = c.loss((*c.model)(x), y);
    c.model->set_observer(nullptr);
    std::vector<std::vector<float>> out{{loss.item()}};
    for (const Tensor& g : autograd::grad({loss}, params)) out.push_back(g.to_vector());
    return out;
  };
  const auto f = loss_and_grads(false), plain = loss_and_grads(true);
  for (size_t t = 0; t < f.size(); ++t) VERIFY2(max_error(f[t], plain[t]) <= 1e-5, "tensor " + std::to_string(t));
}
