#include "data/dataloader.h"

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "autograd/grad_mode.h"
#include "data/sampling.h"
#include "util/error.h"

namespace plexus::data {

// One pass over the data: the batches of one epoch, the consumer's position, and (with
// prefetch) the worker threads and the batches they assembled ahead.
struct DataLoader::Pass {
  struct Item {
    Batch batch;
    std::exception_ptr error;
  };

  std::shared_ptr<const Dataset> dataset;
  DataLoaderOptions options;
  int64_t epoch = 0;
  std::vector<std::vector<int64_t>> batches;
  std::vector<int64_t> global_rows;  // of each batch before sharding

  // Consumer side (only touched by the thread iterating).
  int64_t next = 0;  // index of the batch the next advance() delivers
  bool finished = false;
  Batch current;

  // Shared with the workers, under mu. Batches [taken, claimed) are ahead of the consumer:
  // assembled (in `assembled`) or being assembled.
  std::mutex mu;
  std::condition_variable room;   // a batch may be claimed, or stop was requested
  std::condition_variable ready;  // a batch joined `assembled`
  std::map<int64_t, Item> assembled;
  int64_t taken = 0;    // batches handed to the consumer
  int64_t claimed = 0;  // batches handed to workers; they claim in order
  bool failed = false;  // a batch failed: the pass ends there, so claim no more
  bool stop = false;
  std::vector<std::thread> workers;

  ~Pass() { shutdown(); }

  void start() {
    const int64_t count = options.prefetch > 0 ? std::min(options.workers, int64_t(batches.size())) : 0;
    for (int64_t w = 0; w < count; ++w) workers.emplace_back([this] { run(); });
  }

  void shutdown() {
    if (workers.empty()) return;
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    room.notify_all();
    for (std::thread& w : workers) w.join();
    workers.clear();
  }

  // The calling worker thread as SCHED_BATCH (Linux; any user may choose it): the same share of
  // the CPU as before, but waking it no longer preempts the thread that woke it. Without this,
  // the consumer's notify after taking each batch let the woken worker, which had slept and so
  // came first, take the consumer's core for the whole batch it then assembled: on 2 cores
  // training a LeNet-sized model from a folder of PNGs with 2 workers, the trainer was off its
  // core inside ++ for 4-9 % of the epoch while the next batch was already waiting for it
  // (docs/performance.md, "Image folders"). Where the call fails the worker runs as it was.
  static void background_priority() {
#ifdef SCHED_BATCH
    sched_param param{};
    param.sched_priority = 0;
    sched_setscheduler(0, SCHED_BATCH, &param);  // 0: this thread (a Linux thread is a task)
#endif
  }

  // On the worker thread, so the consumer's copy to the GPU can start at once, asynchronously.
  static Tensor pinned_copy(const Tensor& t) {
    if (!t.device().is_cpu() || t.storage()->pinned) return t;
    Tensor p = empty_pinned(t.shape());
    p.copy_(t);
    return p;
  }

  Batch assemble(int64_t b) const {
    Batch out;
    out.indices = batches[size_t(b)];
    out.global_rows = global_rows[size_t(b)];
    if (out.indices.empty()) return out;  // this shard's part of a short last batch
    Example e = dataset->get_batch(out.indices);
    if (options.transform) {
      Generator gen(transform_seed(options.seed, epoch, b));
      e = options.transform->apply(e, gen);
    }
    if (!e.input.defined() || !e.target.defined())
      throw ValueError("DataLoader: batch " + std::to_string(b) + " has an undefined input or target");
    out.inputs = e.input.requires_grad() ? e.input.detach() : e.input;
    out.targets = e.target.requires_grad() ? e.target.detach() : e.target;
    if (options.pin_memory) {
      out.inputs = pinned_copy(out.inputs);
      out.targets = pinned_copy(out.targets);
    }
    return out;
  }

  // A worker: claim the lowest unclaimed batch while fewer than max(prefetch, workers) are
  // ahead of the consumer, assemble it, file it under its index; until none is left.
  void run() {
    background_priority();
    NoGradGuard no_grad;  // grad mode is per thread; this one never records history
    const auto n = int64_t(batches.size());
    const int64_t ahead = std::max(options.prefetch, options.workers);
    for (;;) {
      int64_t b = 0;
      {
        std::unique_lock lock(mu);
        room.wait(lock, [&] { return stop || failed || claimed == n || claimed < taken + ahead; });
        if (stop || failed || claimed == n) return;
        b = claimed++;
      }
      Item item;
      try {
        item.batch = assemble(b);
      } catch (...) {
        item.error = std::current_exception();
      }
      {
        std::lock_guard lock(mu);
        failed |= item.error != nullptr;
        assembled.emplace(b, std::move(item));
      }
      ready.notify_one();  // only the consumer waits on `ready`
    }
  }

