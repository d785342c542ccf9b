// Sequence models: layer_norm, causal_softmax, scaled dot-product and multi-head
// self-attention, learned positions, cross-entropy over every position, autograd::grad, and a
// tiny [N, T, V] model trained end to end with accuracy counted per position.
#include "support/check.h"

#include <cmath>
#include <string>
#include <vector>

#include "autograd/grad.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "data/dataloader.h"
#include "data/dataset.h"
#include "nn/layers.h"
#include "ops/ops.h"
#include "optim/adam.h"
#include "train/trainer.h"
#include "util/error.h"

using namespace plexus;

namespace {

using TV = std::vector<Tensor>;

Tensor normal(const Shape& s, uint64_t seed) {
  Generator gen(seed);
  return randn(s, &gen);
}
Tensor normal_leaf(const Shape& s, uint64_t seed) {
  Tensor t = normal(s, seed);
  t.requires_grad_();
  return t;
}

// GRADCHECK(label, f, inputs): one numerical gradient check (autograd/gradcheck.h).
#define GRADCHECK(label, ...)                                                    \
  do {                                                                           \
    const GradcheckResult r_ = gradcheck(__VA_ARGS__);                           \
    VERIFY2(r_.ok, (std::string(label) + ": " + r_.message).c_str());            \
    VERIFY2(r_.checked > 0, (std::string(label) + ": nothing checked").c_str()); \
  } while (0)

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Plain-loop multi-head attention from query [N, T, E] to key and value [N, S, E] with a
// module's weights, torch's layout.
std::vector<float> reference_attention(const nn::MultiheadAttention& m, const Tensor& query, const Tensor& key,
                                       const Tensor& value, int64_t heads, bool causal) {
  const int64_t n = query.shape()[0], t = query.shape()[1], s_len = key.shape()[1], e = query.shape()[2], d = e / heads;
  const std::vector<float> w = m.in_proj_weight.to_vector(), b = m.in_proj_bias.to_vector();
  const std::vector<float> ow = m.out_proj->weight.to_vector(), ob = m.out_proj->bias.to_vector();
  // Part `part` (0 q, 1 k, 2 v) of the in-projection of x [N, L, E], to [N·L, E].
  auto project = [&](const Tensor& x, int64_t part) {
    const std::vector<float> xv = x.to_vector();
    const int64_t rows = int64_t(xv.size()) / e;
    std::vector<double> out(size_t(rows * e));
    for (int64_t p = 0; p < rows; ++p)
      for (int64_t o = 0; o < e; ++o) {
        double s = b[size_t(part * e + o)];
        for (int64_t i = 0; i < e; ++i) s += double(w[size_t((part * e + o) * e + i)]) * xv[size_t(p * e + i)];
        out[size_t(p * e + o)] = s;
      }
    return out;
  };
  const std::vector<double> q = project(query, 0), k = project(key, 1), v = project(value, 2);
  std::vector<double> joined(size_t(n * t * e), 0.0);
  for (int64_t b0 = 0; b0 < n; ++b0)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < t; ++i) {
        std::vector<double> score(size_t(s_len), 0.0);
        double mx = -1e300;
        const int64_t seen = causal ? i + 1 : s_len;
        for (int64_t j = 0; j < seen; ++j) {
          double s = 0;
          for (int64_t c = 0; c < d; ++c) s += q[size_t((b0 * t + i) * e + h * d + c)] * k[size_t((b0 * s_len + j) * e + h * d + c)];
          score[size_t(j)] = s / std::sqrt(double(d));
          mx = std::max(mx, score[size_t(j)]);
        }
        double z = 0;
        for (int64_t j = 0; j < seen; ++j) z += std::exp(score[size_t(j)] - mx);
        for (int64_t j = 0; j < seen; ++j)
          for (int64_t c = 0; c < d; ++c)
            joined[size_t((b0 * t + i) * e + h * d + c)] +=
                std::exp(score[size_t(j)] - mx) / z * v[size_t((b0 * s_len + j) * e + h * d + c)];
      }
  std::vector<float> out(size_t(n * t * e));
  for (int64_t p = 0; p < n * t; ++p)
    for (int64_t o = 0; o < e; ++o) {
      double s = ob[size_t(o)];
      for (int64_t i = 0; i < e; ++i) s += double(ow[size_t(o * e + i)]) * joined[size_t(p * e + i)];
      out[size_t(p * e + o)] = float(s);
    }
  return out;
}

