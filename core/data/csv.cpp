#include "data/csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <string_view>

#include "data/file_bytes.h"
#include "data/sampling.h"
#include "util/error.h"

namespace plexus::data {
namespace {

struct Field {
  std::string text;
  bool quoted = false;
  int64_t line = 1;    // 1-based line where the field starts
  int64_t offset = 0;  // byte offset of its first character (the quote, if quoted)
};

struct Record {
  std::vector<Field> fields;
  int64_t line = 1;
  int64_t offset = 0;      // first byte of the record
  int64_t end_offset = 0;  // byte offset of the line end (or of the end of the file)
};

// "PATH: line L, column C ('name'), byte offset B: " with the parts that are known.
class Locator {
 public:
  explicit Locator(std::string path) : path_(std::move(path)) {}
  void set_header(const std::vector<std::string>* names) { names_ = names; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(int64_t line, int64_t column, int64_t offset, const std::string& what) const {
    std::string s = path_ + ": line " + std::to_string(line);
    if (column > 0) {
      s += ", column " + std::to_string(column);
      if (names_ && column <= int64_t(names_->size())) s += " ('" + (*names_)[size_t(column - 1)] + "')";
    }
    if (offset >= 0) s += ", byte offset " + std::to_string(offset);
    throw DataError(s + ": " + what);
  }

 private:
  std::string path_;
  const std::vector<std::string>* names_ = nullptr;
};

std::string shown(const std::string& text) {
  std::string s = text.size() > 40 ? text.substr(0, 40) + "..." : text;
  return "'" + s + "'";
}

std::string printable(char c) {
  if (c == '\t') return "'\\t'";
  if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", unsigned(static_cast<unsigned char>(c)));
    return buf;
  }
  return std::string("'") + c + "'";
}

// RFC 4180 records from an in-memory file.
class Reader {
 public:
  Reader(const std::string& text, char delim, const Locator& loc) : s_(text), delim_(delim), loc_(loc) {
    if (s_.size() >= 3 && s_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;  // UTF-8 BOM
  }

  int64_t line() const { return line_; }
  int64_t offset() const { return int64_t(pos_); }

  // The next non-empty record, or false at the end of the file.
  bool next(Record& rec) {
    rec.fields.clear();
    while (pos_ < s_.size() && line_end_length(pos_) > 0) {
      pos_ += line_end_length(pos_);
      ++line_;
    }
    if (pos_ >= s_.size()) return false;
    rec.line = line_;
    rec.offset = int64_t(pos_);
    for (;;) {
      Field f;
      f.line = line_;
      f.offset = int64_t(pos_);
      const int64_t column = int64_t(rec.fields.size()) + 1;
      if (pos_ < s_.size() && s_[pos_] == '"') {
        f.quoted = true;
        ++pos_;
        for (;;) {
          if (pos_ >= s_.size())
            loc_.fail(f.line, column, f.offset, "unterminated quoted field (the closing quote is missing)");
          const char c = s_[pos_];
          if (c == '"') {
            if (pos_ + 1 < s_.size() && s_[pos_ + 1] == '"') {
              f.text += '"';
              pos_ += 2;
              continue;
            }
            ++pos_;
            break;
          }
          if (c == '\n') ++line_;
          f.text += c;
          ++pos_;
        }
        if (pos_ < s_.size() && s_[pos_] != delim_ && line_end_length(pos_) == 0)
          loc_.fail(line_, column, int64_t(pos_),
                    "unexpected character " + printable(s_[pos_]) + " after the closing quote of a quoted field");
      } else {
        const size_t start = pos_;
        while (pos_ < s_.size() && s_[pos_] != delim_ && line_end_length(pos_) == 0) {
          if (s_[pos_] == '"')
            loc_.fail(line_, column, int64_t(pos_),
                      "quote inside an unquoted field (quote the whole field and double inner quotes)");
          if (s_[pos_] == '\r')
            loc_.fail(line_, column, int64_t(pos_), "carriage return without a line feed; use LF or CRLF line ends");
          ++pos_;
        }
        f.text.assign(s_, start, pos_ - start);
      }
      rec.fields.push_back(std::move(f));
      if (pos_ < s_.size() && s_[pos_] == delim_) {
        ++pos_;
        continue;
      }
      rec.end_offset = int64_t(pos_);
      if (pos_ < s_.size()) {
        pos_ += line_end_length(pos_);
        ++line_;
      }
      return true;
    }
  }

 private:
  size_t line_end_length(size_t p) const {
    if (s_[p] == '\n') return 1;
    if (s_[p] == '\r' && p + 1 < s_.size() && s_[p + 1] == '\n') return 2;
    return 0;
  }

  const std::string& s_;
  char delim_;
  const Locator& loc_;
  size_t pos_ = 0;
  int64_t line_ = 1;
};

enum class NumStatus { Ok, Empty, NotNumber, NonFinite, OutOfRange };

NumStatus parse_number(const std::string& text, float& out) {
  size_t b = 0, e = text.size();
  while (b < e && (text[b] == ' ' || text[b] == '\t')) ++b;
  while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t')) --e;
  if (b == e) return NumStatus::Empty;
  if (text[b] == '+' && b + 1 < e && text[b + 1] != '-' && text[b + 1] != '+') ++b;
  double d = 0;
  const auto [ptr, ec] = std::from_chars(text.data() + b, text.data() + e, d);
  if (ptr != text.data() + e) return NumStatus::NotNumber;
  if (ec == std::errc::result_out_of_range) return NumStatus::OutOfRange;
  if (ec != std::errc()) return NumStatus::NotNumber;
  if (!std::isfinite(d)) return NumStatus::NonFinite;
  if (std::fabs(d) > double(std::numeric_limits<float>::max())) return NumStatus::OutOfRange;
  out = float(d);
  return NumStatus::Ok;
}

std::string number_problem(NumStatus st, const std::string& text, const char* what) {
  switch (st) {
    case NumStatus::Empty: return std::string("empty cell; every ") + what + " needs a numeric value";
    case NumStatus::NotNumber: return shown(text) + " is not a number (" + what + " cells must be numeric)";
    case NumStatus::NonFinite: return "non-finite value " + shown(text) + " (NaN and infinities are not allowed)";
    case NumStatus::OutOfRange: return shown(text) + " is outside the float32 range";
    case NumStatus::Ok: break;
  }
  return "";
}

std::string trimmed(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return s.substr(b, e - b);
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
  return s;
}

void check_delimiter(char delimiter, const char* who) {
  if (delimiter == '"' || delimiter == '\n' || delimiter == '\r')
    throw ValueError(std::string(who) + ": the delimiter cannot be a quote or a line end");
}

// The header record's column names: unique, quoted names as written, others trimmed.
std::vector<std::string> read_header(Reader& reader, const Locator& loc, const std::string& text, Record& header) {
  if (!reader.next(header)) {
    const bool blank = text.size() > 0;
    loc.fail(reader.line(), 0, reader.offset(),
             blank ? "no header row: the file holds only empty lines" : "empty file; expected a header row");
  }
  std::vector<std::string> names;
  for (size_t c = 0; c < header.fields.size(); ++c) {
    const Field& f = header.fields[c];
    names.push_back(f.quoted ? f.text : trimmed(f.text));
    for (size_t k = 0; k < c; ++k)
      if (names[k] == names[c])
        loc.fail(f.line, int64_t(c) + 1, f.offset,
                 "duplicate column name " + shown(names[c]) + " (also column " + std::to_string(k + 1) + ")");
  }
  return names;
}

size_t column_of(const std::vector<std::string>& names, const std::string& name, const char* role, const Record& header,
                 const Locator& loc) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end())
    loc.fail(header.line, 0, header.offset,
             std::string(role) + " column " + shown(name) + " not found in the header; columns: " + join(names));
  return size_t(it - names.begin());
}

// Every record has the header's number of fields.
void check_field_count(const Record& rec, size_t ncols, Locator& loc) {
  if (rec.fields.size() == ncols) return;
  const bool extra = rec.fields.size() > ncols;
  const int64_t col = int64_t(std::min(rec.fields.size(), ncols)) + 1;
  const int64_t off = extra ? rec.fields[ncols].offset : rec.end_offset;
  loc.set_header(nullptr);  // the column past the header has no name
  loc.fail(rec.line, col, off,
           "expected " + std::to_string(ncols) + " fields as in the header, found " + std::to_string(rec.fields.size()));
}

float feature_value(const Record& rec, size_t c, const Locator& loc) {
  const Field& f = rec.fields[c];
  float v = 0;
  const NumStatus st = parse_number(f.text, v);
  if (st != NumStatus::Ok) loc.fail(f.line, int64_t(c) + 1, f.offset, number_problem(st, f.text, "feature"));
  return v;
}

}  // namespace

