#include "dist/reducer.h"

#include <chrono>

#include "autograd/grad_mode.h"
#include "ops/ops.h"

namespace plexus::dist {

GradientReducer::GradientReducer(Communicator& comm, std::vector<Tensor> params, int64_t bucket_bytes)
    : comm_(comm), params_(std::move(params)), bucket_of_(params_.size()), offset_(params_.size()), filled_(params_.size(), false) {
  if (bucket_bytes < 1) throw ValueError("GradientReducer: bucket_bytes must be positive");
  const int64_t bucket_floats = std::max<int64_t>(1, bucket_bytes / int64_t(sizeof(float)));
  int64_t used = 0;
  for (size_t k = params_.size(); k-- > 0;) {  // last parameter first
    const int64_t n = params_[k].numel();
    if (buckets_.empty() || (used > 0 && used + n > bucket_floats)) {
      buckets_.emplace_back();
      used = 0;
    }
    ++buckets_.back().params;
    bucket_of_[k] = buckets_.size() - 1;
    offset_[k] = used;
    used += n;
    index_of_[params_[k].impl_ptr().get()] = k;
  }
  // A bucket's last parameter (the lowest index) ends its buffer.
  for (size_t k = 0; k < params_.size(); ++k) {
    Bucket& b = buckets_[bucket_of_[k]];
    if (!b.buffer.defined()) b.buffer = zeros({offset_[k] + params_[k].numel()}, params_[k].device());
  }
}

Tensor GradientReducer::part(size_t param) const {
  return buckets_[bucket_of_[param]].buffer.narrow(0, offset_[param], params_[param].numel());
}

GradientReducer::~GradientReducer() = default;

void GradientReducer::begin() {
  for (Bucket& b : buckets_) b.ready = 0;
  std::fill(filled_.begin(), filled_.end(), false);
  launched_ = 0;
  listening_ = std::make_unique<LeafReadyGuard>([this](TensorImpl& leaf) { on_ready(leaf); });
}

void GradientReducer::fill(size_t param) {
  if (filled_[param]) return;
  filled_[param] = true;
  const Tensor& p = params_[param];
  Tensor place = part(param);
  const Tensor g = p.grad();
  if (g.defined()) place.copy_(g.reshape({p.numel()}));
  else place.zero_();
  ++buckets_[bucket_of_[param]].ready;
}

void GradientReducer::launch_ready() {
  while (launched_ < buckets_.size() && buckets_[launched_].ready == buckets_[launched_].params) {
    Bucket& b = buckets_[launched_++];
    b.request = comm_.all_reduce_sum(b.buffer);
  }
  // MPI moves a non-blocking collective forward only inside MPI calls: give the ones in flight a turn.
  for (size_t k = 0; k < launched_; ++k)
    if (buckets_[k].request && buckets_[k].request->test()) buckets_[k].request.reset();
}

void GradientReducer::on_ready(TensorImpl& leaf) {
  const auto it = index_of_.find(&leaf);
  if (it == index_of_.end()) return;  // a leaf that is not one of the parameters (an input)
  NoGradGuard no_grad;
  fill(it->second);
  launch_ready();
}

void GradientReducer::finish() {
  listening_.reset();
  NoGradGuard no_grad;
  for (size_t k = 0; k < params_.size(); ++k) fill(k);
  launch_ready();
  const auto start = std::chrono::steady_clock::now();
  for (Bucket& b : buckets_)
    if (b.request) {
      b.request->wait();
      b.request.reset();
    }
  wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Each gradient becomes its place in the bucket (no copy back); the bucket is next written
  // after the optimizer's zero_grad() has let go of these views.
  for (size_t k = 0; k < params_.size(); ++k) params_[k].set_grad(part(k).view(params_[k].shape()));
}

}  // namespace plexus::dist