void compare(const std::vector<float>& got, const std::vector<float>& want, double tol, const char* what) {
  COMPARE(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    VERIFY2(std::abs(double(got[i]) - want[i]) <= tol * std::max(1.0, std::abs(double(want[i]))),
            (std::string(what) + ": value " + std::to_string(i) + " is " + std::to_string(got[i]) + ", expected " +
             std::to_string(want[i]))
                .c_str());
}

Tensor floor_of(const Tensor& t) {
  std::vector<float> v = t.to_vector();
  for (float& x : v) x = std::floor(x);
  return from_vector(v, t.shape());
}

}  // namespace

// ---- layer_norm -------------------------------------------------------------------------
TEST(layerNormForwardByHand) {
  // Row [1, 2, 3, 6]: mean 3, biased variance (4 + 1 + 0 + 9) / 4 = 3.5.
  const Tensor x = from_vector({1, 2, 3, 6, -1, -1, 1, 1}, {2, 4});
  const Tensor w = from_vector({1, 2, 0.5f, -1}, {4}), b = from_vector({0, 1, 0, 0.5f}, {4});
  const std::vector<float> y = layer_norm(x, w, b, 1e-5f).to_vector();
  const double k0 = 1 / std::sqrt(3.5 + 1e-5), k1 = 1 / std::sqrt(1 + 1e-5);
  compare(y, {float(-2 * k0), float(-1 * k0 * 2 + 1), 0.f, float(-3 * k0 + 0.5), float(-k1), float(-2 * k1 + 1),
              float(0.5 * k1), float(-k1 + 0.5)},
          1e-6, "layer_norm");
  // Without affine parameters each row has mean 0 and variance 1.
  const std::vector<float> plain = layer_norm(normal({3, 16}, 2) * 5.f + 3.f, Tensor(), Tensor()).to_vector();
  for (int r = 0; r < 3; ++r) {
    double m = 0, v = 0;
    for (int j = 0; j < 16; ++j) m += plain[size_t(r * 16 + j)] / 16.0;
    for (int j = 0; j < 16; ++j) v += std::pow(plain[size_t(r * 16 + j)] - m, 2) / 16.0;
    VERIFY(std::abs(m) < 1e-6);
    VERIFY(std::abs(v - 1) < 1e-4);
  }
}

TEST(layerNormGradients) {
  const Tensor x = normal_leaf({2, 3, 5}, 1), w = normal_leaf({5}, 2), b = normal_leaf({5}, 3);
  GRADCHECK("layer_norm affine", [](const TV& v) { return layer_norm(v[0], v[1], v[2]); }, (TV{x, w, b}));
  GRADCHECK("layer_norm no affine", [](const TV& v) { return layer_norm(v[0], Tensor(), Tensor()); }, (TV{x}));
  GRADCHECK("layer_norm weight only", [](const TV& v) { return layer_norm(v[0], v[1], Tensor()); }, (TV{x, w}));
  // A strided (transposed) input goes through contiguous first.
  const Tensor s = normal_leaf({5, 4}, 4);
  GRADCHECK("layer_norm strided", [](const TV& v) { return layer_norm(v[0].transpose(0, 1), v[1], v[2]); },
            (TV{s, normal_leaf({5}, 5), normal_leaf({5}, 6)}));
}

TEST(layerNormErrors) {
  VERIFY(error_of([] { layer_norm(zeros({2, 4}), ones({3}), Tensor()); }).find("[4]") != std::string::npos);
  nn::LayerNorm ln(8);
  COMPARE(ln.weight.shape(), Shape({8}));
  COMPARE(ln.named_parameters().size(), size_t(2));
  VERIFY(error_of([&] { ln.forward(zeros({2, 3, 4})); }).find("[..., 8]") != std::string::npos);
}

