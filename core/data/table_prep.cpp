#include "data/table_prep.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace plexus::data {
namespace {

constexpr const char* kDateParts[] = {"year", "month", "day", "weekday", "hour", "minute"};

int date_parts(const PreparedColumn& c) { return c.time_of_day ? 6 : 4; }

void date_values(const DateTime& d, double* out) {
  const double v[] = {double(d.year),      double(d.month), double(d.day),
                      double(d.weekday()), double(d.hour),  double(d.minute)};
  std::copy(v, v + 6, out);
}

int64_t own_width(const PreparedColumn& c) {
  switch (c.type) {
    case ColumnType::Categorical:
      return c.encoding == CategoryEncoding::Index ? 1 : int64_t(c.categories.size()) + 1;
    case ColumnType::Date:
      return date_parts(c);
    default:
      return 1;
  }
}

// The value a policy fills a missing number with, from the training split's present values.
double fitted_number(std::vector<double> values, MissingPolicy policy) {
  if (values.empty()) return 0;  // nothing to learn from: a column missing throughout training
  switch (policy) {
    case MissingPolicy::Median: {
      const size_t mid = values.size() / 2;
      std::nth_element(values.begin(), values.begin() + long(mid), values.end());
      const double hi = values[mid];
      if (values.size() % 2) return hi;
      return (*std::max_element(values.begin(), values.begin() + long(mid)) + hi) / 2;
    }
    case MissingPolicy::MostFrequent: {
      std::map<double, int64_t> counts;
      for (double v : values) ++counts[v];
      return std::max_element(counts.begin(), counts.end(), [](auto& a, auto& b) { return a.second < b.second; })
          ->first;
    }
    default: {
      double sum = 0;
      for (double v : values) sum += v;
      return sum / double(values.size());
    }
  }
}

[[noreturn]] void not_a_number(const Table& t, int64_t row, int64_t c, csv_format::NumStatus st) {
  const std::string& cell = t.cell(row, c);
  if (st == csv_format::NumStatus::NonFinite)
    t.fail(row, c, "non-finite value " + csv_format::shown(cell) + " in a numeric column");
  if (st == csv_format::NumStatus::OutOfRange)
    t.fail(row, c, csv_format::shown(cell) + " is outside the float32 range");
  t.fail(row, c,
         csv_format::shown(cell) +
             " is not a number, but the column is numeric (set its type to categorical to use text)");
}

double number_at(const Table& t, int64_t row, int64_t c) {
  float v = 0;
  const csv_format::NumStatus st = csv_format::parse_number(t.cell(row, c), v);
  if (st != csv_format::NumStatus::Ok) not_a_number(t, row, c, st);
  return v;
}

DateTime date_at(const Table& t, int64_t row, int64_t c) {
  const auto d = parse_date(t.cell(row, c));
  if (!d)
    t.fail(row, c,
           csv_format::shown(t.cell(row, c)) +
               " is not a date (YYYY-MM-DD, with a time or not), but the column "
               "is a date column");
  return *d;
}

}  // namespace

const char* policy_name(MissingPolicy p) {
  switch (p) {
    case MissingPolicy::Drop:
      return "drop";
    case MissingPolicy::Mean:
      return "mean";
    case MissingPolicy::Median:
      return "median";
    case MissingPolicy::MostFrequent:
      return "most_frequent";
    case MissingPolicy::Constant:
      return "constant";
    case MissingPolicy::Error:
      return "error";
  }
  return "";
}

std::optional<MissingPolicy> parse_missing_policy(const std::string& name) {
  for (MissingPolicy p : {MissingPolicy::Drop, MissingPolicy::Mean, MissingPolicy::Median, MissingPolicy::MostFrequent,
                          MissingPolicy::Constant, MissingPolicy::Error})
    if (name == policy_name(p)) return p;
  return std::nullopt;
}

const char* encoding_name(CategoryEncoding e) { return e == CategoryEncoding::Index ? "index" : "one_hot"; }

std::optional<CategoryEncoding> parse_category_encoding(const std::string& name) {
  if (name == "one_hot") return CategoryEncoding::OneHot;
  if (name == "index") return CategoryEncoding::Index;
  return std::nullopt;
}

int64_t TablePreparation::width() const {
  int64_t w = 0;
  for (const PreparedColumn& c : columns) w += own_width(c) + (c.indicator ? 1 : 0);
  return w;
}

std::vector<std::string> TablePreparation::input_names() const {
  std::vector<std::string> out;
  for (const PreparedColumn& c : columns) {
    if (c.type == ColumnType::Categorical && c.encoding == CategoryEncoding::OneHot) {
      for (const std::string& k : c.categories) out.push_back(c.name + "=" + k);
      out.push_back(c.name + "=(other)");
    } else if (c.type == ColumnType::Date) {
      for (int i = 0; i < date_parts(c); ++i) out.push_back(c.name + ":" + kDateParts[i]);
    } else {
      out.push_back(c.name);
    }
    if (c.indicator) out.push_back(c.name + "=(missing)");
  }
  return out;
}

