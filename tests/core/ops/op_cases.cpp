// The op-case table (op_cases.h): every op of core/ops/ops.h, case by case. A row runs in
// test_gradcheck, test_ops_forward and test_cuda unless `except` leaves a suite out, with the
// reason beside it; `also(kCudaGradcheck)` adds the gradient check on cuda:0.
//
// Inputs are seeded and stay clear of kinks (relu/abs/clamp thresholds) and of ties (max, min,
// pools) by more than gradcheck's eps = 3e-3, so both devices take the same branch everywhere
// and a gradient-check failure means a wrong derivative. Rows whose inputs are sized for the
// GPU's kernels (thousands of elements, tails of blocks) leave out the gradient check, which
// perturbs every element in turn. Constants an op needs (index tensors, masks, running
// statistics, the operand that needs no gradient) are inputs too, so test_cuda copies them to
// the device with the rest.
#include "core/ops/op_cases.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>

#include "nn/attention.h"
#include "nn/functional.h"
#include "nn/recurrent.h"
#include "nn/sequence.h"
#include "ops/ops.h"
#include "ops/rnn_sequence.h"

namespace plexus::testing {

// ---- inputs ------------------------------------------------------------------------------------

Tensor leaf(Tensor t) {
  t.requires_grad_();
  return t;
}

Tensor normal(const Shape& s, uint64_t seed) {
  Generator gen(seed);
  return randn(s, &gen);
}

Tensor uni(const Shape& s, float lo, float hi, uint64_t seed) {
  Generator gen(seed);
  return uniform(s, lo, hi, &gen);
}

Tensor away(const Tensor& t, std::initializer_list<float> kinks, float margin) {
  std::vector<float> v = t.to_vector();
  for (float& x : v)
    for (float k : kinks)
      if (std::fabs(x - k) < margin) x = x < k ? k - margin : k + margin;
  return from_vector(v, t.shape());
}

std::vector<float> distinct_values(int64_t n, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = 0.1f * float(i - n / 2);
  Generator gen(seed);
  for (int64_t i = n - 1; i > 0; --i) std::swap(v[size_t(i)], v[size_t(gen.next_u64() % uint64_t(i + 1))]);
  return v;
}

Tensor distinct(const Shape& s, uint64_t seed) { return from_vector(distinct_values(numel(s), seed), s); }

TV distinct_pair(const Shape& sa, const Shape& sb, uint64_t seed) {
  const int64_t na = numel(sa);
  const std::vector<float> v = distinct_values(na + numel(sb), seed);
  return {leaf(from_vector({v.begin(), v.begin() + na}, sa)), leaf(from_vector({v.begin() + na, v.end()}, sb))};
}

Tensor ints(const Shape& s, int lo, int hi, uint64_t seed) {
  Generator gen(seed);
  std::vector<float> v(size_t(numel(s)));
  for (float& x : v) x = float(lo + int(gen.next_u64() % uint64_t(hi - lo + 1)));
  return from_vector(v, s);
}

Tensor random_index(const Shape& s, int64_t limit, uint64_t seed) { return ints(s, 0, int(limit - 1), seed); }

Tensor idx(const std::vector<float>& v) { return from_vector(v, {int64_t(v.size())}); }

Tensor tr(const Tensor& base) { return base.transpose(-1, -2).detach(); }
Tensor every2(const Tensor& base, int64_t dim) { return slice(base, dim, 0, base.size(dim), 2).detach(); }
Tensor perm(const Tensor& base, const std::vector<int64_t>& dims) { return base.permute(dims).detach(); }

Tensor mirror(const Tensor& t, Device device) {
  if (!t.defined()) return t;
  const Tensor whole = make_view(t, {t.storage()->numel}, {1}, 0);
  const Tensor copy = device == t.device() ? whole.clone() : whole.to(device);
  Tensor m = make_view(copy, t.shape(), t.strides(), t.offset());
  if (t.requires_grad()) m.requires_grad_();
  return m;
}

// ---- comparing ---------------------------------------------------------------------------------

namespace {

std::string g_format(double v, int precision = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  return buf;
}

}  // namespace

std::string mismatch(const std::vector<float>& got, const std::vector<float>& want, Tol tol, const char* got_name,
                     const char* want_name) {
  if (got.size() != want.size())
    return std::to_string(got.size()) + " values, expected " + std::to_string(want.size());
  double scale = 1;
  for (float w : want)
    if (std::isfinite(w)) scale = std::max(scale, double(std::fabs(w)));
  int64_t bad = 0;
  std::string first;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    bool ok;
    if (std::isnan(w)) ok = std::isnan(g);
    else if (std::isinf(w)) ok = g == w;
    else ok = std::isfinite(g) && std::fabs(g - w) <= tol.atol * scale + tol.rtol * std::fabs(w);
    if (!ok) {
      if (!bad)
        first = "element " + std::to_string(i) + ": " + got_name + " " + g_format(g, 9) + ", " + want_name + " " +
                g_format(w, 9);
      ++bad;
    }
    if (std::isfinite(g) && std::isfinite(w)) worst = std::max(worst, std::fabs(g - w));
  }
  if (!bad) return {};
  return first + " (" + std::to_string(bad) + " of " + std::to_string(got.size()) + " elements off; largest |diff| " +
         g_format(worst, 3) + ", rtol " + g_format(tol.rtol) + ", atol " + g_format(tol.atol) + " x " +
         g_format(scale, 3) + ")";
}

std::string mismatch(const Tensor& got, const Tensor& want, Tol tol, const char* got_name, const char* want_name) {
  if (got.shape() != want.shape()) return "shape " + to_string(got.shape()) + ", expected " + to_string(want.shape());
  return mismatch(got.to_vector(), want.to_vector(), tol, got_name, want_name);
}

// ---- references --------------------------------------------------------------------------------

TensorFunction pointwise(std::function<double(double)> fn) {
  return [fn](const TV& v) {
    std::vector<float> x = v[0].to_vector();
    for (float& e : x) e = float(fn(double(e)));
    return from_vector(x, v[0].shape());
  };
}

TensorFunction pointwise2(std::function<double(double, double)> fn) {
  return [fn](const TV& v) {
    const Shape s = broadcast_shapes(v[0].shape(), v[1].shape(), "reference");
    const std::vector<float> a = v[0].detach().expand(s).to_vector(), b = v[1].detach().expand(s).to_vector();
    std::vector<float> y(a.size());
    for (size_t i = 0; i < a.size(); ++i) y[i] = float(fn(double(a[i]), double(b[i])));
    return from_vector(y, s);
  };
}

// ---- the table -----------------------------------------------------------------------------------