// ---- causal softmax and attention ---------------------------------------------------------
TEST(causalSoftmaxExcludesLaterKeys) {
  const Tensor s = normal({2, 3, 3}, 7);
  const std::vector<float> y = causal_softmax(s).to_vector(), sv = s.to_vector();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 3; ++i) {
      const int64_t base = (b * 3 + i) * 3;
      double z = 0;
      for (int64_t j = 0; j <= i; ++j) z += std::exp(double(sv[size_t(base + j)]));
      for (int64_t j = 0; j < 3; ++j) {
        const double want = j <= i ? std::exp(double(sv[size_t(base + j)])) / z : 0.0;
        VERIFY(std::abs(y[size_t(base + j)] - want) < 1e-6);
        if (j > i) COMPARE(y[size_t(base + j)], 0.f);  // exactly
      }
    }
  GRADCHECK("causal_softmax", [](const TV& v) { return causal_softmax(v[0]); }, (TV{normal_leaf({2, 4, 4}, 8)}));
  VERIFY(error_of([] { causal_softmax(zeros({2, 3})); }).find("[..., T, T]") != std::string::npos);
}

TEST(scaledDotProductAttentionGradients) {
  const Tensor q = normal_leaf({2, 2, 3, 4}, 1), k = normal_leaf({2, 2, 3, 4}, 2), v = normal_leaf({2, 2, 3, 4}, 3);
  for (const bool causal : {false, true})
    GRADCHECK(causal ? "attention causal" : "attention full",
              [causal](const TV& t) { return nn::functional::scaled_dot_product_attention(t[0], t[1], t[2], causal); },
              (TV{q, k, v}));
}

TEST(multiheadAttentionLayoutAndValues) {
  Generator gen(11);
  nn::MultiheadAttention m(8, 2, /*causal=*/true, 0.f, &gen);
  std::vector<std::string> names;
  for (const auto& [name, t] : m.named_parameters()) names.push_back(name + " " + to_string(t.shape()));
  COMPARE(names, (std::vector<std::string>{"in_proj_weight [24, 8]", "in_proj_bias [24]", "out_proj.weight [8, 8]",
                                           "out_proj.bias [8]"}));
  // torch 1.13's init: zero biases, xavier-uniform in_proj_weight (bound sqrt(6 / (8 + 24))).
  for (float b : m.in_proj_bias.to_vector()) COMPARE(b, 0.f);
  for (float b : m.out_proj->bias.to_vector()) COMPARE(b, 0.f);
  for (float w : m.in_proj_weight.to_vector()) VERIFY(std::abs(w) <= std::sqrt(6.f / 32.f));
  // Random biases so their layout is checked too.
  {
    NoGradGuard no_grad;
    m.in_proj_bias.copy_(normal({24}, 12));
    m.out_proj->bias.copy_(normal({8}, 13));
  }
  const Tensor x = normal({2, 5, 8}, 14);
  for (const bool causal : {true, false}) {
    nn::MultiheadAttention other(8, 2, causal, 0.f, &gen);
    {
      NoGradGuard no_grad;
      other.in_proj_weight.copy_(m.in_proj_weight);
      other.in_proj_bias.copy_(m.in_proj_bias);
      other.out_proj->weight.copy_(m.out_proj->weight);
      other.out_proj->bias.copy_(m.out_proj->bias);
    }
    compare(other.forward(x).to_vector(), reference_attention(other, x, x, x, 2, causal), 1e-5,
            causal ? "causal attention" : "attention");
  }
  VERIFY(error_of([] { nn::MultiheadAttention(6, 4); }).find("num_heads") != std::string::npos);
  VERIFY(error_of([&] { m.forward(zeros({2, 8})); }).find("[N, T, 8]") != std::string::npos);
}

