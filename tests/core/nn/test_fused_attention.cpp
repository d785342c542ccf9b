// The fused attention op (ops/attention.h: fused_attention, no [T, S] matrix) against the unfused
// composition (attention_weights, then a product): outputs and the gradients of q, k and v
// within 1e-5 in FP32 over causal, padded, cross-attention and odd-sized problems; a numerical
// gradient check of the op; the same for fused_self_attention, which reads the heads straight from
// a packed q/k/v projection; the names transformer training the same fused and unfused; and the
// same comparisons on a CUDA device when there is one.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "autograd/grad.h"
#include "autograd/gradcheck.h"
#include "autograd/node.h"
#include "cuda/cuda.h"
#include "graph/project.h"
#include "layers/compiler.h"
#include "nn/attention.h"
#include "ops/attention.h"
#include "ops/ops.h"
#include "optim/adam.h"
#include "support/check.h"
#include "util/error.h"

using namespace plexus;

namespace {

struct Case {
  std::string name;
  int64_t n, heads, t, s, d;
  bool causal, padded;
};

std::vector<Case> cases() {
  return {{"causal T=32 D=16", 2, 4, 32, 32, 16, true, false},
          {"causal T=200 D=64 (not a tile multiple)", 2, 2, 200, 200, 64, true, false},
          {"non-causal T=70 D=16", 3, 2, 70, 70, 16, false, false},
          {"padded T=90 D=64", 3, 2, 90, 90, 64, false, true},
          {"causal and padded T=75 D=16", 3, 2, 75, 75, 16, true, true},
          {"cross T=33 S=130 D=16", 2, 3, 33, 130, 16, false, false},
          {"cross padded T=129 S=7 D=64", 3, 1, 129, 7, 64, false, true},
          {"odd D=5", 2, 2, 17, 23, 5, false, true}};
}

// Each example's key count: some padded, one past S (no padding), one of 0 (counts as 1).
Tensor lengths_for(const Case& c) {
  std::vector<float> len(size_t(c.n));
  for (int64_t i = 0; i < c.n; ++i) len[size_t(i)] = i == 0 ? float(c.s + 3) : i == 1 ? 0.f : float(c.s / 2 + i);
  return from_vector(len, {c.n});
}

struct Result {
  std::vector<float> out, dq, dk, dv;
};

// Attention of q [N, H, T, D] and k, v [N, H, S, D] on `device`, fused or not, with the gradients
// of sum(out * w) for fixed w.
Result attend(const Case& c, bool fused, Device device) {
  Generator gen(42);
  Tensor q = randn({c.n, c.heads, c.t, c.d}, &gen).to(device), k = randn({c.n, c.heads, c.s, c.d}, &gen).to(device),
         v = randn({c.n, c.heads, c.s, c.d}, &gen).to(device);
  const Tensor w = randn({c.n, c.heads, c.t, c.d}, &gen).to(device);
  for (Tensor* x : {&q, &k, &v}) x->requires_grad_();
  const Tensor lengths = c.padded ? lengths_for(c).to(device) : Tensor();
  nn::functional::set_fused_attention(fused);
  const Tensor out = nn::functional::scaled_dot_product_attention(q, k, v, c.causal, lengths);
  nn::functional::set_fused_attention(true);
  // The path asked for is the one taken: the fused op records one node, the unfused a product.
  if ((std::string(out.grad_fn()->name) == "fused_attention") != fused) return {};
  sum(out * w).backward();
  return {out.to(Device::cpu()).to_vector(), q.grad().to(Device::cpu()).to_vector(),
          k.grad().to(Device::cpu()).to_vector(), v.grad().to(Device::cpu()).to_vector()};
}

using check::max_error;

// Fused against unfused, each result within `tol`; the failure names the case and the tensor.
std::string mismatch(const Case& c, Device fused_on, double tol) {
  const Result f = attend(c, true, fused_on), u = attend(c, false, Device::cpu());
  const std::vector<std::pair<const char*, double>> errors{{"out", max_error(f.out, u.out)},
                                                           {"dq", max_error(f.dq, u.dq)},
                                                           {"dk", max_error(f.dk, u.dk)},
                                                           {"dv", max_error(f.dv, u.dv)}};
  for (const auto& [what, e] : errors)
    if (!(e <= tol)) return c.name + ": " + what + " differs by " + std::to_string(e);
  return "";
}

}  // namespace

