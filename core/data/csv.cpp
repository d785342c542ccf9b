#include "data/csv.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "data/sampling.h"
#include "util/error.h"

namespace plexus::data {
namespace {

using csv_format::shown;

TableFormat format_of(char delimiter, const std::string& missing_values) {
  return {delimiter, csv_format::MissingTokens::parse(missing_values)};
}

const ColumnPolicy* policy_for(const std::vector<ColumnPolicy>& policies, const std::string& name) {
  for (const ColumnPolicy& p : policies)
    if (p.name == name) return &p;
  return nullptr;
}

// The targets of `rows` of column `col`: regression values, or class indices with the classes'
// names (see csv.h).
void decode_targets(const Table& t, int64_t col, const std::vector<int64_t>& rows, CsvTask task, int64_t num_classes,
                    std::vector<float>& targets, std::vector<std::string>& class_names) {
  if (task == CsvTask::Regression) {
    for (int64_t r : rows) {
      float v = 0;
      const csv_format::NumStatus st = csv_format::parse_number(t.cell(r, col), v);
      if (st != csv_format::NumStatus::Ok) t.fail(r, col, csv_format::number_problem(st, t.cell(r, col), "target"));
      targets.push_back(v);
    }
    return;
  }
  bool numeric = true;
  for (size_t i = 0; i < rows.size() && numeric; ++i) {
    float v = 0;
    const csv_format::NumStatus st = csv_format::parse_number(t.cell(rows[i], col), v);
    using csv_format::NumStatus;
    numeric = st == NumStatus::Ok || st == NumStatus::NonFinite || st == NumStatus::OutOfRange;
  }
  if (numeric) {
    int64_t max_label = 0;
    for (int64_t r : rows) {
      const std::string& text = t.cell(r, col);
      float v = 0;
      const csv_format::NumStatus st = csv_format::parse_number(text, v);
      if (st != csv_format::NumStatus::Ok) t.fail(r, col, csv_format::number_problem(st, text, "target"));
      if (v < 0 || v != std::floor(v) || v > float(1 << 24))
        t.fail(r, col,
               "class label " + shown(text) + " is not a whole number in [0, 2^24]; numeric labels are class indices "
               "0..K-1");
      if (num_classes > 0 && int64_t(v) >= num_classes)
        t.fail(r, col,
               "class label " + shown(text) + " is out of range [0, " + std::to_string(num_classes - 1) +
                   "] (num_classes = " + std::to_string(num_classes) + ")");
      max_label = std::max(max_label, int64_t(v));
      targets.push_back(v);
    }
    const int64_t k = num_classes > 0 ? num_classes : max_label + 1;
    for (int64_t c = 0; c < k; ++c) class_names.push_back(std::to_string(c));
    return;
  }
  std::map<std::string, int64_t> classes;  // string labels, numbered in sorted order
  for (int64_t r : rows) classes.emplace(t.cell(r, col), 0);
  for (auto& [name, idx] : classes) {
    idx = int64_t(class_names.size());
    class_names.push_back(name);
  }
  for (int64_t r : rows) targets.push_back(float(classes.at(t.cell(r, col))));
}

}  // namespace

std::string LeftOut::text() const {
  if (total() == 0) return "";
  std::string s = std::to_string(total()) + (total() == 1 ? " row" : " rows") + " left out: ";
  if (missing_target) s += std::to_string(missing_target) + " without a target";
  if (missing_target && dropped) s += ", ";
  if (dropped) s += std::to_string(dropped) + " with a missing cell in a 'drop' column";
  return s;
}

CsvSource::CsvSource(const std::string& path, const CsvOptions& options)
    : table_(read_table(path, format_of(options.delimiter, options.missing_values))),
      task_(options.task),
      missing_values_(options.missing_values) {
  if (options.target.empty()) throw ValueError("CsvDataset: no target column named in CsvOptions::target");
  target_col_ = table_.column(options.target, "target");
  std::vector<std::string> names = options.features;
  if (names.empty()) {
    for (int64_t c = 0; c < table_.columns(); ++c) {
      if (c == target_col_) continue;
      const std::string& name = table_.names()[size_t(c)];
      const ColumnPolicy* p = policy_for(options.columns, name);
      const ColumnType type = p && p->type ? *p->type : detect_column_type(table_, c);
      if (type != ColumnType::Text) names.push_back(name);
    }
    if (names.empty())
      table_.fail_header("no feature columns: the header has only the target column" +
                         std::string(table_.columns() > 1 ? " and free-text columns" : ""));
  }
  for (const std::string& name : names) {
    if (table_.column(name, "feature") == target_col_)
      throw ValueError("CsvDataset: column " + shown(name) + " is both the target and a feature");
    if (policy_for(features_, name)) throw ValueError("CsvDataset: feature column " + shown(name) + " listed twice");
    const ColumnPolicy* p = policy_for(options.columns, name);
    ColumnPolicy policy = p ? *p : ColumnPolicy{};
    policy.name = name;
    features_.push_back(std::move(policy));
  }
  std::vector<int64_t> feature_cols;
  for (const ColumnPolicy& p : features_) feature_cols.push_back(table_.column(p.name, "feature"));
  for (int64_t r = 0; r < table_.rows(); ++r) {
    if (table_.missing(r, target_col_)) {
      ++left_out_.missing_target;
      continue;
    }
    bool drop = false;
    for (size_t i = 0; i < features_.size() && !drop; ++i)
      drop = features_[i].missing == MissingPolicy::Drop && table_.missing(r, feature_cols[i]);
    if (drop) {
      ++left_out_.dropped;
      continue;
    }
    rows_.push_back(r);
  }
  if (rows_.empty())
    table_.fail_header("no rows left: " + std::to_string(left_out_.missing_target) + " without a target, " +
                       std::to_string(left_out_.dropped) + " with a missing cell in a column whose policy is 'drop'");
  decode_targets(table_, target_col_, rows_, task_, options.num_classes, targets_, class_names_);
}

TablePreparation CsvSource::fit(const std::vector<int64_t>& indices) const {
  std::vector<int64_t> rows;
  for (int64_t i : indices) rows.push_back(rows_.at(size_t(i)));
  TablePreparation prep = fit_preparation(table_, features_, rows);
  prep.missing_values = missing_values_;
  return prep;
}

TablePreparation CsvSource::fit_all() const {
  std::vector<int64_t> all(rows_.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = int64_t(i);
  return fit(all);
}

CsvDataset::CsvDataset(const std::string& path, const CsvOptions& options) {
  const CsvSource source(path, options);
  *this = CsvDataset(source, std::make_shared<const TablePreparation>(source.fit_all()));
}

CsvDataset::CsvDataset(const CsvSource& source, std::shared_ptr<const TablePreparation> preparation)
    : path_(source.table_.path()),
      target_name_(source.table_.names()[size_t(source.target_col_)]),
      task_(source.task_),
      feature_names_(preparation->input_names()),
      class_names_(source.class_names_),
      preparation_(std::move(preparation)),
      left_out_(source.left_out_) {
  const Table& t = source.table_;
  const std::vector<int64_t> cols = preparation_->columns_in(t);
  const int64_t n = source.size(), w = preparation_->width();
  if (w == 0) t.fail_header("no feature columns: the preparation has no inputs");
  std::vector<float> feats(size_t(n * w));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = source.rows_[size_t(i)];
    row_lines_.push_back(t.row_line(r));
    preparation_->apply(t, r, cols, feats.data() + i * w);
  }
  features_ = from_buffer(feats.data(), {n, w});
  targets_ = from_buffer(source.targets_.data(), {n});
}

Example CsvDataset::get(int64_t index) const {
  check_index(index, "CsvDataset::get");
  const std::vector<int64_t> one{index};
  return {gather_rows(features_, one).reshape({features_.size(1)}), gather_rows(targets_, one).reshape({})};
}

Tensor CsvDataset::target_batch(const std::vector<int64_t>& indices) const {
  for (int64_t i : indices) check_index(i, "CsvDataset::target_batch");
  return gather_rows(targets_, indices);
}

Example CsvDataset::get_batch(const std::vector<int64_t>& indices) const {
  for (int64_t i : indices) check_index(i, "CsvDataset::get_batch");
  return {gather_rows(features_, indices), gather_rows(targets_, indices)};
}

FeatureStats CsvDataset::feature_stats() const {
  const int64_t n = features_.size(0), f = features_.size(1);
  if (n == 0) throw ValueError("CsvDataset::feature_stats: no rows");
  std::vector<double> sum(size_t(f), 0.0), sq(size_t(f), 0.0);
  const float* x = features_.data();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < f; ++j) sum[size_t(j)] += x[i * f + j];
  FeatureStats st;
  for (int64_t j = 0; j < f; ++j) st.mean.push_back(float(sum[size_t(j)] / double(n)));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < f; ++j) {
      const double d = double(x[i * f + j]) - double(st.mean[size_t(j)]);
      sq[size_t(j)] += d * d;
    }
  for (int64_t j = 0; j < f; ++j) {
    const double sd = std::sqrt(sq[size_t(j)] / double(n));
    st.std.push_back(sd > 0 ? float(sd) : 1.f);
  }
  return st;
}

