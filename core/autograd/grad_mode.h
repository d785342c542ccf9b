#pragma once
// Whether ops record history. Thread-local, as in PyTorch: a training worker thread
// sets its own mode without affecting the UI thread.

namespace plexus {

struct GradMode {
  static bool enabled();
  static void set_enabled(bool on);
};

// Disables recording for the scope (evaluation, optimizer updates, backward itself).
class NoGradGuard {
 public:
  NoGradGuard() : prev_(GradMode::enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace plexus
