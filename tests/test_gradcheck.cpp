// Gradient checks for every differentiable op of core/ops/ops.h: the gradients backward()
// computes are compared with central differences (autograd/gradcheck.h). docs/ops.md maps
// each op to the test functions below that check it.
//
// Inputs are seeded and small, and stay clear of kinks (relu/abs/clamp thresholds, ties in
// max/min) by more than gradcheck's eps = 3e-3, so a failure means a wrong derivative.
// Every case uses the default GradcheckOptions. GRADCHECK_VERBOSE=1 prints each case with
// its largest |analytical - numerical|.
#include <QtTest>

#include <cmath>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/node.h"
#include "ops/ops.h"

using namespace plexus;

namespace {

using TV = std::vector<Tensor>;

// ---- inputs --------------------------------------------------------------------------------

Tensor leaf(Tensor t) {
  t.requires_grad_();
  return t;
}

// N(0, 1) values, no grad (targets, masks' sources) and as a leaf.
Tensor normal(const Shape& s, uint64_t seed) {
  Generator gen(seed);
  return randn(s, &gen);
}
Tensor normal_leaf(const Shape& s, uint64_t seed) { return leaf(normal(s, seed)); }

// U[lo, hi) leaf: positive inputs for log, sqrt, fractional and negative powers.
Tensor uniform_leaf(const Shape& s, float lo, float hi, uint64_t seed) {
  Generator gen(seed);
  return leaf(uniform(s, lo, hi, &gen));
}

// The values of `t` pushed at least `margin` away from every kink (a leaf).
Tensor avoiding(const Tensor& t, std::initializer_list<float> kinks, float margin = 0.05f) {
  std::vector<float> v = t.to_vector();
  for (float& x : v)
    for (float k : kinks)
      if (std::fabs(x - k) < margin) x = x < k ? k - margin : k + margin;
  return leaf(from_vector(v, t.shape()));
}
Tensor avoiding(const Shape& s, std::initializer_list<float> kinks, uint64_t seed, float margin = 0.05f) {
  return avoiding(normal(s, seed), kinks, margin);
}

// 0.1-spaced distinct values in a random order: no ties or near-ties for max/min, and
// max_pool2d's argmax cannot move under a ±eps perturbation.
std::vector<float> distinct_values(int64_t n, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = 0.1f * float(i - n / 2);
  Generator gen(seed);
  for (int64_t i = n - 1; i > 0; --i) std::swap(v[size_t(i)], v[size_t(gen.next_u64() % uint64_t(i + 1))]);
  return v;
}
Tensor distinct(const Shape& s, uint64_t seed) { return leaf(from_vector(distinct_values(numel(s), seed), s)); }

// Two leaves whose values are all distinct from each other (for maximum/minimum).
std::pair<Tensor, Tensor> distinct_pair(const Shape& sa, const Shape& sb, uint64_t seed) {
  const int64_t na = numel(sa), nb = numel(sb);
  const std::vector<float> v = distinct_values(na + nb, seed);
  return {leaf(from_vector({v.begin(), v.begin() + na}, sa)), leaf(from_vector({v.begin() + na, v.end()}, sb))};
}

// Non-contiguous leaves: a view of another tensor's storage, detached so it has no history
// (gradcheck perturbs the shared storage through the view's strides).
Tensor transposed_leaf(const Tensor& base) { return leaf(base.t().detach()); }            // 2-D, strides (1, n)
Tensor strided_leaf(const Tensor& base, int64_t dim) {                                   // every 2nd element
  return leaf(slice(base, dim, 0, base.size(dim), 2).detach());
}
Tensor permuted_leaf(const Tensor& base, const std::vector<int64_t>& dims) { return leaf(base.permute(dims).detach()); }

// Class indices (float tensors holding whole numbers).
Tensor indices(const std::vector<float>& v) { return from_vector(v, {int64_t(v.size())}); }

// ---- the check -----------------------------------------------------------------------------

GradcheckResult check(const std::string& label, const TensorFunction& f, const TV& inputs,
                      const GradcheckOptions& opt = {}) {
  GradcheckResult r;
  try {
    r = gradcheck(f, inputs, opt);
  } catch (const std::exception& e) {
    r.ok = false;
    r.message = std::string("threw: ") + e.what();
  }
  // gradcheck compares values in row-major order; also insist each gradient has its
  // input's shape (a broadcast gradient not summed back would otherwise slip through
  // whenever the element counts agree).
  for (size_t i = 0; r.ok && i < inputs.size(); ++i) {
    const Tensor& in = inputs[i];
    if (in.requires_grad() && in.grad().defined() && in.grad().shape() != in.shape()) {
      r.ok = false;
      r.message = "input " + std::to_string(i) + " has shape " + to_string(in.shape()) + " but its gradient " +
                  to_string(in.grad().shape());
    }
  }
  if (r.ok && r.checked == 0) {  // nothing required grad: the case would prove nothing
    r.ok = false;
    r.message = "no element was checked";
  }
  r.message = label + ": " + r.message;
  if (std::getenv("GRADCHECK_VERBOSE")) qInfo("%s (max error %.2e)", r.message.c_str(), r.max_error);
  return r;
}

// GRADCHECK(label, f, inputs[, options]) — one case, one line.
#define GRADCHECK(...)                                     \
  do {                                                     \
    const GradcheckResult gc_result_ = check(__VA_ARGS__); \
    QVERIFY2(gc_result_.ok, gc_result_.message.c_str());   \
  } while (0)

std::string dims_str(const std::vector<int64_t>& dims) {
  std::string s = "{";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  s += '}';
  return s;
}

const Reduction kReductions[] = {Reduction::None, Reduction::Sum, Reduction::Mean};
const char* reduction_name(Reduction r) {
  return r == Reduction::None ? "None" : r == Reduction::Sum ? "Sum" : "Mean";
}

// y = 3x whose recorded backward returns 2g (wrong) or 3g (right).
Tensor triple(const Tensor& x, float backward_factor) {
  Tensor out = mul(x.detach(), 3.f);
  if (needs_grad(x))
    record(out, "triple", {x}, [backward_factor](const Tensor& g) -> Grads { return {g * backward_factor}; });
  return out;
}

}  // namespace

class TestGradcheck : public QObject {
  Q_OBJECT

 private slots:
  // ---- the checker itself ----
  void gradcheckCatchesWrongDerivative() {
    const Tensor x = normal_leaf({2, 3}, 1);
    const GradcheckResult wrong = gradcheck([](const TV& v) { return triple(v[0], 2.f); }, {x});
    QVERIFY2(!wrong.ok, "a backward returning 2g for y = 3x must fail the check");
    QVERIFY2(wrong.message.find("analytical") != std::string::npos, wrong.message.c_str());
    QVERIFY(wrong.max_error > 0.5);
    // The same op with the right backward passes: the failure above is the derivative's.
    GRADCHECK("triple (correct backward)", [](const TV& v) { return triple(v[0], 3.f); }, {x});
    // A function whose output has no history is reported, not silently passed.
    const GradcheckResult detached = gradcheck([](const TV& v) { return v[0].detach() * 2.f; }, {x});
    QVERIFY(!detached.ok);
  }