CsvDataset CsvDataset::standardized(const FeatureStats& stats) const {
  const int64_t n = features_.size(0), f = features_.size(1);
  if (int64_t(stats.mean.size()) != f || int64_t(stats.std.size()) != f)
    throw ShapeError("CsvDataset::standardized: statistics for " + std::to_string(stats.mean.size()) + "/" +
                     std::to_string(stats.std.size()) + " features, the dataset has " + std::to_string(f));
  for (float s : stats.std)
    if (!(s > 0) || !std::isfinite(s)) throw ValueError("CsvDataset::standardized: every std must be positive and finite");
  CsvDataset out = *this;
  out.features_ = empty({n, f});
  const float* x = features_.data();
  float* y = out.features_.data();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < f; ++j) y[i * f + j] = (x[i * f + j] - stats.mean[size_t(j)]) / stats.std[size_t(j)];
  return out;
}

CsvDataset CsvDataset::subset(const std::vector<int64_t>& indices) const {
  for (int64_t i : indices) check_index(i, "CsvDataset::subset");
  CsvDataset out = *this;
  out.features_ = gather_rows(features_, indices);
  out.targets_ = gather_rows(targets_, indices);
  out.row_lines_.clear();
  for (int64_t i : indices) out.row_lines_.push_back(row_lines_[size_t(i)]);
  return out;
}

std::pair<CsvDataset, CsvDataset> CsvDataset::split(double train_fraction, uint64_t seed, bool standardize) const {
  auto [a, b] = split_indices(size(), train_fraction, seed);
  CsvDataset train = subset(a), val = subset(b);
  if (standardize) {
    const FeatureStats st = train.feature_stats();
    train = train.standardized(st);
    val = val.standardized(st);
  }
  return {std::move(train), std::move(val)};
}

std::vector<std::string> read_csv_header(const std::string& path, char delimiter) {
  return read_table(path, format_of(delimiter, csv_format::default_missing_values())).names();
}

Tensor read_csv_features(const std::string& path, const TablePreparation& preparation, char delimiter) {
  if (preparation.columns.empty()) throw ValueError("read_csv_features: no feature columns named");
  const Table t = read_table(path, format_of(delimiter, preparation.missing_values));
  const std::vector<int64_t> cols = preparation.columns_in(t);
  const int64_t n = t.rows(), w = preparation.width();
  std::vector<float> values(size_t(n * w));
  for (int64_t r = 0; r < n; ++r) preparation.apply(t, r, cols, values.data() + r * w);
  return from_buffer(values.data(), {n, w});
}

}  // namespace plexus::data
