#pragma once
// GradientReducer: sums the parameters' gradients over the ranks of a data-parallel run while
// backward() is still running, as PyTorch DDP does. The parameters are split into buckets of
// about bucket_bytes, filled from the last parameter back (the order in which backward makes
// their gradients). When every gradient of a bucket is final (autograd/leaf_ready.h) it is
// copied into the bucket's flat buffer and the bucket's non-blocking all-reduce starts, so it
// overlaps the backward pass of the layers before it. Buckets start in index order on every
// rank, as MPI and NCCL require, whatever order their gradients become final in.
//
// Each rank scales its loss by its share of the global batch before backward (train/step.h),
// so the sums are the gradient of the global batch's mean loss, as one process computes it.
//
//   GradientReducer reducer(comm, model.parameters());
//   reducer.begin();  loss.backward();  reducer.finish();  optimizer.step();
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "autograd/leaf_ready.h"
#include "dist/communicator.h"

namespace plexus::dist {

class GradientReducer {
 public:
  // Small enough that a model of a few MB (LeNet: 1.7 MB, most of it one layer near the output)
  // has a bucket in flight while backward runs through the layers before it; large enough that
  // a bucket's per-message latency stays small beside its bytes (PyTorch DDP's first bucket).
  static constexpr int64_t kDefaultBucketBytes = int64_t(1) << 20;

  GradientReducer(Communicator& comm, std::vector<Tensor> params, int64_t bucket_bytes = kDefaultBucketBytes);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Listens to backward() on this thread until finish().
  void begin();
  // Starts the buckets not started yet (a parameter without a gradient counts as zeros), waits
  // for every all-reduce and makes every parameter's .grad its sum, a view into its bucket (all
  // of them: a rank whose part of a batch was empty ran no backward, and its parameters still
  // take the sum). The next begin() must come after those gradients were let go (zero_grad).
  void finish();

  size_t bucket_count() const { return buckets_.size(); }
  // Seconds finish() spent waiting for all-reduces after backward had ended, over the run:
  // what the overlap did not hide.
  double wait_seconds() const { return wait_seconds_; }

 private:
  struct Bucket {
    size_t params = 0;
    Tensor buffer;    // flat, on the parameters' device
    size_t ready = 0;
    std::unique_ptr<Request> request;
  };

  void on_ready(TensorImpl& leaf);
  void fill(size_t param);
  Tensor part(size_t param) const;  // the parameter's place in its bucket
  void launch_ready();  // starts the full buckets, in index order

  Communicator& comm_;
  std::vector<Tensor> params_;
  std::vector<size_t> bucket_of_;  // per parameter
  std::vector<int64_t> offset_;    // per parameter: where in its bucket's buffer
  std::vector<bool> filled_;       // per parameter, this step
  std::unordered_map<const TensorImpl*, size_t> index_of_;
  std::vector<Bucket> buckets_;
  size_t launched_ = 0;            // buckets started this step
  std::unique_ptr<LeafReadyGuard> listening_;
  double wait_seconds_ = 0;
};

}  // namespace plexus::dist