  // ---- elementwise arithmetic ----
  void arithmetic() {
    const Tensor a = normal_leaf({2, 3}, 1), b = normal_leaf({2, 3}, 2);
    const Tensor d = avoiding({2, 3}, {0.f}, 3, 0.3f);  // divisors: |d| >= 0.3
    const Tensor p = uniform_leaf({2, 3}, 0.5f, 2.f, 4);
    GRADCHECK("add", [](const TV& v) { return add(v[0], v[1]); }, {a, b});
    GRADCHECK("sub", [](const TV& v) { return sub(v[0], v[1]); }, {a, b});
    GRADCHECK("mul", [](const TV& v) { return mul(v[0], v[1]); }, {a, b});
    GRADCHECK("div", [](const TV& v) { return div(v[0], v[1]); }, {a, d});
    GRADCHECK("neg", [](const TV& v) { return neg(v[0]); }, {a});
    GRADCHECK("add scalar", [](const TV& v) { return add(v[0], 1.5f); }, {a});
    GRADCHECK("mul scalar", [](const TV& v) { return mul(v[0], -2.5f); }, {a});
    GRADCHECK("tensor operators", [](const TV& v) { return -(v[0] + v[1]) * v[0] - v[1] / v[2]; }, {a, b, d});
    GRADCHECK("scalar operators",
              [](const TV& v) { return ((v[0] - 0.5f) * 3.f + (1.f - v[0]) / 4.f + 2.f) + 2.f * v[0] + 2.f / v[1]; },
              {a, p});
    // Only one side requires grad: the other gets no gradient and is not perturbed.
    const Tensor c = normal({2, 3}, 5);
    GRADCHECK("mul, only a requires grad", [c](const TV& v) { return mul(v[0], c); }, {a});
    GRADCHECK("div, only the divisor requires grad", [c](const TV& v) { return div(c, v[0]); }, {d});
    GRADCHECK("sub, only b requires grad", [c](const TV& v) { return sub(c, v[0]); }, {b});
  }

  void broadcasting() {
    struct Case {
      Shape a, b;
    };
    const Case cases[] = {{{3, 1, 4}, {2, 1}}, {{4}, {3, 4}}, {{2, 3}, {}}, {{2, 1}, {1, 3}}, {{1}, {2, 2}}};
    const std::pair<const char*, TensorFunction> smooth[] = {
        {"add", [](const TV& v) { return add(v[0], v[1]); }},
        {"sub", [](const TV& v) { return sub(v[0], v[1]); }},
        {"mul", [](const TV& v) { return mul(v[0], v[1]); }},
        {"div", [](const TV& v) { return div(v[0], v[1]); }},
    };
    const std::pair<const char*, TensorFunction> extrema[] = {
        {"maximum", [](const TV& v) { return maximum(v[0], v[1]); }},
        {"minimum", [](const TV& v) { return minimum(v[0], v[1]); }},
    };
    uint64_t seed = 10;
    for (const Case& c : cases) {
      const std::string shapes = std::string(" ") + to_string(c.a) + " with " + to_string(c.b);
      for (const auto& [name, f] : smooth) {
        // Both sides stay |v| >= 0.3 so that either can be the divisor.
        const Tensor a = avoiding(c.a, {0.f}, ++seed, 0.3f), b = avoiding(c.b, {0.f}, ++seed, 0.3f);
        GRADCHECK(name + shapes, f, {a, b});
        GRADCHECK(name + std::string(" (swapped)") + shapes, f, {b, a});
      }
      for (const auto& [name, f] : extrema) {
        const auto [a, b] = distinct_pair(c.a, c.b, ++seed);
        GRADCHECK(name + shapes, f, {a, b});
        GRADCHECK(name + std::string(" (swapped)") + shapes, f, {b, a});
      }
    }
    // Broadcasting inside a longer expression: a gradient reaching a leaf through several
    // broadcasts is summed back to its own shape each time.
    // Many dims, permuted operands: the strided loop's dim merging and broadcasting at once.
    const Tensor p5 = permuted_leaf(normal({2, 1, 3, 2, 2}, 33), {4, 2, 0, 1, 3});  // [2, 3, 2, 1, 2]
    const Tensor q3 = transposed_leaf(normal({2, 3}, 34)).unsqueeze(0).detach().requires_grad_();  // [1, 3, 2]
    GRADCHECK("mul 5-D permuted with 3-D transposed", [](const TV& v) { return v[0] * v[1] + v[1]; }, {p5, q3});
    const Tensor row = normal_leaf({4}, 30), col = normal_leaf({3, 1}, 31), s = normal_leaf({}, 32);
    GRADCHECK("chained broadcasts", [](const TV& v) { return (v[0] * v[1] + v[2]) * v[0] - v[1] / (v[2] * v[2] + 1.f); },
              {row, col, s});
  }

  void powExponents() {
    const Tensor pos = uniform_leaf({2, 3}, 0.5f, 2.f, 1);
    for (float e : {2.f, 3.f, 0.5f, 1.5f, 1.f / 3.f, -1.f, -2.5f, 0.f})
      GRADCHECK("pow(positive, " + std::to_string(e) + ")", [e](const TV& v) { return pow(v[0], e); }, {pos});
    // Integer exponents are defined for negative bases too.
    const Tensor any = normal_leaf({2, 3}, 2);
    for (float e : {1.f, 2.f, 3.f, 4.f})
      GRADCHECK("pow(any sign, " + std::to_string(e) + ")", [e](const TV& v) { return pow(v[0], e); }, {any});
  }

  // ---- elementwise functions ----
  void smoothFunctions() {
    const Tensor x = normal_leaf({3, 4}, 1), pos = uniform_leaf({3, 4}, 0.3f, 3.f, 2);
    GRADCHECK("exp", [](const TV& v) { return exp(v[0]); }, {x});
    GRADCHECK("log", [](const TV& v) { return log(v[0]); }, {pos});
    GRADCHECK("sqrt", [](const TV& v) { return sqrt(v[0]); }, {pos});
    GRADCHECK("sigmoid", [](const TV& v) { return sigmoid(v[0]); }, {x});
    GRADCHECK("tanh", [](const TV& v) { return tanh(v[0]); }, {x});
    GRADCHECK("gelu", [](const TV& v) { return gelu(v[0]); }, {x});
    const Tensor wide = leaf(normal({3, 4}, 3) * 4.f);  // both sigmoid branches, saturated tails
    GRADCHECK("sigmoid (wide range)", [](const TV& v) { return sigmoid(v[0]); }, {wide});
    GRADCHECK("tanh (wide range)", [](const TV& v) { return tanh(v[0]); }, {wide});
    GRADCHECK("gelu (wide range)", [](const TV& v) { return gelu(v[0]); }, {wide});
  }

  void softplusBeta() {
    const Tensor x = normal_leaf({3, 4}, 1);
    GRADCHECK("softplus", [](const TV& v) { return softplus(v[0]); }, {x});
    GRADCHECK("softplus beta=2", [](const TV& v) { return softplus(v[0], 2.f); }, {x});
    GRADCHECK("softplus beta=0.5", [](const TV& v) { return softplus(v[0], 0.5f); }, {x});
    // Above threshold/beta softplus is the identity (a small jump in value there, as in
    // PyTorch): inputs on both sides of x = 2, away from it.
    const Tensor around = avoiding(normal({3, 4}, 2) * 2.f + 1.5f, {2.f}, 0.1f);
    GRADCHECK("softplus beta=0.5 threshold=1", [](const TV& v) { return softplus(v[0], 0.5f, 1.f); }, {around});
  }

  void piecewiseFunctions() {
    const Tensor x = avoiding({3, 4}, {0.f}, 1);
    GRADCHECK("abs", [](const TV& v) { return abs(v[0]); }, {x});
    GRADCHECK("relu", [](const TV& v) { return relu(v[0]); }, {x});
    GRADCHECK("leaky_relu", [](const TV& v) { return leaky_relu(v[0]); }, {x});
    GRADCHECK("leaky_relu slope=0.2", [](const TV& v) { return leaky_relu(v[0], 0.2f); }, {x});
    const Tensor c = avoiding({4, 5}, {-0.5f, 0.3f}, 2);
    GRADCHECK("clamp lo", [](const TV& v) { return clamp(v[0], -0.5f, std::nullopt); }, {c});
    GRADCHECK("clamp hi", [](const TV& v) { return clamp(v[0], std::nullopt, 0.3f); }, {c});
    GRADCHECK("clamp lo and hi", [](const TV& v) { return clamp(v[0], -0.5f, 0.3f); }, {c});
  }

  // ---- selection ----
  void maximumMinimum() {
    const auto [a, b] = distinct_pair({3, 4}, {3, 4}, 1);
    GRADCHECK("maximum", [](const TV& v) { return maximum(v[0], v[1]); }, {a, b});
    GRADCHECK("minimum", [](const TV& v) { return minimum(v[0], v[1]); }, {a, b});
    // Against a constant: only the tensor side is checked.
    const Tensor zero = zeros({});
    const Tensor x = avoiding({3, 4}, {0.f}, 2);
    GRADCHECK("maximum with a constant 0", [zero](const TV& v) { return maximum(v[0], zero); }, {x});
    GRADCHECK("minimum with a constant 0", [zero](const TV& v) { return minimum(zero, v[0]); }, {x});
  }

