#pragma once
// A command's arguments: --name value options and --flag switches, each at most once (but the
// repeatable ones, whose values all() lists), and up to a command's number of plain arguments
// (a project FILE). The command's ArgsShape lists every option it takes: parsing rejects any
// other, and --help, the man page and the shell completion are written from the same shape.
// Values are parsed on request.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tensor/device.h"

namespace plexus::cli {

// Bad usage: a short message, one line; main adds where to read more and exits 2.
struct UsageError {
  std::string message;
};

// What an option's value is, for the shell's completion: a path (files are offered), or
// anything else (a number, a name), then offered from `choices` where the option lists them.
enum class Takes { Text, Path };

struct ValueOption {
  ValueOption(std::string name, Takes takes = Takes::Text, std::vector<std::string> choices = {})
      : name(std::move(name)), takes(takes), choices(std::move(choices)) {}

  std::string name;  // "--checkpoint"
  Takes takes;
  std::vector<std::string> choices;  // the values completion offers; parsing does not limit to them
};

// How a command's arguments split: the options without a value and those with one, how many
// plain arguments it takes (paths, but where `positional_choices` names the few it takes),
// which options may repeat.
struct ArgsShape {
  ArgsShape(std::vector<std::string> flags = {}, std::vector<ValueOption> options = {}, size_t max_positional = 0,
            std::vector<std::string> repeatable = {}, std::vector<std::string> positional_choices = {})
      : flags(std::move(flags)), options(std::move(options)), max_positional(max_positional),
        repeatable(std::move(repeatable)), positional_choices(std::move(positional_choices)) {}

  std::vector<std::string> flags;
  std::vector<ValueOption> options;
  size_t max_positional;
  std::vector<std::string> repeatable;
  std::vector<std::string> positional_choices;
};

// --device and --threads, as the commands that run models take them.
inline const ValueOption kDeviceOption{"--device", Takes::Text, {"cpu", "cuda"}};
inline const ValueOption kThreadsOption{"--threads"};

// A finite number >= 0 written out in full; nullopt for anything else.
std::optional<double> non_negative_number(const std::string& text);

class Args {
 public:
  // UsageError for an option not in `shape`, one without its value, a second plain argument
  // too many.
  Args(const std::vector<std::string>& argv, const ArgsShape& shape);

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
};

// --device, checked against the machine (DeviceError when the GPU is missing); cpu without it.
Device device_option(const Args& args);

// --threads N, when given: the CPU threads for the math.
void apply_threads_option(const Args& args);

}  // namespace plexus::cli