TEST(fusedMatchesUnfusedOnTheCpu) {
  for (const Case& c : cases()) {
    const std::string m = mismatch(c, Device::cpu(), 1e-5);
    VERIFY2(m.empty(), m);
  }
}

TEST(fusedMatchesUnfusedOnCuda) {
  if (cuda::device_count() == 0) SKIP("no CUDA device");
  for (const Case& c : cases()) {
    const std::string m = mismatch(c, Device::cuda(0), 1e-5);
    VERIFY2(m.empty(), m);
  }
}

// fused_self_attention of qkv [N, T, 3·H·D] against the unfused composition of its heads copied
// out one by one: out and the gradient of qkv within 1e-5, every self-attention case above.
std::string packed_mismatch(const Case& c, Device device) {
  Generator gen(5);
  const int64_t width = c.heads * c.d;
  Tensor qkv = randn({c.n, c.t, 3 * width}, &gen).to(device);
  const Tensor w = randn({c.n, c.t, width}, &gen).to(device);
  qkv.requires_grad_();
  const Tensor lengths = c.padded ? lengths_for(c).to(device) : Tensor();
  const Tensor packed = fused_self_attention(qkv, c.heads, c.causal, lengths);
  sum(packed * w).backward();
  const std::vector<float> packed_out = packed.to(Device::cpu()).to_vector(),
                           packed_grad = qkv.grad().to(Device::cpu()).to_vector();
  Tensor x = qkv.detach().to(Device::cpu());
  x.requires_grad_();
  const Tensor split = x.view({c.n, c.t, 3, c.heads, c.d}).permute({2, 0, 3, 1, 4});
  auto part = [&split](int64_t i) { return squeeze(narrow(split, 0, i, 1), 0); };
  nn::functional::set_fused_attention(false);
  const Tensor heads = nn::functional::scaled_dot_product_attention(part(0), part(1), part(2), c.causal,
                                                                    c.padded ? lengths_for(c) : Tensor());
  nn::functional::set_fused_attention(true);
  const Tensor unfused = heads.permute({0, 2, 1, 3}).reshape({c.n, c.t, width});
  sum(unfused * w.to(Device::cpu())).backward();
  const double out_error = max_error(packed_out, unfused.to_vector()), grad_error = max_error(packed_grad, x.grad().to_vector());
  if (!(out_error <= 1e-5)) return c.name + ": out differs by " + std::to_string(out_error);
  if (!(grad_error <= 1e-5)) return c.name + ": dqkv differs by " + std::to_string(grad_error);
  return "";
}

TEST(packedSelfAttentionMatchesUnfused) {
  for (const Case& c : cases()) {
    if (c.s != c.t) continue;
    const std::string m = packed_mismatch(c, Device::cpu());
    VERIFY2(m.empty(), m);
  }
}

TEST(packedSelfAttentionMatchesUnfusedOnCuda) {
  if (cuda::device_count() == 0) SKIP("no CUDA device");
  for (const Case& c : cases()) {
    if (c.s != c.t) continue;
    const std::string m = packed_mismatch(c, Device::cuda(0));
    VERIFY2(m.empty(), m);
  }
}

TEST(packedSelfAttentionGradcheck) {
  Generator gen(8);
  for (const bool causal : {false, true}) {
    const Tensor lengths = from_vector({3.f, 5.f}, {2});
    std::vector<Tensor> inputs{randn({2, 5, 3 * 2 * 3}, &gen)};  // 2 heads of 3
    inputs[0].requires_grad_();
    const GradcheckResult r = gradcheck(
        [&](const std::vector<Tensor>& x) { return fused_self_attention(x[0], 2, causal, lengths); }, inputs);
    VERIFY2(r.ok, r.message);
    VERIFY(r.checked == 2 * 5 * 18);
  }
}

TEST(packedSelfAttentionShapeErrors) {
  VERIFY_THROWS(ShapeError, fused_self_attention(zeros({2, 3}), 1, true));                   // no batch dim
  VERIFY_THROWS(ShapeError, fused_self_attention(zeros({2, 3, 12}), 3, true));              // 12 is not 3·3·D
  VERIFY_THROWS(ShapeError, fused_self_attention(zeros({2, 3, 12}), 2, true, zeros({3})));  // one length per example
  VERIFY_THROWS(ShapeError, fused_self_attention(zeros({2, 3, 12}), 0, true));              // no heads
}