  void whereMaskedFill() {
    const Tensor cond = from_vector({1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1}, {3, 4});
    const Tensor a = normal_leaf({3, 4}, 1), b = normal_leaf({3, 4}, 2);
    GRADCHECK("where", [cond](const TV& v) { return where(cond, v[0], v[1]); }, {a, b});
    const Tensor ccol = from_vector({1, 0, 1}, {3, 1});
    const Tensor brow = normal_leaf({4}, 3), s = normal_leaf({}, 4);
    GRADCHECK("where broadcast [3,1] ? [3,4] : [4]", [ccol](const TV& v) { return where(ccol, v[0], v[1]); },
              {a, brow});
    GRADCHECK("where broadcast [3,4] ? [] : [4]", [cond](const TV& v) { return where(cond, v[0], v[1]); },
              {s, brow});
    GRADCHECK("where, only b requires grad", [cond, c = normal({3, 4}, 9)](const TV& v) { return where(cond, c, v[0]); },
              {b});
    GRADCHECK("masked_fill", [cond](const TV& v) { return masked_fill(v[0], cond, -1.f); }, {a});
    const Tensor mrow = from_vector({0, 1, 1, 0}, {4});
    GRADCHECK("masked_fill broadcast mask [4]", [mrow](const TV& v) { return masked_fill(v[0], mrow, 2.f); }, {a});
    const Tensor big = from_vector({1, 0, 0, 1, 0, 1, 1, 0}, {2, 1, 4});
    GRADCHECK("masked_fill mask [2,1,4] widens [3,4]", [big](const TV& v) { return masked_fill(v[0], big, 0.f); }, {a});
  }

  // ---- reductions ----
  void sumMeanOverDims() {
    const Tensor x = normal_leaf({2, 3, 4}, 1);
    const std::vector<std::vector<int64_t>> dims_list = {{0}, {1}, {2}, {-1}, {0, 2}, {1, 2}, {-3, -2}, {0, 1, 2}, {}};
    for (const auto& dims : dims_list)
      for (bool keep : {false, true}) {
        const std::string cfg = dims_str(dims) + (keep ? " keepdim" : "");
        GRADCHECK("sum " + cfg, [dims, keep](const TV& v) { return sum(v[0], dims, keep); }, {x});
        GRADCHECK("mean " + cfg, [dims, keep](const TV& v) { return mean(v[0], dims, keep); }, {x});
      }
    GRADCHECK("Tensor::sum / Tensor::mean", [](const TV& v) { return v[0].sum({1}) * v[0].mean({0, 1}, true).squeeze(0); },
              {x});
  }

  void maxMinOverDims() {
    const Tensor x = distinct({2, 3, 4}, 1);
    const std::vector<std::vector<int64_t>> dims_list = {{0}, {1}, {2}, {-1}, {0, 2}, {1, 2}, {0, 1, 2}, {}};
    for (const auto& dims : dims_list)
      for (bool keep : {false, true}) {
        const std::string cfg = dims_str(dims) + (keep ? " keepdim" : "");
        GRADCHECK("max " + cfg, [dims, keep](const TV& v) { return max(v[0], dims, keep); }, {x});
        GRADCHECK("min " + cfg, [dims, keep](const TV& v) { return min(v[0], dims, keep); }, {x});
      }
  }

  void sumToShapes() {
    const Tensor x = normal_leaf({2, 3, 4}, 1);
    for (const Shape& s : {Shape{3, 4}, Shape{3, 1}, Shape{1, 1, 4}, Shape{2, 1, 1}, Shape{4}, Shape{}, Shape{2, 3, 4}})
      GRADCHECK("sum_to " + to_string(s), [s](const TV& v) { return sum_to(v[0], s); }, {x});
  }

  // ---- linear algebra ----
  void matmulShapes() {
    struct Case {
      const char* name;
      Shape a, b;
    };
    const Case cases[] = {
        {"1-D . 1-D", {4}, {4}},
        {"1-D . 2-D", {3}, {3, 4}},
        {"2-D . 1-D", {2, 3}, {3}},
        {"2-D . 2-D", {2, 3}, {3, 4}},
        {"3-D . 3-D batched", {2, 2, 3}, {2, 3, 4}},
        {"2-D . 3-D broadcast batch", {2, 3}, {3, 3, 2}},
        {"3-D . 2-D broadcast batch", {3, 2, 3}, {3, 2}},
        {"4-D . 3-D broadcast batch", {2, 1, 2, 3}, {3, 3, 2}},
        {"3-D . 1-D", {2, 2, 3}, {3}},
        {"1-D . 3-D", {3}, {2, 3, 2}},
        {"outer dims of size 1", {1, 3}, {3, 1}},
    };
    uint64_t seed = 1;
    for (const Case& c : cases) {
      const Tensor a = normal_leaf(c.a, ++seed), b = normal_leaf(c.b, ++seed);
      GRADCHECK(std::string("matmul ") + c.name, [](const TV& v) { return matmul(v[0], v[1]); }, {a, b});
    }
    const Tensor a = normal_leaf({2, 3}, 50);
    const Tensor w = normal({3, 4}, 51);
    GRADCHECK("matmul, only a requires grad", [w](const TV& v) { return matmul(v[0], w); }, {a});
    GRADCHECK("matmul, only b requires grad", [w](const TV& v) { return matmul(w.t().narrow(1, 0, 2), v[0]); }, {a});
  }

  void linearLayerOp() {
    // y = x·Wᵀ + b as one product: every input, with and without bias, 1-D and batched x,
    // a transposed (non-contiguous) x and weight, and inputs that need no gradient.
    const Tensor x = normal_leaf({4, 3}, 60), w = normal_leaf({5, 3}, 61), b = normal_leaf({5}, 62);
    GRADCHECK("linear", [](const TV& v) { return linear(v[0], v[1], v[2]); }, {x, w, b});
    GRADCHECK("linear without bias", [](const TV& v) { return linear(v[0], v[1]); }, {x, w});
    GRADCHECK("linear, 1-D input", [](const TV& v) { return linear(v[0], v[1], v[2]); }, {normal_leaf({3}, 63), w, b});
    GRADCHECK("linear, [2, 2, 3] input", [](const TV& v) { return linear(v[0], v[1], v[2]); },
              {normal_leaf({2, 2, 3}, 64), w, b});
    GRADCHECK("linear, transposed input and weight", [](const TV& v) { return linear(v[0], v[1], v[2]); },
              {transposed_leaf(normal({3, 4}, 65)), transposed_leaf(normal({3, 5}, 66)), b});
    const Tensor xc = normal({4, 3}, 67);
    GRADCHECK("linear, input constant", [xc](const TV& v) { return linear(xc, v[0], v[1]); }, {w, b});
    GRADCHECK("linear, only the input", [w = normal({5, 3}, 68)](const TV& v) { return linear(v[0], w); }, {x});
  }

