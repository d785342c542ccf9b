#pragma once
// Tabular data from a CSV file: one example per row, numeric feature columns and one
// target column chosen by name.
//
// Format (RFC 4180, strictly):
//  - The first record is the header: column names, unique. A UTF-8 byte-order mark is skipped.
//  - Records end with LF or CRLF; completely empty lines are skipped. Every record has as
//    many fields as the header.
//  - A field may be quoted: "a, b" holds a comma, "" is a literal quote, and a quoted field
//    may span lines. A quote inside an unquoted field, text after a closing quote and an
//    unterminated quote are errors.
//  - Feature cells are decimal numbers (C locale; surrounding spaces/tabs ignored, a leading
//    '+' allowed). Empty cells, non-numbers, NaN, infinities and values outside the float32
//    range are errors.
//  - Columns that are neither the target nor in CsvOptions::features are not parsed at all
//    (e.g. an id or a free-text column); by default every non-target column is a feature.
//
// Targets:
//  - Regression: the target cell must be a finite number; target tensor [N] of floats.
//  - Classification: if every target cell is a number, each must be a whole number >= 0
//    (and < num_classes when given); classes are 0..K-1 with K = num_classes or max + 1,
//    named "0".."K-1". Otherwise the target column holds string labels: each distinct
//    label is a class, numbered in sorted (byte-wise) order of the labels, so the numbering
//    does not depend on row order. The target tensor [N] holds class indices as floats.
//
// Every error is a DataError "PATH: line L, column C ('name'), byte offset B: what" (lines
// and columns count from 1; the offset counts from 0 at the first byte of the file).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"

namespace plexus::data {

enum class CsvTask { Regression, Classification };

struct CsvOptions {
  std::string target;                 // name of the target column (required)
  CsvTask task = CsvTask::Regression;
  std::vector<std::string> features;  // feature columns in this order; empty = all but the target
  int64_t num_classes = 0;            // classification with numeric labels: 0 = max label + 1
  char delimiter = ',';
};

// Per-feature mean and standard deviation (population), for standardisation.
struct FeatureStats {
  std::vector<float> mean, std;
};

class CsvDataset : public Dataset {
 public:
  CsvDataset(const std::string& path, const CsvOptions& options);

  int64_t size() const override { return features_.size(0); }
  Example get(int64_t index) const override;  // input [F], target []
  Tensor target_batch(const std::vector<int64_t>& indices) const override;  // [B]
  Example get_batch(const std::vector<int64_t>& indices) const override;  // [B, F], [B]

  const Tensor& features() const { return features_; }  // [N, F]
  const Tensor& targets() const { return targets_; }    // [N]
  const std::vector<std::string>& feature_names() const { return feature_names_; }
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
  Tensor features_, targets_;
};

// The column names of a CSV file's header (read and checked as CsvDataset does).
std::vector<std::string> read_csv_header(const std::string& path, char delimiter = ',');

// Feature rows without targets, for a trained model (plexus-cli predict): the columns named in
// `features`, in that order, of every row, as [N, F] floats in the file's units. Other columns
// (a target, an id) may be there and are not parsed. The format and the errors are
// CsvDataset's; a feature column the header lacks is an error listing the header's columns.
Tensor read_csv_features(const std::string& path, const std::vector<std::string>& features, char delimiter = ',');

}  // namespace plexus::data
