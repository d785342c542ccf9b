#include "data/dataloader.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "autograd/grad_mode.h"
#include "data/sampling.h"
#include "util/error.h"

namespace plexus::data {

// One pass over the data: the batches of one epoch, the consumer's position, and (with
// prefetch) the worker thread and the bounded queue between them.
struct DataLoader::Pass {
  struct Item {
    Batch batch;
    std::exception_ptr error;
  };

  std::shared_ptr<const Dataset> dataset;
  DataLoaderOptions options;
  int64_t epoch = 0;
  std::vector<std::vector<int64_t>> batches;

  // Consumer side (only touched by the thread iterating).
  int64_t next = 0;  // index of the batch the next advance() delivers
  bool finished = false;
  Batch current;

  // Shared with the worker, under mu.
  std::mutex mu;
  std::condition_variable space;  // the queue has room, or stop was requested
  std::condition_variable ready;  // the queue has an item
  std::deque<Item> queue;
  bool stop = false;
  std::thread worker;

  ~Pass() { shutdown(); }

  void start() {
    if (options.prefetch > 0 && !batches.empty()) worker = std::thread([this] { run(); });
  }

  void shutdown() {
    if (!worker.joinable()) return;
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    space.notify_all();
    worker.join();
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

  // The worker: assemble batches in order, at most options.prefetch ahead of the consumer.
  void run() {
    NoGradGuard no_grad;  // grad mode is per thread; this one never records history
    const auto n = int64_t(batches.size());
    for (int64_t b = 0; b < n; ++b) {
      {
        std::unique_lock lock(mu);
        space.wait(lock, [&] { return stop || int64_t(queue.size()) < options.prefetch; });
        if (stop) return;
      }
      Item item;
      try {
        item.batch = assemble(b);
      } catch (...) {
        item.error = std::current_exception();
      }
      const bool failed = item.error != nullptr;
      {
        std::lock_guard lock(mu);
        queue.push_back(std::move(item));
      }
      ready.notify_one();
      if (failed) return;  // the pass ends at the failing batch
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
      ready.wait(lock, [&] { return !queue.empty(); });
      item = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      space.notify_one();
    }
    ++next;
    if (item.error) {
      finished = true;
      shutdown();  // the worker stopped after pushing the error
      std::rethrow_exception(item.error);
    }
    current = std::move(item.batch);
  }
};

namespace {
void check_options(const DataLoaderOptions& o) {
  if (o.batch_size < 1) throw ValueError("DataLoader: batch_size must be >= 1, got " + std::to_string(o.batch_size));
  if (o.prefetch < 0) throw ValueError("DataLoader: prefetch must be >= 0, got " + std::to_string(o.prefetch));
}
}  // namespace

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  if (!dataset_) throw ValueError("DataLoader: no dataset");
  check_options(options_);
}

DataLoader::DataLoader(const Dataset& dataset, DataLoaderOptions options)
    : dataset_(std::shared_ptr<const Dataset>(), &dataset), options_(std::move(options)) {  // non-owning
  check_options(options_);
}

int64_t DataLoader::size() const {
  const int64_t n = dataset_->size(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

std::vector<std::vector<int64_t>> DataLoader::batch_indices(int64_t epoch) const {
  const int64_t n = dataset_->size();
  std::vector<int64_t> order;
  if (options_.shuffle) {
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

DataLoader::Iterator DataLoader::begin() {
  auto pass = std::make_shared<Pass>();
  pass->dataset = dataset_;
  pass->options = options_;
  pass->epoch = epoch_;
  pass->batches = batch_indices(epoch_);
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