  void matmulTransposedViews() {
    // Transposed leaves go to BLAS with the transpose flag (no copy).
    const Tensor at = transposed_leaf(normal({3, 2}, 1));  // [2, 3], strides (1, 2)
    const Tensor bt = transposed_leaf(normal({4, 3}, 2));  // [3, 4], strides (1, 3)
    const Tensor a = normal_leaf({2, 3}, 3), b = normal_leaf({3, 4}, 4);
    GRADCHECK("matmul(Aᵀ leaf, B)", [](const TV& v) { return matmul(v[0], v[1]); }, {at, b});
    GRADCHECK("matmul(A, Bᵀ leaf)", [](const TV& v) { return matmul(v[0], v[1]); }, {a, bt});
    GRADCHECK("matmul(Aᵀ leaf, Bᵀ leaf)", [](const TV& v) { return matmul(v[0], v[1]); }, {at, bt});
    // Transposes taken inside the function (backward goes through the transpose view).
    const Tensor c = normal_leaf({3, 2}, 5), d = normal_leaf({4, 3}, 6);
    GRADCHECK("matmul(c.t(), d.t())", [](const TV& v) { return matmul(v[0].t(), v[1].t()); }, {c, d});
    const Tensor e = normal_leaf({2, 3, 2}, 7), f = normal_leaf({2, 4, 3}, 8);
    GRADCHECK("batched matmul of transposed views",
              [](const TV& v) { return matmul(v[0].transpose(1, 2), v[1].transpose(-1, -2)); }, {e, f});
    GRADCHECK("matmul(1-D, Bᵀ leaf)", [](const TV& v) { return matmul(v[0], v[1]); }, {normal_leaf({3}, 9), bt});
    GRADCHECK("matmul(Aᵀ leaf, 1-D)", [](const TV& v) { return matmul(v[0], v[1]); }, {at, normal_leaf({3}, 10)});
    // A stride-2 operand BLAS cannot read directly (copied first).
    const Tensor s = strided_leaf(normal({2, 6}, 11), 1);  // [2, 3], strides (6, 2)
    GRADCHECK("matmul(strided leaf, B)", [](const TV& v) { return matmul(v[0], v[1]); }, {s, b});
    // An expanded (stride-0) batch operand and a leaf used on both sides.
    GRADCHECK("matmul(expand(a), b) batch of 3",
              [](const TV& v) { return matmul(v[0].expand({3, 2, 3}), v[1]); }, {a, b});
    // Batch dims that are not outermost in memory, and k = 1 (outer product).
    const Tensor pb = permuted_leaf(normal({2, 3, 4}, 13), {1, 0, 2});  // [3, 2, 4], batch stride 4
    const Tensor pc = permuted_leaf(normal({4, 3, 2}, 14), {1, 0, 2});  // [3, 4, 2]
    GRADCHECK("matmul of batch-permuted leaves", [](const TV& v) { return matmul(v[0], v[1]); }, {pb, pc});
    GRADCHECK("matmul of batch-permuted transposed views",
              [](const TV& v) { return matmul(v[1].transpose(1, 2), v[0].transpose(1, 2)); }, {pb, pc});
    GRADCHECK("matmul k = 1 (outer product)", [](const TV& v) { return matmul(v[0], v[1]); },
              {normal_leaf({3, 1}, 15), transposed_leaf(normal({4, 1}, 16))});
    const Tensor s1 = strided_leaf(normal({6}, 17), 0);  // [3], stride 2
    GRADCHECK("matmul(strided 1-D, B)", [](const TV& v) { return matmul(v[0], v[1]); }, {s1, b});
    GRADCHECK("matmul(Aᵀ leaf, strided 1-D)", [](const TV& v) { return matmul(v[0], v[1]); }, {at, s1});
    const Tensor sq = normal_leaf({3, 3}, 12);
    GRADCHECK("matmul(x, x)", [](const TV& v) { return matmul(v[0], v[0]); }, {sq});
    GRADCHECK("matmul(x, xᵀ)", [](const TV& v) { return matmul(v[0], v[0].t()); }, {sq});
  }

  // ---- shape ----
  void reshapeAndView() {
    const Tensor x = normal_leaf({2, 3, 4}, 1);
    GRADCHECK("reshape [6,4]", [](const TV& v) { return reshape(v[0], {6, 4}); }, {x});
    GRADCHECK("reshape [4,-1]", [](const TV& v) { return reshape(v[0], {4, -1}); }, {x});
    GRADCHECK("Tensor::reshape [24]", [](const TV& v) { return v[0].reshape({24}); }, {x});
    GRADCHECK("view [2,12]", [](const TV& v) { return view(v[0], {2, 12}); }, {x});
    GRADCHECK("view [-1]", [](const TV& v) { return view(v[0], {-1}); }, {x});
    GRADCHECK("view [2,3,2,2]", [](const TV& v) { return v[0].view({2, 3, 2, 2}); }, {x});
    // A transposed input: view splits a dim in place, reshape has to copy.
    GRADCHECK("view of a transpose [3,2,2,2]", [](const TV& v) { return view(v[0].transpose(0, 1), {3, 2, 2, 2}); }, {x});
    GRADCHECK("reshape of a transpose (copy) [6,4]", [](const TV& v) { return reshape(v[0].transpose(0, 1), {6, 4}); },
              {x});
    GRADCHECK("flatten", [](const TV& v) { return flatten(v[0]); }, {x});
    GRADCHECK("flatten(1)", [](const TV& v) { return flatten(v[0], 1); }, {x});
    GRADCHECK("flatten(0, 1)", [](const TV& v) { return v[0].flatten(0, 1); }, {x});
  }

  void squeezeUnsqueeze() {
    const Tensor x = normal_leaf({2, 1, 3, 1}, 1);
    GRADCHECK("squeeze()", [](const TV& v) { return squeeze(v[0]); }, {x});
    GRADCHECK("squeeze(1)", [](const TV& v) { return squeeze(v[0], 1); }, {x});
    GRADCHECK("squeeze(-1)", [](const TV& v) { return v[0].squeeze(-1); }, {x});
    GRADCHECK("squeeze(0) of a non-1 dim (identity)", [](const TV& v) { return squeeze(v[0], 0) * 2.f; }, {x});
    GRADCHECK("squeeze() of [1,1] to 0-d", [](const TV& v) { return squeeze(v[0]); }, {normal_leaf({1, 1}, 3)});
    const Tensor y = normal_leaf({2, 3}, 2);
    GRADCHECK("unsqueeze(0)", [](const TV& v) { return unsqueeze(v[0], 0); }, {y});
    GRADCHECK("unsqueeze(1)", [](const TV& v) { return unsqueeze(v[0], 1); }, {y});
    GRADCHECK("unsqueeze(-1)", [](const TV& v) { return v[0].unsqueeze(-1); }, {y});
  }

  void transposePermute() {
    const Tensor x = normal_leaf({2, 3, 4}, 1);
    GRADCHECK("transpose(0, 2)", [](const TV& v) { return transpose(v[0], 0, 2); }, {x});
    GRADCHECK("transpose(-1, -2)", [](const TV& v) { return transpose(v[0], -1, -2); }, {x});
    GRADCHECK("t()", [](const TV& v) { return v[0].t(); }, {normal_leaf({3, 4}, 2)});
    GRADCHECK("permute {2,0,1}", [](const TV& v) { return permute(v[0], {2, 0, 1}); }, {x});
    GRADCHECK("permute {1,2,0} then mul", [](const TV& v) { return v[0].permute({1, 2, 0}) * v[0].permute({1, 2, 0}); },
              {x});
  }

  void expandNarrowSlice() {
    const Tensor col = normal_leaf({3, 1}, 1);
    GRADCHECK("expand [3,1] -> [2,3,4]", [](const TV& v) { return expand(v[0], {2, 3, 4}); }, {col});
    GRADCHECK("expand [3,1] -> [-1,5]", [](const TV& v) { return v[0].expand({-1, 5}); }, {col});
    GRADCHECK("expand [4] -> [3,4]", [](const TV& v) { return expand(v[0], {3, 4}); }, {normal_leaf({4}, 2)});
    const Tensor x = normal_leaf({3, 6}, 3);
    GRADCHECK("narrow(1, 1, 3)", [](const TV& v) { return narrow(v[0], 1, 1, 3); }, {x});
    GRADCHECK("narrow(0, -2, 2)", [](const TV& v) { return v[0].narrow(0, -2, 2); }, {x});
    GRADCHECK("slice(1, 0, 6, 2)", [](const TV& v) { return slice(v[0], 1, 0, 6, 2); }, {x});
    GRADCHECK("slice(1, 1, 6, 2)", [](const TV& v) { return slice(v[0], 1, 1, 6, 2); }, {x});
    GRADCHECK("slice(-1, -5, -1, 3)", [](const TV& v) { return slice(v[0], -1, -5, -1, 3); }, {x});
    GRADCHECK("slice(0, 1, 3)", [](const TV& v) { return slice(v[0], 0, 1, 3); }, {x});
    GRADCHECK("slice of a slice", [](const TV& v) { return slice(slice(v[0], 1, 0, 6, 2), 0, 0, 3, 2); }, {x});
    GRADCHECK("overlapping slices summed", [](const TV& v) { return slice(v[0], 1, 0, 4) * slice(v[0], 1, 2, 6); }, {x});
    GRADCHECK("contiguous of a transpose", [](const TV& v) { return contiguous(v[0].t()); }, {x});
    GRADCHECK("Tensor::contiguous of a slice", [](const TV& v) { return slice(v[0], 1, 0, 6, 2).contiguous(); }, {x});
  }

