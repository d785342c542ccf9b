#pragma once
// An environment variable set (or unset) for a scope: the previous value, or its absence, comes
// back when the guard goes, also when a failed check returns early.
#include <cstdlib>
#include <optional>
#include <string>

namespace plexus::testing {

class ScopedEnv {
 public:
  explicit ScopedEnv(std::string name) : name_(std::move(name)) {
    if (const char* v = std::getenv(name_.c_str())) before_ = v;
  }
  ScopedEnv(std::string name, const std::string& value) : ScopedEnv(std::move(name)) { set(value); }
  ~ScopedEnv() {
    if (before_) ::setenv(name_.c_str(), before_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

  void set(const std::string& value) const { ::setenv(name_.c_str(), value.c_str(), 1); }
  void unset() const { ::unsetenv(name_.c_str()); }

 private:
  std::string name_;
  std::optional<std::string> before_;
};

}  // namespace plexus::testing
