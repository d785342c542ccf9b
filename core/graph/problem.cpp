#include "graph/problem.h"

namespace plexus::graph {

std::string to_string(const Problem& p) {
  std::string where = p.node.empty() ? "" : " " + p.node + (p.port.empty() ? "" : "." + p.port);
  return std::string(p.severity == Severity::Error ? "error" : "warning") + one_line(where) + ": " + one_line(p.message);
}

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

bool has_errors(const std::vector<Problem>& problems) {
  for (const Problem& p : problems)
    if (p.severity == Severity::Error) return true;
  return false;
}

}  // namespace plexus::graph