  void concatStack() {
    const Tensor a = normal_leaf({2, 1, 3}, 1), b = normal_leaf({2, 2, 3}, 2), c = normal_leaf({2, 3, 3}, 3);
    GRADCHECK("concat dim 1", [](const TV& v) { return concat(v, 1); }, {a, b, c});
    GRADCHECK("concat dim 0", [](const TV& v) { return concat(v, 0); },
              {normal_leaf({1, 2, 3}, 4), normal_leaf({3, 2, 3}, 5)});
    GRADCHECK("concat dim -1", [](const TV& v) { return concat(v, -1); },
              {normal_leaf({2, 3, 1}, 6), normal_leaf({2, 3, 2}, 7), normal_leaf({2, 3, 4}, 8)});
    GRADCHECK("concat, one part constant", [k = normal({2, 2, 3}, 9)](const TV& v) { return concat({v[0], k, v[1]}, 1); },
              {a, c});
    const Tensor p = normal_leaf({2, 3}, 10), q = normal_leaf({2, 3}, 11), r = normal_leaf({2, 3}, 12);
    for (int64_t dim : {0, 1, 2, -1})
      GRADCHECK("stack dim " + std::to_string(dim), [dim](const TV& v) { return stack(v, dim); }, {p, q, r});
    GRADCHECK("stack of one tensor twice", [](const TV& v) { return stack({v[0], v[0]}, 1); }, {p});
  }

  void indexSelectGather() {
    const Tensor x = normal_leaf({4, 3}, 1);
    const Tensor rows = indices({2, 0, 2, 3, 2});  // repeated: gradients accumulate
    GRADCHECK("index_select dim 0 (repeats)", [rows](const TV& v) { return index_select(v[0], 0, rows); }, {x});
    GRADCHECK("index_select dim 1 (repeats)", [](const TV& v) { return index_select(v[0], 1, indices({1, 1, 0, 2, 1})); },
              {x});
    GRADCHECK("index_select dim 1 of 3-D",
              [](const TV& v) { return index_select(v[0], 1, indices({3, 0, 3})); }, {normal_leaf({2, 4, 3}, 2)});
    GRADCHECK("index_select 0-d index", [](const TV& v) { return index_select(v[0], 0, scalar(1.f)); }, {x});
    // gather: index has the input's rank; along `dim` any length, elsewhere no larger.
    const Tensor g1 = from_vector({0, 2, 2, 1, 0, 0, 1, 1, 2, 2, 0, 2, 1, 0, 1, 2, 2, 2, 0, 1}, {4, 5});
    GRADCHECK("gather dim 1 (repeats)", [g1](const TV& v) { return gather(v[0], 1, g1); }, {x});
    const Tensor g0 = from_vector({3, 0, 3, 3, 1, 1, 0, 2, 3, 2}, {5, 2});
    GRADCHECK("gather dim 0 (repeats, narrower)", [g0](const TV& v) { return gather(v[0], 0, g0); }, {x});
    const Tensor g3 = from_vector({1, 1, 0, 2, 2, 2, 0, 0}, {2, 2, 2});
    GRADCHECK("gather dim 2 of 3-D", [g3](const TV& v) { return gather(v[0], 2, g3); }, {normal_leaf({2, 3, 3}, 3)});
  }

  // ---- neural-network ops ----
  void softmaxEveryDim() {
    const Tensor x = normal_leaf({2, 3, 4}, 1);
    for (int64_t dim : {0, 1, 2, -1, -3}) {
      GRADCHECK("softmax dim " + std::to_string(dim), [dim](const TV& v) { return softmax(v[0], dim); }, {x});
      GRADCHECK("log_softmax dim " + std::to_string(dim), [dim](const TV& v) { return log_softmax(v[0], dim); }, {x});
    }
    const Tensor wide = leaf(normal({3, 5}, 2) * 5.f);  // peaked distributions
    GRADCHECK("softmax (peaked)", [](const TV& v) { return softmax(v[0], 1); }, {wide});
    GRADCHECK("log_softmax (peaked)", [](const TV& v) { return log_softmax(v[0], 1); }, {wide});
    GRADCHECK("softmax 1-D", [](const TV& v) { return softmax(v[0], 0); }, {normal_leaf({5}, 3)});
  }

  void dropoutModes() {
    const Tensor x = normal_leaf({4, 5}, 1);
    // A fresh generator per call: every evaluation draws the same mask.
    for (float p : {0.3f, 0.5f}) {
      GRADCHECK("dropout train p=" + std::to_string(p), [p](const TV& v) {
        Generator gen(7);
        return dropout(v[0], p, true, &gen);
      }, {x});
    }
    GRADCHECK("dropout train p=1 (all dropped)", [](const TV& v) { return dropout(v[0], 1.f, true) * 1.f; }, {x});
    GRADCHECK("dropout train p=0 (identity)", [](const TV& v) { return dropout(v[0], 0.f, true); }, {x});
    GRADCHECK("dropout eval (identity)", [](const TV& v) { return dropout(v[0], 0.5f, false); }, {x});
    GRADCHECK("dropout eval inside an expression", [](const TV& v) { return tanh(dropout(v[0], 0.5f, false)); }, {x});
  }

  void conv2dCases() {
    struct Case {
      const char* name;
      Shape x, w;
      bool bias;
      Conv2dOptions opt;
    };
    const Case cases[] = {
        {"3x3 with bias", {1, 2, 5, 5}, {3, 2, 3, 3}, true, {}},
        {"stride 2 padding 1, no bias", {2, 2, 6, 5}, {2, 2, 3, 3}, false, {2, 2, 1, 1, 1, 1, 1}},
        {"dilation 2", {1, 1, 7, 6}, {2, 1, 3, 3}, true, {1, 1, 0, 0, 2, 2, 1}},
        {"groups 2", {1, 4, 5, 5}, {4, 2, 3, 3}, true, {1, 1, 1, 1, 1, 1, 2}},
        {"depthwise (groups = C)", {2, 3, 4, 4}, {3, 1, 2, 2}, false, {1, 1, 0, 0, 1, 1, 3}},
        {"non-square 1x3 kernel, stride (2,1), pad (0,1), dilation (1,2)", {1, 2, 5, 6}, {2, 2, 1, 3}, true,
         {2, 1, 0, 1, 1, 2, 1}},
        {"non-square 3x2 kernel, stride (1,2), pad (1,0)", {1, 2, 5, 5}, {3, 2, 3, 2}, false, {1, 2, 1, 0, 1, 1, 1}},
        {"1x1 kernel, groups 2, bias", {2, 4, 3, 3}, {6, 2, 1, 1}, true, {1, 1, 0, 0, 1, 1, 2}},
    };
    uint64_t seed = 1;
    for (const Case& c : cases) {
      const Tensor x = normal_leaf(c.x, ++seed), w = normal_leaf(c.w, ++seed), b = normal_leaf({c.w[0]}, ++seed);
      const Conv2dOptions opt = c.opt;
      if (c.bias)
        GRADCHECK(std::string("conv2d ") + c.name,
                  [opt](const TV& v) { return conv2d(v[0], v[1], v[2], opt); }, {x, w, b});
      else
        GRADCHECK(std::string("conv2d ") + c.name, [opt](const TV& v) { return conv2d(v[0], v[1], Tensor(), opt); },
                  {x, w});
    }
    // Only the input, only the weight requiring grad.
    const Tensor x = normal_leaf({1, 2, 4, 4}, 40), w = normal_leaf({2, 2, 3, 3}, 41);
    GRADCHECK("conv2d, weight constant", [wc = normal({2, 2, 3, 3}, 42)](const TV& v) { return conv2d(v[0], wc); }, {x});
    GRADCHECK("conv2d, input constant", [xc = normal({1, 2, 4, 4}, 43)](const TV& v) { return conv2d(xc, v[0]); }, {w});
  }