std::vector<bool> TablePreparation::standardised() const {
  std::vector<bool> out;
  for (const PreparedColumn& c : columns) {
    const bool number = c.type == ColumnType::Numeric || c.type == ColumnType::Date;
    out.insert(out.end(), size_t(own_width(c)), number);
    if (c.indicator) out.push_back(false);
  }
  return out;
}

std::vector<int64_t> TablePreparation::columns_in(const Table& table) const {
  std::vector<int64_t> out;
  for (const PreparedColumn& c : columns) {
    const int64_t col = table.column(c.name, "feature");
    if (std::find(out.begin(), out.end(), col) != out.end())
      throw ValueError("feature column '" + c.name + "' listed twice");
    out.push_back(col);
  }
  return out;
}

bool TablePreparation::drops(const Table& table, int64_t row, const std::vector<int64_t>& cols) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i].missing == MissingPolicy::Drop && table.missing(row, cols[i])) return true;
  return false;
}

void TablePreparation::apply(const Table& t, int64_t row, const std::vector<int64_t>& cols, float* out) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    const PreparedColumn& c = columns[i];
    const int64_t col = cols[i];
    const bool missing = t.missing(row, col);
    if (missing && (c.missing == MissingPolicy::Error || c.missing == MissingPolicy::Drop))
      t.fail(row, col,
             c.missing == MissingPolicy::Error
                 ? "missing value, and the column's missing values are errors (choose a fill in its column settings)"
                 : "missing value in a column whose rows with missing values are left out; this row needs one");
    switch (c.type) {
      case ColumnType::Numeric:
        *out++ = float(missing ? c.fill.at(0) : number_at(t, row, col));
        break;
      case ColumnType::Date: {
        double v[6];
        if (missing)
          std::copy(c.fill.begin(), c.fill.end(), v);
        else
          date_values(date_at(t, row, col), v);
        for (int k = 0; k < date_parts(c); ++k) *out++ = float(v[k]);
        break;
      }
      case ColumnType::Categorical: {
        const std::string& value = missing ? c.fill_category : t.cell(row, col);
        const auto it = std::lower_bound(c.categories.begin(), c.categories.end(), value);
        const bool known = it != c.categories.end() && *it == value;
        const int64_t k = known ? int64_t(it - c.categories.begin()) : int64_t(c.categories.size());
        if (c.encoding == CategoryEncoding::Index) {
          *out++ = known ? float(k + 1) : 0.f;
        } else {
          std::fill(out, out + c.categories.size() + 1, 0.f);
          out[k] = 1.f;
          out += c.categories.size() + 1;
        }
        break;
      }
      case ColumnType::Text:
        throw ValueError("column '" + c.name + "' holds free text: it cannot be an input");
    }
    if (c.indicator) *out++ = missing ? 1.f : 0.f;
  }
}