  // Moves the next batch into `current`, or marks the pass finished. Rethrows a failure.
  void advance() {
    current = Batch();
    if (next >= int64_t(batches.size())) {
      finished = true;
      shutdown();
      return;
    }
    Item item;
    if (options.prefetch == 0) {
      try {
        NoGradGuard no_grad;
        item.batch = assemble(next);
      } catch (...) {
        item.error = std::current_exception();
      }
    } else {
      std::unique_lock lock(mu);
      ready.wait(lock, [&] { return assembled.contains(next); });
      item = std::move(assembled.extract(next).mapped());
      taken = next + 1;
      lock.unlock();
      room.notify_one();  // one more batch may be claimed
    }
    ++next;
    if (item.error) {
      finished = true;
      shutdown();  // workers claim nothing once a batch failed; the busy ones finish theirs
      std::rethrow_exception(item.error);
    }
    current = std::move(item.batch);
  }
};

namespace {
void check_options(const DataLoaderOptions& o, int64_t examples) {
  if (o.batch_size < 1) throw ValueError("DataLoader: batch_size must be >= 1, got " + std::to_string(o.batch_size));
  if (o.prefetch < 0) throw ValueError("DataLoader: prefetch must be >= 0, got " + std::to_string(o.prefetch));
  if (o.workers < 1) throw ValueError("DataLoader: workers must be >= 1, got " + std::to_string(o.workers));
  if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards)
    throw ValueError("DataLoader: shard " + std::to_string(o.shard) + " of " + std::to_string(o.shards) +
                     " (expected 0 <= shard < shards)");
  if (!o.sample_weights.empty() && int64_t(o.sample_weights.size()) != examples)
    throw ValueError("DataLoader: " + std::to_string(o.sample_weights.size()) + " sample weights for a dataset of " +
                     std::to_string(examples) + " examples");
}
}  // namespace

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  if (!dataset_) throw ValueError("DataLoader: no dataset");
  check_options(options_, dataset_->size());
}

DataLoader::DataLoader(const Dataset& dataset, DataLoaderOptions options)
    : dataset_(std::shared_ptr<const Dataset>(), &dataset), options_(std::move(options)) {  // non-owning
  check_options(options_, dataset.size());
}

int64_t DataLoader::size() const {
  const int64_t n = dataset_->size(), b = options_.batch_size;
  if (options_.streams) return n / std::max<int64_t>(1, std::min(b, n));
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

int64_t DataLoader::batch_rows(int64_t b) const {
  if (b < 0 || b >= size()) throw IndexError("DataLoader::batch_rows: batch " + std::to_string(b) + " of " + std::to_string(size()));
  const int64_t n = dataset_->size();
  if (options_.streams) return std::min(options_.batch_size, n);
  return std::min(n, (b + 1) * options_.batch_size) - b * options_.batch_size;
}

std::vector<std::vector<int64_t>> DataLoader::batch_indices(int64_t epoch) const {
  const int64_t n = dataset_->size();
  if (options_.streams) return stream_batches(n, options_.batch_size);
  std::vector<int64_t> order;
  if (!options_.sample_weights.empty()) {
    order = weighted_draws(options_.sample_weights, n, mix_seed(options_.seed, uint64_t(epoch), 0x77656967));
  } else if (options_.shuffle) {
    order = random_permutation(n, options_.seed + uint64_t(epoch));
  } else {
    order.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) order[size_t(i)] = i;
  }
  std::vector<std::vector<int64_t>> out;
  const int64_t nb = size();
  out.reserve(size_t(nb));
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t lo = b * options_.batch_size, hi = std::min(n, lo + options_.batch_size);
    out.emplace_back(order.begin() + lo, order.begin() + hi);
  }
  return out;
}

DataLoader::Iterator DataLoader::begin_at(int64_t first) {
  auto pass = std::make_shared<Pass>();
  pass->dataset = dataset_;
  pass->options = options_;
  pass->epoch = epoch_;
  pass->batches = batch_indices(epoch_);
  pass->global_rows.reserve(pass->batches.size());
  for (std::vector<int64_t>& rows : pass->batches) {
    const int64_t n = int64_t(rows.size());
    pass->global_rows.push_back(n);
    if (options_.shards == 1) continue;
    const int64_t lo = n * options_.shard / options_.shards, hi = n * (options_.shard + 1) / options_.shards;
    rows = std::vector<int64_t>(rows.begin() + lo, rows.begin() + hi);
  }
  if (first < 0 || first > int64_t(pass->batches.size()))
    throw IndexError("DataLoader::begin_at: batch " + std::to_string(first) + " of a pass of " +
                     std::to_string(pass->batches.size()));
  pass->next = pass->taken = pass->claimed = first;  // workers claim from here on
  ++epoch_;
  pass->start();
  pass->advance();
  return Iterator(std::move(pass));
}

Batch& DataLoader::Iterator::operator*() const {
  if (!pass_ || pass_->finished) throw IndexError("DataLoader::Iterator: dereferencing the end of the pass");
  return pass_->current;
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  if (!pass_ || pass_->finished) throw IndexError("DataLoader::Iterator: incrementing past the end of the pass");
  pass_->advance();
  return *this;
}

bool DataLoader::Iterator::operator==(const Iterator& other) const {
  const bool a_end = !pass_ || pass_->finished, b_end = !other.pass_ || other.pass_->finished;
  if (a_end || b_end) return a_end == b_end;
  return pass_ == other.pass_;
}

}  // namespace plexus::data
