// Tables too large for memory (data/table.h, data/csv.h): with a memory budget of one byte the
// same generated files are read as streamed tables and datasets, and every cell, prepared value,
// target, line, split, statistic and error message must equal the in-memory path's.
#include "support/check.h"

#include <fstream>
#include <string>
#include <vector>

#include "data/csv.h"
#include "data/sampling.h"
#include "data/table.h"
#include "data/table_prep.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::data;
using plexus::testing::message_of;

namespace {

constexpr uint64_t kStream = 1;  // bytes: every table and dataset streams

std::string write(const plexus::testing::TempDir& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir.file(name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A messy file of `rows` rows: a BOM, CRLF and LF ends, blank lines, quoted cells holding the
// delimiter, quotes and line ends, missing-value tokens, numeric, categorical and date columns,
// targets missing now and then. `bad_row` >= 0 puts text into the numeric column 'a' there.
std::string messy_csv(int rows, int bad_row = -1) {
  std::string s = "\xEF\xBB\xBF" "a,b,city,when,note,y,label\r\n";
  uint64_t h = 12345;
  const auto next = [&] { return h = h * 6364136223846793005ull + 1442695040888963407ull, int(h >> 40); };
  const char* cities[] = {"Rome", "\"Paris, FR\"", "Oslo", "NA", "\"New\nYork\"", ""};
  for (int r = 0; r < rows; ++r) {
    const int v = next();
    s += r == bad_row ? "oops" : v % 9 == 0 ? "NA" : std::to_string(v % 1000 - 500) + "." + std::to_string(v % 7);
    s += ",";
    s += v % 11 == 0 ? "" : std::to_string(next() % 50);
    s += std::string(",") + cities[next() % 6] + ",";
    s += v % 13 == 0 ? "?" : "2024-0" + std::to_string(1 + next() % 9) + "-1" + std::to_string(next() % 10);
    s += ",\"say \"\"" + std::to_string(r) + "\"\"\"";  // free text: no feature
    s += "," + (v % 17 == 0 ? std::string("NA") : std::to_string(next() % 100) + ".25");
    s += std::string(",") + (next() % 3 == 0 ? "cat" : next() % 2 ? "dog" : "emu");
    s += r % 5 == 0 ? "\r\n" : "\n";
    if (r % 37 == 0) s += "\n";
  }
  return s;
}

CsvOptions options(const std::string& target, CsvTask task, uint64_t budget) {
  CsvOptions o;
  o.target = target;
  o.task = task;
  o.memory_budget = budget;
  ColumnPolicy a;
  a.name = "a";
  a.missing = MissingPolicy::Median;
  ColumnPolicy b;
  b.name = "b";
  b.missing = MissingPolicy::MostFrequent;
  o.columns = {a, b};
  return o;
}

void compare_datasets(const CsvDataset& memory, const CsvDataset& streamed) {
  VERIFY(!memory.streamed());
  VERIFY(streamed.streamed());
  COMPARE(streamed.size(), memory.size());
  COMPARE(streamed.feature_names(), memory.feature_names());
  COMPARE(streamed.features().to_vector(), memory.features().to_vector());
  COMPARE(streamed.targets().to_vector(), memory.targets().to_vector());
  COMPARE(streamed.row_lines(), memory.row_lines());
  const int64_t n = memory.size();
  const std::vector<int64_t> picks{n - 1, 0, n / 2, n / 2, n / 3};
  const Example a = memory.get_batch(picks), b = streamed.get_batch(picks);
  COMPARE(b.input.to_vector(), a.input.to_vector());
  COMPARE(b.target.to_vector(), a.target.to_vector());
  COMPARE(streamed.get(n - 1).input.to_vector(), memory.get(n - 1).input.to_vector());
  COMPARE(streamed.target_batch(picks).to_vector(), memory.target_batch(picks).to_vector());
  const FeatureStats sm = memory.feature_stats(), ss = streamed.feature_stats();
  COMPARE(ss.mean, sm.mean);
  COMPARE(ss.std, sm.std);
}

}  // namespace

TEST(streamedTableReadsTheSameCells) {
  const plexus::testing::TempDir dir;
  const std::string path = write(dir, "messy.csv", messy_csv(300));
  const Table memory = read_table(path);
  TableFormat f;
  f.memory_budget = kStream;
  const Table streamed = read_table(path, f);
  VERIFY(!memory.streamed());
  VERIFY(streamed.streamed());
  COMPARE(streamed.rows(), memory.rows());
  COMPARE(streamed.names(), memory.names());
  int64_t missing = 0;
  for (int64_t r = 0; r < memory.rows(); ++r) {
    COMPARE(streamed.row_line(r), memory.row_line(r));
    for (int64_t c = 0; c < memory.columns(); ++c) {
      COMPARE(streamed.cell(r, c), memory.cell(r, c));
      COMPARE(streamed.missing(r, c), memory.missing(r, c));
      missing += memory.missing(r, c);
      COMPARE(message_of<DataError>([&] { streamed.fail(r, c, "x"); }),
              message_of<DataError>([&] { memory.fail(r, c, "x"); }));
    }
  }
  VERIFY(missing > 30);  // the file does exercise missing cells
  // Read column-wise, a streamed table parses rows again and again: still the same cells.
  for (int64_t r = memory.rows() - 1; r >= 0; r -= 13) COMPARE(streamed.cell(r, 2), memory.cell(r, 2));
}

TEST(streamedDatasetPreparesTheSameValues) {
  const plexus::testing::TempDir dir;
  const std::string path = write(dir, "messy.csv", messy_csv(400));
  for (const auto& [target, task] : {std::pair{std::string("y"), CsvTask::Regression},
                                     std::pair{std::string("label"), CsvTask::Classification}}) {
    const CsvDataset memory(path, options(target, task, 0));
    const CsvDataset streamed(path, options(target, task, kStream));
    COMPARE(streamed.preparation(), memory.preparation());
    COMPARE(streamed.left_out().missing_target, memory.left_out().missing_target);
    COMPARE(streamed.class_names(), memory.class_names());
    VERIFY(memory.feature_names().size() > 10);  // one-hot cities, date parts, indicators
    compare_datasets(memory, streamed);
    // Splits, standardised on the training part, and subsets of subsets.
    const auto [mt, mv] = memory.split(0.7, 11, true);
    const auto [st, sv] = streamed.split(0.7, 11, true);
    compare_datasets(mt, st);
    compare_datasets(mv, sv);
    const std::vector<int64_t> some{5, 1, 2, 2};
    compare_datasets(mt.subset(some), st.subset(some));
  }
}

TEST(streamedSourceFitsTheSameOnTrainingRows) {
  const plexus::testing::TempDir dir;
  const std::string path = write(dir, "messy.csv", messy_csv(400));
  const CsvSource memory(path, options("y", CsvTask::Regression, 0));
  const CsvSource streamed(path, options("y", CsvTask::Regression, kStream));
  VERIFY(streamed.table().streamed());
  const std::vector<int64_t> train = split_indices(memory.size(), 0.6, 3).first;
  const TablePreparation pm = memory.fit(train), ps = streamed.fit(train);
  COMPARE(ps, pm);
  VERIFY(pm != memory.fit_all());  // the fit depends on the rows: the comparison means something
  const CsvDataset dm(memory, std::make_shared<const TablePreparation>(pm));
  const CsvDataset ds(streamed, std::make_shared<const TablePreparation>(ps));
  compare_datasets(dm.subset(train), ds.subset(train));
}

TEST(streamedPathFailsWithTheSameMessages) {
  const plexus::testing::TempDir dir;
  // Text in a numeric column, found when the dataset prepares its rows.
  const std::string bad = write(dir, "bad.csv", messy_csv(200, 150));
  CsvOptions o = options("y", CsvTask::Regression, 0);
  o.columns[0].type = ColumnType::Numeric;
  const std::string expected = message_of<DataError>([&] { CsvDataset(bad, o); });
  VERIFY_CONTAINS(expected, bad + ": line ");
  VERIFY_CONTAINS(expected, ", column 1 ('a'), byte offset ");
  VERIFY_CONTAINS(expected, "'oops' is not a number");
  o.memory_budget = kStream;
  COMPARE(message_of<DataError>([&] { CsvDataset(bad, o); }), expected);
  // A missing cell refused, a row of another length, a target that is not a number.
  CsvOptions strict = options("y", CsvTask::Regression, 0);
  strict.columns[1].missing = MissingPolicy::Error;
  const std::string good = write(dir, "good.csv", messy_csv(200));
  std::string text = messy_csv(120);
  const std::string ragged = write(dir, "ragged.csv", text + "1,2,Rome,2024-01-01,x,3\n");
  const std::string word = write(dir, "word.csv", text + "1,2,Rome,2024-01-01,x,three,cat\n");
  for (const auto& file : {std::pair{good, strict}, std::pair{ragged, options("y", CsvTask::Regression, 0)},
                           std::pair{word, options("y", CsvTask::Regression, 0)}}) {
    const std::string& path = file.first;  // not a structured binding: clang 14's lambdas cannot capture one
    const CsvOptions& opts = file.second;
    const std::string in_memory = message_of<DataError>([&] { CsvDataset(path, opts); });
    VERIFY_CONTAINS(in_memory, path + ": line ");
    CsvOptions s = opts;
    s.memory_budget = kStream;
    COMPARE(message_of<DataError>([&] { CsvDataset(path, s); }), in_memory);
  }
}