namespace {

std::string num(double v) { return g_format(v); }  // as QString::number: "0.5", "0.333333", "-2.5"

std::string dims_str(const std::vector<int64_t>& dims) {
  std::string s = "{";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  s += '}';
  return s;
}

const std::pair<const char*, Reduction> kReductions[] = {
    {"None", Reduction::None}, {"Sum", Reduction::Sum}, {"Mean", Reduction::Mean}};

// The references' scalar formulas.
double sigmoid_d(double x) { return 1 / (1 + std::exp(-x)); }
double gelu_d(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
TensorFunction softplus_ref(double beta = 1, double threshold = 20) {
  return pointwise(
      [beta, threshold](double x) { return beta * x > threshold ? x : std::log1p(std::exp(beta * x)) / beta; });
}
TensorFunction leaky_relu_ref(double slope = 0.01) {
  return pointwise([slope](double x) { return x > 0 ? x : slope * x; });
}
TensorFunction elu_ref(double alpha, double scale = 1) {
  return pointwise([alpha, scale](double x) { return x > 0 ? scale * x : scale * alpha * std::expm1(x); });
}
// SELU's constants, as PyTorch's.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717, kSeluScale = 1.0507009873554804934193349852946;
double hardsigmoid_d(double x) { return std::min(std::max(x + 3, 0.0), 6.0) / 6; }
// x > 0 ? x : w·x with w [1] or [C] along dim 1 of x, spelled out per element.
TensorFunction prelu_ref() {
  return [](const TV& v) {
    const Tensor& x = v[0];
    const std::vector<float> xs = x.to_vector(), w = v[1].to_vector();  // in logical order
    const int64_t inner = x.dim() > 2 ? numel(Shape(x.shape().begin() + 2, x.shape().end())) : 1;
    std::vector<float> y(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const double slope = w.size() == 1 ? w[0] : w[size_t(int64_t(i) / inner % int64_t(w.size()))];
      y[i] = float(xs[i] > 0 ? double(xs[i]) : slope * xs[i]);
    }
    return from_vector(y, x.shape());
  };
}
TensorFunction clamp_ref(double lo, double hi) {
  return pointwise([lo, hi](double x) { return std::min(std::max(x, lo), hi); });
}
TensorFunction pow_ref(double e) {
  return pointwise([e](double x) { return std::pow(x, e); });
}
// sequence_pool of x [N, T, E] over lengths v[1] (all T without), by plain loops in double.
TensorFunction sequence_pool_ref(std::string mode) {
  return [mode](const TV& v) {
    const int64_t n = v[0].shape()[0], t = v[0].shape()[1], e = v[0].shape()[2];
    const std::vector<float> x = v[0].to_vector();
    const std::vector<float> lengths = v.size() > 1 ? v[1].to_vector() : std::vector<float>(size_t(n), float(t));
    std::vector<float> out(size_t(n * e), 0.f);
    for (int64_t b = 0; b < n; ++b) {
      const int64_t len = std::clamp(int64_t(lengths[size_t(b)]), int64_t(0), t);
      for (int64_t j = 0; j < e; ++j) {
        auto at = [&](int64_t p) { return double(x[size_t((b * t + p) * e + j)]); };
        double r = 0;
        if (mode == "first") r = at(0);
        else if (len > 0 && mode == "last") r = at(len - 1);
        else if (len > 0) {
          r = mode == "max" ? -HUGE_VAL : 0.0;
          for (int64_t p = 0; p < len; ++p) r = mode == "max" ? std::max(r, at(p)) : r + at(p) / double(len);
        }
        out[size_t(b * e + j)] = float(r);
      }
    }
    return from_vector(out, {n, e});
  };
}

const auto kPlus = [](double a, double b) { return a + b; };
const auto kMinus = [](double a, double b) { return a - b; };
const auto kTimes = [](double a, double b) { return a * b; };
const auto kOver = [](double a, double b) { return a / b; };
const auto kMax = [](double a, double b) { return std::max(a, b); };
const auto kMin = [](double a, double b) { return std::min(a, b); };
constexpr double kInf = HUGE_VAL;

// The rows, in the order written.
struct Table {
  std::vector<OpCase> rows;

  // Inputs made afresh by `make` for every use.
  OpCase& def(std::string name, std::function<TV()> make, TensorFunction f, Tol tol = kElem) {
    OpCase& c = rows.emplace_back();
    c.name = std::move(name);
    c.make = std::move(make);
    c.f = std::move(f);
    c.tol = tol;
    return c;
  }
  // Inputs built once; every use gets its own copies (same values, layout and requires_grad).
  OpCase& def(std::string name, TV inputs, TensorFunction f, Tol tol = kElem) {
    return def(
        std::move(name),
        [inputs] {
          TV copies;
          for (const Tensor& t : inputs) copies.push_back(mirror(t, Device::cpu()));
          return copies;
        },
        std::move(f), tol);
  }
};

// ---- elementwise arithmetic, broadcasting, layouts ----
void arithmetic(Table& t) {
  t.def("add [4,5] + [4,5]", [] { return TV{leaf(normal({4, 5}, 1)), leaf(normal({4, 5}, 2))}; },
        [](const TV& v) { return add(v[0], v[1]); })
      .ref(pointwise2(kPlus));
  t.def("add broadcast [3,1,5] + [4,1]", [] { return TV{leaf(normal({3, 1, 5}, 3)), leaf(normal({4, 1}, 4))}; },
        [](const TV& v) { return add(v[0], v[1]); })
      .ref(pointwise2(kPlus));
  t.def("sub broadcast [5] - [4,5]", [] { return TV{leaf(normal({5}, 5)), leaf(normal({4, 5}, 6))}; },
        [](const TV& v) { return sub(v[0], v[1]); })
      .ref(pointwise2(kMinus));
  t.def("mul transposed [4,5] * stride-2 [4,5]",
        [] { return TV{leaf(tr(normal({5, 4}, 7))), leaf(every2(normal({4, 10}, 8), 1))}; },
        [](const TV& v) { return mul(v[0], v[1]); })
      .ref(pointwise2(kTimes));
  t.def("add of narrowed leaves",
        [] {
          return TV{leaf(normal({5, 8}, 36).narrow(1, 2, 5).detach()),
                    leaf(normal({6, 5}, 37).narrow(0, 1, 5).detach())};
        },
        [](const TV& v) { return add(v[0], v[1]) * v[0]; });
  t.def("mul expanded (stride 0) operand", [] { return TV{leaf(normal({3, 1}, 9)), leaf(normal({2, 3, 4}, 10))}; },
        [](const TV& v) { return mul(v[0].expand({2, 3, 4}), v[1]); });
  t.def("div broadcast [2,3,4] / [3,1]",
        [] { return TV{leaf(normal({2, 3, 4}, 11)), leaf(away(normal({3, 1}, 12), {0.f}, 0.3f))}; },
        [](const TV& v) { return div(v[0], v[1]); })
      .ref(pointwise2(kOver));
  t.def("div permuted / transposed",
        [] { return TV{leaf(perm(normal({3, 4, 2}, 13), {2, 0, 1})), leaf(tr(normal({4, 3}, 14)))}; },
        [](const TV& v) { return div(v[0], v[1] * v[1] + 0.5f); });
  t.def("neg permuted", [] { return TV{leaf(perm(normal({2, 3, 4}, 15), {2, 0, 1}))}; },
        [](const TV& v) { return neg(v[0]); })
      .ref(pointwise([](double x) { return -x; }));
  t.def("add / mul scalar", [] { return TV{leaf(normal({3, 7}, 16))}; },
        [](const TV& v) { return add(mul(v[0], -2.5f), 1.5f); })
      .ref(pointwise([](double x) { return x * -2.5 + 1.5; }));
  t.def("tensor operators",
        [] {
          return TV{leaf(normal({3, 4}, 17)), leaf(normal({3, 4}, 18)), leaf(away(normal({3, 4}, 19), {0.f}, 0.3f))};
        },
        [](const TV& v) { return -(v[0] + v[1]) * v[0] - v[1] / v[2]; });
  t.def("scalar operators", [] { return TV{leaf(normal({3, 4}, 20)), leaf(uni({3, 4}, 0.5f, 2.f, 21))}; },
        [](const TV& v) { return ((v[0] - 0.5f) * 3.f + (1.f - v[0]) / 4.f + 2.f) + 2.f * v[0] + 2.f / v[1]; });
  // Integer exponents are defined for negative bases too.
  for (float e : {1.f, 2.f, 3.f, 4.f})
    t.def("pow(any sign, " + num(e) + ")", [] { return TV{leaf(normal({3, 5}, 22))}; },
          [e](const TV& v) { return pow(v[0], e); })
        .ref(pow_ref(e));
  for (float e : {2.f, 3.f, 0.5f, 1.5f, 1.f / 3.f, -1.f, -2.5f, 0.f})
    t.def("pow(positive, " + num(e) + ")", [] { return TV{leaf(uni({3, 5}, 0.5f, 2.f, 23))}; },
          [e](const TV& v) { return pow(v[0], e); })
        .ref(pow_ref(e));
  t.def("maximum broadcast [3,4] with [4]", [] { return distinct_pair({3, 4}, {4}, 24); },
        [](const TV& v) { return maximum(v[0], v[1]); })
      .ref(pointwise2(kMax));
  t.def("minimum broadcast [2,1,4] with [3,1]", [] { return distinct_pair({2, 1, 4}, {3, 1}, 25); },
        [](const TV& v) { return minimum(v[0], v[1]); })
      .ref(pointwise2(kMin));
  t.def("maximum of an expanded operand", [] { return distinct_pair({3, 5}, {4, 3, 5}, 26); },
        [](const TV& v) { return maximum(v[0].expand({4, 3, 5}), v[1]); })
      .ref(pointwise2(kMax));
  t.def("minimum with a 0-d operand", [] { return distinct_pair({3, 4}, {}, 27); },
        [](const TV& v) { return minimum(v[1], v[0]); })
      .ref(pointwise2(kMin));
  // Many dims, permuted operands: the strided loop's dim merging and broadcasting at once.
  t.def("5-D permuted * 3-D transposed, broadcast",
        [] {
          return TV{leaf(perm(normal({2, 1, 3, 2, 2}, 28), {4, 2, 0, 1, 3})),
                    leaf(normal({2, 3}, 29).t().unsqueeze(0).detach())};
        },
        [](const TV& v) { return v[0] * v[1] + v[1]; });
  t.def("0-d with 0-d and [2,3]",
        [] { return TV{leaf(normal({}, 30)), leaf(normal({}, 31)), leaf(normal({2, 3}, 32))}; },
        [](const TV& v) { return (v[0] * v[1] + exp(v[0])) * v[2]; });
  // A gradient reaching a leaf through several broadcasts is summed back to its own shape each time.
  t.def("chained broadcasts", [] { return TV{leaf(normal({4}, 33)), leaf(normal({3, 1}, 34)), leaf(normal({}, 35))}; },
        [](const TV& v) { return (v[0] * v[1] + v[2]) * v[0] - v[1] / (v[2] * v[2] + 1.f); });

  // Same-shape operands, one op at a time; one side constant.
  const Tensor a = leaf(normal({2, 3}, 1)), b = leaf(normal({2, 3}, 2));
  const Tensor d = leaf(away(normal({2, 3}, 3), {0.f}, 0.3f));  // divisors: |d| >= 0.3
  t.def("sub", TV{a, b}, [](const TV& v) { return sub(v[0], v[1]); }).ref(pointwise2(kMinus));
  t.def("mul", TV{a, b}, [](const TV& v) { return mul(v[0], v[1]); }).ref(pointwise2(kTimes));
  t.def("div", TV{a, d}, [](const TV& v) { return div(v[0], v[1]); }).ref(pointwise2(kOver));
  t.def("neg", TV{a}, [](const TV& v) { return neg(v[0]); }).ref(pointwise([](double x) { return -x; }));
  t.def("add scalar",
        TV{a}, [](const TV& v) { return add(v[0], 1.5f); }).ref(pointwise([](double x) { return x + 1.5; }));
  t.def("mul scalar", TV{a}, [](const TV& v) { return mul(v[0], -2.5f); })
      .ref(pointwise([](double x) { return x * -2.5; }));
  // Only one side requires grad: the other gets no gradient and is not perturbed.
  const Tensor c = normal({2, 3}, 5);
  t.def("mul, only a requires grad", TV{a, c}, [](const TV& v) { return mul(v[0], v[1]); }).ref(pointwise2(kTimes));
  t.def("div, only the divisor requires grad", TV{d, c}, [](const TV& v) { return div(v[1], v[0]); });
  t.def("sub, only b requires grad", TV{b, c}, [](const TV& v) { return sub(v[1], v[0]); });

  // Every op on five pairs of broadcast shapes, both ways round.
  struct Pair {
    Shape a, b;
  };
  const Pair pairs[] = {{{3, 1, 4}, {2, 1}}, {{4}, {3, 4}}, {{2, 3}, {}}, {{2, 1}, {1, 3}}, {{1}, {2, 2}}};
  struct Binary {
    const char* name;
    TensorFunction f;
    std::function<double(double, double)> ref;
  };
  const Binary smooth[] = {
      {"add", [](const TV& v) { return add(v[0], v[1]); }, kPlus},
      {"sub", [](const TV& v) { return sub(v[0], v[1]); }, kMinus},
      {"mul", [](const TV& v) { return mul(v[0], v[1]); }, kTimes},
      {"div", [](const TV& v) { return div(v[0], v[1]); }, kOver},
  };
  const Binary extrema[] = {
      {"maximum", [](const TV& v) { return maximum(v[0], v[1]); }, kMax},
      {"minimum", [](const TV& v) { return minimum(v[0], v[1]); }, kMin},
  };
  uint64_t seed = 10;
  for (const Pair& p : pairs) {
    const std::string shapes = std::string(" ") + to_string(p.a) + " with " + to_string(p.b);
    for (const Binary& op : smooth) {
      // Both sides stay |v| >= 0.3 so that either can be the divisor.
      const Tensor x = leaf(away(normal(p.a, ++seed), {0.f}, 0.3f)), y = leaf(away(normal(p.b, ++seed), {0.f}, 0.3f));
      t.def(op.name + shapes, TV{x, y}, op.f).ref(pointwise2(op.ref));
      t.def(op.name + std::string(" (swapped)") + shapes, TV{y, x}, op.f).ref(pointwise2(op.ref));
    }
    for (const Binary& op : extrema) {
      const TV xy = distinct_pair(p.a, p.b, ++seed);
      t.def(op.name + shapes, xy, op.f).ref(pointwise2(op.ref));
      t.def(op.name + std::string(" (swapped)") + shapes, TV{xy[1], xy[0]}, op.f).ref(pointwise2(op.ref));
    }
  }

  // 0-d tensors.
  const Tensor s = leaf(normal({}, 1)), s2 = leaf(normal({}, 2)), sp = leaf(uni({}, 0.5f, 2.f, 3));
  const Tensor x = leaf(normal({2, 3}, 4));
  t.def("0-d * 0-d", TV{s, s2}, [](const TV& v) { return v[0] * v[1]; }).ref(pointwise2(kTimes));
  t.def("0-d * [2,3]", TV{s, x}, [](const TV& v) { return v[0] * v[1]; }).ref(pointwise2(kTimes));
  t.def("[2,3] / 0-d", TV{sp, x}, [](const TV& v) { return v[1] / v[0]; });
}

// ---- elementwise functions ----
void functions(Table& t) {
  t.def("exp (transposed)", [] { return TV{leaf(tr(normal({6, 5}, 40)))}; }, [](const TV& v) { return exp(v[0]); })
      .ref(pointwise([](double x) { return std::exp(x); }));
  t.def("log (positive, stride 2)", [] { return TV{leaf(every2(uni({4, 10}, 0.2f, 3.f, 41), 1))}; },
        [](const TV& v) { return log(v[0]); })
      .ref(pointwise([](double x) { return std::log(x); }));
  t.def("sqrt (positive)", [] { return TV{leaf(uni({3, 4, 5}, 0.2f, 3.f, 42))}; },
        [](const TV& v) { return sqrt(v[0]); })
      .ref(pointwise([](double x) { return std::sqrt(x); }));
  t.def("abs (permuted)", [] { return TV{leaf(perm(away(normal({3, 4, 5}, 43), {0.f}), {1, 2, 0}))}; },
        [](const TV& v) { return abs(v[0]); })
      .ref(pointwise([](double x) { return std::fabs(x); }));
  t.def("relu", [] { return TV{leaf(away(normal({3, 4, 5}, 44), {0.f}))}; }, [](const TV& v) { return relu(v[0]); })
      .ref(pointwise([](double x) { return std::max(x, 0.0); }));
  t.def("leaky_relu", [] { return TV{leaf(away(normal({3, 4, 5}, 45), {0.f}))}; },
        [](const TV& v) { return leaky_relu(v[0]); })
      .ref(leaky_relu_ref());
  t.def("leaky_relu slope 0.2 (transposed)", [] { return TV{leaf(tr(away(normal({5, 4}, 46), {0.f})))}; },
        [](const TV& v) { return leaky_relu(v[0], 0.2f); })
      .ref(leaky_relu_ref(0.2));
  t.def("sigmoid", [] { return TV{leaf(normal({3, 4, 5}, 47))}; }, [](const TV& v) { return sigmoid(v[0]); })
      .ref(pointwise(sigmoid_d));
  // Both sigmoid branches, saturated tails.
  t.def("sigmoid (wide range)", [] { return TV{leaf(normal({3, 4, 5}, 48) * 6.f)}; },
        [](const TV& v) { return sigmoid(v[0]); })
      .ref(pointwise(sigmoid_d));
  t.def("tanh", [] { return TV{leaf(normal({3, 4, 5}, 49))}; }, [](const TV& v) { return tanh(v[0]); })
      .ref(pointwise([](double x) { return std::tanh(x); }));
  t.def("tanh (wide range)", [] { return TV{leaf(normal({3, 4, 5}, 50) * 6.f)}; },
        [](const TV& v) { return tanh(v[0]); })
      .ref(pointwise([](double x) { return std::tanh(x); }));
  t.def("gelu", [] { return TV{leaf(normal({3, 4, 5}, 51))}; }, [](const TV& v) { return gelu(v[0]); })
      .ref(pointwise(gelu_d));
  t.def("gelu (wide range)", [] { return TV{leaf(normal({3, 4, 5}, 52) * 4.f)}; },
        [](const TV& v) { return gelu(v[0]); })
      .ref(pointwise(gelu_d));
  t.def("softplus", [] { return TV{leaf(normal({3, 4, 5}, 53) * 3.f)}; }, [](const TV& v) { return softplus(v[0]); })
      .ref(softplus_ref());
  t.def("softplus beta 2", [] { return TV{leaf(normal({3, 4, 5}, 54))}; },
        [](const TV& v) { return softplus(v[0], 2.f); })
      .ref(softplus_ref(2));
  // Above threshold/beta softplus is the identity (a small jump in value there, as in PyTorch):
  // inputs on both sides of x = 2, away from it.
  t.def("softplus beta 0.5 threshold 1 (both branches)",
        [] { return TV{leaf(away(normal({3, 4, 5}, 55) * 2.f + 1.5f, {2.f}, 0.1f))}; },
        [](const TV& v) { return softplus(v[0], 0.5f, 1.f); })
      .ref(softplus_ref(0.5, 1));
  t.def("elu", [] { return TV{leaf(away(normal({3, 4, 5}, 301) * 2.f, {0.f}))}; },
        [](const TV& v) { return elu(v[0]); })
      .ref(elu_ref(1))
      .also(kCudaGradcheck);
  t.def("elu alpha 0.5 (transposed)", [] { return TV{leaf(tr(away(normal({5, 4}, 302) * 2.f, {0.f})))}; },
        [](const TV& v) { return elu(v[0], 0.5f); })
      .ref(elu_ref(0.5));
  t.def("selu", [] { return TV{leaf(away(normal({3, 4, 5}, 303) * 2.f, {0.f}))}; },
        [](const TV& v) { return selu(v[0]); })
      .ref(elu_ref(kSeluAlpha, kSeluScale))
      .also(kCudaGradcheck);
  t.def("silu (wide range)", [] { return TV{leaf(normal({3, 4, 5}, 304) * 4.f)}; },
        [](const TV& v) { return silu(v[0]); })
      .ref(pointwise([](double x) { return x * sigmoid_d(x); }))
      .also(kCudaGradcheck);
  t.def("mish (wide range)", [] { return TV{leaf(normal({3, 4, 5}, 305) * 4.f)}; },
        [](const TV& v) { return mish(v[0]); })
      .ref(pointwise([](double x) { return x * std::tanh(std::log1p(std::exp(x))); }))
      .also(kCudaGradcheck);
  // Both kinks at ±3 and the flat sides beyond them.
  t.def("hardswish", [] { return TV{leaf(away(normal({3, 4, 5}, 306) * 3.f, {-3.f, 3.f}))}; },
        [](const TV& v) { return hardswish(v[0]); })
      .ref(pointwise([](double x) { return x * hardsigmoid_d(x); }))
      .also(kCudaGradcheck);
  t.def("hardsigmoid (permuted)",
        [] { return TV{leaf(perm(away(normal({3, 4, 5}, 307) * 3.f, {-3.f, 3.f}), {2, 0, 1}))}; },
        [](const TV& v) { return hardsigmoid(v[0]); })
      .ref(pointwise(hardsigmoid_d))
      .also(kCudaGradcheck);
  t.def("prelu [2,3,4,4] with a slope per channel [3]",
        [] { return TV{leaf(away(normal({2, 3, 4, 4}, 308), {0.f})), leaf(normal({3}, 309))}; },
        [](const TV& v) { return prelu(v[0], v[1]); })
      .ref(prelu_ref())
      .also(kCudaGradcheck);
  t.def("prelu [4,5] (transposed) with one slope [1]",
        [] { return TV{leaf(tr(away(normal({5, 4}, 310), {0.f}))), leaf(normal({1}, 311))}; },
        [](const TV& v) { return prelu(v[0], v[1]); })
      .ref(prelu_ref());
  t.def("prelu [3,4] with a slope per channel [4]",
        [] { return TV{leaf(away(normal({3, 4}, 312), {0.f})), leaf(normal({4}, 313))}; },
        [](const TV& v) { return prelu(v[0], v[1]); })
      .ref(prelu_ref());
  t.def("clamp lo", [] { return TV{leaf(away(normal({4, 5}, 56), {-0.5f, 0.3f}))}; },
        [](const TV& v) { return clamp(v[0], -0.5f, std::nullopt); })
      .ref(clamp_ref(-0.5, kInf));
  t.def("clamp hi", [] { return TV{leaf(away(normal({4, 5}, 57), {-0.5f, 0.3f}))}; },
        [](const TV& v) { return clamp(v[0], std::nullopt, 0.3f); })
      .ref(clamp_ref(-kInf, double(0.3f)));
  t.def("clamp lo and hi (transposed)", [] { return TV{leaf(tr(away(normal({5, 4}, 58), {-0.5f, 0.3f})))}; },
        [](const TV& v) { return clamp(v[0], -0.5f, 0.3f); })
      .ref(clamp_ref(-0.5, double(0.3f)));
  t.def("function chain on [300,347] (104100 elements)", [] { return TV{leaf(normal({300, 347}, 59))}; },
        [](const TV& v) { return tanh(v[0]) * sigmoid(v[0]) + gelu(v[0]) * 0.5f - exp(-(v[0] * v[0])); })
      .except(kGradcheck);  // sized for the GPU
  t.def("sigmoid * x on a transposed [347,300]", [] { return TV{leaf(tr(normal({300, 347}, 60)))}; },
        [](const TV& v) { return sigmoid(v[0]) * v[0]; })
      .except(kGradcheck);  // sized for the GPU
  t.def("activations on [300,347] (104100 elements)",
        [] { return TV{leaf(normal({300, 347}, 314) * 3.f), leaf(normal({347}, 315))}; },
        [](const TV& v) {
          return elu(v[0], 0.7f) + selu(v[0]) + silu(v[0]) + mish(v[0]) + hardswish(v[0]) + hardsigmoid(v[0]) +
                 prelu(v[0], v[1]);
        })
      .except(kGradcheck);  // sized for the GPU
  t.def("broadcast add [512,1] + [1,700]", [] { return TV{leaf(normal({512, 1}, 61)), leaf(normal({1, 700}, 62))}; },
        [](const TV& v) { return v[0] + v[1]; }, kSum)  // gradients sum 700 and 512 terms
      .ref(pointwise2(kPlus))
      .except(kGradcheck);  // sized for the GPU

  // Contiguous inputs, and other layouts.
  const Tensor x = leaf(normal({3, 4}, 1)), pos = leaf(uni({3, 4}, 0.3f, 3.f, 2));
  t.def("exp", TV{x}, [](const TV& v) { return exp(v[0]); }).ref(pointwise([](double e) { return std::exp(e); }));
  t.def("log", TV{pos}, [](const TV& v) { return log(v[0]); }).ref(pointwise([](double e) { return std::log(e); }));
  const Tensor k = leaf(away(normal({3, 4}, 1), {0.f}));
  t.def("abs", TV{k}, [](const TV& v) { return abs(v[0]); }).ref(pointwise([](double e) { return std::fabs(e); }));
  t.def("leaky_relu slope=0.2", TV{k}, [](const TV& v) { return leaky_relu(v[0], 0.2f); }).ref(leaky_relu_ref(0.2));
  t.def("softplus beta=0.5", TV{x}, [](const TV& v) { return softplus(v[0], 0.5f); }).ref(softplus_ref(0.5));
  t.def("clamp lo and hi", TV{leaf(away(normal({4, 5}, 2), {-0.5f, 0.3f}))},
        [](const TV& v) { return clamp(v[0], -0.5f, 0.3f); })
      .ref(clamp_ref(-0.5, double(0.3f)));
  const Tensor s = leaf(every2(normal({3, 8}, 2), 1));  // [3, 4], strides (8, 2)
  t.def("sigmoid(strided)", TV{s}, [](const TV& v) { return sigmoid(v[0]); }).ref(pointwise(sigmoid_d));
  t.def("pow(|strided|+1, 1.5)", TV{s}, [](const TV& v) { return pow(v[0] * v[0] + 1.f, 1.5f); });
  const Tensor z = leaf(normal({}, 1)), zp = leaf(uni({}, 0.5f, 2.f, 3));
  t.def("0-d exp", TV{z}, [](const TV& v) { return exp(v[0]); }).ref(pointwise([](double e) { return std::exp(e); }));
  t.def("0-d sigmoid", TV{z}, [](const TV& v) { return sigmoid(v[0]); }).ref(pointwise(sigmoid_d));
  t.def("0-d pow 2.5", TV{zp}, [](const TV& v) { return pow(v[0], 2.5f); }).ref(pow_ref(2.5));

  // Empty tensors.
  t.def("add [0,3] + [3] (empty)", [] { return TV{leaf(normal({0, 3}, 63)), leaf(normal({3}, 64))}; },
        [](const TV& v) { return add(v[0], v[1]); })
      .except(kGradcheck);  // no element to perturb
  t.def("exp * x on [2,0,4] (empty)", [] { return TV{leaf(normal({2, 0, 4}, 65))}; },
        [](const TV& v) { return exp(v[0]) * v[0]; })
      .except(kGradcheck);  // no element to perturb
  t.def("relu and mul scalar on [0] (empty)", [] { return TV{leaf(normal({0}, 66))}; },
        [](const TV& v) { return relu(v[0]) * 3.f; })
      .except(kGradcheck);  // no element to perturb
}

// ---- comparisons and selection ----
void selection(Table& t) {
  struct Comparison {
    const char* name;
    Tensor (*op)(const Tensor&, const Tensor&);
    std::function<double(double, double)> ref;
  };
  const Comparison comparisons[] = {
      {"eq", eq, [](double a, double b) { return double(a == b); }},
      {"ne", ne, [](double a, double b) { return double(a != b); }},
      {"lt", lt, [](double a, double b) { return double(a < b); }},
      {"le", le, [](double a, double b) { return double(a <= b); }},
      {"gt", gt, [](double a, double b) { return double(a > b); }},
      {"ge", ge, [](double a, double b) { return double(a >= b); }}};
  for (const Comparison& c : comparisons) {
    auto fn = c.op;
    t.def(std::string(c.name) + " broadcast [4,5] with [5] (ties)",
          [] { return TV{ints({4, 5}, -1, 1, 70), ints({5}, -1, 1, 71)}; },
          [fn](const TV& v) { return fn(v[0], v[1]); }, kExact)
        .ref(pointwise2(c.ref))
        .except(kGradcheck);  // no gradient
    t.def(std::string(c.name) + " transposed with strided (ties)",
          [] { return TV{tr(ints({5, 4}, -1, 1, 72)), every2(ints({4, 10}, -1, 1, 73), 1)}; },
          [fn](const TV& v) { return fn(v[0], v[1]); }, kExact)
        .ref(pointwise2(c.ref))
        .except(kGradcheck);  // no gradient
  }
  t.def("where cond [3,4]",
        [] { return TV{ints({3, 4}, 0, 1, 74), leaf(normal({3, 4}, 75)), leaf(normal({3, 4}, 76))}; },
        [](const TV& v) { return where(v[0], v[1], v[2]); });
  t.def("where broadcast [3,1] ? [3,4] : [4]",
        [] { return TV{ints({3, 1}, 0, 1, 77), leaf(normal({3, 4}, 78)), leaf(normal({4}, 79))}; },
        [](const TV& v) { return where(v[0], v[1], v[2]); });
  t.def("where transposed cond ? 0-d : strided",
        [] { return TV{tr(ints({4, 3}, 0, 1, 80)), leaf(normal({}, 81)), leaf(every2(normal({3, 8}, 82), 1))}; },
        [](const TV& v) { return where(v[0], v[1], v[2]); });
  t.def("masked_fill", [] { return TV{leaf(normal({3, 4}, 83)), ints({3, 4}, 0, 1, 84)}; },
        [](const TV& v) { return masked_fill(v[0], v[1], -1.f); });
  t.def("masked_fill broadcast mask [4]", [] { return TV{leaf(normal({3, 4}, 85)), ints({4}, 0, 1, 86)}; },
        [](const TV& v) { return masked_fill(v[0], v[1], 2.f); });
  t.def("masked_fill mask [2,1,4] widens [3,4]", [] { return TV{leaf(normal({3, 4}, 87)), ints({2, 1, 4}, 0, 1, 88)}; },
        [](const TV& v) { return masked_fill(v[0], v[1], 0.f); });

  const Tensor cond = from_vector({1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1}, {3, 4});
  const Tensor brow = leaf(normal({4}, 3)), s = leaf(normal({}, 4)), b = leaf(normal({3, 4}, 2));
  t.def("where broadcast [3,4] ? [] : [4]", TV{cond, s, brow}, [](const TV& v) { return where(v[0], v[1], v[2]); });
  t.def("where, only b requires grad", TV{cond, normal({3, 4}, 9), b},
        [](const TV& v) { return where(v[0], v[1], v[2]); });
  const Tensor tl = leaf(tr(normal({4, 3}, 1)));            // [3, 4], strides (1, 3)
  const Tensor sl = leaf(every2(normal({3, 8}, 2), 1));     // [3, 4], strides (8, 2)
  t.def("where(cond, transposed, strided)", TV{from_vector({1, 0, 1, 0}, {4}), tl, sl},
        [](const TV& v) { return where(v[0], v[1], v[2]); });

  const TV ab = distinct_pair({3, 4}, {3, 4}, 1);
  t.def("maximum", ab, [](const TV& v) { return maximum(v[0], v[1]); }).ref(pointwise2(kMax));
  t.def("minimum", ab, [](const TV& v) { return minimum(v[0], v[1]); }).ref(pointwise2(kMin));
  // Against a constant: only the tensor side is checked.
  const Tensor x = leaf(away(normal({3, 4}, 2), {0.f}));
  t.def("maximum with a constant 0", TV{x, zeros({})}, [](const TV& v) { return maximum(v[0], v[1]); })
      .ref(pointwise2(kMax));
  t.def("minimum with a constant 0", TV{x, zeros({})}, [](const TV& v) { return minimum(v[1], v[0]); });
}

// ---- reductions ----
void reductions(Table& t) {
  const std::vector<std::vector<int64_t>> dims_list = {{0}, {1}, {2}, {-1}, {0, 2}, {1, 2}, {-3, -2}, {0, 1, 2}, {}};
  // The gradient check on cuda:0 as well, for a few.
  using Dims = std::vector<int64_t>;
  auto on_device = [](const Dims& dims, bool keep, const std::string& op) {
    return (op == "sum" && dims == Dims{0, 2} && keep) || (op == "mean" && dims == Dims{1} && !keep) ||
           (op == "max" && dims == Dims{1} && !keep) || (op == "min" && dims.empty() && !keep) ||
           (op == "max" && dims == Dims{0, 2} && keep);
  };
  for (const auto& dims : dims_list)
    for (bool keep : {false, true}) {
      const std::string cfg = dims_str(dims) + (keep ? " keepdim" : "");
      const unsigned sum_dev = on_device(dims, keep, "sum") ? kCudaGradcheck : 0u;
      const unsigned mean_dev = on_device(dims, keep, "mean") ? kCudaGradcheck : 0u;
      const unsigned max_dev = on_device(dims, keep, "max") ? kCudaGradcheck : 0u;
      const unsigned min_dev = on_device(dims, keep, "min") ? kCudaGradcheck : 0u;
      t.def("sum [6,7,8] over " + cfg, [] { return TV{leaf(normal({6, 7, 8}, 90))}; },
            [dims, keep](const TV& v) { return sum(v[0], dims, keep); }, kSum)
          .also(sum_dev);
      t.def("mean [6,7,8] over " + cfg, [] { return TV{leaf(normal({6, 7, 8}, 91))}; },
            [dims, keep](const TV& v) { return mean(v[0], dims, keep); }, kSum)
          .also(mean_dev);
      t.def("max [5,6,7] over " + cfg, [] { return TV{leaf(distinct({5, 6, 7}, 92))}; },
            [dims, keep](const TV& v) { return max(v[0], dims, keep); })
          .also(max_dev);
      t.def("min [5,6,7] over " + cfg, [] { return TV{leaf(distinct({5, 6, 7}, 93))}; },
            [dims, keep](const TV& v) { return min(v[0], dims, keep); })
          .also(min_dev);
    }
  t.def("sum [64,1000] over dim 1", [] { return TV{leaf(normal({64, 1000}, 94))}; },
        [](const TV& v) { return sum(v[0], {1}); }, kSum)
      .except(kGradcheck);  // sized for the GPU
  t.def("sum [1000,64] over dim 0", [] { return TV{leaf(normal({1000, 64}, 95))}; },
        [](const TV& v) { return sum(v[0], {0}); }, kSum)
      .except(kGradcheck);  // sized for the GPU
  t.def("mean of all 300000 elements", [] { return TV{leaf(normal({300, 1000}, 96))}; },
        [](const TV& v) { return mean(v[0]); }, kSum)
      .except(kGradcheck);  // sized for the GPU
  t.def("sum permuted 4-D over {1,3}", [] { return TV{leaf(perm(normal({4, 5, 6, 7}, 97), {2, 0, 3, 1}))}; },
        [](const TV& v) { return sum(v[0], {1, 3}); }, kSum);
  t.def("sum transposed over dim 0", [] { return TV{leaf(tr(normal({4, 3}, 98)))}; },
        [](const TV& v) { return sum(v[0], {0}); }, kSum);
  t.def("mean permuted over {1,2} keepdim", [] { return TV{leaf(perm(normal({3, 4, 2}, 99), {2, 0, 1}))}; },
        [](const TV& v) { return mean(v[0], {1, 2}, true); }, kSum);
  t.def("Tensor::sum / Tensor::mean", [] { return TV{leaf(normal({2, 3, 4}, 100))}; },
        [](const TV& v) { return v[0].sum({1}) * v[0].mean({0, 1}, true).squeeze(0); }, kSum);
  t.def("max [64,1000] over dim 1", [] { return TV{leaf(distinct({64, 1000}, 101))}; },
        [](const TV& v) { return max(v[0], {1}); })
      .except(kGradcheck);  // sized for the GPU
  t.def("min of a transposed [4,3] over dim 1", [] { return TV{leaf(tr(distinct({3, 4}, 102)))}; },
        [](const TV& v) { return min(v[0], {1}); });
  t.def("max of a strided tensor", [] { return TV{leaf(every2(distinct({6, 10}, 103), 1))}; },
        [](const TV& v) { return max(v[0]); });
  const Tensor dt = leaf(tr(from_vector(distinct_values(12, 4), {4, 3})));
  t.def("max(transposed, {1})", TV{dt}, [](const TV& v) { return max(v[0], {1}); });
  t.def("min(transposed)", TV{dt}, [](const TV& v) { return min(v[0]); });
  const Tensor s = leaf(normal({}, 1));
  t.def("sum(0-d)", TV{s}, [](const TV& v) { return sum(v[0]); });
  t.def("mean(0-d)", TV{s}, [](const TV& v) { return mean(v[0]); });
  t.def("max(0-d)", TV{s}, [](const TV& v) { return max(v[0]); });
  t.def("sum over all dims to 0-d", TV{leaf(normal({2, 3}, 4))}, [](const TV& v) { return sum(v[0] * v[0]); }, kSum);

  t.def("argmax (all dims)", [] { return TV{distinct({5, 6, 7}, 104)}; }, [](const TV& v) { return argmax(v[0]); },
        kExact)
      .except(kGradcheck);  // indices: no gradient
  t.def("argmax dim 1", [] { return TV{distinct({5, 6, 7}, 105)}; }, [](const TV& v) { return argmax(v[0], 1); },
        kExact)
      .except(kGradcheck);  // indices: no gradient
  t.def("argmin dim 0 keepdim", [] { return TV{distinct({5, 6, 7}, 106)}; },
        [](const TV& v) { return argmin(v[0], 0, true); }, kExact)
      .except(kGradcheck);  // indices: no gradient
  t.def("argmin (all dims)", [] { return TV{distinct({5, 6, 7}, 107)}; }, [](const TV& v) { return argmin(v[0]); },
        kExact)
      .except(kGradcheck);  // indices: no gradient
  t.def("argmax dim -1 of a transposed tensor", [] { return TV{tr(distinct({9, 4}, 108))}; },
        [](const TV& v) { return argmax(v[0], -1); }, kExact)
      .except(kGradcheck);  // indices: no gradient
  t.def("argmax over rows of 1000", [] { return TV{distinct({64, 1000}, 109)}; },
        [](const TV& v) { return argmax(v[0], 1); }, kExact)
      .except(kGradcheck);  // indices: no gradient
  for (const Shape& s : {Shape{3, 4}, Shape{3, 1}, Shape{1, 1, 4}, Shape{2, 1, 1}, Shape{4}, Shape{}, Shape{2, 3, 4}})
    t.def("sum_to " + to_string(s), [] { return TV{leaf(normal({2, 3, 4}, 110))}; },
          [s](const TV& v) { return sum_to(v[0], s); }, kSum)
        .also(s == Shape{3, 1} ? kCudaGradcheck : 0u);
}

// ---- matmul and linear ----
void products(Table& t) {
  struct MM {
    const char* name;
    Shape a, b;
    unsigned device_gradcheck = 0;
  };
  const MM mms[] = {
      {"1-D . 1-D", {64}, {64}},
      {"2-D . 1-D", {33, 65}, {65}},
      {"1-D . 2-D", {65}, {65, 17}, kCudaGradcheck},
      {"2-D . 2-D [33,65]x[65,17]", {33, 65}, {65, 17}},
      {"2-D . 2-D [128,256]x[256,64]", {128, 256}, {256, 64}},
      {"batched [3,16,32]x[3,32,8]", {3, 16, 32}, {3, 32, 8}},
      {"broadcast batch [2,1,5,6]x[3,6,4]", {2, 1, 5, 6}, {3, 6, 4}, kCudaGradcheck},
      {"3-D . 2-D", {3, 5, 6}, {6, 4}},
      {"2-D . 3-D", {5, 6}, {3, 6, 4}},
      {"3-D . 1-D", {2, 5, 6}, {6}},
      {"1-D . 3-D", {6}, {2, 6, 5}},
      {"outer dims of size 1", {1, 3}, {3, 1}},
  };
  uint64_t mseed = 120;
  for (const MM& m : mms) {
    const Shape a = m.a, b = m.b;
    const uint64_t s = (mseed += 2);
    OpCase& row = t.def(std::string("matmul ") + m.name,
                        [a, b, s] { return TV{leaf(normal(a, s)), leaf(normal(b, s + 1))}; },
                        [](const TV& v) { return matmul(v[0], v[1]); }, kGemm)
                      .also(m.device_gradcheck);
    if (numel(a) + numel(b) > 10000) row.except(kGradcheck);  // sized for the GPU
  }
  // Small ones, for the gradient check on both devices.
  t.def("matmul 2-D . 2-D", TV{leaf(normal({2, 3}, 8)), leaf(normal({3, 4}, 9))},
        [](const TV& v) { return matmul(v[0], v[1]); }, kGemm)
      .also(kCudaGradcheck);
  t.def("matmul 3-D . 3-D batched", TV{leaf(normal({2, 2, 3}, 10)), leaf(normal({2, 3, 4}, 11))},
        [](const TV& v) { return matmul(v[0], v[1]); }, kGemm);
  const Tensor a = leaf(normal({2, 3}, 50));
  const Tensor w = normal({3, 4}, 51);
  t.def("matmul, only a requires grad", TV{a, w}, [](const TV& v) { return matmul(v[0], v[1]); }, kGemm);
  t.def("matmul, only b requires grad", TV{a, w}, [](const TV& v) { return matmul(v[1].t().narrow(1, 0, 2), v[0]); },
        kGemm);

  // Transposed leaves go to BLAS with the transpose flag (no copy).
  t.def("matmul(A^T leaf, B)", [] { return TV{leaf(tr(normal({6, 5}, 150))), leaf(normal({6, 7}, 151))}; },
        [](const TV& v) { return matmul(v[0], v[1]); }, kGemm);
  t.def("matmul(A, B^T leaf)", [] { return TV{leaf(normal({5, 6}, 152)), leaf(tr(normal({7, 6}, 153)))}; },
        [](const TV& v) { return matmul(v[0], v[1]); }, kGemm);
  t.def("matmul(A^T leaf, B^T leaf)", [] { return TV{leaf(tr(normal({6, 5}, 154))), leaf(tr(normal({7, 6}, 155)))}; },
        [](const TV& v) { return matmul(v[0], v[1]); }, kGemm);
  t.def("batched matmul of transposed views",
        [] { return TV{leaf(normal({2, 3, 4}, 156)), leaf(normal({2, 5, 3}, 157))}; },
        [](const TV& v) { return matmul(v[0].transpose(1, 2), v[1].transpose(-1, -2)); }, kGemm)
      .also(kCudaGradcheck);
  // A stride-2 operand BLAS cannot read directly (copied first).
  t.def("matmul(stride-2 operand, B)",
        [] { return TV{leaf(every2(normal({5, 12}, 158), 1)), leaf(normal({6, 4}, 159))}; },
        [](const TV& v) { return matmul(v[0], v[1]); }, kGemm);
  // An expanded (stride-0) batch operand.
  t.def("matmul(expanded batch operand, B)", [] { return TV{leaf(normal({5, 6}, 160)), leaf(normal({3, 6, 4}, 161))}; },
        [](const TV& v) { return matmul(v[0].expand({3, 5, 6}), v[1]); }, kGemm);
  // Batch dims that are not outermost in memory.
  t.def("matmul of batch-permuted leaves",
        [] { return TV{leaf(perm(normal({2, 3, 4}, 162), {1, 0, 2})), leaf(perm(normal({4, 3, 2}, 163), {1, 0, 2}))}; },
        [](const TV& v) { return matmul(v[0], v[1]); }, kGemm);
  // Attention's q·kᵀ: heads cut from one [N, T, 3, H, D] tensor, whose batch dims no single
  // stride walks (copied, then one batched product on the GPU).
  t.def("matmul of heads cut from a wider tensor", [] { return TV{leaf(normal({2, 4, 3, 2, 5}, 167))}; },
        [](const TV& v) {
          const Tensor qkv = v[0].permute({2, 0, 3, 1, 4});
          const Tensor q = squeeze(narrow(qkv, 0, 0, 1), 0), k = squeeze(narrow(qkv, 0, 1, 1), 0);
          return matmul(q, k.transpose(-2, -1));
        },
        kGemm);
  t.def("matmul k = 1 (outer product)", [] { return TV{leaf(normal({7, 1}, 164)), leaf(tr(normal({5, 1}, 165)))}; },
        [](const TV& v) { return matmul(v[0], v[1]); }, kGemm);
  t.def("matmul(x, x^T)", [] { return TV{leaf(normal({9, 9}, 166))}; },
        [](const TV& v) { return matmul(v[0], v[0].t()); }, kGemm);
  const Tensor at = leaf(tr(normal({3, 2}, 1)));  // [2, 3], strides (1, 2)
  const Tensor bt = leaf(tr(normal({4, 3}, 2)));  // [3, 4], strides (1, 3)
  const Tensor b = leaf(normal({3, 4}, 4));
  t.def("matmul(c.t(), d.t())", TV{leaf(normal({3, 2}, 5)), leaf(normal({4, 3}, 6))},
        [](const TV& v) { return matmul(v[0].t(), v[1].t()); }, kGemm);
  t.def("matmul(1-D, Bᵀ leaf)", TV{leaf(normal({3}, 9)), bt}, [](const TV& v) { return matmul(v[0], v[1]); }, kGemm);
  t.def("matmul(Aᵀ leaf, 1-D)", TV{at, leaf(normal({3}, 10))}, [](const TV& v) { return matmul(v[0], v[1]); }, kGemm);
  const Tensor pb = leaf(perm(normal({2, 3, 4}, 13), {1, 0, 2}));  // [3, 2, 4], batch stride 4
  const Tensor pc = leaf(perm(normal({4, 3, 2}, 14), {1, 0, 2}));  // [3, 4, 2]
  t.def("matmul of batch-permuted transposed views", TV{pb, pc},
        [](const TV& v) { return matmul(v[1].transpose(1, 2), v[0].transpose(1, 2)); }, kGemm);
  const Tensor s1 = leaf(every2(normal({6}, 17), 0));  // [3], stride 2
  t.def("matmul(strided 1-D, B)", TV{s1, b}, [](const TV& v) { return matmul(v[0], v[1]); }, kGemm);
  t.def("matmul(Aᵀ leaf, strided 1-D)", TV{at, s1}, [](const TV& v) { return matmul(v[0], v[1]); }, kGemm);
  t.def("matmul(x, x)", TV{leaf(normal({3, 3}, 12))}, [](const TV& v) { return matmul(v[0], v[0]); }, kGemm);
  t.def("matmul(transposed, stridedᵀ)", TV{leaf(tr(normal({4, 3}, 1))), leaf(every2(normal({3, 8}, 2), 1))},
        [](const TV& v) { return matmul(v[0], v[1].t()); }, kGemm);
  t.def("matmul 1-D . 1-D gives 0-d", TV{leaf(normal({3}, 5)), leaf(normal({3}, 6))},
        [](const TV& v) { return matmul(v[0], v[1]) * v[0].sum(); }, kGemm);

  // y = x·Wᵀ + b as one product: every input, with and without bias, 1-D and batched x, a
  // transposed (non-contiguous) x and weight, and inputs that need no gradient.
  t.def("linear (functional) x W^T + b",
        [] { return TV{leaf(normal({8, 20}, 167)), leaf(normal({10, 20}, 168)), leaf(normal({10}, 169))}; },
        [](const TV& v) { return F::linear(v[0], v[1], v[2]); }, kGemm);
  const Tensor x = leaf(normal({4, 3}, 60)), lw = leaf(normal({5, 3}, 61)), lb = leaf(normal({5}, 62));
  t.def("linear without bias", TV{x, lw}, [](const TV& v) { return linear(v[0], v[1]); }, kGemm);
  t.def("linear, 1-D input", TV{leaf(normal({3}, 63)), lw, lb}, [](const TV& v) { return linear(v[0], v[1], v[2]); },
        kGemm);
  t.def("linear, [2, 2, 3] input", TV{leaf(normal({2, 2, 3}, 64)), lw, lb},
        [](const TV& v) { return linear(v[0], v[1], v[2]); }, kGemm);
  t.def("linear, transposed input and weight", TV{leaf(tr(normal({3, 4}, 65))), leaf(tr(normal({3, 5}, 66))), lb},
        [](const TV& v) { return linear(v[0], v[1], v[2]); }, kGemm);
  t.def("linear, input constant", TV{normal({4, 3}, 67), lw, lb}, [](const TV& v) { return linear(v[0], v[1], v[2]); },
        kGemm);
  t.def("linear, only the input", TV{x, normal({5, 3}, 68)}, [](const TV& v) { return linear(v[0], v[1]); }, kGemm);
}

// ---- shape and indexing ----
void shapes(Table& t) {
  auto x234 = [] { return TV{leaf(normal({2, 3, 4}, 180))}; };
  t.def("reshape [6,4]", x234, [](const TV& v) { return reshape(v[0], {6, 4}); });
  t.def("reshape of a transpose (copy)", x234, [](const TV& v) { return reshape(v[0].transpose(0, 1), {6, 4}); });
  t.def("view [2,12]", x234, [](const TV& v) { return view(v[0], {2, 12}); });
  // A transposed input: view splits a dim in place, reshape has to copy.
  t.def("view of a transpose [3,2,2,2]", x234, [](const TV& v) { return view(v[0].transpose(0, 1), {3, 2, 2, 2}); });
  t.def("flatten", x234, [](const TV& v) { return flatten(v[0]) * 2.f; });
  t.def("flatten(1) of a permute", x234, [](const TV& v) { return flatten(v[0].permute({2, 0, 1}), 1) * 2.f; });
  t.def("transpose(0, 2)", x234, [](const TV& v) { return transpose(v[0], 0, 2) * 2.f; });
  t.def("permute {2,0,1} then mul",
        x234, [](const TV& v) { return permute(v[0], {2, 0, 1}) * permute(v[0], {2, 0, 1}); });
  t.def("squeeze / unsqueeze", [] { return TV{leaf(normal({2, 1, 3, 1}, 181))}; },
        [](const TV& v) {
          return unsqueeze(squeeze(v[0]), 0) + squeeze(v[0], 1).unsqueeze(-1).squeeze(-2).squeeze(-1);
        });
  t.def("expand [3,1] -> [2,3,4]", [] { return TV{leaf(normal({3, 1}, 182))}; },
        [](const TV& v) { return expand(v[0], {2, 3, 4}) * 1.5f; });
  t.def("narrow(1, 1, 3) and narrow(0, -2, 2)", [] { return TV{leaf(normal({3, 6}, 183))}; },
        [](const TV& v) { return narrow(v[0], 1, 1, 3) * narrow(v[0], 0, -2, 2).narrow(1, 0, 3).sum({0}); });
  t.def("slice(1, 0, 6, 2)", [] { return TV{leaf(normal({3, 6}, 184))}; },
        [](const TV& v) { return slice(v[0], 1, 0, 6, 2) * 2.f; });
  t.def("slice(-1, -5, -1, 3)", [] { return TV{leaf(normal({3, 6}, 185))}; },
        [](const TV& v) { return slice(v[0], -1, -5, -1, 3) * 2.f; });
  t.def("slice of a slice", [] { return TV{leaf(normal({3, 6}, 186))}; },
        [](const TV& v) { return slice(slice(v[0], 1, 0, 6, 2), 0, 0, 3, 2) * 2.f; });
  t.def("slice(1, -100, 100, 4) clamped as Python does", [] { return TV{leaf(normal({3, 6}, 9101))}; },
        [](const TV& v) { return slice(v[0], 1, -100, 100, 4) * 2.f; });
  // The pieces weighted differently, so that a gradient routed to the wrong piece shows.
  t.def("split {1, 3, 2} along dim 1", [] { return TV{leaf(normal({2, 6, 3}, 9102))}; },
        [](const TV& v) {
          const std::vector<Tensor> p = split(v[0], {1, 3, 2}, 1);
          return concat({p[2] * 3.f, p[0] * p[0], p[1] * -1.5f}, 1);
        });
  t.def("chunk 3 of 7 along dim -1 (3, 3, 1)", [] { return TV{leaf(normal({2, 7}, 9103))}; },
        [](const TV& v) {
          const std::vector<Tensor> p = chunk(v[0], 3, -1);
          return concat({p[1] * 2.f, p[2] * p[2], p[0]}, 1);
        });
  t.def("overlapping slices multiplied", [] { return TV{leaf(normal({3, 6}, 187))}; },
        [](const TV& v) { return slice(v[0], 1, 0, 4) * slice(v[0], 1, 2, 6); });
  t.def("contiguous of a transpose", [] { return TV{leaf(normal({3, 6}, 188))}; },
        [](const TV& v) { return contiguous(v[0].t()) * 2.f; });
  t.def("contiguous of a permuted 4-D [16,8,12,12]", [] { return TV{leaf(normal({16, 12, 12, 8}, 189))}; },
        [](const TV& v) { return v[0].permute({0, 3, 1, 2}).contiguous() * 2.f; })
      .except(kGradcheck);  // sized for the GPU
  t.def("concat dim 1",
        [] { return TV{leaf(normal({2, 1, 3}, 190)), leaf(normal({2, 2, 3}, 191)), leaf(normal({2, 3, 3}, 192))}; },
        [](const TV& v) { return concat(v, 1) * 2.f; })
      .also(kCudaGradcheck);
  t.def("concat dim 0", [] { return TV{leaf(normal({1, 2, 3}, 193)), leaf(normal({3, 2, 3}, 194))}; },
        [](const TV& v) { return concat(v, 0) * 2.f; });
  t.def("concat dim -1 of transposed and strided parts",
        [] { return TV{leaf(tr(normal({4, 3}, 195))), leaf(every2(normal({3, 8}, 196), 1))}; },
        [](const TV& v) { return concat(v, -1) * 2.f; });
  t.def("concat of [1000,64] and [24,64]",
        [] { return TV{leaf(normal({1000, 64}, 197)), leaf(normal({24, 64}, 198))}; },
        [](const TV& v) { return concat(v, 0) * 2.f; })
      .except(kGradcheck);  // sized for the GPU
  for (int64_t d : {0, 1, 2, -1})
    t.def("stack dim " + std::to_string(d),
          [] { return TV{leaf(normal({2, 3}, 199)), leaf(normal({2, 3}, 200)), leaf(normal({2, 3}, 201))}; },
          [d](const TV& v) { return stack(v, d) * 2.f; });
  t.def("stack of one tensor twice", [] { return TV{leaf(normal({2, 3}, 202))}; },
        [](const TV& v) { return stack({v[0], v[0]}, 1) * 2.f; });

  // One view or copy at a time.
  const Tensor x = leaf(normal({2, 3, 4}, 1));
  t.def("reshape [4,-1]", TV{x}, [](const TV& v) { return reshape(v[0], {4, -1}); });
  t.def("Tensor::reshape [24]", TV{x}, [](const TV& v) { return v[0].reshape({24}); });
  t.def("view [-1]", TV{x}, [](const TV& v) { return view(v[0], {-1}); });
  t.def("view [2,3,2,2]", TV{x}, [](const TV& v) { return v[0].view({2, 3, 2, 2}); });
  t.def("flatten(1)", TV{x}, [](const TV& v) { return flatten(v[0], 1); });
  t.def("flatten(0, 1)", TV{x}, [](const TV& v) { return v[0].flatten(0, 1); });
  const Tensor x4 = leaf(normal({2, 1, 3, 1}, 1));
  t.def("squeeze()", TV{x4}, [](const TV& v) { return squeeze(v[0]); });
  t.def("squeeze(1)", TV{x4}, [](const TV& v) { return squeeze(v[0], 1); });
  t.def("squeeze(-1)", TV{x4}, [](const TV& v) { return v[0].squeeze(-1); });
  t.def("squeeze(0) of a non-1 dim (identity)", TV{x4}, [](const TV& v) { return squeeze(v[0], 0) * 2.f; });
  t.def("squeeze() of [1,1] to 0-d", TV{leaf(normal({1, 1}, 3))}, [](const TV& v) { return squeeze(v[0]); });
  const Tensor y = leaf(normal({2, 3}, 2));
  t.def("unsqueeze(0)", TV{y}, [](const TV& v) { return unsqueeze(v[0], 0); });
  t.def("unsqueeze(1)", TV{y}, [](const TV& v) { return unsqueeze(v[0], 1); });
  t.def("unsqueeze(-1)", TV{y}, [](const TV& v) { return v[0].unsqueeze(-1); });
  t.def("transpose(-1, -2)", TV{x}, [](const TV& v) { return transpose(v[0], -1, -2); });
  t.def("t()", TV{leaf(normal({3, 4}, 2))}, [](const TV& v) { return v[0].t(); });
  t.def("permute {2,0,1}", TV{x}, [](const TV& v) { return permute(v[0], {2, 0, 1}); });
  t.def("permute {1,2,0} then mul", TV{x},
        [](const TV& v) { return v[0].permute({1, 2, 0}) * v[0].permute({1, 2, 0}); });
  const Tensor col = leaf(normal({3, 1}, 1));
  t.def("expand [3,1] -> [-1,5]", TV{col}, [](const TV& v) { return v[0].expand({-1, 5}); });
  t.def("expand [4] -> [3,4]", TV{leaf(normal({4}, 2))}, [](const TV& v) { return expand(v[0], {3, 4}); });
  const Tensor x36 = leaf(normal({3, 6}, 3));
  t.def("narrow(1, 1, 3)", TV{x36}, [](const TV& v) { return narrow(v[0], 1, 1, 3); });
  t.def("narrow(0, -2, 2)", TV{x36}, [](const TV& v) { return v[0].narrow(0, -2, 2); });
  t.def("slice(1, 1, 6, 2)", TV{x36}, [](const TV& v) { return slice(v[0], 1, 1, 6, 2); });
  t.def("slice(0, 1, 3)", TV{x36}, [](const TV& v) { return slice(v[0], 0, 1, 3); });
  t.def("Tensor::contiguous of a slice", TV{x36}, [](const TV& v) { return slice(v[0], 1, 0, 6, 2).contiguous(); });
  const Tensor tl = leaf(tr(normal({4, 3}, 1)));         // [3, 4], strides (1, 3)
  const Tensor sl = leaf(every2(normal({3, 8}, 2), 1));  // [3, 4], strides (8, 2)
  t.def("reshape(transposed) copies", TV{tl}, [](const TV& v) { return reshape(v[0], {12}); });
  t.def("contiguous(strided)", TV{sl}, [](const TV& v) { return contiguous(v[0]); });
  t.def("concat(transposed, strided)", TV{tl, sl}, [](const TV& v) { return concat({v[0], v[1]}, 0); });
  t.def("concat dim -1", TV{leaf(normal({2, 3, 1}, 6)), leaf(normal({2, 3, 2}, 7)), leaf(normal({2, 3, 4}, 8))},
        [](const TV& v) { return concat(v, -1); });
  t.def("concat, one part constant", TV{leaf(normal({2, 1, 3}, 1)), normal({2, 2, 3}, 9), leaf(normal({2, 3, 3}, 3))},
        [](const TV& v) { return concat(v, 1); });
  const Tensor s = leaf(normal({}, 1)), s2 = leaf(normal({}, 2));
  t.def("reshape 0-d to [1,1]", TV{s}, [](const TV& v) { return reshape(v[0], {1, 1}); });
  t.def("unsqueeze 0-d", TV{s}, [](const TV& v) { return unsqueeze(v[0], 0); });
  t.def("flatten 0-d", TV{s}, [](const TV& v) { return flatten(v[0]); });
  t.def("expand 0-d to [2,3]", TV{s}, [](const TV& v) { return expand(v[0], {2, 3}); });
  t.def("stack 0-d", TV{s, s2}, [](const TV& v) { return stack({v[0], v[1], v[0]}); });

  // index_select and gather (repeated indices: gradients accumulate). gather's index has the
  // input's rank; along `dim` any length, elsewhere no larger.
  t.def("index_select dim 0 (repeats)", [] { return TV{leaf(normal({4, 3}, 210)), idx({2, 0, 2, 3, 2})}; },
        [](const TV& v) { return index_select(v[0], 0, v[1]); })
      .also(kCudaGradcheck);
  t.def("index_select dim 1 (repeats)", [] { return TV{leaf(normal({4, 3}, 211)), idx({1, 1, 0, 2, 1})}; },
        [](const TV& v) { return index_select(v[0], 1, v[1]); })
      .also(kCudaGradcheck);
  t.def("index_select dim 1 of 3-D", [] { return TV{leaf(normal({2, 4, 3}, 212)), idx({3, 0, 3})}; },
        [](const TV& v) { return index_select(v[0], 1, v[1]); });
  t.def("index_select 0-d index", [] { return TV{leaf(normal({4, 3}, 213)), scalar(1.f)}; },
        [](const TV& v) { return index_select(v[0], 0, v[1]); });
  t.def("index_select of a transposed input", [] { return TV{leaf(tr(normal({4, 3}, 214))), idx({3, 0, 3})}; },
        [](const TV& v) { return index_select(v[0], 1, v[1]); });
  t.def("index_select 512 rows of [1000,64] (many repeats)",
        [] { return TV{leaf(normal({1000, 64}, 215)), random_index({512}, 100, 216)}; },
        [](const TV& v) { return index_select(v[0], 0, v[1]); }, kSum)
      .except(kGradcheck);  // sized for the GPU
  t.def("gather dim 1 (repeats)",
        [] {
          return TV{leaf(normal({4, 3}, 217)),
                    from_vector({0, 2, 2, 1, 0, 0, 1, 1, 2, 2, 0, 2, 1, 0, 1, 2, 2, 2, 0, 1}, {4, 5})};
        },
        [](const TV& v) { return gather(v[0], 1, v[1]); })
      .also(kCudaGradcheck);
  t.def("gather dim 0 (repeats, narrower)",
        [] { return TV{leaf(normal({4, 3}, 218)), from_vector({3, 0, 3, 3, 1, 1, 0, 2, 3, 2}, {5, 2})}; },
        [](const TV& v) { return gather(v[0], 0, v[1]); })
      .also(kCudaGradcheck);
  t.def("gather dim 2 of 3-D",
        [] { return TV{leaf(normal({2, 3, 3}, 219)), from_vector({1, 1, 0, 2, 2, 2, 0, 0}, {2, 2, 2})}; },
        [](const TV& v) { return gather(v[0], 2, v[1]); });
  t.def("gather of a stride-2 input",
        [] { return TV{leaf(every2(normal({3, 8}, 220), 1)), from_vector({0, 3, 3, 1, 2, 2}, {3, 2})}; },
        [](const TV& v) { return gather(v[0], 1, v[1]); });
  t.def("gather [256,100] dim 1 (class scores)",
        [] { return TV{leaf(normal({256, 100}, 221)), random_index({256, 1}, 100, 222)}; },
        [](const TV& v) { return gather(v[0], 1, v[1]); })
      .except(kGradcheck);  // sized for the GPU
  t.def("embedding [4,6] indices into [50,8]",
        [] { return TV{leaf(normal({50, 8}, 223)), random_index({4, 6}, 50, 224)}; },
        [](const TV& v) { return F::embedding(v[1], v[0]); })
      .also(kCudaGradcheck);
}

// ---- softmax and dropout ----
void softmax_and_dropout(Table& t) {
  for (int64_t d : {0, 1, 2, -1, -3}) {
    t.def("softmax [4,5,6] dim " + std::to_string(d), [] { return TV{leaf(normal({4, 5, 6}, 230))}; },
          [d](const TV& v) { return softmax(v[0], d); }, kSum)
        .also(d == 1 ? kCudaGradcheck : 0u);
    t.def("log_softmax [4,5,6] dim " + std::to_string(d), [] { return TV{leaf(normal({4, 5, 6}, 231))}; },
          [d](const TV& v) { return log_softmax(v[0], d); }, kSum)
        .also(d == 0 ? kCudaGradcheck : 0u);
  }
  // Peaked distributions.
  t.def("softmax (peaked)", [] { return TV{leaf(normal({3, 5}, 232) * 5.f)}; },
        [](const TV& v) { return softmax(v[0], 1); }, kSum);
  t.def("log_softmax (peaked)", [] { return TV{leaf(normal({3, 5}, 233) * 5.f)}; },
        [](const TV& v) { return log_softmax(v[0], 1); }, kSum);
  t.def("softmax 1-D", [] { return TV{leaf(normal({5}, 234))}; }, [](const TV& v) { return softmax(v[0], 0); }, kSum);
  t.def("softmax [64,1000] dim 1", [] { return TV{leaf(normal({64, 1000}, 235))}; },
        [](const TV& v) { return softmax(v[0], 1); }, kSum)
      .except(kGradcheck);  // sized for the GPU
  t.def("log_softmax [1000,64] dim 0", [] { return TV{leaf(normal({1000, 64}, 236))}; },
        [](const TV& v) { return log_softmax(v[0], 0); }, kSum)
      .except(kGradcheck);  // sized for the GPU
  t.def("softmax of a permuted input dim 1", [] { return TV{leaf(perm(normal({3, 4, 2}, 237), {2, 0, 1}))}; },
        [](const TV& v) { return softmax(v[0], 1); }, kSum);
  t.def("log_softmax of a transposed input dim 0", [] { return TV{leaf(tr(normal({4, 3}, 238)))}; },
        [](const TV& v) { return log_softmax(v[0], 0); }, kSum);
  t.def("log_softmax of logits near 1000 (stability)", [] { return TV{leaf(normal({4, 6}, 239) * 3.f + 1000.f)}; },
        [](const TV& v) { return log_softmax(v[0], 1); }, kSum);
  t.def("softmax 0-d", [] { return TV{leaf(normal({}, 240))}; }, [](const TV& v) { return softmax(v[0], 0) + v[0]; },
        kSum);

  // Dropout without randomness (the device's masks are checked in test_cuda's dropoutOnDevice).
  t.def("dropout p=0 train (identity)", [] { return TV{leaf(normal({4, 5}, 245))}; },
        [](const TV& v) { return dropout(v[0], 0.f, true) * 2.f; });
  t.def("dropout eval (identity)", [] { return TV{leaf(normal({4, 5}, 246))}; },
        [](const TV& v) { return tanh(dropout(v[0], 0.5f, false)); });
  t.def("dropout p=1 train (all dropped)", [] { return TV{leaf(normal({4, 5}, 247))}; },
        [](const TV& v) { return dropout(v[0], 1.f, true) * 1.f; });
  t.def("dropout eval", TV{leaf(normal({4, 5}, 1))}, [](const TV& v) { return dropout(v[0], 0.5f, false); });
  // Training with a fresh generator per call: every evaluation draws the same mask. The device
  // draws other masks than the CPU, so these leave out test_cuda's comparison.
  for (float p : {0.3f, 0.5f})
    t.def("dropout train p=" + std::to_string(p), TV{leaf(normal({4, 5}, 1))},
          [p](const TV& v) {
            Generator gen(7);
            return dropout(v[0], p, true, &gen);
          })
        .except(kCuda)  // another mask on the device
        .also(p == 0.5f ? kCudaGradcheck : 0u);
  t.def("dropout(transposed) train", TV{leaf(tr(normal({4, 3}, 1)))},
        [](const TV& v) {
          Generator gen(3);
          return dropout(v[0], 0.5f, true, &gen);
        })
      .except(kCuda);  // another mask on the device
  // dropout2d: one draw per (example, channel), so a channel is kept or dropped whole.
  t.def("dropout2d p=0 train (identity)", [] { return TV{leaf(normal({2, 3, 2, 2}, 248))}; },
        [](const TV& v) { return dropout2d(v[0], 0.f, true) * 2.f; });
  t.def("dropout2d eval (identity)", [] { return TV{leaf(normal({2, 3, 2, 2}, 249))}; },
        [](const TV& v) { return tanh(dropout2d(v[0], 0.5f, false)); });
  t.def("dropout2d p=1 train (all dropped)", [] { return TV{leaf(normal({2, 3, 2, 2}, 250))}; },
        [](const TV& v) { return dropout2d(v[0], 1.f, true) * 1.f; });
  t.def("dropout2d train p=0.5", [] { return TV{leaf(normal({3, 4, 2, 3}, 251))}; },
        [](const TV& v) {
          Generator gen(5);
          return dropout2d(v[0], 0.5f, true, &gen);
        })
      .except(kCuda)  // another mask on the device
      .also(kCudaGradcheck);
}

// ---- conv2d and pooling ----
void convolutions(Table& t) {
  struct Conv {
    const char* name;
    Shape x, w;
    bool bias;
    Conv2dOptions opt;
    unsigned more = 0;
  };
  const Conv convs[] = {
      {"3x3 with bias", {1, 2, 5, 5}, {3, 2, 3, 3}, true, {}, kCudaGradcheck},
      {"stride 2 padding 1, no bias", {2, 2, 6, 5}, {2, 2, 3, 3}, false, {2, 2, 1, 1, 1, 1, 1}, kCudaGradcheck},
      {"dilation 2", {1, 1, 7, 6}, {2, 1, 3, 3}, true, {1, 1, 0, 0, 2, 2, 1}, kCudaGradcheck},
      {"groups 2", {1, 4, 5, 5}, {4, 2, 3, 3}, true, {1, 1, 1, 1, 1, 1, 2}, kCudaGradcheck},
      {"depthwise (groups = C)", {2, 3, 4, 4}, {3, 1, 2, 2}, false, {1, 1, 0, 0, 1, 1, 3}, kCudaGradcheck},
      {"1x3 kernel, stride (2,1), pad (0,1), dilation (1,2)", {1, 2, 5, 6}, {2, 2, 1, 3}, true, {2, 1, 0, 1, 1, 2, 1}},
      {"3x2 kernel, stride (1,2), pad (1,0)", {1, 2, 5, 5}, {3, 2, 3, 2}, false, {1, 2, 1, 0, 1, 1, 1}},
      {"1x1 kernel, groups 2, bias", {2, 4, 3, 3}, {6, 2, 1, 1}, true, {1, 1, 0, 0, 1, 1, 2}},
      {"LeNet-sized [8,3,16,16] x [16,3,5,5] pad 2", {8, 3, 16, 16}, {16, 3, 5, 5}, true, {1, 1, 2, 2, 1, 1, 1}},
      {"[4,8,12,12] x [16,2,3,3] groups 4 stride 2 pad 1", {4, 8, 12, 12}, {16, 2, 3, 3}, true, {2, 2, 1, 1, 1, 1, 4}},
      {"[16,1,28,28] x [20,1,5,5] (LeNet conv1)", {16, 1, 28, 28}, {20, 1, 5, 5}, true, {}},
      {"[16,20,12,12] x [50,20,5,5] (LeNet conv2)", {16, 20, 12, 12}, {50, 20, 5, 5}, true, {}},
  };
  uint64_t cseed = 250;
  for (const Conv& c : convs) {
    const Shape xs = c.x, ws = c.w;
    const bool has_bias = c.bias;
    const Conv2dOptions opt = c.opt;
    const uint64_t s = (cseed += 3);
    OpCase& row = t.def(std::string("conv2d ") + c.name,
                        [xs, ws, has_bias, s] {
                          TV v{leaf(normal(xs, s)), leaf(normal(ws, s + 1) * 0.5f)};
                          if (has_bias) v.push_back(leaf(normal({ws[0]}, s + 2)));
                          return v;
                        },
                        [opt](const TV& v) { return conv2d(v[0], v[1], v.size() > 2 ? v[2] : Tensor(), opt); }, kConv)
                      .also(c.more);
    if (numel(xs) > 1000) row.except(kGradcheck);  // sized for the GPU
  }
  t.def("conv2d permuted input, transposed-kernel weight",
        [] {
          return TV{leaf(perm(normal({1, 4, 5, 2}, 300), {0, 3, 1, 2})),
                    leaf(perm(normal({2, 2, 3, 2}, 301), {0, 1, 3, 2}))};
        },
        [](const TV& v) { return conv2d(v[0], v[1], Tensor(), {1, 1, 1, 1, 1, 1, 1}); }, kConv);
  // conv_transpose2d: weight [C, O/groups, kH, kW].
  const struct {
    const char* name;
    Shape x, w;
    bool bias;
    ConvTranspose2dOptions opt;
    unsigned more = 0;
  } transposed[] = {
      {"3x3 with bias", {1, 2, 4, 4}, {2, 3, 3, 3}, true, {}, kCudaGradcheck},
      {"stride 2 padding 1 output_padding 1, no bias", {2, 3, 4, 3}, {3, 2, 3, 3}, false,
       {2, 2, 1, 1, 1, 1, 1, 1, 1}, kCudaGradcheck},
      {"2x2 stride 2 (doubling)", {2, 2, 3, 3}, {2, 4, 2, 2}, true, {2, 2}},
      {"dilation 2, groups 2", {1, 4, 3, 4}, {4, 3, 3, 3}, true, {1, 1, 0, 0, 0, 0, 2, 2, 2}, kCudaGradcheck},
      {"stride (2,3) padding (0,1) output_padding (1,2)", {1, 2, 3, 3}, {2, 2, 2, 3}, true, {2, 3, 0, 1, 1, 2}},
      {"[8,32,7,7] x [32,16,4,4] stride 2 padding 1 (a decoder)", {8, 32, 7, 7}, {32, 16, 4, 4}, true,
       {2, 2, 1, 1}},
  };
  for (const auto& c : transposed) {
    const Shape xs = c.x, ws = c.w;
    const bool has_bias = c.bias;
    const ConvTranspose2dOptions opt = c.opt;
    const uint64_t s = (cseed += 3);
    OpCase& row = t.def(std::string("conv_transpose2d ") + c.name,
                        [xs, ws, has_bias, s, groups = opt.groups] {
                          TV v{leaf(normal(xs, s)), leaf(normal(ws, s + 1) * 0.5f)};
                          if (has_bias) v.push_back(leaf(normal({ws[1] * groups}, s + 2)));
                          return v;
                        },
                        [opt](const TV& v) { return conv_transpose2d(v[0], v[1], v.size() > 2 ? v[2] : Tensor(), opt); },
                        kConv)
                      .also(c.more);
    if (numel(xs) > 1000) row.except(kGradcheck);  // sized for the GPU
  }
  t.def("conv1d stride 2 padding 1 dilation 2 groups 2", [] {
          return TV{leaf(normal({2, 4, 9}, 308)), leaf(normal({6, 2, 3}, 309) * 0.5f), leaf(normal({6}, 310))};
        },
        [](const TV& v) { return conv1d(v[0], v[1], v[2], {2, 1, 2, 2}); }, kConv)
      .also(kCudaGradcheck);
  t.def("conv1d of a transposed input (embeddings [N, T, E] as [N, E, T])",
        [] { return TV{leaf(perm(normal({2, 7, 3}, 311), {0, 2, 1})), leaf(normal({4, 3, 2}, 312))}; },
        [](const TV& v) { return conv1d(v[0], v[1]); }, kConv);
  t.def("upsample_nearest2d x2", [] { return TV{leaf(normal({2, 3, 3, 4}, 313))}; },
        [](const TV& v) { return upsample_nearest2d(v[0], 2, 2); })
      .also(kCudaGradcheck);
  t.def("upsample_nearest2d x(3,1) of a permuted input", [] { return TV{leaf(perm(normal({1, 3, 4, 2}, 314), {0, 3, 1, 2}))}; },
        [](const TV& v) { return upsample_nearest2d(v[0], 3, 1); });
  t.def("upsample_bilinear2d x2", [] { return TV{leaf(normal({2, 3, 3, 4}, 315))}; },
        [](const TV& v) { return upsample_bilinear2d(v[0], 2, 2); })
      .also(kCudaGradcheck);
  t.def("upsample_bilinear2d x3 align_corners", [] { return TV{leaf(normal({1, 2, 4, 3}, 316))}; },
        [](const TV& v) { return upsample_bilinear2d(v[0], 3, 3, true); });
  t.def("zero_pad2d (1, 2, 0, 3)", [] { return TV{leaf(normal({2, 3, 3, 4}, 317))}; },
        [](const TV& v) { return zero_pad2d(v[0], 1, 2, 0, 3); })
      .also(kCudaGradcheck);
  t.def("conv_transpose2d permuted input",
        [] { return TV{leaf(perm(normal({1, 4, 5, 2}, 306), {0, 3, 1, 2})), leaf(normal({2, 3, 2, 2}, 307))}; },
        [](const TV& v) { return conv_transpose2d(v[0], v[1], Tensor(), {2, 2}); }, kConv);
  // Only the input, only the weight requiring grad.
  t.def("conv2d, weight constant", [] { return TV{leaf(normal({2, 2, 4, 4}, 302)), normal({3, 2, 3, 3}, 303)}; },
        [](const TV& v) { return conv2d(v[0], v[1]); }, kConv);
  t.def("conv2d, input constant", [] { return TV{normal({2, 2, 4, 4}, 304), leaf(normal({3, 2, 3, 3}, 305))}; },
        [](const TV& v) { return conv2d(v[0], v[1]); }, kConv);
  // The fused op; conv outputs of odd size (5x4) lose their last row to the pooling.
  const Tensor x = leaf(normal({2, 2, 7, 6}, 61)), w = leaf(normal({3, 2, 3, 3}, 62)), b = leaf(normal({3}, 63));
  t.def("conv2d_relu_max_pool2d", TV{x, w, b},
        [](const TV& v) { return conv2d_relu_max_pool2d(v[0], v[1], v[2], {}, true, true); }, kConv);
  t.def("conv2d_relu_max_pool2d: pooling only, padding 1, no bias", TV{x, w},
        [](const TV& v) { return conv2d_relu_max_pool2d(v[0], v[1], Tensor(), {1, 1, 1, 1, 1, 1, 1}, false, true); },
        kConv);
  t.def("conv2d_relu_max_pool2d: ReLU only, stride 2, groups 2",
        TV{leaf(normal({2, 4, 7, 6}, 64)), leaf(normal({4, 2, 3, 3}, 65)), leaf(normal({4}, 66))},
        [](const TV& v) { return conv2d_relu_max_pool2d(v[0], v[1], v[2], {2, 2, 1, 1, 1, 1, 2}, true, false); },
        kConv);

  struct Pool {
    const char* name;
    Pool2dOptions opt;
    unsigned more = 0;
  };
  const Pool maxpools[] = {
      {"2x2", {2, 2, 0, 0, 0, 0, true}, kCudaGradcheck},
      {"3x3 stride 2 padding 1", {3, 3, 2, 2, 1, 1, true}, kCudaGradcheck},
      {"3x3 stride 1 (overlapping windows)", {3, 3, 1, 1, 0, 0, true}},
      {"2x3 stride (1,2) padding (1,1)", {2, 3, 1, 2, 1, 1, true}},
      {"3x1 stride (2,1) padding (1,0)", {3, 1, 2, 1, 1, 0, true}},
  };
  for (const Pool& p : maxpools) {
    const Pool2dOptions opt = p.opt;
    // No ties inside any window.
    t.def(std::string("max_pool2d ") + p.name, [] { return TV{leaf(distinct({2, 2, 5, 6}, 310))}; },
          [opt](const TV& v) { return max_pool2d(v[0], opt); })
        .also(p.more);
  }
  t.def("max_pool2d 2x2 on [8,16,24,24]", [] { return TV{leaf(distinct({8, 16, 24, 24}, 311))}; },
        [](const TV& v) { return max_pool2d(v[0], {2, 2, 0, 0, 0, 0, true}); })
      .except(kGradcheck);  // sized for the GPU
  t.def("max_pool2d of a permuted input", [] { return TV{leaf(perm(distinct({1, 4, 5, 2}, 312), {0, 3, 1, 2}))}; },
        [](const TV& v) { return max_pool2d(v[0], {2, 2, 1, 1, 0, 0, true}); });
  const Pool avgpools[] = {
      {"2x2", {2, 2, 0, 0, 0, 0, true}},
      {"3x3 stride 2 padding 1, count_include_pad", {3, 3, 2, 2, 1, 1, true}},
      {"3x3 stride 2 padding 1, exclude pad", {3, 3, 2, 2, 1, 1, false}, kCudaGradcheck},
      {"2x3 stride (1,2) padding (1,1), count_include_pad", {2, 3, 1, 2, 1, 1, true}, kCudaGradcheck},
      {"2x3 stride (1,2) padding (1,1), exclude pad", {2, 3, 1, 2, 1, 1, false}},
      {"3x2 stride 1 (overlapping windows)", {3, 2, 1, 1, 0, 0, true}},
  };
  for (const Pool& p : avgpools) {
    const Pool2dOptions opt = p.opt;
    t.def(std::string("avg_pool2d ") + p.name, [] { return TV{leaf(normal({2, 2, 5, 6}, 313))}; },
          [opt](const TV& v) { return avg_pool2d(v[0], opt); })
        .also(p.more);
  }
  t.def("avg_pool2d 3x3 stride 2 pad 1 on [8,16,24,24]", [] { return TV{leaf(normal({8, 16, 24, 24}, 314))}; },
        [](const TV& v) { return avg_pool2d(v[0], {3, 3, 2, 2, 1, 1, false}); })
      .except(kGradcheck);  // sized for the GPU
  t.def("avg_pool2d of a permuted input", [] { return TV{leaf(perm(normal({1, 4, 5, 2}, 315), {0, 3, 1, 2}))}; },
        [](const TV& v) { return avg_pool2d(v[0], {3, 3, 2, 2, 1, 1, false}); });
  t.def("max_pool1d 3 stride 2 padding 1", [] { return TV{leaf(distinct({2, 3, 9}, 316))}; },
        [](const TV& v) { return max_pool1d(v[0], {3, 2, 1}); })
      .also(kCudaGradcheck);
  t.def("avg_pool1d 3 stride 1 padding 1, exclude pad", [] { return TV{leaf(normal({2, 3, 9}, 317))}; },
        [](const TV& v) { return avg_pool1d(v[0], {3, 1, 1, false}); })
      .also(kCudaGradcheck);
  t.def("avg_pool1d of a transposed input", [] { return TV{leaf(perm(normal({2, 7, 3}, 318), {0, 2, 1}))}; },
        [](const TV& v) { return avg_pool1d(v[0], {2}); });
  // Adaptive windows overlap where the output does not divide the input; at 1x1 they are global
  // pooling; an output larger than the input repeats cells.
  const struct {
    const char* name;
    Shape in;
    int64_t oh, ow;
    unsigned more = 0;
  } adaptive[] = {
      {"5x7 to 3x2 (overlapping windows)", {2, 2, 5, 7}, 3, 2, kCudaGradcheck},
      {"6x4 to 3x2 (equal windows)", {2, 3, 6, 4}, 3, 2},
      {"4x5 to 1x1 (global)", {2, 3, 4, 5}, 1, 1, kCudaGradcheck},
      {"3x2 to 4x5 (larger: repeated cells)", {1, 2, 3, 2}, 4, 5},
  };
  for (const auto& a : adaptive) {
    const Shape in = a.in;
    const int64_t oh = a.oh, ow = a.ow;
    t.def(std::string("adaptive_max_pool2d ") + a.name, [in] { return TV{leaf(distinct(in, 319))}; },
          [oh, ow](const TV& v) { return adaptive_max_pool2d(v[0], oh, ow); })
        .also(a.more);
    t.def(std::string("adaptive_avg_pool2d ") + a.name, [in] { return TV{leaf(normal(in, 319))}; },
          [oh, ow](const TV& v) { return adaptive_avg_pool2d(v[0], oh, ow); })
        .also(a.more);
  }
  t.def("adaptive_avg_pool2d 7x7 to 1x1 on [8,64,7,7]", [] { return TV{leaf(normal({8, 64, 7, 7}, 320))}; },
        [](const TV& v) { return adaptive_avg_pool2d(v[0], 1, 1); })
      .except(kGradcheck);  // sized for the GPU
  t.def("adaptive_max_pool2d of a permuted input", [] { return TV{leaf(perm(distinct({1, 5, 6, 3}, 321), {0, 3, 1, 2}))}; },
        [](const TV& v) { return adaptive_max_pool2d(v[0], 2, 4); });
}

// ---- batch, layer, group, instance and RMS norms (running statistics are inputs: their in-place
// updates are compared) ----
void normalization(Table& t) {
  t.def("batch_norm train [N,C] with weight, bias, running stats",
        [] {
          return TV{leaf(normal({5, 3}, 320)), zeros({3}), ones({3}), leaf(uni({3}, 0.5f, 1.5f, 321)),
                    leaf(normal({3}, 322))};
        },
        [](const TV& v) { return batch_norm(v[0], v[1], v[2], v[3], v[4], true); }, kSum)
      .also(kCudaGradcheck);
  t.def("batch_norm train [N,C] without affine or running stats", [] { return TV{leaf(normal({5, 3}, 323))}; },
        [](const TV& v) { return batch_norm(v[0], Tensor(), Tensor(), Tensor(), Tensor(), true); }, kSum);
  t.def("batch_norm train [N,C,H,W] with weight and bias",
        [] { return TV{leaf(normal({4, 3, 5, 5}, 324)), leaf(uni({3}, 0.5f, 1.5f, 325)), leaf(normal({3}, 326))}; },
        [](const TV& v) { return batch_norm(v[0], Tensor(), Tensor(), v[1], v[2], true); }, kSum)
      .also(kCudaGradcheck);
  t.def("batch_norm train [16,8,12,12] momentum 0.3 eps 1e-3, running stats",
        [] { return TV{leaf(normal({16, 8, 12, 12}, 327) * 2.f + 0.5f), normal({8}, 328), uni({8}, 0.5f, 2.f, 329),
                       leaf(uni({8}, 0.5f, 1.5f, 330)), leaf(normal({8}, 331))}; },
        [](const TV& v) { return batch_norm(v[0], v[1], v[2], v[3], v[4], true, 0.3f, 1e-3f); }, kSum)
      .except(kGradcheck);  // sized for the GPU
  // Eval: running statistics normalise; gradients w.r.t. input, weight and bias.
  t.def("batch_norm eval [N,C,H,W]",
        [] { return TV{leaf(normal({2, 3, 3, 2}, 332)), normal({3}, 333), uni({3}, 0.5f, 2.f, 334),
                       leaf(uni({3}, 0.5f, 1.5f, 335)), leaf(normal({3}, 336))}; },
        [](const TV& v) { return batch_norm(v[0], v[1], v[2], v[3], v[4], false); }, kSum)
      .also(kCudaGradcheck);
  t.def("batch_norm eval without affine",
        [] { return TV{leaf(normal({5, 3}, 337)), normal({3}, 338), uni({3}, 0.5f, 2.f, 339)}; },
        [](const TV& v) { return batch_norm(v[0], v[1], v[2], Tensor(), Tensor(), false); }, kSum);
  t.def("batch_norm train of a stride-2 input", [] { return TV{leaf(every2(normal({3, 8}, 340), 1))}; },
        [](const TV& v) { return batch_norm(v[0], Tensor(), Tensor(), Tensor(), Tensor(), true); }, kSum);
  t.def("batch_norm eval [N,C]",
        TV{leaf(normal({5, 3}, 3)), normal({3}, 5), uni({3}, 0.5f, 2.f, 6), leaf(uni({3}, 0.5f, 1.5f, 1)),
           leaf(normal({3}, 2))},
        [](const TV& v) { return batch_norm(v[0], v[1], v[2], v[3], v[4], false); }, kSum);

  t.def("layer_norm [2,5,16] affine",
        [] { return TV{leaf(normal({2, 5, 16}, 1)), leaf(normal({16}, 2)), leaf(normal({16}, 3))}; },
        [](const TV& v) { return layer_norm(v[0], v[1], v[2]); }, kSum);
  t.def("layer_norm [3,2500] (a block per row)", [] { return TV{leaf(normal({3, 2500}, 4) * 3.f + 1.f)}; },
        [](const TV& v) { return layer_norm(v[0], Tensor(), Tensor()); }, kSum)
      .except(kGradcheck);  // sized for the GPU
  t.def("layer_norm transposed, weight only",
        [] { return TV{leaf(normal({8, 6}, 5).transpose(0, 1).detach()), leaf(normal({8}, 6))}; },
        [](const TV& v) { return layer_norm(v[0], v[1], Tensor()); }, kSum);
  t.def("layer_norm without affine", TV{leaf(normal({2, 3, 5}, 1))},
        [](const TV& v) { return layer_norm(v[0], Tensor(), Tensor()); }, kSum);

  t.def("group_norm [2,6,3,3] 3 groups, weight and bias",
        [] { return TV{leaf(normal({2, 6, 3, 3}, 360)), leaf(uni({6}, 0.5f, 1.5f, 361)), leaf(normal({6}, 362))}; },
        [](const TV& v) { return group_norm(v[0], 3, v[1], v[2]); }, kSum)
      .also(kCudaGradcheck);
  t.def("group_norm [4,6] 2 groups without affine", [] { return TV{leaf(normal({4, 6}, 363) * 2.f + 1.f)}; },
        [](const TV& v) { return group_norm(v[0], 2, Tensor(), Tensor(), 1e-3f); }, kSum);
  t.def("group_norm of a permuted [2,4,3,3], weight only",
        [] { return TV{leaf(perm(normal({2, 3, 3, 4}, 364), {0, 3, 1, 2})), leaf(normal({4}, 365))}; },
        [](const TV& v) { return group_norm(v[0], 2, v[1], Tensor()); }, kSum);
  t.def("group_norm [8,32,16,16] 8 groups",
        [] { return TV{leaf(normal({8, 32, 16, 16}, 366) * 3.f), leaf(normal({32}, 367)), leaf(normal({32}, 368))}; },
        [](const TV& v) { return group_norm(v[0], 8, v[1], v[2]); }, kSum)
      .except(kGradcheck);  // sized for the GPU

  t.def("instance_norm train [2,3,4,4] with weight, bias, running stats",
        [] {
          return TV{leaf(normal({2, 3, 4, 4}, 370) + 0.5f), normal({3}, 371), uni({3}, 0.5f, 2.f, 372),
                    leaf(uni({3}, 0.5f, 1.5f, 373)), leaf(normal({3}, 374))};
        },
        [](const TV& v) { return instance_norm(v[0], v[1], v[2], v[3], v[4], true, 0.2f); }, kSum)
      .also(kCudaGradcheck);
  t.def("instance_norm train [3,2,5] without affine or running stats", [] { return TV{leaf(normal({3, 2, 5}, 375))}; },
        [](const TV& v) { return instance_norm(v[0], Tensor(), Tensor(), Tensor(), Tensor(), true); }, kSum);
  t.def("instance_norm eval [2,3,3,3] with running stats",
        [] {
          return TV{leaf(normal({2, 3, 3, 3}, 376)), normal({3}, 377), uni({3}, 0.5f, 2.f, 378),
                    leaf(uni({3}, 0.5f, 1.5f, 379)), leaf(normal({3}, 380))};
        },
        [](const TV& v) { return instance_norm(v[0], v[1], v[2], v[3], v[4], false); }, kSum);

  t.def("rms_norm [2,5,16] with weight", [] { return TV{leaf(normal({2, 5, 16}, 381)), leaf(normal({16}, 382))}; },
        [](const TV& v) { return rms_norm(v[0], v[1], 1e-6f); }, kSum)
      .also(kCudaGradcheck);
  t.def("rms_norm transposed, without weight", [] { return TV{leaf(tr(normal({8, 6}, 383)))}; },
        [](const TV& v) { return rms_norm(v[0], Tensor(), 1.1920929e-07f); }, kSum);
  t.def("rms_norm [3,2500]", [] { return TV{leaf(normal({3, 2500}, 384) * 3.f + 1.f), leaf(normal({2500}, 385))}; },
        [](const TV& v) { return rms_norm(v[0], v[1], 1e-5f); }, kSum)
      .except(kGradcheck);  // sized for the GPU
}

// ---- losses ----
void losses(Table& t) {
  for (float smoothing : {0.f, 0.1f, 1.f})
    for (const auto& [rname, r] : kReductions) {
      const Reduction red = r;
      t.def("cross_entropy smoothing " + num(smoothing) + " reduction " + rname,
            [] { return TV{leaf(normal({6, 5}, 350)), idx({1, 0, 4, 1, 3, 2})}; },
            [smoothing, red](const TV& v) { return cross_entropy(v[0], v[1], smoothing, red); }, kSum)
          .also(smoothing == 0.1f && red == Reduction::Mean ? kCudaGradcheck : 0u);
    }
  t.def("cross_entropy [256,100] smoothing 0.1",
        [] { return TV{leaf(normal({256, 100}, 351) * 2.f), random_index({256}, 100, 352)}; },
        [](const TV& v) { return cross_entropy(v[0], v[1], 0.1f); }, kSum)
      .except(kGradcheck);  // sized for the GPU
  t.def("cross_entropy of transposed logits", [] { return TV{leaf(tr(normal({4, 3}, 353))), idx({0, 3, 2})}; },
        [](const TV& v) { return cross_entropy(v[0], v[1], 0.1f); }, kSum);
  t.def("cross_entropy of logits ±1000 (stability)",
        [] { return TV{leaf(from_vector({1000, -1000, 0, -500, 500, 499}, {2, 3})), idx({1, 2})}; },
        [](const TV& v) { return cross_entropy(v[0], v[1], 0.f, Reduction::None); }, kSum)
      .except(kGradcheck);  // float32 cannot resolve ±eps around ±1000
  for (const auto& [rname, r] : kReductions) {
    const Reduction red = r;
    t.def(std::string("nll_loss(log_softmax) reduction ") + rname,
          [] { return TV{leaf(normal({4, 5}, 354)), idx({3, 3, 0, 2})}; },
          [red](const TV& v) { return nll_loss(log_softmax(v[0], 1), v[1], red); }, kSum)
        .also(red == Reduction::Sum ? kCudaGradcheck : 0u);
    t.def(std::string("nll_loss on a leaf, reduction ") + rname,
          [] { return TV{leaf(normal({4, 5}, 355)), idx({3, 3, 0, 2})}; },
          [red](const TV& v) { return nll_loss(v[0], v[1], red); }, kSum);
    t.def(std::string("mse_loss reduction ") + rname,
          [] { return TV{leaf(normal({3, 4}, 356)), leaf(normal({3, 4}, 357))}; },
          [red](const TV& v) { return mse_loss(v[0], v[1], red); }, kSum)
        .also(red == Reduction::Mean ? kCudaGradcheck : 0u);
    t.def(std::string("bce_with_logits reduction ") + rname,
          [] { return TV{leaf(normal({3, 4}, 358) * 3.f), leaf(uni({3, 4}, 0.f, 1.f, 359))}; },
          [red](const TV& v) { return binary_cross_entropy_with_logits(v[0], v[1], red); }, kSum)
        .also(red == Reduction::Mean ? kCudaGradcheck : 0u);
  }
  t.def("mse_loss [64,100]", [] { return TV{leaf(normal({64, 100}, 360)), leaf(normal({64, 100}, 361))}; },
        [](const TV& v) { return mse_loss(v[0], v[1]); }, kSum)
      .except(kGradcheck);  // sized for the GPU
  t.def("bce_with_logits, logits up to ±100, 0/1 targets",
        [] { return TV{leaf(from_vector({-100, -100, -20, -1, 0, 0.5f, 3, 20, 100, 100}, {2, 5})),
                       from_vector({0, 1, 1, 0, 1, 0, 1, 0, 1, 0}, {2, 5})}; },
        [](const TV& v) { return binary_cross_entropy_with_logits(v[0], v[1], Reduction::None); }, kSum);
  t.def("binary_cross_entropy_with_logits, 0/1 targets (logits only)",
        TV{leaf(normal({3, 4}, 1) * 3.f), from_vector({0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0}, {3, 4})},
        [](const TV& v) { return binary_cross_entropy_with_logits(v[0], v[1]); }, kSum);
  t.def("mse_loss Mean gives 0-d", TV{leaf(normal({2, 3}, 4)), leaf(normal({2, 3}, 7))},
        [](const TV& v) { return mse_loss(v[0], v[1]); }, kSum);

  // Per position of a sequence: logits [N,T,C], targets [N,T].
  const Tensor logits = leaf(normal({2, 3, 4}, 5));
  const Tensor target = idx({1, 0, 3, 2, 2, 0}).reshape({2, 3});
  t.def("cross_entropy [2,5,6] per position, smoothing 0.1",
        [] { return TV{leaf(normal({2, 5, 6}, 14)), ints({2, 5}, 0, 5, 1)}; },
        [](const TV& v) { return cross_entropy(v[0], v[1], 0.1f); }, kSum);
  for (float smoothing : {0.f, 0.1f})
    for (const auto& [rname, r] : kReductions) {
      const Reduction red = r;
      if (smoothing == 0.1f && red == Reduction::Mean) continue;  // the row above
      t.def("cross_entropy [N,T,C] smoothing=" + std::to_string(smoothing) + " reduction=" + rname, TV{logits, target},
            [smoothing, red](const TV& v) { return cross_entropy(v[0], v[1], smoothing, red); }, kSum);
    }
  t.def("nll_loss [N,T,C]",
        TV{logits, target}, [](const TV& v) { return nll_loss(log_softmax(v[0], -1), v[1]); }, kSum);

  // Class weights and ignored targets, PyTorch's weighted mean (the weights get no gradient).
  const Tensor class_w = from_vector({0.5f, 2.f, 1.f, 0.25f, 3.f}, {5});
  for (float smoothing : {0.f, 0.1f})
    for (const auto& [rname, r] : kReductions) {
      const Reduction red = r;
      t.def("cross_entropy weighted, smoothing " + num(smoothing) + " reduction " + rname,
            [class_w] { return TV{leaf(normal({6, 5}, 362)), idx({1, 0, 4, 1, 3, 2}), class_w}; },
            [smoothing, red](const TV& v) { return cross_entropy(v[0], v[1], smoothing, red, v[2]); }, kSum)
          .also(smoothing == 0.1f && red == Reduction::Mean ? kCudaGradcheck : 0u);
      t.def("cross_entropy ignoring -100, smoothing " + num(smoothing) + " reduction " + rname,
            [] { return TV{leaf(normal({6, 5}, 363)), idx({1, -100, 4, -100, 3, 2})}; },
            [smoothing, red](const TV& v) { return cross_entropy(v[0], v[1], smoothing, red); }, kSum)
          .also(smoothing == 0.1f && red == Reduction::Mean ? kCudaGradcheck : 0u);
    }
  for (const auto& [rname, r] : kReductions) {
    const Reduction red = r;
    t.def("nll_loss weighted, ignoring 3, reduction " + std::string(rname),
          [class_w] { return TV{leaf(normal({6, 5}, 364)), idx({3, 0, 4, 3, 1, 2}), class_w}; },
          [red](const TV& v) { return nll_loss(log_softmax(v[0], 1), v[1], red, v[2], 3); }, kSum)
        .also(red == Reduction::Mean ? kCudaGradcheck : 0u);
  }
  t.def("cross_entropy weighted, ignoring 4 (a class), smoothing 0.2",
        [class_w] { return TV{leaf(normal({6, 5}, 365)), idx({4, 0, 4, 1, 3, 2}), class_w}; },
        [](const TV& v) { return cross_entropy(v[0], v[1], 0.2f, Reduction::Mean, v[2], 4); }, kSum);
  t.def("cross_entropy [2,5,6] padded with -100, weighted, smoothing 0.1",
        [] {
          return TV{leaf(normal({2, 5, 6}, 366)), from_vector({1, 5, 0, -100, -100, 2, 2, 4, 3, -100}, {2, 5}),
                    from_vector({1.f, 0.5f, 2.f, 1.5f, 0.75f, 1.25f}, {6})};
        },
        [](const TV& v) { return cross_entropy(v[0], v[1], 0.1f, Reduction::Mean, v[2]); }, kSum);
  t.def("cross_entropy [256,100] weighted, some ignored",
        [] {
          Tensor target = random_index({256}, 100, 367);
          target = where(lt(uni({256}, 0.f, 1.f, 368), scalar(0.2f)), scalar(-100.f), target);
          return TV{leaf(normal({256, 100}, 369) * 2.f), target, uni({100}, 0.1f, 2.f, 370)};
        },
        [](const TV& v) { return cross_entropy(v[0], v[1], 0.1f, Reduction::Mean, v[2]); }, kSum)
      .except(kGradcheck);  // sized for the GPU
  t.def("nll_loss [N,T,C] ignoring -100", [] { return TV{leaf(normal({2, 3, 4}, 371)), from_vector({1, -100, 3, 2, 2, -100}, {2, 3})}; },
        [](const TV& v) { return nll_loss(log_softmax(v[0], -1), v[1]); }, kSum);

  // The regression losses: distinct inputs, so |input - target| >= 0.1 stays clear of |d|'s kink at 0.
  for (const auto& [rname, r] : kReductions) {
    const Reduction red = r;
    t.def(std::string("l1_loss reduction ") + rname, [] { return distinct_pair({3, 4}, {3, 4}, 372); },
          [red](const TV& v) { return l1_loss(v[0], v[1], red); }, kSum)
        .also(red == Reduction::Mean ? kCudaGradcheck : 0u);
    for (float beta : {0.f, 0.5f, 1.f})
      t.def("smooth_l1_loss beta " + num(beta) + " reduction " + rname, [] { return distinct_pair({3, 4}, {3, 4}, 373); },
            [red, beta](const TV& v) { return smooth_l1_loss(v[0], v[1], red, beta); }, kSum)
          .also(red == Reduction::Mean && beta == 0.5f ? kCudaGradcheck : 0u);
    for (float delta : {0.5f, 2.f})
      t.def("huber_loss delta " + num(delta) + " reduction " + rname, [] { return distinct_pair({3, 4}, {3, 4}, 374); },
            [red, delta](const TV& v) { return huber_loss(v[0], v[1], red, delta); }, kSum)
          .also(red == Reduction::Mean && delta == 0.5f ? kCudaGradcheck : 0u);
    // log-probabilities against a distribution (both differentiable: a flat one, as the log's
    // curvature near 0 is more than float32's central differences resolve), or against log-probabilities.
    t.def(std::string("kl_div reduction ") + rname,
          [] { return TV{leaf(log_softmax(normal({4, 5}, 375), 1)), leaf(softmax(normal({4, 5}, 376) * 0.3f, 1))}; },
          [red](const TV& v) { return kl_div(v[0], v[1], red); }, kSum)
        .also(red == Reduction::Sum ? kCudaGradcheck : 0u);
    t.def(std::string("kl_div log_target reduction ") + rname,
          [] { return TV{leaf(log_softmax(normal({4, 5}, 377), 1)), leaf(log_softmax(normal({4, 5}, 378), 1))}; },
          [red](const TV& v) { return kl_div(v[0], v[1], red, true); }, kSum);
    t.def(std::string("bce_with_logits pos_weight 3 reduction ") + rname,
          [] { return TV{leaf(normal({3, 4}, 379) * 3.f), leaf(uni({3, 4}, 0.f, 1.f, 380))}; },
          [red](const TV& v) { return binary_cross_entropy_with_logits(v[0], v[1], red, 3.f); }, kSum)
        .also(red == Reduction::Mean ? kCudaGradcheck : 0u);
  }
  t.def("kl_div with zero targets (they add 0)",
        [] { return TV{leaf(log_softmax(normal({2, 4}, 381), 1)), from_vector({0, 0.5f, 0.5f, 0, 1, 0, 0, 0}, {2, 4})}; },
        [](const TV& v) { return kl_div(v[0], v[1], Reduction::Sum); }, kSum);
  t.def("bce_with_logits pos_weight 0.5, logits up to ±100",
        [] { return TV{leaf(from_vector({-100, -100, -20, -1, 0, 0.5f, 3, 20, 100, 100}, {2, 5})),
                       from_vector({0, 1, 1, 0.25f, 1, 0, 1, 0, 1, 0}, {2, 5})}; },
        [](const TV& v) { return binary_cross_entropy_with_logits(v[0], v[1], Reduction::None, 0.5f); }, kSum);
  t.def("huber_loss [64,100]", [] { return TV{leaf(normal({64, 100}, 382)), leaf(normal({64, 100}, 383))}; },
        [](const TV& v) { return huber_loss(v[0], v[1], Reduction::Mean, 0.5f); }, kSum)
      .except(kGradcheck);  // sized for the GPU
}

// ---- sequence models: causal softmax, attention, positions ----
void sequences(Table& t) {
  t.def("causal_softmax [2,3,7,7]", [] { return TV{leaf(normal({2, 3, 7, 7}, 7))}; },
        [](const TV& v) { return causal_softmax(v[0]); });
  t.def("causal_softmax [1,40,40] (a warp per row)", [] { return TV{leaf(normal({1, 40, 40}, 8))}; },
        [](const TV& v) { return causal_softmax(v[0]); });
  t.def("attention causal [2,2,6,4]",
        [] {
          return TV{leaf(normal({2, 2, 6, 4}, 9)), leaf(normal({2, 2, 6, 4}, 10)), leaf(normal({2, 2, 6, 4}, 11))};
        },
        [](const TV& v) { return nn::functional::scaled_dot_product_attention(v[0], v[1], v[2], true); }, kGemm);
  t.def("attention [2,2,3,4] to [2,2,5,4] keys, key lengths 2 and 5",
        [] { return TV{leaf(normal({2, 2, 3, 4}, 16)), leaf(normal({2, 2, 5, 4}, 17)), leaf(normal({2, 2, 5, 4}, 18))}; },
        [](const TV& v) { return nn::functional::scaled_dot_product_attention(v[0], v[1], v[2], false, idx({2, 5})); },
        kGemm);
  t.def("attention causal [2,2,4,4], key lengths 0 and 3",
        [] { return TV{leaf(normal({2, 2, 4, 4}, 19)), leaf(normal({2, 2, 4, 4}, 20)), leaf(normal({2, 2, 4, 4}, 21))}; },
        [](const TV& v) { return nn::functional::scaled_dot_product_attention(v[0], v[1], v[2], true, idx({0, 3})); },
        kGemm);
  t.def("positional embedding [2,5,8] + weight[:5]",
        [] { return TV{leaf(normal({2, 5, 8}, 12)), leaf(normal({9, 8}, 13))}; },
        [](const TV& v) { return v[0] + narrow(v[1], 0, 0, v[0].shape()[1]); });
  // Pooling each sequence over all its positions, and over lengths of none, some, all and more.
  for (const char* mode : {"mean", "max", "last", "first"}) {
    const nn::SequencePoolMode m = nn::sequence_pool_mode(mode);
    t.def(std::string("sequence_pool ") + mode + " [4,5,3]", [] { return TV{leaf(normal({4, 5, 3}, 14))}; },
          [m](const TV& v) { return nn::functional::sequence_pool(v[0], Tensor(), m); }, kSum)
        .ref(sequence_pool_ref(mode));
    t.def(std::string("sequence_pool ") + mode + " [4,5,3] lengths 0, 2, 5, 7",
          [] { return TV{leaf(normal({4, 5, 3}, 15)), idx({0, 2, 5, 7})}; },
          [m](const TV& v) { return nn::functional::sequence_pool(v[0], v[1], m); }, kSum)
        .ref(sequence_pool_ref(mode));
  }
  t.def("sequence_lengths of ids [3,4] padded with 0",
        TV{from_vector({3, 1, 0, 0, 2, 0, 0, 0, 1, 1, 1, 1}, {3, 4})},
        [](const TV& v) { return nn::functional::sequence_lengths(v[0]); }, kExact)
      .except(kGradcheck)  // ids: nothing to differentiate
      .ref([](const TV&) { return idx({2, 1, 4}); });

  // The recurrent sequence ops (ops/rnn_sequence.h): output and final states, both directions.
  auto all_outputs = [](const RecurrentOutput& r) {
    TV parts{r.output.flatten(), r.h.flatten()};
    if (r.c.defined()) parts.push_back(r.c.flatten());
    return concat(parts, 0);
  };
  for (bool reverse : {false, true}) {
    const std::string dir = reverse ? " reverse" : "";
    t.def("lstm_sequence" + dir,
          [] { return TV{leaf(normal({3, 5, 16}, 380)), leaf(normal({16, 4}, 381) * 0.5f), leaf(normal({16}, 382)),
                         leaf(normal({3, 4}, 383)), leaf(normal({3, 4}, 384))}; },
          [all_outputs, reverse](const TV& v) {
            return all_outputs(lstm_sequence(v[0], v[1], v[2], v[3], v[4], reverse));
          },
          kGemm);
    t.def("gru_sequence" + dir,
          [] { return TV{leaf(normal({3, 5, 12}, 385)), leaf(normal({12, 4}, 386) * 0.5f), leaf(normal({12}, 387)),
                         leaf(normal({3, 4}, 388))}; },
          [all_outputs, reverse](const TV& v) { return all_outputs(gru_sequence(v[0], v[1], v[2], v[3], reverse)); },
          kGemm);
    t.def("rnn_tanh_sequence" + dir,
          [] { return TV{leaf(normal({3, 5, 4}, 389)), leaf(normal({4, 4}, 390) * 0.5f), leaf(normal({4}, 391)),
                         leaf(normal({3, 4}, 392))}; },
          [all_outputs, reverse](const TV& v) {
            return all_outputs(rnn_tanh_sequence(v[0], v[1], v[2], v[3], reverse));
          },
          kGemm);
  }
  for (const char* type : {"LSTM", "GRU", "RNN"})
    t.def(std::string(type) + " module, 2 layers bidirectional", [] { return TV{leaf(normal({2, 4, 3}, 393))}; },
          [type = std::string(type)](const TV& v) {
            Generator gen(394);
            const nn::RecurrentOptions opt{5, 2, true, 0.f};
            std::shared_ptr<nn::Module> m;
            if (type == "LSTM") m = std::make_shared<nn::LSTM>(3, opt, &gen);
            else if (type == "GRU") m = std::make_shared<nn::GRU>(3, opt, &gen);
            else m = std::make_shared<nn::RNN>(3, opt, &gen);
            m->to(v[0].device());
            return m->forward(v[0]);
          },
          kGemm);
}

// ---- compositions: a leaf reached through several paths accumulates every contribution ----
void compositions(Table& t) {
  t.def("mlp: tanh(x W1 + b1) W2 + b2 -> cross_entropy",
        [] { return TV{normal({4, 3}, 370), leaf(normal({3, 5}, 371) * 0.5f), leaf(normal({5}, 372)),
                       leaf(normal({5, 3}, 373) * 0.5f), leaf(normal({3}, 374)), idx({0, 2, 1, 2})}; },
        [](const TV& v) { return cross_entropy(matmul(tanh(matmul(v[0], v[1]) + v[2]), v[3]) + v[4], v[5]); }, kSum);
  // conv -> gelu -> avg pool -> flatten -> linear -> log_softmax -> nll.
  t.def("convnet: conv2d -> gelu -> avg_pool2d -> linear -> nll_loss",
        [] {
          return TV{normal({2, 1, 5, 5}, 375), leaf(normal({2, 1, 3, 3}, 376) * 0.5f), leaf(normal({8, 3}, 377) * 0.5f),
                    idx({2, 0})};
        },
        [](const TV& v) {
          const Tensor c = gelu(conv2d(v[0], v[1], Tensor(), {1, 1, 1, 1, 1, 1, 1}));  // [2, 2, 5, 5]
          const Tensor h = avg_pool2d(c, {2, 2, 2, 2, 0, 0, true});                     // [2, 2, 2, 2]
          return nll_loss(log_softmax(matmul(flatten(h, 1), v[2]), 1), v[3]);
        },
        kSum);
  const Tensor x = leaf(normal({3, 3}, 1));
  t.def("x * x", TV{x}, [](const TV& v) { return v[0] * v[0]; });
  t.def("x + xᵀ", TV{x}, [](const TV& v) { return v[0] + v[0].t(); });
  t.def("tanh(x) * exp(-x) + x", TV{x}, [](const TV& v) { return tanh(v[0]) * exp(-v[0]) + v[0]; });
}

std::vector<OpCase> build() {
  Table t;
  arithmetic(t);
  functions(t);
  selection(t);
  reductions(t);
  products(t);
  shapes(t);
  softmax_and_dropout(t);
  convolutions(t);
  normalization(t);
  losses(t);
  sequences(t);
  compositions(t);
  // Every suite tags its rows by name: one name, one row.
  std::set<std::string> names;
  for (const OpCase& c : t.rows)
    if (!names.insert(c.name).second) throw std::logic_error("op_cases: two rows named \"" + c.name + "\"");
  return std::move(t.rows);
}

}  // namespace

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = build();
  return cases;
}