// A model's self-attention takes the packed op: no head is copied out.
TEST(multiheadSelfAttentionRunsPacked) {
  Generator gen(4);
  nn::MultiheadAttention m(8, 2, true, 0.f, &gen);
  const Tensor x = randn({2, 5, 8}, &gen);
  const Tensor y = m.forward(x);
  COMPARE(y.shape(), (Shape{2, 5, 8}));
  bool packed = false;
  for (const GradEdge& e : y.grad_fn()->next)
    if (e.fn) packed = packed || std::string(e.fn->name) == "fused_self_attention";
  VERIFY(packed);
}

TEST(fusedAttentionGradcheck) {
  Generator gen(7);
  for (const bool causal : {false, true}) {
    const Tensor lengths = from_vector({3.f, 6.f}, {2});
    std::vector<Tensor> inputs{randn({2, 2, 6, 4}, &gen), randn({2, 2, 6, 4}, &gen), randn({2, 2, 6, 4}, &gen)};
    for (Tensor& x : inputs) x.requires_grad_();
    const GradcheckResult r = gradcheck(
        [&](const std::vector<Tensor>& x) { return fused_attention(x[0], x[1], x[2], causal, lengths); }, inputs);
    VERIFY2(r.ok, r.message);
    VERIFY(r.checked == 3 * 2 * 2 * 6 * 4);
  }
}

TEST(fusedAttentionShapeErrors) {
  const Tensor q = zeros({2, 3, 4}), k = zeros({2, 5, 4});
  VERIFY_THROWS(ShapeError, fused_attention(q, k, k, true));                  // causal needs S = T
  VERIFY_THROWS(ShapeError, fused_attention(q, zeros({2, 5, 3}), k, false));  // D differs
  VERIFY_THROWS(ShapeError, fused_attention(q, k, k, false, zeros({3})));     // one length per example
}

// A model's attention weights (the explain views) stay the unfused path's, and dropout on the
// weights while training takes the unfused path too: both still run.
TEST(dropoutAndWeightsStayUnfused) {
  Generator gen(3);
  const Tensor q = randn({1, 2, 5, 4}, &gen);
  const Tensor w = nn::functional::attention_weights(q, q, true);
  COMPARE(w.shape(), (Shape{1, 2, 5, 5}));
  const Tensor dropped = nn::functional::scaled_dot_product_attention(q, q, q, true, Tensor(), 0.5f, true, &gen);
  const Tensor plain = nn::functional::scaled_dot_product_attention(q, q, q, true);
  VERIFY(max_error(dropped.to_vector(), plain.to_vector()) > 1e-3);
}

// The names transformer (two causal blocks, 4 heads of 16) takes the same first steps fused
// and unfused: the losses of 5 Adam steps agree within 1e-4.
TEST(namesTransformerTrainsTheSameFusedAndUnfused) {
  const graph::Graph project =
      graph::load_project(std::filesystem::path(PLEXUS_SOURCE_DIR) / "examples" / "names_transformer.plexus");
  const graph::DatasetInfo info{.input_shape = {32}, .label_shape = {32}, .classes = 54};
  auto losses = [&](bool fused) {
    nn::functional::set_fused_attention(fused);
    manual_seed(11);  // the residual Dropout layers draw from the default generator: the same masks
    layers::CompiledGraph c = layers::compile(project, info, 1);
    optim::Adam adam(c.model->parameters(), {.lr = 3e-3});
    std::mt19937 ids(11);
    auto tokens = [&ids] {
      std::vector<float> t(8 * 32);
      for (float& v : t) v = float(ids() % 54);
      return from_vector(t, {8, 32});
    };
    const Tensor x = tokens(), y = tokens();  // one batch, learnt by heart
    std::vector<float> out;
    for (int step = 0; step < 5; ++step) {
      const Tensor loss = cross_entropy(c.model->forward(x), y);
      adam.zero_grad();
      loss.backward();
      adam.step();
      out.push_back(loss.item());
    }
    nn::functional::set_fused_attention(true);
    return out;
  };
  const std::vector<float> fused = losses(true), unfused = losses(false);
  VERIFY2(max_error(fused, unfused) < 1e-4, check::show(fused) + " vs " + check::show(unfused));
  VERIFY(fused.back() < fused.front());  // it learns
}
