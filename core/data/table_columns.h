#pragma once
// What each column of a table holds, as a user sees it at a glance (pandas' describe()): its
// detected type, how many cells are missing, how many distinct values it has, and a small
// histogram (numbers, dates) or its most frequent values (categories, text).
//
// Detection over the column's present cells: every one a number -> numeric; every one a date
// (csv_format::parse_date) -> date; else categorical when it has few distinct values (at most 50, or at
// most a tenth of its cells), else free text (names, comments, ids).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/table.h"

namespace plexus::data {

enum class ColumnType { Numeric, Categorical, Date, Text };
const char* type_name(ColumnType t);  // "numeric", "categorical", "date", "text"
std::optional<ColumnType> parse_column_type(const std::string& name);

// A calendar date, with a time of day where the cell has one. Accepted: YYYY-MM-DD or YYYY/MM/DD,
// optionally followed by 'T' or a space and HH:MM or HH:MM:SS (fractions of a second and a final
// 'Z' are read and dropped).
struct DateTime {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0;
  bool has_time = false;
  int weekday() const;  // 0 = Monday
  double days() const;  // since 1970-01-01, with the time of day as a fraction
};
std::optional<DateTime> parse_date(std::string_view text);

ColumnType detect_column_type(const Table& table, int64_t column);

struct ColumnProfile {
  std::string name;
  ColumnType type = ColumnType::Numeric;
  int64_t present = 0, missing = 0;
  int64_t distinct = 0;  // distinct present values
  // Numeric and date (in days since 1970) columns: range, mean and a histogram of kBins equal bins
  // from min to max.
  double min = 0, max = 0, mean = 0;
  std::vector<int64_t> histogram;
  // Categorical and text columns: the most frequent values with their counts, most frequent first
  // (ties by value), at most kTop.
  std::vector<std::pair<std::string, int64_t>> top;
  static constexpr int kBins = 12, kTop = 12;
};
ColumnProfile profile_column(const Table& table, int64_t column, std::optional<ColumnType> type = std::nullopt);
std::vector<ColumnProfile> profile_table(const Table& table);

}  // namespace plexus::data
