#pragma once
// DataLoader: iterates a Dataset in batches, optionally shuffled and transformed, with
// background threads assembling the next batches while the consumer trains on the current.
//
//   DataLoader loader(train_set, {.batch_size = 64, .shuffle = true, .seed = 1});
//   for (int epoch = 0; epoch < 10; ++epoch)
//     for (Batch& b : loader) { ... b.inputs, b.targets ... }
//
// Epochs. Every begin() starts one pass over the data using epoch number epoch() and then
// advances it by one; set_epoch(e) chooses the epoch of the next pass (e.g. when resuming).
// Pass e shuffles with Generator(seed + e) and seeds the transform of its batch b with
// transform_seed(seed, e, b), so a run is reproducible, whatever the thread timing, prefetch
// depth and worker count: the same seed and epoch give the same batches, bit for bit.
//
// Threads. With prefetch > 0 each pass owns `workers` threads that assemble batches ahead of
// the consumer (condition variables, no polling). A free worker claims the lowest batch no
// worker has claimed, so batch b is assembled by whichever worker is free; the consumer
// receives the batches strictly in order. At most max(prefetch, workers) batches are assembled or being
// assembled ahead of the one the consumer holds: prefetch bounds the memory held ahead, and is
// raised to the worker count so that no worker is idle for want of room. Workers run with grad
// mode off (grad mode is thread-local) and produce tensors that do not require grad.
// An exception thrown by the dataset or the transform is delivered to the consumer, in
// order, by the iterator step that would have returned the failing batch; the pass then
// ends (batches after it that other workers had already begun are discarded). A pass belongs
// to its iterators, not to the loader: when the last copy of its iterator goes away (the loop
// finished, `break`, an exception unwinding) the workers are told to stop, each finishes at
// most the batch it is assembling, and all are joined. Destroying the loader mid-pass is
// therefore safe too: the pass lives on with its iterator (holding the dataset, when shared)
// and shuts down with it. prefetch = 0 assembles batches on the consumer's thread instead
// (workers is then unused). On Linux the workers run as SCHED_BATCH: a fair share of the CPU as
// any thread, but waking one (the consumer does, each time it takes a batch) does not preempt
// the consumer, so on a machine whose cores the training threads fill, the trainer is not taken
// off its core while a worker assembles the next batch.
//
// The dataset must be safe to read from several threads at once (see data/dataset.h). Passes
// are independent: several may run at once, each with its own workers.
#include <cstdint>
#include <iterator>
#include <memory>
#include <vector>

#include "data/dataset.h"
#include "data/transforms.h"

namespace plexus::data {

struct Batch {
  Tensor inputs;                 // [B, ...]; undefined when this shard of the batch is empty
  Tensor targets;                // [B, ...]; likewise
  std::vector<int64_t> indices;  // dataset index of each row
  // The rows of the whole batch, of which a sharded loader delivers its part (else B).
  int64_t global_rows = 0;
};

struct DataLoaderOptions {
  int64_t batch_size = 32;
  bool shuffle = false;
  bool drop_last = false;  // drop a final batch smaller than batch_size
  // Batches as parallel streams over the examples in order (stream_batches in data/sampling.h),
  // for recurrent layers that carry their state from batch to batch; shuffle and drop_last are
  // then unused, and every epoch has the same batches.
  bool streams = false;
  uint64_t seed = 0;
  // A weighted sampler (imbalanced classes): when not empty, one weight per example, and every
  // epoch draws the dataset's size of examples with replacement, example i with probability
  // sample_weights[i] / their sum (weighted_draws in data/sampling.h, seeded by seed and the
  // epoch); shuffle is then unused.
  std::vector<double> sample_weights = {};
  int64_t prefetch = 2;    // batches assembled ahead by the worker threads; 0 = no threads
  int64_t workers = 1;     // threads assembling batches when prefetch > 0 (see Threads above)
  TransformPtr transform = nullptr;  // applied to every assembled batch; may be null
  // Assemble batches in page-locked memory (see empty_pinned), so the trainer's copies to a
  // CUDA device run asynchronously. Ordinary memory when there is no CUDA device.
  bool pin_memory = false;
  // Data-parallel training: this process is shard `shard` of `shards`. The batches are the
  // same as unsharded (batch_size is the global batch), and each delivers its rows
  // [rows·shard/shards, rows·(shard+1)/shards) — an empty part (a last batch with fewer rows
  // than shards) has undefined tensors. Transforms are seeded per global batch as before.
  int64_t shard = 0;
  int64_t shards = 1;
};

class DataLoader {
  struct Pass;

 public:
  // Shares ownership of the dataset (so a pass can safely outlive the loader).
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options = {});
  // Borrows the dataset: it must outlive the loader and every pass started from it.
  DataLoader(const Dataset& dataset, DataLoaderOptions options = {});
  DataLoader(const Dataset&& dataset, DataLoaderOptions options = {}) = delete;  // would dangle

  int64_t size() const;  // batches per epoch
  // The rows of batch `b` of any epoch before sharding (Batch::global_rows), without assembling it.
  int64_t batch_rows(int64_t b) const;
  int64_t dataset_size() const { return dataset_->size(); }
  const DataLoaderOptions& options() const { return options_; }
  const Dataset& dataset() const { return *dataset_; }

  int64_t epoch() const { return epoch_; }  // the epoch the next begin() uses
  void set_epoch(int64_t epoch) { epoch_ = epoch; }

  // The dataset indices of every batch of `epoch`, in order (what a pass would produce).
  std::vector<std::vector<int64_t>> batch_indices(int64_t epoch) const;

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using pointer = Batch*;
    using reference = Batch&;

    Iterator() = default;  // the end
    Batch& operator*() const;
    Batch* operator->() const { return &**this; }
    Iterator& operator++();  // may throw what the worker threw
    bool operator==(const Iterator& other) const;

   private:
    friend class DataLoader;
    explicit Iterator(std::shared_ptr<Pass> pass) : pass_(std::move(pass)) {}
    std::shared_ptr<Pass> pass_;  // null or finished = end
  };

  // Starts a pass over epoch(), advances epoch(), and returns an iterator at its first batch
  // (which may throw what assembling that batch threw).
  Iterator begin() { return begin_at(0); }
  // The same from batch `first` of the pass on (0-based; size() gives a finished pass): the
  // batches a whole pass would deliver from there, bit for bit, the earlier ones never
  // assembled. For a run that goes on in the middle of an epoch.
  Iterator begin_at(int64_t first);
  Iterator end() { return Iterator(); }

 private:
  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  int64_t epoch_ = 0;
};

}  // namespace plexus::data
