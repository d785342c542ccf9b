// Golden messages for broken graphs: every tests/graphs/broken/<case>.plexus is loaded,
// validated against the dataset its file binds, and its problems, one to_string(Problem) line
// each and in the validator's order, must equal <case>.expected line by line. A mismatch
// prints a unified-style diff (- expected, + actual).
//
// After a deliberate change to a message, rewrite the golden files and review the diff:
//
//   PLEXUS_UPDATE_GOLDEN=1 build/tests/test_broken_graphs
//   git diff tests/graphs/broken
//
// Adding a case: write <case>.plexus (the MNIST MLP with a defect; see README.md there), run
// with PLEXUS_UPDATE_GOLDEN=1 once, and read the new .expected critically: does each message
// name the right node and port, and say what to do?
//
// Datasets are not read: the binding's kind (and, for CSV files, its path) selects a fixed
// DatasetInfo from the table below. The memory check compares with a fixed 16 GiB instead of
// this machine's memory, so the messages are the same on every machine.
#include "support/check.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph/project.h"
#include "graph/validate.h"

using namespace plexus;
using namespace plexus::graph;
namespace fs = std::filesystem;

namespace {

const fs::path kDir = fs::path(PLEXUS_SOURCE_DIR) / "tests" / "graphs" / "broken";
constexpr uint64_t kMemory = uint64_t(16) << 30;

bool updating() {
  const char* v = std::getenv("PLEXUS_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

// What describe_dataset would say for the bindings the corpus uses, without reading files.
// Returns false for a binding the table does not know; `info` is null when none is bound.
bool dataset_for(const DatasetBinding& b, std::optional<DatasetInfo>& info) {
  if (b.kind.empty()) {
    info.reset();
    return true;
  }
  if (b.kind == "mnist" || b.kind == "fashion-mnist") {
    info = DatasetInfo{{1, 28, 28}, {}, 10};
    return true;
  }
  if (b.kind == "csv" && b.path == "data/housing.csv" && b.task == "regression") {
    info = DatasetInfo{{8}, {}, 0};  // examples/data/housing.csv: 8 features, the price
    return true;
  }
  return false;
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A unified-style diff of two short line lists (longest common subsequence).
std::string diff(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> lcs(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::ostringstream os;
  os << "--- expected\n+++ actual\n@@ -1," << n << " +1," << m << " @@\n";
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      os << "  " << a[i++] << "\n";
      ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      os << "- " << a[i++] << "\n";
    } else {
      os << "+ " << b[j++] << "\n";
    }
  }
  return os.str();
}

// The corpus's cases by name, sorted; one row each.
struct CaseRow {
  std::string name;
};
std::vector<CaseRow> corpus_rows() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kDir))
    if (entry.path().extension() == ".plexus") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  // Fewer cases is a missing corpus: the test fails (making its rows throws) instead of passing empty.
  if (names.size() < 30) throw std::runtime_error("expected the broken-graph corpus in " + kDir.string());
  std::vector<CaseRow> rows;
  for (const std::string& n : names) rows.push_back({n});
  return rows;
}

}  // namespace

TEST_ROWS(corpus, corpus_rows()) {
  const std::string& name = row.name;
  const fs::path file = kDir / (name + ".plexus");
  const fs::path golden = kDir / (name + ".expected");

  Graph g;
  try {
    g = load_project(file);
  } catch (const std::exception& e) {
    FAIL("the case does not load (corpus files must be valid project files): " + std::string(e.what()));
  }
  std::optional<DatasetInfo> info;
  VERIFY2(dataset_for(g.dataset, info), "no DatasetInfo for the dataset binding kind '" + g.dataset.kind + "', path '" +
                                            g.dataset.path + "': add it to dataset_for()");

  const Validation v = validate(g, info ? &*info : nullptr, {.memory = kMemory});
  std::vector<std::string> actual;
  for (const Problem& p : v.problems) {
    actual.push_back(to_string(p));
    // Each problem sits on a node of the graph (or on the graph as a whole).
    VERIFY2(p.node.empty() || g.find(p.node), "names a node the graph does not have: " + actual.back());
  }

  if (updating()) {
    std::ofstream out(golden, std::ios::trunc);
    for (const std::string& line : actual) out << line << "\n";
    VERIFY2(out.good(), "cannot write " + golden.string());
    std::printf("INFO   : updated %s (%zu lines)\n", golden.filename().string().c_str(), actual.size());
    return;
  }
  VERIFY2(fs::exists(golden),
          "missing " + golden.string() + ": run with PLEXUS_UPDATE_GOLDEN=1 to create it, then review it");
  const std::vector<std::string> expected = read_lines(golden);
  if (expected != actual) {
    const std::string d = diff(expected, actual);
    std::printf("WARN   : %s: problems differ from %s\n%s", name.c_str(), golden.filename().string().c_str(),
                d.c_str());
    FAIL("problems differ from the golden file (diff above; PLEXUS_UPDATE_GOLDEN=1 rewrites it)");
  }
  // Errors make the graph unusable; a case with warnings only still compiles.
  COMPARE(v.ok(),
          std::none_of(expected.begin(), expected.end(), [](const std::string& l) { return l.starts_with("error"); }));
}

// Every golden file belongs to a case, so a renamed or deleted case leaves nothing stale.
TEST(noStrayGoldenFiles) {
  for (const auto& entry : fs::directory_iterator(kDir))
    if (entry.path().extension() == ".expected") {
      fs::path source = entry.path();
      source.replace_extension(".plexus");
      VERIFY2(fs::exists(source), "golden file without a case: " + entry.path().string());
    }
}

// The diff the failures print.
TEST(diffShowsChangedLines) {
  const std::string d = diff({"a", "b", "c"}, {"a", "B", "c", "d"});
  COMPARE(d, std::string("--- expected\n+++ actual\n@@ -1,3 +1,4 @@\n  a\n- b\n+ B\n  c\n+ d\n"));
}

