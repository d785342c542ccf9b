// The runner of a core test suite (support/check.h): runs the registered tests in the order
// they are written, prints one line per test (and per row) as Qt Test does, and exits 0, 1, or
// 77 when everything that ran was skipped.
#include "support/check.h"

#include <cstdio>
#include <exception>
#include <iostream>

namespace plexus::check {
namespace {

enum class Outcome { pass, fail, skip };

struct Running {
  Outcome outcome = Outcome::pass;
  std::string label;  // name(row), for the FAIL and SKIP lines
  std::string row;
};
Running running;

// fnmatch-style: '*' matches any run of characters, '?' one; the whole name must match.
bool glob(std::string_view pattern, std::string_view name) {
  size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p, ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++, mark = n;
    } else if (star != std::string_view::npos) {
      p = star + 1, n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// Runs one test or row, turning an escaped exception into a failure as Qt Test does.
Outcome run_one(const Test& t, const std::string& row, const std::function<void()>& body) {
  running = Running{Outcome::pass, row.empty() ? t.name : t.name + "(" + row + ")", row};
  try {
    body();
  } catch (const std::exception& e) {
    record_failure(std::string("Caught unhandled exception: ") + e.what(), "", 0);
  } catch (...) {
    record_failure("Caught unhandled exception of unknown type", "", 0);
  }
  if (running.outcome == Outcome::pass) std::cout << "PASS   : " << running.label << "\n";
  std::cout.flush();
  return running.outcome;
}

}  // namespace

std::vector<Test>& registry() {
  static std::vector<Test> tests;
  return tests;
}

void record_failure(const std::string& message, const char* file, int line) {
  // Only the first failure of a test counts; the check that made it returns.
  if (running.outcome == Outcome::fail) return;
  running.outcome = Outcome::fail;
  std::cout << "FAIL!  : " << running.label << " " << message;
  if (line > 0) std::cout << "\n   Loc: [" << file << "(" << line << ")]";
  std::cout << "\n";
}

void record_skip(const std::string& reason, const char* file, int line) {
  running.outcome = Outcome::skip;
  std::cout << "SKIP   : " << running.label << " " << reason << "\n   Loc: [" << file << "(" << line << ")]\n";
}

bool failed() { return running.outcome == Outcome::fail; }
const std::string& current_row() { return running.row; }

}  // namespace plexus::check

int main(int argc, char** argv) {
  using namespace plexus::check;
  std::vector<std::string> include, exclude;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << "usage: " << argv[0] << " [-list] [NAME|PATTERN|-PATTERN ...]\n"
                << "  runs the suite's tests (all, or those named; '*' and '?' match; a leading '-' leaves out)\n";
      return 0;
    }
    if (a == "-list") {
      for (const Test& t : registry()) std::cout << t.name << "\n";
      return 0;
    }
    (a.size() > 1 && a[0] == '-' ? exclude : include).push_back(a[0] == '-' ? a.substr(1) : a);
  }
  auto wanted = [&](const std::string& name) {
    for (const std::string& p : exclude)
      if (glob(p, name)) return false;
    if (include.empty()) return true;
    for (const std::string& p : include)
      if (glob(p, name)) return true;
    return false;
  };

  int passed = 0, failures = 0, skipped = 0;
  auto count = [&](Outcome o) { (o == Outcome::pass ? passed : o == Outcome::fail ? failures : skipped)++; };
  std::cout << "********* Start testing of " << argv[0] << " *********\n";
  for (const Test& t : registry()) {
    if (!wanted(t.name)) continue;
    if (!t.row_tags) {
      count(run_one(t, "", t.run));
      continue;
    }
    std::vector<std::string> tags;
    try {
      tags = t.row_tags();
    } catch (const std::exception& e) {
      std::cout << "FAIL!  : " << t.name << " making the rows threw: " << e.what() << "\n";
      ++failures;
      continue;
    }
    for (size_t i = 0; i < tags.size(); ++i) {
      count(run_one(t, tags[i], [&] { t.run_row(i); }));
    }
  }
  std::cout << "Totals: " << passed << " passed, " << failures << " failed, " << skipped << " skipped\n"
            << "********* Finished testing of " << argv[0] << " *********\n";
  if (failures > 0) return 1;
  if (passed == 0 && skipped > 0) return 77;
  if (passed == 0) {
    std::cout << "no test matched\n";
    return 1;
  }
  return 0;
}
