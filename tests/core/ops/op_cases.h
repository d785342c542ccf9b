#pragma once
// One table of op cases, in the spirit of PyTorch's OpInfo (op_cases.cpp holds the rows). A row
// names a case, makes its inputs, applies the op to them, and says which suites run it:
//
//   test_gradcheck    backward() against central differences (autograd/gradcheck.h), on the CPU;
//   test_ops_forward  the forward pass: the same values without grad mode and from contiguous
//                     copies of the inputs, and against `reference` where the row has one;
//   test_cuda         the op on cuda:0 against the CPU (output, every input's gradient, in-place
//                     updates of the inputs), and for the rows marked kCudaGradcheck the
//                     gradient check on cuda:0 too.
//
// Each suite runs its rows as one TEST_ROWS test whose row tags are the rows' names, so an op
// passes or fails on its own in every suite. A new op is a row (or a few) here and is then
// tested everywhere it applies; a row leaves a suite out only with a reason beside it
// (`except`). The hand-written checks against PyTorch's numbers (test_ops_forward) and the
// suites' other tests stay in the suites.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "tensor/tensor.h"

namespace plexus::testing {

using TV = std::vector<Tensor>;

// How close two results must be: |got - want| <= atol * max(1, max |want|) + rtol * |want| per
// element (NaN only matches NaN, an infinity only itself).
struct Tol {
  double rtol, atol;
  bool conv = false;  // a convolution: test_cuda allows cuDNN's algorithms more (conv_tolerance)
};
inline constexpr Tol kExact{0, 0};       // copies of values: comparisons, argmax, indices
inline constexpr Tol kElem{1e-4, 1e-5};  // elementwise
inline constexpr Tol kSum{1e-3, 1e-4};   // reductions, softmax, normalisation, losses
inline constexpr Tol kGemm{1e-3, 1e-3};  // products and recurrences
inline constexpr Tol kConv{1e-3, 1e-3, true};

// The suites a row runs in.
enum Runs : unsigned {
  kGradcheck = 1u << 0,      // test_gradcheck
  kForward = 1u << 1,        // test_ops_forward
  kCuda = 1u << 2,           // test_cuda: cuda:0 against the CPU
  kCudaGradcheck = 1u << 3,  // test_cuda: the gradient check on cuda:0 (asked for per row)
  kEverywhere = kGradcheck | kForward | kCuda,
};

struct OpCase {
  std::string name;          // the row's tag in every suite that runs it (unique in the table)
  std::function<TV()> make;  // fresh inputs on the CPU; those that require grad are differentiable
  TensorFunction f;          // the op applied to them
  Tol tol = kElem;           // cuda:0 against the CPU; the forward checks
  unsigned runs = kEverywhere;
  TensorFunction reference;  // optional: the expected output, computed on its own (in double)
  GradcheckOptions grad{};   // test_gradcheck's options (every row has the defaults today)

  OpCase& except(unsigned suites) {  // leave suites out (say why beside it)
    runs &= ~suites;
    return *this;
  }
  OpCase& also(unsigned suites) {
    runs |= suites;
    return *this;
  }
  OpCase& ref(TensorFunction r) {
    reference = std::move(r);
    return *this;
  }
};

// Every row, in table order (made on first use); the rows one suite runs.
const std::vector<OpCase>& op_cases();
std::vector<OpCase> op_rows(Runs suite);

// ---- references for the forward check ---------------------------------------------------------

// fn applied to every element of input 0 (in double), and to the broadcast pairs of inputs 0
// and 1.
TensorFunction pointwise(std::function<double(double)> fn);
TensorFunction pointwise2(std::function<double(double, double)> fn);

// ---- inputs: built on the CPU from seeded generators ------------------------------------------

Tensor leaf(Tensor t);                                 // t, requiring grad
Tensor normal(const Shape& s, uint64_t seed);          // N(0, 1)
Tensor uni(const Shape& s, float lo, float hi, uint64_t seed);  // U[lo, hi)
// The values of `t` pushed at least `margin` away from every kink (relu, abs, clamp, thresholds).
Tensor away(const Tensor& t, std::initializer_list<float> kinks, float margin = 0.05f);
// 0.1-spaced distinct values in a seeded random order: no ties for max/min/argmax/pools, and an
// argmax that a ±eps perturbation cannot move.
std::vector<float> distinct_values(int64_t n, uint64_t seed);
Tensor distinct(const Shape& s, uint64_t seed);
TV distinct_pair(const Shape& sa, const Shape& sb, uint64_t seed);  // two leaves, all values distinct
// Whole numbers in [lo, hi] (comparisons with ties), and class / row indices in [0, limit).
Tensor ints(const Shape& s, int lo, int hi, uint64_t seed);
Tensor random_index(const Shape& s, int64_t limit, uint64_t seed);
Tensor idx(const std::vector<float>& v);  // a 1-D index tensor
// Non-contiguous views (no history) of a base tensor: the last two dims swapped, every second
// element along `dim`, dims permuted.
Tensor tr(const Tensor& base);
Tensor every2(const Tensor& base, int64_t dim);
Tensor perm(const Tensor& base, const std::vector<int64_t>& dims);

// A copy of `t` on `device` with the same geometry (shape, strides and offset into a copy of its
// whole storage), as a fresh leaf that requires grad when `t` does: non-contiguous inputs stay
// non-contiguous on the device.
Tensor mirror(const Tensor& t, Device device);

// ---- comparing ---------------------------------------------------------------------------------

// Empty when every element of `got` is within `tol` of `want`; else says where not, and how many
// ("element 3: gpu 0.25, cpu 0.5 (...)" with the names "gpu" and "cpu").
std::string mismatch(const std::vector<float>& got, const std::vector<float>& want, Tol tol, const char* got_name,
                     const char* want_name);
std::string mismatch(const Tensor& got, const Tensor& want, Tol tol, const char* got_name, const char* want_name);

// gradcheck(f, inputs) as the suites run it, its message prefixed with `label`: a throw fails with
// its message; every gradient must have its input's shape (a broadcast gradient not summed back
// would otherwise slip through whenever the element counts agree) and, with `device`, live there
// with its input; a check of no element proves nothing and fails. GRADCHECK_VERBOSE=1 prints
// every result.
GradcheckResult checked_gradcheck(const std::string& label, const TensorFunction& f, const TV& inputs,
                                  const GradcheckOptions& opt = {}, const Device* device = nullptr);

}  // namespace plexus::testing