CsvDataset::CsvDataset(const std::string& path, const CsvOptions& options) : path_(path), task_(options.task) {
  if (options.target.empty()) throw ValueError("CsvDataset: no target column named in CsvOptions::target");
  check_delimiter(options.delimiter, "CsvDataset");
  const std::string text = read_file_bytes(path);
  Locator loc(path);
  Reader reader(text, options.delimiter, loc);
  Record header;
  const std::vector<std::string> names = read_header(reader, loc, text, header);
  loc.set_header(&names);
  const size_t target_col = column_of(names, options.target, "target", header, loc);
  std::vector<size_t> feature_cols;
  if (options.features.empty()) {
    for (size_t c = 0; c < names.size(); ++c)
      if (c != target_col) feature_cols.push_back(c);
  } else {
    for (const std::string& name : options.features) {
      const size_t c = column_of(names, name, "feature", header, loc);
      if (c == target_col) throw ValueError("CsvDataset: column " + shown(name) + " is both the target and a feature");
      if (std::find(feature_cols.begin(), feature_cols.end(), c) != feature_cols.end())
        throw ValueError("CsvDataset: feature column " + shown(name) + " listed twice");
      feature_cols.push_back(c);
    }
  }
  if (feature_cols.empty())
    loc.fail(header.line, 0, header.offset, "no feature columns: the header has only the target column");
  target_name_ = names[target_col];
  for (size_t c : feature_cols) feature_names_.push_back(names[c]);

  // Rows.
  const size_t ncols = names.size();
  const size_t nfeat = feature_cols.size();
  std::vector<float> feats;
  std::vector<float> targets;
  std::vector<Field> target_cells;  // classification: decided after all rows are read
  Record rec;
  while (reader.next(rec)) {
    check_field_count(rec, ncols, loc);
    row_lines_.push_back(rec.line);
    for (size_t c : feature_cols) feats.push_back(feature_value(rec, c, loc));
    Field& t = rec.fields[target_col];
    if (task_ == CsvTask::Regression) {
      float v = 0;
      const NumStatus st = parse_number(t.text, v);
      if (st != NumStatus::Ok) loc.fail(t.line, int64_t(target_col) + 1, t.offset, number_problem(st, t.text, "target"));
      targets.push_back(v);
    } else {
      target_cells.push_back(std::move(t));
    }
  }
  const int64_t n = int64_t(row_lines_.size());
  if (n == 0) loc.fail(reader.line(), 0, reader.offset(), "no data rows after the header");

  if (task_ == CsvTask::Classification) {
    const int64_t tcol = int64_t(target_col) + 1;
    bool numeric = true;
    for (int64_t i = 0; i < n && numeric; ++i) {
      float v = 0;
      const NumStatus st = parse_number(target_cells[size_t(i)].text, v);
      numeric = st == NumStatus::Ok || st == NumStatus::NonFinite || st == NumStatus::OutOfRange;
    }
    if (numeric) {
      int64_t max_label = 0;
      for (int64_t i = 0; i < n; ++i) {
        const Field& f = target_cells[size_t(i)];
        float v = 0;
        const NumStatus st = parse_number(f.text, v);
        if (st != NumStatus::Ok) loc.fail(f.line, tcol, f.offset, number_problem(st, f.text, "target"));
        if (v < 0 || v != std::floor(v) || v > float(1 << 24))
          loc.fail(f.line, tcol, f.offset,
                   "class label " + shown(f.text) + " is not a whole number in [0, 2^24]; numeric labels are "
                   "class indices 0..K-1");
        if (options.num_classes > 0 && int64_t(v) >= options.num_classes)
          loc.fail(f.line, tcol, f.offset,
                   "class label " + shown(f.text) + " is out of range [0, " + std::to_string(options.num_classes - 1) +
                       "] (num_classes = " + std::to_string(options.num_classes) + ")");
        max_label = std::max(max_label, int64_t(v));
        targets.push_back(v);
      }
      const int64_t k = options.num_classes > 0 ? options.num_classes : max_label + 1;
      for (int64_t c = 0; c < k; ++c) class_names_.push_back(std::to_string(c));
    } else {
      // String labels; unquoted ones are trimmed like numbers are.
      const auto label_of = [](const Field& f) { return f.quoted ? f.text : trimmed(f.text); };
      std::map<std::string, int64_t> classes;
      for (const Field& f : target_cells) {
        if (trimmed(f.text).empty()) loc.fail(f.line, tcol, f.offset, "empty class label");
        classes.emplace(label_of(f), 0);
      }
      for (auto& [name, idx] : classes) {
        idx = int64_t(class_names_.size());
        class_names_.push_back(name);
      }
      for (const Field& f : target_cells) targets.push_back(float(classes.at(label_of(f))));
    }
  }

  features_ = from_buffer(feats.data(), {n, int64_t(nfeat)});
  targets_ = from_buffer(targets.data(), {n});
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
  check_delimiter(delimiter, "read_csv_header");
  const std::string text = read_file_bytes(path);
  Locator loc(path);
  Reader reader(text, delimiter, loc);
  Record header;
  return read_header(reader, loc, text, header);
}

Tensor read_csv_features(const std::string& path, const std::vector<std::string>& features, char delimiter) {
  check_delimiter(delimiter, "read_csv_features");
  if (features.empty()) throw ValueError("read_csv_features: no feature columns named");
  const std::string text = read_file_bytes(path);
  Locator loc(path);
  Reader reader(text, delimiter, loc);
  Record header;
  const std::vector<std::string> names = read_header(reader, loc, text, header);
  loc.set_header(&names);
  std::vector<size_t> cols;
  for (const std::string& name : features) {
    const size_t c = column_of(names, name, "feature", header, loc);
    if (std::find(cols.begin(), cols.end(), c) != cols.end())
      throw ValueError("read_csv_features: feature column " + shown(name) + " listed twice");
    cols.push_back(c);
  }
  std::vector<float> values;
  int64_t n = 0;
  Record rec;
  for (; reader.next(rec); ++n) {
    check_field_count(rec, names.size(), loc);
    for (size_t c : cols) values.push_back(feature_value(rec, c, loc));
  }
  if (n == 0) loc.fail(reader.line(), 0, reader.offset(), "no data rows after the header");
  return from_buffer(values.data(), {n, int64_t(cols.size())});
}

}  // namespace plexus::data