// Queries [2, 5, 8] attending to 3 other positions: separate values, and the values the keys.
TEST(crossAttentionValues) {
  Generator gen(15);
  nn::MultiheadAttention m(8, 2, /*causal=*/false, 0.f, &gen);
  {
    NoGradGuard no_grad;
    m.in_proj_bias.copy_(normal({24}, 16));
  }
  const Tensor query = normal({2, 5, 8}, 17), key = normal({2, 3, 8}, 18), value = normal({2, 3, 8}, 19);
  const Tensor out = m.forward(query, key, value);
  COMPARE(out.shape(), Shape({2, 5, 8}));
  compare(out.to_vector(), reference_attention(m, query, key, value, 2, false), 1e-5, "cross-attention");
  compare(m.forward(query, key, key).to_vector(), reference_attention(m, query, key, key, 2, false), 1e-5,
          "cross-attention, values = keys");
  // Self-attention's one fused projection computes what the three separate ones do.
  compare(m.forward(query).to_vector(), m.forward(query, query, query).to_vector(), 1e-5, "self as cross");
  VERIFY(error_of([&] { m.forward(query, key, normal({2, 4, 8}, 20)); }).find("key and value of one shape") !=
         std::string::npos);
  nn::MultiheadAttention causal(8, 2, true, 0.f, &gen);
  VERIFY(error_of([&] { causal.forward(query, key, value); }).find("S = T (causal)") != std::string::npos);
  GRADCHECK("MultiheadAttention cross", [&m](const TV& v) { return m.forward(v[0], v[1], v[2]); },
            (TV{normal_leaf({2, 3, 8}, 21), normal_leaf({2, 2, 8}, 22), normal_leaf({2, 2, 8}, 23), m.in_proj_weight,
                m.in_proj_bias}));
}

// Key lengths attend each example to its first keys alone: the same as cutting its keys there.
TEST(keyLengthsHideThePadding) {
  Generator gen(24);
  for (const bool causal : {false, true}) {
    nn::MultiheadAttention m(8, 2, causal, 0.f, &gen);
    const Tensor x = normal({3, 5, 8}, 25), lengths = from_vector({2, 5, 0}, {3});
    const std::vector<float> padded = m.forward(x, x, x, lengths).to_vector();
    for (int64_t b = 0; b < 3; ++b) {
      const Tensor one = narrow(x, 0, b, 1);
      const int64_t len = std::max<int64_t>(1, int64_t(lengths.to_vector()[size_t(b)]));  // empty: one key
      const Tensor keys = narrow(one, 1, 0, len);
      // Causal, the queries inside the length see what the cut sequence's do (keys j <= i).
      const int64_t queries = causal ? len : 5;
      const std::vector<float> want = (causal ? m.forward(keys) : m.forward(one, keys, keys)).to_vector();
      for (int64_t i = 0; i < queries; ++i)
        for (int64_t j = 0; j < 8; ++j)
          VERIFY2(std::abs(padded[size_t((b * 5 + i) * 8 + j)] - want[size_t(i * 8 + j)]) <= 1e-5f,
                  "example " + std::to_string(b) + ", query " + std::to_string(i));
    }
  }
  nn::MultiheadAttention cross(8, 2, false, 0.f, &gen);
  VERIFY(error_of([&] { cross.forward(normal({2, 3, 8}, 26), normal({2, 4, 8}, 27), normal({2, 4, 8}, 28), zeros({3})); })
             .find("key_lengths [2]") != std::string::npos);
  GRADCHECK("MultiheadAttention key lengths",
            [&cross](const TV& v) { return cross.forward(v[0], v[1], v[2], from_vector({1, 3}, {2})); },
            (TV{normal_leaf({2, 3, 8}, 29), normal_leaf({2, 4, 8}, 30), normal_leaf({2, 4, 8}, 31), cross.in_proj_weight}));
}

