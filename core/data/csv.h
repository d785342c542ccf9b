#pragma once
// Tabular data from a CSV file: one example per row, a target column chosen by name, and feature
// columns prepared into numbers (data/table_prep.h: missing values filled, categories one-hot
// or as indices, dates split into components). The file's format, delimiter detection and
// missing-value tokens are data/csv_format.h's.
//
// Rows: a row whose target cell is missing is left out (it has nothing to learn from), as is a
// row with a missing cell in a column whose policy is "drop"; left_out() counts them.
// Features: the columns of CsvOptions::features in that order; by default every column but the
// target and free-text columns (data/table_columns.h).
//
// Targets:
//  - Regression: the target cell must be a finite number; target tensor [N] of floats.
//  - Classification: if every target cell is a number, each must be a whole number >= 0
//    (and < num_classes when given); classes are 0..K-1 with K = num_classes or max + 1,
//    named "0".."K-1". Otherwise the target column holds string labels: each distinct
//    label is a class, numbered in sorted (byte-wise) order of the labels, so the numbering
//    does not depend on row order. The target tensor [N] holds class indices as floats.
//
// Every error about the file is a DataError "PATH: line L, column C ('name'), byte offset B:
// what" (lines and columns count from 1; the offset counts from 0 at the first byte of the file).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "data/table.h"
#include "data/table_prep.h"

namespace plexus::data {

enum class CsvTask { Regression, Classification };

struct CsvOptions {
  std::string target;                 // name of the target column (required)
  CsvTask task = CsvTask::Regression;
  std::vector<std::string> features;  // feature columns in this order; empty = see above
  int64_t num_classes = 0;            // classification with numeric labels: 0 = max label + 1
  char delimiter = 0;                 // 0: detected (csv_format::detect_delimiter)
  std::string missing_values = csv_format::default_missing_values();  // tokens, comma-separated
  std::vector<ColumnPolicy> columns;  // choices for some columns, by name; the others' follow their type
};

// How many rows a dataset left out, and why.
struct LeftOut {
  int64_t missing_target = 0;  // the target cell is missing
  int64_t dropped = 0;         // a missing cell in a column whose policy is "drop"
  int64_t total() const { return missing_target + dropped; }
  // "3 rows left out: 2 without a target, 1 with a missing cell in a 'drop' column"; "" for none.
  std::string text() const;
};

// A CSV file read and checked, its rows chosen and their targets decoded: what a preparation is
// fitted on (fit) and applied to (CsvDataset).
class CsvSource {
 public:
  CsvSource(const std::string& path, const CsvOptions& options);
  int64_t size() const { return int64_t(rows_.size()); }  // rows kept
  const Table& table() const { return table_; }
  // The preparation fitted on kept rows `indices` (0 .. size() - 1).
  TablePreparation fit(const std::vector<int64_t>& indices) const;
  TablePreparation fit_all() const;
  const std::vector<ColumnPolicy>& feature_policies() const { return features_; }
  const LeftOut& left_out() const { return left_out_; }

 private:
  friend class CsvDataset;
  Table table_;
  CsvTask task_;
  std::string missing_values_;
  int64_t target_col_ = 0;
  std::vector<ColumnPolicy> features_;
  std::vector<int64_t> rows_;  // table rows kept
  std::vector<float> targets_;
  std::vector<std::string> class_names_;
  LeftOut left_out_;
};

// Per-feature mean and standard deviation (population), for standardisation.
struct FeatureStats {
  std::vector<float> mean, std;
};

class CsvDataset : public Dataset {
 public:
  // The file's rows prepared by `preparation`, or by one fitted on all of them (the data's own
  // figures: fine for a look at it; a run fits on its training split only, graph::open_dataset).
  CsvDataset(const std::string& path, const CsvOptions& options);
  CsvDataset(const CsvSource& source, std::shared_ptr<const TablePreparation> preparation);

  int64_t size() const override { return features_.size(0); }
  Example get(int64_t index) const override;  // input [F], target []
  Tensor target_batch(const std::vector<int64_t>& indices) const override;  // [B]
  Example get_batch(const std::vector<int64_t>& indices) const override;  // [B, F], [B]

  const Tensor& features() const { return features_; }  // [N, F]
  const Tensor& targets() const { return targets_; }    // [N]
  // One name per input value (TablePreparation::input_names).
  const std::vector<std::string>& feature_names() const { return feature_names_; }
  const TablePreparation& preparation() const { return *preparation_; }
  std::shared_ptr<const TablePreparation> shared_preparation() const { return preparation_; }
  const LeftOut& left_out() const { return left_out_; }
  const std::string& target_name() const { return target_name_; }
  CsvTask task() const { return task_; }
  int64_t num_classes() const { return int64_t(class_names_.size()); }  // 0 for regression
  std::vector<std::string> class_names() const override { return class_names_; }
  const std::string& path() const { return path_; }
  // The 1-based line on which each row starts in the file (for reporting).
  const std::vector<int64_t>& row_lines() const { return row_lines_; }

  // Mean and std of every feature over this dataset's rows (a std of 0 is stored as 1,
  // so a constant feature maps to 0 instead of dividing by zero).
  FeatureStats feature_stats() const;
  // A copy with every feature standardised: (x - mean) / std.
  CsvDataset standardized(const FeatureStats& stats) const;
  // A copy holding rows `indices` (checked) in that order.
  CsvDataset subset(const std::vector<int64_t>& indices) const;
  // Deterministic train/validation split (see split_indices in data/sampling.h). With
  // `standardize`, statistics are computed on the training part only and applied to both,
  // so nothing about the validation rows leaks into training.
  std::pair<CsvDataset, CsvDataset> split(double train_fraction, uint64_t seed, bool standardize = false) const;

 private:
  CsvDataset() = default;
  std::string path_, target_name_;
  CsvTask task_ = CsvTask::Regression;
  std::vector<std::string> feature_names_, class_names_;
  std::vector<int64_t> row_lines_;
  std::shared_ptr<const TablePreparation> preparation_;
  LeftOut left_out_;
  Tensor features_, targets_;
};

// The column names of a CSV file's header (read and checked as CsvDataset does; delimiter 0:
// detected).
std::vector<std::string> read_csv_header(const std::string& path, char delimiter = 0);

// Model inputs for a trained model (plexus-cli predict): every row of the file prepared by
// `preparation`, [N, preparation.width()], with the preparation's missing-value tokens. The
// columns are found by name; others (a target, an id) may be there and are not read. The errors
// are CsvDataset's; a row a "drop" column would leave out is an error at its cell.
Tensor read_csv_features(const std::string& path, const TablePreparation& preparation, char delimiter = 0);

}  // namespace plexus::data
