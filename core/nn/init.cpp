#include "nn/init.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "util/error.h"

namespace plexus::nn::init {

namespace {
int64_t receptive(const Tensor& w) {
  int64_t r = 1;
  for (int64_t d = 2; d < w.dim(); ++d) r *= w.shape()[d];
  return r;
}
void check_weight(const Tensor& w, const char* what) {
  if (w.dim() < 2) throw ShapeError(std::string(what) + ": needs a weight of at least 2 dims, got " + to_string(w.shape()));
}
}  // namespace

int64_t fan_in(const Tensor& w) {
  check_weight(w, "fan_in");
  return w.shape()[1] * receptive(w);
}
int64_t fan_out(const Tensor& w) {
  check_weight(w, "fan_out");
  return w.shape()[0] * receptive(w);
}

void uniform_(Tensor& t, float lo, float hi, Generator* gen) {
  NoGradGuard no_grad;
  t.copy_(uniform(t.shape(), lo, hi, gen));
}

void normal_(Tensor& t, float mean, float std, Generator* gen) {
  NoGradGuard no_grad;
  t.copy_(randn(t.shape(), gen)).mul_(std);
  if (mean != 0.f) t.add_(full({}, mean, t.device()));
}

void constant_(Tensor& t, float value) {
  NoGradGuard no_grad;
  t.fill_(value);
}

void kaiming_uniform_(Tensor& t, float a, Generator* gen) {
  const float gain = std::sqrt(2.f / (1.f + a * a));
  const float bound = gain * std::sqrt(3.f / float(fan_in(t)));
  uniform_(t, -bound, bound, gen);
}

void kaiming_normal_(Tensor& t, float a, Generator* gen) {
  const float gain = std::sqrt(2.f / (1.f + a * a));
  normal_(t, 0.f, gain / std::sqrt(float(fan_in(t))), gen);
}

void xavier_uniform_(Tensor& t, float gain, Generator* gen) {
  const float bound = gain * std::sqrt(6.f / float(fan_in(t) + fan_out(t)));
  uniform_(t, -bound, bound, gen);
}

}  // namespace plexus::nn::init