TEST(causalMaskHidesTheFuture) {
  Generator gen(21);
  nn::MultiheadAttention m(8, 4, true, 0.f, &gen);
  const Tensor x = normal({2, 6, 8}, 22);
  std::vector<float> changed = x.to_vector();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t j = 0; j < 8; ++j) changed[size_t((b * 6 + 5) * 8 + j)] += 3.f;  // the last position
  const std::vector<float> a = m.forward(x).to_vector(), c = m.forward(from_vector(changed, {2, 6, 8})).to_vector();
  bool last_moved = false;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 6; ++t)
      for (int64_t j = 0; j < 8; ++j) {
        const size_t i = size_t((b * 6 + t) * 8 + j);
        if (t < 5) COMPARE(c[i], a[i]);  // bit-identical
        else last_moved = last_moved || c[i] != a[i];
      }
  VERIFY(last_moved);
  // And the earlier positions get no gradient from the later ones' inputs.
  Tensor xl = x.clone();
  xl.requires_grad_();
  sum(narrow(m.forward(xl), 1, 0, 3)).backward();
  const std::vector<float> g = xl.grad().to_vector();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 3; t < 6; ++t)
      for (int64_t j = 0; j < 8; ++j) COMPARE(g[size_t((b * 6 + t) * 8 + j)], 0.f);
}

TEST(multiheadAttentionGradients) {
  for (const bool causal : {true, false}) {
    Generator gen(31);
    auto m = std::make_shared<nn::MultiheadAttention>(4, 2, causal, 0.f, &gen);
    // Through the module's own parameters, as leaves of the check.
    GRADCHECK(causal ? "MultiheadAttention causal" : "MultiheadAttention",
              [m](const TV& v) { return m->forward(v[0]); },
              (TV{normal_leaf({2, 3, 4}, 32), m->in_proj_weight, m->in_proj_bias, m->out_proj->weight}));
  }
}

TEST(attentionDropoutOnlyWhileTraining) {
  Generator gen(41);
  nn::MultiheadAttention m(4, 1, false, 0.5f, &gen);
  const Tensor x = normal({1, 6, 4}, 42);
  m.eval();
  const std::vector<float> a = m.forward(x).to_vector(), b = m.forward(x).to_vector();
  COMPARE(a, b);
  m.train();
  VERIFY(m.forward(x).to_vector() != a);
}

// ---- positional embedding ------------------------------------------------------------------
TEST(positionalEmbedding) {
  Generator gen(51);
  nn::PositionalEmbedding p(5, 3, &gen);
  COMPARE(p.weight.shape(), Shape({5, 3}));
  const Tensor x = normal({2, 4, 3}, 52);
  const std::vector<float> y = p.forward(x).to_vector(), xv = x.to_vector(), w = p.weight.to_vector();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t j = 0; j < 3; ++j)
        COMPARE(y[size_t((b * 4 + t) * 3 + j)], xv[size_t((b * 4 + t) * 3 + j)] + w[size_t(t * 3 + j)]);
  const std::string e = error_of([&] { p.forward(zeros({1, 6, 3})); });
  VERIFY2(e.find("T = 6") != std::string::npos && e.find("max_len is 5") != std::string::npos, e.c_str());
  GRADCHECK("PositionalEmbedding", [&p](const TV& v) { return p.forward(v[0]); },
            (TV{normal_leaf({2, 4, 3}, 53), p.weight}));
}

// The table of "Attention Is All You Need" (PyTorch's transformer tutorial's), added.
TEST(sinusoidalPositions) {
  nn::SinusoidalPositions p(7, 6);
  COMPARE(p.named_parameters().size(), size_t(0));
  COMPARE(p.pe.shape(), Shape({7, 6}));
  const std::vector<float> pe = p.pe.to_vector();
  for (int64_t pos = 0; pos < 7; ++pos)
    for (int64_t i = 0; i < 3; ++i) {
      const double angle = double(pos) / std::pow(10000.0, 2.0 * double(i) / 6.0);
      COMPARE(pe[size_t(pos * 6 + 2 * i)], float(std::sin(angle)));
      COMPARE(pe[size_t(pos * 6 + 2 * i + 1)], float(std::cos(angle)));
    }
  const Tensor x = normal({2, 4, 6}, 54);
  const std::vector<float> y = p.forward(x).to_vector(), xv = x.to_vector();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t j = 0; j < 6; ++j)
        COMPARE(y[size_t((b * 4 + t) * 6 + j)], xv[size_t((b * 4 + t) * 6 + j)] + pe[size_t(t * 6 + j)]);
  // An odd width: the last column is a sine with no cosine partner.
  nn::SinusoidalPositions odd(3, 5);
  COMPARE(odd.pe.to_vector()[size_t(2 * 5 + 4)], float(std::sin(2.0 / std::pow(10000.0, 4.0 / 5.0))));
  const std::string e = error_of([&] { p.forward(zeros({1, 8, 6})); });
  VERIFY2(e.find("T = 8") != std::string::npos && e.find("max_len is 7") != std::string::npos, e.c_str());
  GRADCHECK("SinusoidalPositions", [&p](const TV& v) { return p.forward(v[0]); }, (TV{normal_leaf({2, 4, 6}, 55)}));
}

