#pragma once
// A problem found in a graph, said in words a user can act on, attached to where it is.
#include <string>
#include <string_view>
#include <vector>

namespace plexus::graph {

enum class Severity { Error, Warning };

struct Problem {
  Severity severity = Severity::Error;
  std::string node;     // node id ("" = the graph as a whole)
  std::string port;     // port name ("" = the node as a whole)
  std::string message;  // "Linear 'fc2' expects 128 input features but receives 64 from 'fc1'"
  bool operator==(const Problem&) const = default;
};

// "error fc2.input: ...", "warning drop1: ...", "error: ..." — one line, for CLIs and logs.
std::string to_string(const Problem& p);

// `text` with its control characters escaped (\n, \t, \x1b ...). Names and ids come from
// project files, so they may hold line breaks; the validator passes every message through
// this, so a problem is always one line and a file cannot forge lines of its own in a CLI's
// or log's output.
std::string one_line(std::string_view text);
bool has_errors(const std::vector<Problem>& problems);

}  // namespace plexus::graph
