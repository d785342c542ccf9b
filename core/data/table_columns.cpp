#include "data/table_columns.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace plexus::data {
namespace {

bool digits(std::string_view s, size_t at, size_t n, int& out) {
  if (at + n > s.size()) return false;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int days_in_month(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

}  // namespace

const char* type_name(ColumnType t) {
  switch (t) {
    case ColumnType::Numeric:
      return "numeric";
    case ColumnType::Categorical:
      return "categorical";
    case ColumnType::Date:
      return "date";
    case ColumnType::Text:
      return "text";
  }
  return "";
}

std::optional<ColumnType> parse_column_type(const std::string& name) {
  for (ColumnType t : {ColumnType::Numeric, ColumnType::Categorical, ColumnType::Date, ColumnType::Text})
    if (name == type_name(t)) return t;
  return std::nullopt;
}

int DateTime::weekday() const { return int(((days_from_civil(year, month, day) % 7) + 7 + 3) % 7); }

double DateTime::days() const { return double(days_from_civil(year, month, day)) + (hour * 60 + minute) / 1440.0; }

std::optional<DateTime> parse_date(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  DateTime d;
  if (s.size() < 10 || !digits(s, 0, 4, d.year) || (s[4] != '-' && s[4] != '/') || s[7] != s[4] ||
      !digits(s, 5, 2, d.month) || !digits(s, 8, 2, d.day))
    return std::nullopt;
  if (d.month < 1 || d.month > 12 || d.day < 1 || d.day > days_in_month(d.year, d.month)) return std::nullopt;
  if (s.size() == 10) return d;
  if (s[10] != 'T' && s[10] != ' ') return std::nullopt;
  if (s.size() < 16 || !digits(s, 11, 2, d.hour) || s[13] != ':' || !digits(s, 14, 2, d.minute)) return std::nullopt;
  if (d.hour > 23 || d.minute > 59) return std::nullopt;
  size_t at = 16;
  int second = 0;
  if (at < s.size() && s[at] == ':') {
    if (!digits(s, at + 1, 2, second) || second > 60) return std::nullopt;
    at += 3;
    if (at < s.size() && s[at] == '.') {
      ++at;
      const size_t start = at;
      while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
      if (at == start) return std::nullopt;
    }
  }
  if (at < s.size() && s[at] == 'Z') ++at;
  if (at != s.size()) return std::nullopt;
  d.has_time = true;
  return d;
}

ColumnType detect_column_type(const Table& t, int64_t c) {
  bool numbers = true, dates = true;
  std::set<std::string_view> distinct;
  int64_t present = 0;
  for (int64_t r = 0; r < t.rows(); ++r) {
    if (t.missing(r, c)) continue;
    ++present;
    const std::string& cell = t.cell(r, c);
    float unused = 0;
    if (numbers && csv_format::parse_number(cell, unused) != csv_format::NumStatus::Ok) numbers = false;
    if (dates && !parse_date(cell)) dates = false;
    distinct.insert(cell);
  }
  if (numbers) return ColumnType::Numeric;  // a column with no present cell too: nothing says otherwise
  if (dates) return ColumnType::Date;
  const int64_t n = int64_t(distinct.size());
  return n <= 50 || n * 10 <= present ? ColumnType::Categorical : ColumnType::Text;
}

ColumnProfile profile_column(const Table& t, int64_t c, std::optional<ColumnType> type) {
  ColumnProfile p;
  p.name = t.names()[size_t(c)];
  p.type = type ? *type : detect_column_type(t, c);
  std::map<std::string_view, int64_t> counts;
  std::vector<double> values;
  for (int64_t r = 0; r < t.rows(); ++r) {
    if (t.missing(r, c)) {
      ++p.missing;
      continue;
    }
    ++p.present;
    const std::string& cell = t.cell(r, c);
    ++counts[cell];
    if (p.type == ColumnType::Numeric) {
      float v = 0;
      if (csv_format::parse_number(cell, v) == csv_format::NumStatus::Ok) values.push_back(v);
    } else if (p.type == ColumnType::Date) {
      if (const auto d = parse_date(cell)) values.push_back(d->days());
    }
  }
  p.distinct = int64_t(counts.size());
  if (p.type == ColumnType::Numeric || p.type == ColumnType::Date) {
    if (!values.empty()) {
      const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
      p.min = *lo;
      p.max = *hi;
      double sum = 0;
      for (double v : values) sum += v;
      p.mean = sum / double(values.size());
      p.histogram.assign(ColumnProfile::kBins, 0);
      const double width = (p.max - p.min) / ColumnProfile::kBins;
      for (double v : values) {
        const int bin = width > 0 ? int((v - p.min) / width) : 0;
        ++p.histogram[size_t(std::clamp(bin, 0, ColumnProfile::kBins - 1))];
      }
    }
  } else {
    std::vector<std::pair<std::string, int64_t>> all;
    for (const auto& [value, count] : counts) all.emplace_back(std::string(value), count);
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    if (all.size() > size_t(ColumnProfile::kTop)) all.resize(size_t(ColumnProfile::kTop));
    p.top = std::move(all);
  }
  return p;
}

std::vector<ColumnProfile> profile_table(const Table& t) {
  std::vector<ColumnProfile> out;
  for (int64_t c = 0; c < t.columns(); ++c) out.push_back(profile_column(t, c));
  return out;
}

}  // namespace plexus::data
