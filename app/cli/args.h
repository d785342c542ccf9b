#pragma once
// A command's arguments: --name value options and --flag switches, each at most once (but the
// repeatable ones, whose values all() lists), and up to a command's number of plain arguments
// (a project FILE). Values are parsed on request. Every command calls allow() first: it rejects
// unknown options, then an option left without its value.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tensor/device.h"

namespace plexus::cli {

// Bad usage: a short message; main points to the command's --help and exits 2.
struct UsageError {
  std::string message;
};

// How a command's arguments split: which options take no value, how many plain arguments it
// takes, which options may repeat.
struct ArgsShape {
  std::vector<std::string> flags;
  size_t max_positional = 0;
  std::vector<std::string> repeatable;
};

// A finite number >= 0 written out in full; nullopt for anything else.
std::optional<double> non_negative_number(const std::string& text);

class Args {
 public:
  Args(const std::vector<std::string>& argv, const ArgsShape& shape);

  void allow(const std::vector<std::string>& known) const;
  // Every value of a repeatable option, in order.
  std::vector<std::string> all(const std::string& k) const;
  void require(const std::string& command, const std::vector<std::string>& needed) const;
  const std::vector<std::string>& positional() const { return positional_; }
  bool has(const std::string& k) const { return values_.count(k) > 0; }
  std::string str(const std::string& k, const std::string& def) const { return has(k) ? values_.at(k) : def; }
  int64_t integer(const std::string& k, int64_t def, int64_t lo) const;
  double number(const std::string& k, double def) const;

 private:
  std::map<std::string, std::string> values_;  // a repeatable option's last value
  std::map<std::string, std::vector<std::string>> lists_;
  std::vector<std::string> positional_;
  std::string missing_value_;
};

// --device, checked against the machine (DeviceError when the GPU is missing); cpu without it.
Device device_option(const Args& args);

// --threads N, when given: the CPU threads for the math.
void apply_threads_option(const Args& args);

}  // namespace plexus::cli