// ---- cross-entropy over every position -------------------------------------------------------
TEST(sequenceCrossEntropy) {
  const Tensor logits = normal({2, 3, 4}, 61);
  const Tensor target = from_vector({0, 3, 1, 2, 2, 0}, {2, 3});
  for (const float smoothing : {0.f, 0.2f}) {
    const float flat = cross_entropy(logits.reshape({6, 4}), target.reshape({6}), smoothing).item();
    COMPARE(cross_entropy(logits, target, smoothing).item(), flat);  // the mean over all 6 positions
    const Tensor per = cross_entropy(logits, target, smoothing, Reduction::None);
    COMPARE(per.shape(), Shape({2, 3}));
    COMPARE(per.to_vector(),
            cross_entropy(logits.reshape({6, 4}), target.reshape({6}), smoothing, Reduction::None).to_vector());
    for (const Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None})
      GRADCHECK("cross_entropy [N, T, C] smoothing " + std::to_string(smoothing),
                [target, smoothing, r](const TV& v) { return cross_entropy(v[0], target, smoothing, r); },
                (TV{normal_leaf({2, 3, 4}, 62)}));
  }
  // By hand: one position, log-softmax of [0, ln 3] is [-ln 4, ln 3 - ln 4].
  const Tensor two = from_vector({0.f, std::log(3.f)}, {1, 1, 2});
  VERIFY(std::abs(cross_entropy(two, zeros({1, 1})).item() - std::log(4.f)) < 1e-6);
  VERIFY(std::abs(nll_loss(log_softmax(logits, -1), target).item() - cross_entropy(logits, target).item()) < 1e-6);
  GRADCHECK("nll_loss [N, T, C]", [target](const TV& v) { return nll_loss(v[0], target); },
            (TV{normal_leaf({2, 3, 4}, 63)}));
  const std::string e = error_of([&] { cross_entropy(logits, zeros({2})); });
  VERIFY2(e.find("[2, 3]") != std::string::npos, e.c_str());
  VERIFY(error_of([&] { cross_entropy(logits, full({2, 3}, 4.f)); }).find("class index") != std::string::npos);
}

// ---- autograd::grad ----------------------------------------------------------------------------
TEST(gradEqualsBackwardAndTouchesNoGrad) {
  const Tensor w = normal_leaf({3, 4}, 71), x = normal_leaf({2, 3}, 72);
  auto loss = [&] { return sum(tanh(matmul(x, w)) * 2.f); };
  loss().backward();
  const std::vector<float> gw = w.grad().to_vector(), gx = x.grad().to_vector();
  const std::vector<Tensor> g = autograd::grad({loss()}, {w, x});
  COMPARE(g.size(), size_t(2));
  COMPARE(g[0].to_vector(), gw);
  COMPARE(g[1].to_vector(), gx);
  // The .grad left by backward() is what it was.
  COMPARE(w.grad().to_vector(), gw);
  COMPARE(x.grad().to_vector(), gx);
  // And a leaf that never had one still has none.
  const Tensor fresh = normal_leaf({3}, 73), other = normal_leaf({3}, 74);
  autograd::grad({sum(fresh * other)}, {fresh});
  VERIFY(!fresh.grad().defined());
  VERIFY(!other.grad().defined());
}