  void conv2dReluMaxPool2d() {
    // The fused op; conv outputs of odd size (5x4) lose their last row to the pooling.
    const Tensor x = normal_leaf({2, 2, 7, 6}, 61), w = normal_leaf({3, 2, 3, 3}, 62), b = normal_leaf({3}, 63);
    GRADCHECK("conv2d_relu_max_pool2d", [](const TV& v) { return conv2d_relu_max_pool2d(v[0], v[1], v[2], {}, true, true); },
              {x, w, b});
    GRADCHECK("conv2d_relu_max_pool2d: pooling only, padding 1, no bias",
              [](const TV& v) { return conv2d_relu_max_pool2d(v[0], v[1], Tensor(), {1, 1, 1, 1, 1, 1, 1}, false, true); },
              {x, w});
    GRADCHECK("conv2d_relu_max_pool2d: ReLU only, stride 2, groups 2",
              [](const TV& v) { return conv2d_relu_max_pool2d(v[0], v[1], v[2], {2, 2, 1, 1, 1, 1, 2}, true, false); },
              {normal_leaf({2, 4, 7, 6}, 64), normal_leaf({4, 2, 3, 3}, 65), normal_leaf({4}, 66)});
  }

  void maxPool2d() {
    struct Case {
      const char* name;
      Pool2dOptions opt;
    };
    const Case cases[] = {
        {"2x2", {2, 2, 0, 0, 0, 0, true}},
        {"3x3 stride 2 padding 1", {3, 3, 2, 2, 1, 1, true}},
        {"3x3 stride 1 (overlapping windows)", {3, 3, 1, 1, 0, 0, true}},
        {"2x3 stride (1,2) padding (1,1)", {2, 3, 1, 2, 1, 1, true}},
        {"3x1 stride (2,1) padding (1,0)", {3, 1, 2, 1, 1, 0, true}},
    };
    const Tensor x = distinct({2, 2, 5, 6}, 1);  // no ties inside any window
    for (const Case& c : cases) {
      const Pool2dOptions opt = c.opt;
      GRADCHECK(std::string("max_pool2d ") + c.name, [opt](const TV& v) { return max_pool2d(v[0], opt); }, {x});
    }
  }

  void avgPool2d() {
    struct Case {
      const char* name;
      Pool2dOptions opt;
    };
    const Case cases[] = {
        {"2x2", {2, 2, 0, 0, 0, 0, true}},
        {"3x3 stride 2 padding 1, count_include_pad", {3, 3, 2, 2, 1, 1, true}},
        {"3x3 stride 2 padding 1, exclude pad", {3, 3, 2, 2, 1, 1, false}},
        {"2x3 stride (1,2) padding (1,1), count_include_pad", {2, 3, 1, 2, 1, 1, true}},
        {"2x3 stride (1,2) padding (1,1), exclude pad", {2, 3, 1, 2, 1, 1, false}},
        {"3x2 stride 1 (overlapping windows)", {3, 2, 1, 1, 0, 0, true}},
    };
    const Tensor x = normal_leaf({2, 2, 5, 6}, 1);
    for (const Case& c : cases) {
      const Pool2dOptions opt = c.opt;
      GRADCHECK(std::string("avg_pool2d ") + c.name, [opt](const TV& v) { return avg_pool2d(v[0], opt); }, {x});
    }
  }

  void batchNorm() {
    const Tensor w = uniform_leaf({3}, 0.5f, 1.5f, 1), b = normal_leaf({3}, 2);
    // Training on [N, C]: batch statistics; the running buffers are updated in place on
    // every evaluation but do not enter the output.
    const Tensor x2 = normal_leaf({5, 3}, 3);
    const Tensor rm = zeros({3}), rv = ones({3});
    GRADCHECK("batch_norm train [N,C] with weight, bias, running stats",
              [rm, rv](const TV& v) { return batch_norm(v[0], rm, rv, v[1], v[2], true); }, {x2, w, b});
    GRADCHECK("batch_norm train [N,C] without affine or running stats",
              [](const TV& v) { return batch_norm(v[0], Tensor(), Tensor(), Tensor(), Tensor(), true); }, {x2});
    const Tensor x4 = normal_leaf({2, 3, 3, 2}, 4);
    GRADCHECK("batch_norm train [N,C,H,W] with weight and bias",
              [](const TV& v) { return batch_norm(v[0], Tensor(), Tensor(), v[1], v[2], true); }, {x4, w, b});
    // Eval: running statistics normalise; gradients w.r.t. input, weight and bias.
    const Tensor erm = normal({3}, 5), erv = uniform_leaf({3}, 0.5f, 2.f, 6).detach();
    GRADCHECK("batch_norm eval [N,C]",
              [erm, erv](const TV& v) { return batch_norm(v[0], erm, erv, v[1], v[2], false); }, {x2, w, b});
    GRADCHECK("batch_norm eval [N,C,H,W]",
              [erm, erv](const TV& v) { return batch_norm(v[0], erm, erv, v[1], v[2], false); }, {x4, w, b});
    GRADCHECK("batch_norm eval without affine",
              [erm, erv](const TV& v) { return batch_norm(v[0], erm, erv, Tensor(), Tensor(), false); }, {x4});
  }

  // ---- sequence models: layer_norm, causal_softmax, cross-entropy per position ----
  void layerNormAndCausalSoftmax() {
    const Tensor x = normal_leaf({2, 3, 5}, 1), w = normal_leaf({5}, 2), b = normal_leaf({5}, 3);
    GRADCHECK("layer_norm with weight and bias", [](const TV& v) { return layer_norm(v[0], v[1], v[2]); }, {x, w, b});
    GRADCHECK("layer_norm without affine", [](const TV& v) { return layer_norm(v[0], Tensor(), Tensor()); }, {x});
    GRADCHECK("causal_softmax [2,4,4]", [](const TV& v) { return causal_softmax(v[0]); }, {normal_leaf({2, 4, 4}, 4)});
  }
  void sequenceCrossEntropy() {
    const Tensor logits = normal_leaf({2, 3, 4}, 5);
    const Tensor target = indices({1, 0, 3, 2, 2, 0}).reshape({2, 3});
    for (float smoothing : {0.f, 0.1f})
      for (Reduction r : kReductions)
        GRADCHECK("cross_entropy [N,T,C] smoothing=" + std::to_string(smoothing) + " reduction=" + reduction_name(r),
                  [target, smoothing, r](const TV& v) { return cross_entropy(v[0], target, smoothing, r); }, {logits});
    GRADCHECK("nll_loss [N,T,C]", [target](const TV& v) { return nll_loss(log_softmax(v[0], -1), target); }, {logits});
  }

  // ---- losses ----
  void crossEntropy() {
    const Tensor logits = normal_leaf({4, 5}, 1);
    const Tensor target = indices({1, 0, 4, 1});
    for (float smoothing : {0.f, 0.1f, 1.f})
      for (Reduction r : kReductions)
        GRADCHECK("cross_entropy smoothing=" + std::to_string(smoothing) + " reduction=" + reduction_name(r),
                  [target, smoothing, r](const TV& v) { return cross_entropy(v[0], target, smoothing, r); }, {logits});
  }

  void nllLoss() {
    const Tensor x = normal_leaf({4, 5}, 1);
    const Tensor target = indices({3, 3, 0, 2});
    for (Reduction r : kReductions) {
      GRADCHECK(std::string("nll_loss(log_softmax) reduction=") + reduction_name(r),
                [target, r](const TV& v) { return nll_loss(log_softmax(v[0], 1), target, r); }, {x});
      GRADCHECK(std::string("nll_loss on a leaf, reduction=") + reduction_name(r),
                [target, r](const TV& v) { return nll_loss(v[0], target, r); }, {x});
    }
  }

