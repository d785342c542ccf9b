// Gradient checks for every differentiable op of core/ops/ops.h: the gradients backward()
// computes are compared with central differences (autograd/gradcheck.h). The cases are the
// rows of the op-case table (tests/core/ops/op_cases.cpp), which test_ops_forward and
// test_cuda run too: `opGradients` checks every row that has a gradient, each row passing or
// failing on its own under its name. docs/ops.md maps each op to its rows.
//
// Inputs are seeded and small, and stay clear of kinks (relu/abs/clamp thresholds, ties in
// max/min) by more than gradcheck's eps = 3e-3, so a failure means a wrong derivative.
// Every case uses the default GradcheckOptions. GRADCHECK_VERBOSE=1 prints each case with
// its largest |analytical - numerical|.
#include "support/check.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/node.h"
#include "core/ops/op_cases.h"
#include "ops/ops.h"

using namespace plexus;
using namespace plexus::testing;

namespace {

// ---- the check -----------------------------------------------------------------------------

// GRADCHECK(label, f, inputs[, options]) — one case, one line.
#define GRADCHECK(...)                                                 \
  do {                                                                 \
    const GradcheckResult gc_result_ = checked_gradcheck(__VA_ARGS__); \
    VERIFY2(gc_result_.ok, gc_result_.message);                        \
  } while (0)

// y = 3x whose recorded backward returns 2g (wrong) or 3g (right).
Tensor triple(const Tensor& x, float backward_factor) {
  Tensor out = mul(x.detach(), 3.f);
  if (needs_grad(x))
    record(out, "triple", {x}, [backward_factor](const Tensor& g) -> Grads { return {g * backward_factor}; });
  return out;
}

// An op whose output's gradient arrives non-contiguous (nonContiguousGradients).
struct IncomingRow {
  std::string name;
  TensorFunction f;
  TV in;
};

std::vector<IncomingRow> incoming_rows() {
  const Tensor x = leaf(normal({3, 4}, 1)), pos = leaf(uni({3, 4}, 0.5f, 2.f, 2));
  const Tensor kinked = leaf(away(normal({3, 4}, 3), {0.f, -0.5f, 0.3f})), d = leaf(distinct({3, 4}, 4));
  const Tensor img = leaf(normal({2, 2, 4, 4}, 5)), dimg = leaf(distinct({2, 2, 4, 4}, 6));
  const Tensor k = leaf(normal({3, 2, 3, 3}, 7));
  const Tensor w = leaf(normal({4, 5}, 8)), y = leaf(normal({3, 4}, 9));
  const Tensor slopes = leaf(normal({4}, 10));  // one per channel (dim 1) of [3, 4]
  const Tensor target = idx({3, 0, 1});
  return {
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
      {"elu", [](const TV& v) { return elu(v[0], 0.5f); }, {kinked}},
      {"selu", [](const TV& v) { return selu(v[0]); }, {kinked}},
      {"silu", [](const TV& v) { return silu(v[0]); }, {x}},
      {"mish", [](const TV& v) { return mish(v[0]); }, {x}},
      {"hardswish", [](const TV& v) { return hardswish(v[0]); }, {kinked}},
      {"hardsigmoid", [](const TV& v) { return hardsigmoid(v[0]); }, {kinked}},
      {"prelu", [](const TV& v) { return prelu(v[0], v[1]); }, {kinked, slopes}},
      {"mul / div", [](const TV& v) { return v[0] * v[1] / v[2]; }, {x, y, pos}},
      {"maximum", [](const TV& v) { return maximum(v[0], v[1]); }, {d, kinked}},
      {"where", [](const TV& v) { return where(from_vector({1, 0, 0, 1}, {4}), v[0], v[1]); }, {x, y}},
      {"max over dim 1, keepdim", [](const TV& v) { return max(v[0], {1}, true); }, {d}},
      {"min over dim 0", [](const TV& v) { return min(v[0], {0}); }, {d}},
      {"mean over dim 1", [](const TV& v) { return mean(v[0], {1}); }, {x}},
      {"softmax", [](const TV& v) { return softmax(v[0], 1); }, {x}},
      {"log_softmax", [](const TV& v) { return log_softmax(v[0], 0); }, {x}},
      {"matmul", [](const TV& v) { return matmul(v[0], v[1]); }, {x, w}},
      {"index_select", [](const TV& v) { return index_select(v[0], 1, idx({3, 1, 3})); }, {x}},
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
}

}  // namespace

// ---- the checker itself ----
TEST(gradcheckCatchesWrongDerivative) {
  const Tensor x = leaf(normal({2, 3}, 1));
  const GradcheckResult wrong = gradcheck([](const TV& v) { return triple(v[0], 2.f); }, {x});
  VERIFY2(!wrong.ok, "a backward returning 2g for y = 3x must fail the check");
  VERIFY2(wrong.message.find("analytical") != std::string::npos, wrong.message);
  VERIFY(wrong.max_error > 0.5);
  // The same op with the right backward passes: the failure above is the derivative's.
  GRADCHECK("triple (correct backward)", [](const TV& v) { return triple(v[0], 3.f); }, {x});
  // A function whose output has no history is reported, not silently passed.
  const GradcheckResult detached = gradcheck([](const TV& v) { return v[0].detach() * 2.f; }, {x});
  VERIFY(!detached.ok);
}

// ---- every op: each row of the op-case table that has a gradient ----
TEST_ROWS(opGradients, op_rows(kGradcheck)) { GRADCHECK(row.name, row.f, row.make(), row.grad); }

// The table's transposed, stride-2 and permuted leaves are views (a test of them checks a
// layout only while they are), and each suite's copy of the inputs keeps their layout.
TEST(nonContiguousInputs) {
  const Tensor t = leaf(tr(normal({4, 3}, 1)));                 // [3, 4], strides (1, 3)
  const Tensor s = leaf(every2(normal({3, 8}, 2), 1));          // [3, 4], strides (8, 2)
  const Tensor p = leaf(perm(normal({3, 4, 2}, 3), {2, 0, 1}));  // [2, 3, 4]
  VERIFY(!t.is_contiguous() && !s.is_contiguous() && !p.is_contiguous());
  for (const Tensor& v : {t, s, p}) {
    const Tensor copy = mirror(v, Device::cpu());
    VERIFY(copy.is_leaf() && copy.requires_grad() && !copy.is_same(v));
    COMPARE(copy.strides(), v.strides());
    COMPARE(copy.to_vector(), v.to_vector());
  }
}

// Backward kernels must not assume the incoming gradient is contiguous. Each op's output
// is (a) stacked with zeros on a new last dim, so its gradient arrives as a stride-2 slice,
// and (b) summed over dim 0, so its gradient arrives expanded (stride 0).
TEST_ROWS(nonContiguousGradients, incoming_rows()) {
  const TensorFunction f = row.f;
  GRADCHECK(row.name + ", strided incoming gradient",
            [f](const TV& v) {
              const Tensor out = f(v);
              return stack({out, zeros_like(out)}, -1);
            },
            row.in);
  GRADCHECK(row.name + ", expanded incoming gradient", [f](const TV& v) { return sum(f(v), {0}); }, row.in);
}
