// libFuzzer target: the CSV reader and the table preparation. The first input byte picks the
// options (task, delimiter or its detection, target column, an explicit feature list, a class
// count for numeric labels, column policies and missing-value tokens); the rest is the file.
// Bad input must be a DataError naming the file (or a ValueError for a policy that does not fit
// the column); an accepted file must give consistent, finite features and valid targets, survive
// standardising and splitting, store its preparation losslessly and prepare its own rows again.
#include <cmath>

#include "data/csv.h"
#include "fuzz_support.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::data;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t pick = data[0];
  CsvOptions options;
  options.task = pick & 1 ? CsvTask::Classification : CsvTask::Regression;
  static constexpr char kDelimiters[] = {',', ';', '\t', 0};  // 0: detected
  options.delimiter = kDelimiters[(pick >> 1) & 3];
  options.target = pick & 8 ? "label" : "y";
  if (pick & 16) options.features = {"b", "a"};
  if (pick & 32) options.num_classes = 3;
  if (pick & 64) {  // categories as ids, a constant fill and a dropped row, other tokens
    ColumnPolicy a, b;
    a.name = "a";
    a.type = ColumnType::Categorical;
    a.encoding = CategoryEncoding::Index;
    a.missing = MissingPolicy::Constant;
    a.fill = "none";
    b.name = "b";
    b.missing = MissingPolicy::Drop;
    options.columns = {a, b};
    options.missing_values = "-, ?";
  }
  const fuzz::MemoryFile file({reinterpret_cast<const char*>(data + 1), size - 1});

  std::unique_ptr<CsvDataset> ds;
  try {
    ds = std::make_unique<CsvDataset>(file.path(), options);
  } catch (const DataError& e) {
    fuzz::require_names(e.what(), file.path());
    fuzz::rejected(e.what());
    return 0;
  } catch (const ValueError& e) {  // free text as a feature, a numeric fill for categories...
    fuzz::rejected(e.what());
    return 0;
  }
  fuzz::accepted();
  const int64_t n = ds->size(), f = int64_t(ds->feature_names().size());
  fuzz::require(ds->features().shape() == Shape{n, f}, "features are not [rows, features]");
  fuzz::require(ds->targets().shape() == Shape{n}, "targets are not [rows]");
  fuzz::require(int64_t(ds->row_lines().size()) == n, "a line number per row");
  const TablePreparation& prep = ds->preparation();
  fuzz::require(prep.width() == f && prep.input_names() == ds->feature_names(), "input names and width disagree");
  if (!options.features.empty())
    fuzz::require(prep.columns.size() == 2 && prep.columns[0].name == "b" && prep.columns[1].name == "a",
                  "feature order changed");
  fuzz::require(TablePreparation::from_json(prep.to_json(), "fuzz") == prep, "the preparation's JSON lost something");
  if (ds->left_out().total() == 0) {  // every row kept: prepared again as plexus-cli predict would
    const Tensor again = read_csv_features(file.path(), prep, options.delimiter);
    fuzz::require(again.to_vector() == ds->features().to_vector(), "rows prepared twice differ");
  }
  for (float v : ds->features().to_vector()) fuzz::require(std::isfinite(v), "a non-finite feature was accepted");
  const int64_t classes = ds->num_classes();
  if (options.task == CsvTask::Regression) {
    fuzz::require(classes == 0, "a regression dataset with classes");
    for (float v : ds->targets().to_vector()) fuzz::require(std::isfinite(v), "a non-finite target was accepted");
  } else {
    for (float v : ds->targets().to_vector())
      fuzz::require(v >= 0 && v < float(classes) && v == std::floor(v), "a class index out of range");
  }
  if (n == 0) return 0;
  std::vector<int64_t> all(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) all[size_t(i)] = n - 1 - i;
  const Example batch = ds->get_batch(all);
  fuzz::require(batch.input.shape() == Shape{n, f}, "get_batch shape");
  const FeatureStats stats = ds->feature_stats();
  for (float s : stats.std) fuzz::require(s > 0 && std::isfinite(s), "a zero or non-finite standard deviation");
  for (float v : ds->standardized(stats).features().to_vector())
    fuzz::require(!std::isnan(v), "standardising made a NaN");
  if (n >= 2) {
    const auto [train, test] = ds->split(0.5, 7, /*standardize=*/true);
    fuzz::require(train.size() + test.size() == n && train.size() > 0 && test.size() > 0, "split lost rows");
  }
  return 0;
}