  void mseLoss() {
    const Tensor input = normal_leaf({3, 4}, 1), target = normal_leaf({3, 4}, 2);
    for (Reduction r : kReductions)
      GRADCHECK(std::string("mse_loss reduction=") + reduction_name(r),
                [r](const TV& v) { return mse_loss(v[0], v[1], r); }, {input, target});
  }

  void bceWithLogits() {
    const Tensor logits = leaf(normal({3, 4}, 1) * 3.f), target = uniform_leaf({3, 4}, 0.f, 1.f, 2);
    for (Reduction r : kReductions)
      GRADCHECK(std::string("binary_cross_entropy_with_logits reduction=") + reduction_name(r),
                [r](const TV& v) { return binary_cross_entropy_with_logits(v[0], v[1], r); }, {logits, target});
    const Tensor hard = from_vector({0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0}, {3, 4});
    GRADCHECK("binary_cross_entropy_with_logits, 0/1 targets (logits only)",
              [hard](const TV& v) { return binary_cross_entropy_with_logits(v[0], hard); }, {logits});
  }

  // ---- layouts and ranks ----
  void nonContiguousInputs() {
    const Tensor t = transposed_leaf(normal({4, 3}, 1));      // [3, 4], strides (1, 3)
    const Tensor s = strided_leaf(normal({3, 8}, 2), 1);      // [3, 4], strides (8, 2)
    const Tensor p = permuted_leaf(normal({3, 4, 2}, 3), {2, 0, 1});  // [2, 3, 4]
    QVERIFY(!t.is_contiguous() && !s.is_contiguous() && !p.is_contiguous());
    GRADCHECK("exp(transposed)", [](const TV& v) { return exp(v[0]); }, {t});
    GRADCHECK("sigmoid(strided)", [](const TV& v) { return sigmoid(v[0]); }, {s});
    GRADCHECK("pow(|strided|+1, 1.5)", [](const TV& v) { return pow(v[0] * v[0] + 1.f, 1.5f); }, {s});
    GRADCHECK("mul(transposed, strided)", [](const TV& v) { return mul(v[0], v[1]); }, {t, s});
    GRADCHECK("div(permuted, transposed) broadcast", [](const TV& v) { return div(v[0], v[1] * v[1] + 0.5f); }, {p, t});
    GRADCHECK("sum(transposed, {0})", [](const TV& v) { return sum(v[0], {0}); }, {t});
    GRADCHECK("mean(permuted, {1, 2}, keepdim)", [](const TV& v) { return mean(v[0], {1, 2}, true); }, {p});
    const Tensor dt = transposed_leaf(from_vector(distinct_values(12, 4), {4, 3}));
    GRADCHECK("max(transposed, {1})", [](const TV& v) { return max(v[0], {1}); }, {dt});
    GRADCHECK("min(transposed)", [](const TV& v) { return min(v[0]); }, {dt});
    GRADCHECK("softmax(permuted, 1)", [](const TV& v) { return softmax(v[0], 1); }, {p});
    GRADCHECK("log_softmax(transposed, 0)", [](const TV& v) { return log_softmax(v[0], 0); }, {t});
    GRADCHECK("matmul(transposed, stridedᵀ)", [](const TV& v) { return matmul(v[0], v[1].t()); }, {t, s});
    GRADCHECK("reshape(transposed) copies", [](const TV& v) { return reshape(v[0], {12}); }, {t});
    GRADCHECK("contiguous(strided)", [](const TV& v) { return contiguous(v[0]); }, {s});
    GRADCHECK("concat(transposed, strided)", [](const TV& v) { return concat({v[0], v[1]}, 0); }, {t, s});
    GRADCHECK("index_select(transposed)", [](const TV& v) { return index_select(v[0], 1, indices({3, 0, 3})); }, {t});
    GRADCHECK("gather(strided)",
              [g = from_vector({0, 3, 3, 1, 2, 2}, {3, 2})](const TV& v) { return gather(v[0], 1, g); }, {s});
    GRADCHECK("where(cond, transposed, strided)",
              [c = from_vector({1, 0, 1, 0}, {4})](const TV& v) { return where(c, v[0], v[1]); }, {t, s});
    GRADCHECK("cross_entropy(transposed logits)",
              [](const TV& v) { return cross_entropy(v[0], indices({0, 3, 2}), 0.1f); }, {t});
    GRADCHECK("batch_norm(strided) train",
              [](const TV& v) { return batch_norm(v[0], Tensor(), Tensor(), Tensor(), Tensor(), true); }, {s});
    GRADCHECK("dropout(transposed) train", [](const TV& v) {
      Generator gen(3);
      return dropout(v[0], 0.5f, true, &gen);
    }, {t});
    const Tensor img = permuted_leaf(normal({1, 4, 5, 2}, 5), {0, 3, 1, 2});  // [1, 2, 4, 5] NHWC storage
    GRADCHECK("conv2d(permuted input, transposed-kernel weight)",
              [](const TV& v) { return conv2d(v[0], v[1], Tensor(), {1, 1, 1, 1, 1, 1, 1}); },
              {img, permuted_leaf(normal({2, 2, 3, 2}, 6), {0, 1, 3, 2})});
    const Tensor dimg = permuted_leaf(from_vector(distinct_values(40, 7), {1, 4, 5, 2}), {0, 3, 1, 2});
    GRADCHECK("max_pool2d(permuted)", [](const TV& v) { return max_pool2d(v[0], {2, 2, 1, 1, 0, 0, true}); }, {dimg});
    GRADCHECK("avg_pool2d(permuted)", [](const TV& v) { return avg_pool2d(v[0], {3, 3, 2, 2, 1, 1, false}); }, {img});
  }

