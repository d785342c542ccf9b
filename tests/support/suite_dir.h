#pragma once
// One temporary folder for a whole suite, made on first use and removed with everything in it
// when the suite's process ends, and named folders in it that the tests make as they need them
// (the run and statistics suites' scratch space).
#include <filesystem>
#include <string>

#include "support/temp_dir.h"

namespace plexus::testing {

inline const TempDir& suite_dir() {
  static const TempDir dir;
  return dir;
}

// suite_dir()/name (a relative path, "a/b" too), made with its parents if it is not there yet.
inline std::filesystem::path suite_subdir(const std::string& name) {
  const std::filesystem::path d = suite_dir().file(name);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace plexus::testing