TEST(gradOfIntermediateAndSeveralOutputs) {
  const Tensor x = normal_leaf({4}, 81);
  const Tensor h = x * 3.f;         // intermediate
  const Tensor y1 = sum(h * h);      // d/dh = 2h
  const Tensor y2 = h * 5.f;         // vector output, weighted by grad_outputs
  const Tensor r = from_vector({1, -1, 2, 0.5f}, {4});
  const std::vector<Tensor> g = autograd::grad({y1, y2}, {h, x}, {Tensor(), r});
  const std::vector<float> hv = h.to_vector(), rv = r.to_vector();
  for (size_t i = 0; i < 4; ++i) {
    VERIFY(std::abs(g[0].to_vector()[i] - (2 * hv[i] + 5 * rv[i])) < 1e-5);
    VERIFY(std::abs(g[1].to_vector()[i] - 3 * (2 * hv[i] + 5 * rv[i])) < 1e-4);
  }
  VERIFY(!x.grad().defined());
}

TEST(gradUnusedInputs) {
  const Tensor a = normal_leaf({2}, 91), b = normal_leaf({2}, 92);
  const std::string e = error_of([&] { autograd::grad({sum(a * 2.f)}, {a, b}); });
  VERIFY2(e.find("input 1") != std::string::npos && e.find("allow_unused") != std::string::npos, e.c_str());
  const std::vector<Tensor> g = autograd::grad({sum(a * 2.f)}, {a, b}, {}, false, /*allow_unused=*/true);
  COMPARE(g[0].to_vector(), (std::vector<float>{2.f, 2.f}));
  VERIFY(!g[1].defined());
  VERIFY(error_of([&] { autograd::grad({sum(a * b)}, {zeros({2})}); }).find("does not require grad") !=
         std::string::npos);
  VERIFY(error_of([&] { autograd::grad({a * b}, {a}); }).find("grad_output") != std::string::npos);
  // retain_graph keeps the graph for a second call; without it the second call says why.
  const Tensor y = sum(exp(a));
  autograd::grad({y}, {a}, {}, /*retain_graph=*/true);
  autograd::grad({y}, {a});
  VERIFY(error_of([&] { autograd::grad({y}, {a}); }).find("second time") != std::string::npos);
}

// ---- a tiny sequence model trains, its accuracy counted per position ------------------------------
TEST(sequenceModelTrainsPerPosition) {
  // Copy task: the target of each position is its own token (vocabulary 6, T = 5).
  constexpr int64_t kN = 96, kT = 5, kV = 6;
  Generator gen(101);
  const Tensor tokens = floor_of(uniform({kN, kT}, 0.f, float(kV) - 1e-3f, &gen));
  const auto set = std::make_shared<data::TensorDataset>(tokens, tokens);
  data::DataLoaderOptions lo;
  lo.batch_size = 16;
  lo.prefetch = 0;
  data::DataLoader train_loader(set, lo), eval_loader(set, lo);
  nn::Sequential model{std::make_shared<nn::Embedding>(kV, 8, &gen),
                       std::make_shared<nn::PositionalEmbedding>(kT, 8, &gen), std::make_shared<nn::LayerNorm>(8),
                       std::make_shared<nn::MultiheadAttention>(8, 2, true, 0.f, &gen),
                       std::make_shared<nn::Linear>(8, kV, true, &gen)};
  optim::AdamOptions ao;
  ao.lr = 0.02;
  optim::Adam opt(model.parameters(), ao);
  train::TrainerOptions o;
  o.epochs = 15;
  train::Trainer t(model, opt, train_loader, &eval_loader, o);
  const train::RunResult r = t.run();
  VERIFY2(r.status == train::RunStatus::Completed, r.message.c_str());
  const train::EpochEnd& last = r.history.back();
  int64_t total = 0;
  for (int64_t c : last.confusion) total += c;
  COMPARE(total, kN * kT);  // every position counted
  COMPARE(last.classes, kV);
  VERIFY2(last.eval_accuracy > 0.9, std::to_string(last.eval_accuracy));
  VERIFY(last.train_accuracy <= 1.0 && last.train_accuracy > 0.5);
  VERIFY(last.train_loss < r.history.front().train_loss);
}