  // Backward kernels must not assume the incoming gradient is contiguous. Each op's output
  // is (a) stacked with zeros on a new last dim, so its gradient arrives as a stride-2 slice,
  // and (b) summed over dim 0, so its gradient arrives expanded (stride 0).
  void nonContiguousGradients() {
    const Tensor x = normal_leaf({3, 4}, 1), pos = uniform_leaf({3, 4}, 0.5f, 2.f, 2);
    const Tensor kinked = avoiding({3, 4}, {0.f, -0.5f, 0.3f}, 3), d = distinct({3, 4}, 4);
    const Tensor img = normal_leaf({2, 2, 4, 4}, 5), dimg = distinct({2, 2, 4, 4}, 6), k = normal_leaf({3, 2, 3, 3}, 7);
    const Tensor w = normal_leaf({4, 5}, 8), y = normal_leaf({3, 4}, 9);
    const Tensor target = indices({3, 0, 1});
    struct Op {
      const char* name;
      TensorFunction f;
      TV in;
    };
    const Op ops[] = {
        {"exp", [](const TV& v) { return exp(v[0]); }, {x}},
        {"log", [](const TV& v) { return log(v[0]); }, {pos}},
        {"sqrt", [](const TV& v) { return sqrt(v[0]); }, {pos}},
        {"pow 1.5", [](const TV& v) { return pow(v[0], 1.5f); }, {pos}},
        {"abs", [](const TV& v) { return abs(v[0]); }, {kinked}},
        {"relu", [](const TV& v) { return relu(v[0]); }, {kinked}},
        {"leaky_relu", [](const TV& v) { return leaky_relu(v[0], 0.1f); }, {kinked}},
        {"clamp", [](const TV& v) { return clamp(v[0], -0.5f, 0.3f); }, {kinked}},
        {"sigmoid", [](const TV& v) { return sigmoid(v[0]); }, {x}},
        {"tanh", [](const TV& v) { return tanh(v[0]); }, {x}},
        {"gelu", [](const TV& v) { return gelu(v[0]); }, {x}},
        {"softplus", [](const TV& v) { return softplus(v[0], 2.f); }, {x}},
        {"mul / div", [](const TV& v) { return v[0] * v[1] / v[2]; }, {x, y, pos}},
        {"maximum", [](const TV& v) { return maximum(v[0], v[1]); }, {d, kinked}},
        {"where", [](const TV& v) { return where(from_vector({1, 0, 0, 1}, {4}), v[0], v[1]); }, {x, y}},
        {"max over dim 1, keepdim", [](const TV& v) { return max(v[0], {1}, true); }, {d}},
        {"min over dim 0", [](const TV& v) { return min(v[0], {0}); }, {d}},
        {"mean over dim 1", [](const TV& v) { return mean(v[0], {1}); }, {x}},
        {"softmax", [](const TV& v) { return softmax(v[0], 1); }, {x}},
        {"log_softmax", [](const TV& v) { return log_softmax(v[0], 0); }, {x}},
        {"matmul", [](const TV& v) { return matmul(v[0], v[1]); }, {x, w}},
        {"index_select", [](const TV& v) { return index_select(v[0], 1, indices({3, 1, 3})); }, {x}},
        {"gather", [](const TV& v) { return gather(v[0], 1, from_vector({0, 3, 3, 1, 2, 2}, {3, 2})); }, {x}},
        {"slice step 2", [](const TV& v) { return slice(v[0], 1, 0, 4, 2); }, {x}},
        {"concat", [](const TV& v) { return concat({v[0], v[1]}, 1); }, {x, y}},
        {"transpose", [](const TV& v) { return v[0].t(); }, {x}},
        {"expand", [](const TV& v) { return v[0].unsqueeze(1).expand({3, 2, 4}); }, {x}},
        {"reshape", [](const TV& v) { return reshape(v[0], {2, 6}); }, {x}},
        {"dropout", [](const TV& v) { Generator gen(5); return dropout(v[0], 0.5f, true, &gen); }, {x}},
        {"batch_norm", [](const TV& v) { return batch_norm(v[0], Tensor(), Tensor(), Tensor(), Tensor(), true); }, {x}},
        {"cross_entropy None", [target](const TV& v) { return cross_entropy(v[0], target, 0.1f, Reduction::None); }, {x}},
        {"nll_loss None", [target](const TV& v) { return nll_loss(log_softmax(v[0], 1), target, Reduction::None); }, {x}},
        {"mse_loss None", [](const TV& v) { return mse_loss(v[0], v[1], Reduction::None); }, {x, y}},
        {"bce_with_logits None",
         [](const TV& v) { return binary_cross_entropy_with_logits(v[0], sigmoid(v[1]), Reduction::None); },
         {x, y}},
        {"conv2d", [](const TV& v) { return conv2d(v[0], v[1], Tensor(), {1, 1, 1, 1, 1, 1, 1}); }, {img, k}},
        {"max_pool2d", [](const TV& v) { return max_pool2d(v[0], {3, 3, 1, 1, 1, 1, true}); }, {dimg}},
        {"avg_pool2d", [](const TV& v) { return avg_pool2d(v[0], {3, 3, 1, 1, 1, 1, false}); }, {img}},
    };
    for (const Op& op : ops) {
      const TensorFunction f = op.f;
      GRADCHECK(std::string(op.name) + ", strided incoming gradient",
                [f](const TV& v) {
                  const Tensor out = f(v);
                  return stack({out, zeros_like(out)}, -1);
                },
                op.in);
      GRADCHECK(std::string(op.name) + ", expanded incoming gradient", [f](const TV& v) { return sum(f(v), {0}); },
                op.in);
    }
  }

  void scalarTensors() {
    const Tensor s = normal_leaf({}, 1), s2 = normal_leaf({}, 2), sp = uniform_leaf({}, 0.5f, 2.f, 3);
    const Tensor x = normal_leaf({2, 3}, 4);
    GRADCHECK("0-d exp", [](const TV& v) { return exp(v[0]); }, {s});
    GRADCHECK("0-d sigmoid", [](const TV& v) { return sigmoid(v[0]); }, {s});
    GRADCHECK("0-d pow 2.5", [](const TV& v) { return pow(v[0], 2.5f); }, {sp});
    GRADCHECK("0-d * 0-d", [](const TV& v) { return v[0] * v[1]; }, {s, s2});
    GRADCHECK("0-d * [2,3]", [](const TV& v) { return v[0] * v[1]; }, {s, x});
    GRADCHECK("[2,3] / 0-d", [](const TV& v) { return v[1] / v[0]; }, {sp, x});
    GRADCHECK("sum(0-d)", [](const TV& v) { return sum(v[0]); }, {s});
    GRADCHECK("mean(0-d)", [](const TV& v) { return mean(v[0]); }, {s});
    GRADCHECK("max(0-d)", [](const TV& v) { return max(v[0]); }, {s});
    GRADCHECK("reshape 0-d to [1,1]", [](const TV& v) { return reshape(v[0], {1, 1}); }, {s});
    GRADCHECK("unsqueeze 0-d", [](const TV& v) { return unsqueeze(v[0], 0); }, {s});
    GRADCHECK("flatten 0-d", [](const TV& v) { return flatten(v[0]); }, {s});
    GRADCHECK("expand 0-d to [2,3]", [](const TV& v) { return expand(v[0], {2, 3}); }, {s});
    GRADCHECK("stack 0-d", [](const TV& v) { return stack({v[0], v[1], v[0]}); }, {s, s2});
    GRADCHECK("softmax 0-d", [](const TV& v) { return softmax(v[0], 0) + v[0]; }, {s});
    GRADCHECK("sum over all dims to 0-d", [](const TV& v) { return sum(v[0] * v[0]); }, {x});
    GRADCHECK("matmul 1-D . 1-D gives 0-d", [](const TV& v) { return matmul(v[0], v[1]) * v[0].sum(); },
              {normal_leaf({3}, 5), normal_leaf({3}, 6)});
    GRADCHECK("mse_loss Mean gives 0-d", [](const TV& v) { return mse_loss(v[0], v[1]); }, {x, normal_leaf({2, 3}, 7)});
  }

  // ---- graphs: a leaf reached through several paths accumulates every contribution ----
  void sharedInputsAndComposition() {
    const Tensor x = normal_leaf({3, 3}, 1);
    GRADCHECK("x * x", [](const TV& v) { return v[0] * v[0]; }, {x});
    GRADCHECK("x + xᵀ", [](const TV& v) { return v[0] + v[0].t(); }, {x});
    GRADCHECK("tanh(x) * exp(-x) + x", [](const TV& v) { return tanh(v[0]) * exp(-v[0]) + v[0]; }, {x});
    // A two-layer perceptron with cross-entropy, all parameters at once.
    const Tensor in = normal({4, 3}, 2);
    const Tensor w1 = leaf(normal({3, 5}, 3) * 0.5f), b1 = normal_leaf({5}, 4);
    const Tensor w2 = leaf(normal({5, 3}, 5) * 0.5f), b2 = normal_leaf({3}, 6);
    const Tensor target = indices({0, 2, 1, 2});
    GRADCHECK("mlp: tanh(x W1 + b1) W2 + b2 -> cross_entropy",
              [in, target](const TV& v) {
                return cross_entropy(matmul(tanh(matmul(in, v[0]) + v[1]), v[2]) + v[3], target);
              },
              {w1, b1, w2, b2});
    // A small conv net: conv -> gelu -> avg pool -> flatten -> linear -> log_softmax -> nll.
    const Tensor img = normal({2, 1, 5, 5}, 7);
    const Tensor k = leaf(normal({2, 1, 3, 3}, 8) * 0.5f), lw = leaf(normal({8, 3}, 9) * 0.5f);
    GRADCHECK("convnet: conv2d -> gelu -> avg_pool2d -> linear -> nll_loss",
              [img](const TV& v) {
                const Tensor c = gelu(conv2d(img, v[0], Tensor(), {1, 1, 1, 1, 1, 1, 1}));  // [2, 2, 5, 5]
                const Tensor h = avg_pool2d(c, {2, 2, 2, 2, 0, 0, true});                     // [2, 2, 2, 2]
                return nll_loss(log_softmax(matmul(flatten(h, 1), v[1]), 1), indices({2, 0}));
              },
              {k, lw});
  }
};

QTEST_APPLESS_MAIN(TestGradcheck)
#include "test_gradcheck.moc"