TablePreparation fit_preparation(const Table& t, const std::vector<ColumnPolicy>& features,
                                 const std::vector<int64_t>& train) {
  TablePreparation prep;
  for (const ColumnPolicy& policy : features) {
    const int64_t col = t.column(policy.name, "feature");
    PreparedColumn c;
    c.name = policy.name;
    c.type = policy.type ? *policy.type : detect_column_type(t, col);
    const std::string where = "column '" + c.name + "'";
    if (c.type == ColumnType::Text)
      throw ValueError(where +
                       " holds free text, which cannot be an input: set its type to categorical, or leave it "
                       "out of the features");
    c.missing = policy.missing                      ? *policy.missing
                : c.type == ColumnType::Categorical ? MissingPolicy::MostFrequent
                                                    : MissingPolicy::Mean;
    if (c.type == ColumnType::Categorical && (c.missing == MissingPolicy::Mean || c.missing == MissingPolicy::Median))
      throw ValueError(where + " is categorical: its missing values cannot be filled with a " + policy_name(c.missing) +
                       " (use most_frequent, constant, drop or error)");
    c.encoding = policy.encoding;
    bool any_missing = false;
    std::vector<double> numbers;
    std::vector<std::vector<double>> parts(6);
    std::map<std::string, int64_t> counts;
    for (int64_t row : train) {
      if (t.missing(row, col)) {
        any_missing = true;
        continue;
      }
      if (c.type == ColumnType::Numeric) {
        numbers.push_back(number_at(t, row, col));
      } else if (c.type == ColumnType::Date) {
        const DateTime d = date_at(t, row, col);
        c.time_of_day = c.time_of_day || d.has_time;
        double v[6];
        date_values(d, v);
        for (int k = 0; k < 6; ++k) parts[size_t(k)].push_back(v[k]);
      } else {
        ++counts[t.cell(row, col)];
      }
    }
    const bool constant = c.missing == MissingPolicy::Constant;
    if (c.type == ColumnType::Numeric) {
      float v = 0;
      if (constant && csv_format::parse_number(policy.fill, v) != csv_format::NumStatus::Ok)
        throw ValueError(where + " is numeric: its fill constant must be a number, got '" + policy.fill + "'");
      c.fill = {constant ? double(v) : fitted_number(std::move(numbers), c.missing)};
    } else if (c.type == ColumnType::Date) {
      if (constant) {
        const auto d = parse_date(policy.fill);
        if (!d)
          throw ValueError(where + " holds dates: its fill constant must be a date (YYYY-MM-DD), got '" + policy.fill +
                           "'");
        c.time_of_day = c.time_of_day || d->has_time;
        c.fill.resize(6);
        date_values(*d, c.fill.data());
      } else {
        for (auto& values : parts) c.fill.push_back(fitted_number(std::move(values), c.missing));
      }
      c.fill.resize(size_t(date_parts(c)));
    } else {
      for (const auto& [value, count] : counts) c.categories.push_back(value);  // std::map: sorted
      if (constant) {
        c.fill_category = policy.fill;
        if (!std::binary_search(c.categories.begin(), c.categories.end(), policy.fill)) {
          c.categories.insert(std::lower_bound(c.categories.begin(), c.categories.end(), policy.fill), policy.fill);
        }
      } else if (!counts.empty()) {  // the first of the most frequent, in sorted order
        c.fill_category =
            std::max_element(counts.begin(), counts.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
      }
    }
    c.indicator =
        policy.indicator && any_missing && c.missing != MissingPolicy::Drop && c.missing != MissingPolicy::Error;
    prep.columns.push_back(std::move(c));
  }
  return prep;
}

TablePreparation TablePreparation::numbers(const std::vector<std::string>& names) {
  TablePreparation prep;
  for (const std::string& name : names) {
    PreparedColumn c;
    c.name = name;
    c.fill = {0};
    prep.columns.push_back(std::move(c));
  }
  return prep;
}

std::string TablePreparation::to_json() const {
  nlohmann::json cols = nlohmann::json::array();
  for (const PreparedColumn& c : columns) {
    nlohmann::json j = {
        {"name", c.name}, {"type", type_name(c.type)}, {"missing", policy_name(c.missing)}, {"indicator", c.indicator}};
    if (c.type == ColumnType::Categorical) {
      j["encoding"] = encoding_name(c.encoding);
      j["categories"] = c.categories;
      j["fill"] = c.fill_category;
    } else {
      j["fill"] = c.fill;
    }
    if (c.type == ColumnType::Date) j["time_of_day"] = c.time_of_day;
    cols.push_back(std::move(j));
  }
  return nlohmann::json{{"missing_values", missing_values}, {"columns", cols}}.dump();
}

TablePreparation TablePreparation::from_json(const std::string& text, const std::string& where) {
  const auto bad = [&](const std::string& what) -> IoError {
    return IoError(where + ": metadata 'table_preparation': " + what);
  };
  TablePreparation prep;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    prep.missing_values = j.at("missing_values").get<std::string>();
    for (const nlohmann::json& jc : j.at("columns")) {
      PreparedColumn c;
      c.name = jc.at("name").get<std::string>();
      const auto type = parse_column_type(jc.at("type").get<std::string>());
      const auto missing = parse_missing_policy(jc.at("missing").get<std::string>());
      if (!type || *type == ColumnType::Text || !missing)
        throw bad("column '" + c.name + "' has an unknown type or policy");
      c.type = *type;
      c.missing = *missing;
      c.indicator = jc.at("indicator").get<bool>();
      if (c.type == ColumnType::Categorical) {
        const auto encoding = parse_category_encoding(jc.at("encoding").get<std::string>());
        if (!encoding) throw bad("column '" + c.name + "' has an unknown encoding");
        c.encoding = *encoding;
        c.categories = jc.at("categories").get<std::vector<std::string>>();
        if (!std::is_sorted(c.categories.begin(), c.categories.end()) ||
            std::adjacent_find(c.categories.begin(), c.categories.end()) != c.categories.end())
          throw bad("column '" + c.name + "': the categories are not sorted and distinct");
        c.fill_category = jc.at("fill").get<std::string>();
      } else {
        c.fill = jc.at("fill").get<std::vector<double>>();
        if (c.type == ColumnType::Date) c.time_of_day = jc.at("time_of_day").get<bool>();
        const size_t want = c.type == ColumnType::Date ? size_t(date_parts(c)) : 1;
        if (c.fill.size() != want)
          throw bad("column '" + c.name + "' has " + std::to_string(c.fill.size()) + " fill values, not " +
                    std::to_string(want));
      }
      prep.columns.push_back(std::move(c));
    }
  } catch (const nlohmann::json::exception& e) {
    throw bad(e.what());
  }
  return prep;
}

}  // namespace plexus::data
