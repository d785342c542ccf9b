#pragma once
// What a training run reports, and a thread-safe queue to hand it to another thread (the
// GUI's controller, or the CLI's printer). Events are plain values: the consumer never
// touches the model.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace plexus::train {

struct BatchEnd {
  int epoch = 0, epochs = 0;         // 1-based epoch
  int64_t batch = 0, batches = 0;    // 1-based batch within the epoch
  double loss = 0;                   // this batch
  double running_loss = 0;           // mean over the epoch so far
  double running_accuracy = 0;       // classification only
  double samples_per_second = 0;
  double eta_seconds = 0;            // whole run
  double lr = 0;
};

struct EpochEnd {
  int epoch = 0, epochs = 0;
  double train_loss = 0, train_accuracy = 0;
  bool has_eval = false;
  double eval_loss = 0, eval_accuracy = 0, eval_top5 = 0;
  std::vector<double> per_class_accuracy;  // eval split
  int64_t classes = 0;
  std::vector<int64_t> confusion;          // eval split, row-major classes×classes
  // Eval split, one per example in loader order, with TrainerOptions::record_predictions:
  // the predicted class (as counted in `confusion`) and its softmax probability.
  std::vector<int32_t> predicted;
  std::vector<float> confidence;
  double lr = 0;
  double seconds = 0;                      // this epoch, training + evaluation
};

struct Finished {
  bool cancelled = false;
  int epochs_completed = 0;
  double seconds = 0;
};

struct Failed {
  std::string message;
};

using Event = std::variant<BatchEnd, EpochEnd, Finished, Failed>;

// Multi-producer, multi-consumer; bounded so a stalled consumer cannot make a long run
// grow memory: when full, the oldest BatchEnd is dropped (epoch and final events never are).
class EventQueue {
 public:
  explicit EventQueue(size_t capacity = 4096) : capacity_(capacity) {}

  void push(Event e) {
    {
      std::lock_guard lock(mu_);
      if (q_.size() >= capacity_)
        for (auto it = q_.begin(); it != q_.end(); ++it)
          if (std::holds_alternative<BatchEnd>(*it)) {
            q_.erase(it);
            break;
          }
      q_.push_back(std::move(e));
    }
    cv_.notify_all();
  }

  std::optional<Event> try_pop() {
    std::lock_guard lock(mu_);
    if (q_.empty()) return std::nullopt;
    Event e = std::move(q_.front());
    q_.pop_front();
    return e;
  }

  // Waits up to `timeout` for an event.
  std::optional<Event> pop(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return !q_.empty(); })) return std::nullopt;
    Event e = std::move(q_.front());
    q_.pop_front();
    return e;
  }

  size_t size() const {
    std::lock_guard lock(mu_);
    return q_.size();
  }

 private:
  size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> q_;
};

}  // namespace plexus::train
