#include "util/text.h"

#include <charconv>

namespace plexus {

std::string shortest_text(double v) {
  char buf[32];  // the longest shortest form of a double is 24 characters
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

std::string shortest_float_text(float v) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  return join(items, separator, separator);
}

std::string join(const std::vector<std::string>& items, const std::string& separator, const std::string& last) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += i + 1 == items.size() ? last : separator;
    s += items[i];
  }
  return s;
}

}  // namespace plexus
