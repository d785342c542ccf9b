#include "data/file_bytes.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "util/error.h"

namespace plexus::data {

std::string read_file_bytes(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw DataError(path + ": cannot open: " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
  const bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) throw DataError(path + ": read error at byte offset " + std::to_string(text.size()));
  return text;
}

}  // namespace plexus::data