std::vector<OpCase> op_rows(Runs suite) {
  std::vector<OpCase> rows;
  for (const OpCase& c : op_cases())
    if (c.runs & suite) rows.push_back(c);
  return rows;
}

GradcheckResult checked_gradcheck(const std::string& label, const TensorFunction& f, const TV& inputs,
                                  const GradcheckOptions& opt, const Device* device) {
  GradcheckResult r;
  try {
    r = gradcheck(f, inputs, opt);
  } catch (const std::exception& e) {
    r.ok = false;
    r.message = std::string("threw: ") + e.what();
  }
  for (size_t i = 0; r.ok && i < inputs.size(); ++i) {
    const Tensor& in = inputs[i];
    const std::string which = "input " + std::to_string(i);
    if (device && !(in.device() == *device)) {
      r.ok = false;
      r.message = which + " is on " + in.device().str() + " (test bug)";
    } else if (in.requires_grad() && in.grad().defined() && in.grad().shape() != in.shape()) {
      r.ok = false;
      r.message = which + " has shape " + to_string(in.shape()) + " but its gradient " + to_string(in.grad().shape());
    } else if (device && in.requires_grad() && in.grad().defined() && !(in.grad().device() == *device)) {
      r.ok = false;
      r.message = which + "'s gradient is on " + in.grad().device().str();
    }
  }
  if (r.ok && r.checked == 0) {
    r.ok = false;
    r.message = "no element was checked";
  }
  r.message = label + ": " + r.message;
  if (std::getenv("GRADCHECK_VERBOSE")) std::printf("%s (max error %.2e)\n", r.message.c_str(), r.max_error);
  return r;
}

}  // namespace plexus::testing
