#include "autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "autograd/grad_mode.h"
#include "ops/ops.h"
#include "util/error.h"

namespace plexus {
namespace {

double project(const Tensor& out, const std::vector<float>& r) {
  const std::vector<float> v = out.to_vector();
  double s = 0;
  for (size_t i = 0; i < v.size(); ++i) s += double(v[i]) * r[i];
  return s;
}

// Storage offsets of every element of `t`, in row-major order.
std::vector<int64_t> element_offsets(const Tensor& t) {
  std::vector<int64_t> offs;
  const int64_t n = t.numel(), nd = t.dim();
  std::vector<int64_t> idx(nd, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = t.offset();
    for (int64_t d = 0; d < nd; ++d) off += idx[d] * t.strides()[d];
    offs.push_back(off);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < t.shape()[d]) break;
      idx[d] = 0;
    }
  }
  return offs;
}

}  // namespace

GradcheckResult gradcheck(const TensorFunction& f, const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  GradcheckResult result;
  for (const Tensor& in : inputs)
    if (in.requires_grad()) in.set_grad(Tensor());

  // Analytical: one backward with the projection weights as output gradient.
  const Tensor out = f(inputs);
  if (!out.requires_grad()) {
    result.ok = false;
    result.message = "the function's output does not require grad";
    return result;
  }
  Generator gen(opt.seed);
  const Tensor r = randn(out.shape(), &gen).to(out.device());
  const std::vector<float> rv = r.to_vector();
  out.backward(r);

  NoGradGuard no_grad;
  std::ostringstream msg;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& in = inputs[k];
    if (!in.requires_grad()) continue;
    const std::vector<float> analytical =
        in.grad().defined() ? in.grad().to_vector() : std::vector<float>(size_t(in.numel()), 0.f);
    const std::vector<int64_t> offs = element_offsets(in);
    const std::vector<float> values = in.to_vector();
    for (size_t e = 0; e < offs.size(); ++e) {
      // A one-element view, so the same code perturbs host and device memory.
      Tensor cell = make_view(in, {}, {}, offs[e]);
      const float orig = values[e];
      const float hi = orig + opt.eps, lo = orig - opt.eps;
      cell.fill_(hi);
      const double fp = project(f(inputs), rv);
      cell.fill_(lo);
      const double fm = project(f(inputs), rv);
      cell.fill_(orig);
      const double numerical = (fp - fm) / (double(hi) - double(lo));
      const double err = std::fabs(double(analytical[e]) - numerical);
      result.max_error = std::max(result.max_error, err);
      ++result.checked;
      if (!(err <= opt.atol + opt.rtol * std::fabs(numerical)) && result.ok) {
        result.ok = false;
        msg << "input " << k << " element " << e << ": analytical " << analytical[e] << " vs numerical "
            << numerical << " (|diff| " << err << ")";
      }
    }
  }
  result.message = result.ok ? "ok (" + std::to_string(result.checked) + " elements)" : msg.str();
  return result;
}

}  // namespace plexus
