#include "graph/problem.h"

namespace plexus::graph {

std::string to_string(const Problem& p) {
  std::string where = p.node.empty() ? "" : " " + p.node + (p.port.empty() ? "" : "." + p.port);
  return std::string(p.severity == Severity::Error ? "error" : "warning") + where + ": " + p.message;
}

bool has_errors(const std::vector<Problem>& problems) {
  for (const Problem& p : problems)
    if (p.severity == Severity::Error) return true;
  return false;
}

}  // namespace plexus::graph
