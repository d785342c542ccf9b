#pragma once
// How a table's feature columns become a model's input row: the preparation, fitted on the
// training rows only and then applied alike to every row a model ever sees (training,
// evaluation, plexus-cli predict on raw rows, Try It).
//
// Per column, by its type (data/table_columns.h):
//  - numeric: the number;
//  - categorical: one-hot over the training split's categories, sorted, plus an "(other)" column
//    for categories training never saw; or (encoding "index") one column holding 1 + the
//    category's position, 0 for an unseen one: the ids an Embedding layer takes;
//  - date: its components year, month, day, weekday (0 = Monday), and hour and minute where the
//    training cells have a time of day;
//  - free text is not a feature (it has no encoding here): ValueError naming the column.
// A missing cell: the row is dropped ("drop"), or filled with the training split's mean, median or
// most frequent value or a constant; "error" refuses it with the cell's place. With an indicator,
// a column "NAME=(missing)" holding 1 for a filled cell follows the column's own, when the
// training split has missing cells there.
//
// Input names: "NAME" (a number, or a category's index), "NAME=CATEGORY" and "NAME=(other)"
// (one-hot), "NAME:year" ... (date components), "NAME=(missing)" (indicator).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/table.h"
#include "data/table_columns.h"

namespace plexus::data {

enum class MissingPolicy { Drop, Mean, Median, MostFrequent, Constant, Error };
enum class CategoryEncoding { OneHot, Index };
const char* policy_name(MissingPolicy p);  // "drop", "mean", "median", "most_frequent", "constant", "error"
std::optional<MissingPolicy> parse_missing_policy(const std::string& name);
const char* encoding_name(CategoryEncoding e);  // "one_hot", "index"
std::optional<CategoryEncoding> parse_category_encoding(const std::string& name);

// What a user chose for a column; unset parts follow the column's type.
struct ColumnPolicy {
  std::string name;
  std::optional<ColumnType> type;        // nullopt: detected
  std::optional<MissingPolicy> missing;  // nullopt: mean for numbers and dates, most frequent for categories
  std::string fill;                      // the constant of MissingPolicy::Constant, as a cell's text
  bool indicator = true;
  CategoryEncoding encoding = CategoryEncoding::OneHot;
};

// One feature column's fitted preparation.
struct PreparedColumn {
  std::string name;
  ColumnType type = ColumnType::Numeric;
  MissingPolicy missing = MissingPolicy::Error;
  bool indicator = false;  // materialised: the training split had missing cells here
  CategoryEncoding encoding = CategoryEncoding::OneHot;
  std::vector<double> fill;             // numeric: [value]; date: one per component
  std::vector<std::string> categories;  // categorical: the training split's, sorted
  std::string fill_category;            // categorical: what a missing cell becomes
  bool time_of_day = false;             // date: hour and minute components
  bool operator==(const PreparedColumn&) const = default;
};

struct TablePreparation {
  std::vector<PreparedColumn> columns;
  std::string missing_values = csv_format::default_missing_values();  // the tokens, as the setting lists them

  int64_t width() const;                         // model input values per row
  std::vector<std::string> input_names() const;  // one per input value
  // Per input value: a number the run standardises (a numeric value or a date component) rather
  // than a 0/1 flag or a category's index, which keep their units.
  std::vector<bool> standardised() const;
  // Whether the row is dropped (a missing cell of a "drop" column).
  bool drops(const Table& table, int64_t row, const std::vector<int64_t>& columns) const;
  // Row `row` of `table` into out[width()]; `columns` are the table's indices of `this->columns`
  // (columns_in). DataError at the cell for a value it cannot take (text in a numeric column, a
  // missing cell under "error" or "drop").
  void apply(const Table& table, int64_t row, const std::vector<int64_t>& columns, float* out) const;
  // The table's index of each prepared column, by name (DataError naming a missing one).
  std::vector<int64_t> columns_in(const Table& table) const;

  // As one JSON object, for a checkpoint's metadata; from_json throws IoError naming `where`.
  std::string to_json() const;
  static TablePreparation from_json(const std::string& text, const std::string& where);
  // Plain numeric columns, as models trained before preparations took them: numbers, a missing
  // cell refused.
  static TablePreparation numbers(const std::vector<std::string>& names);
  bool operator==(const TablePreparation&) const = default;
};

// Fits the preparation of `features` (in input order) on rows `train` of `table`.
// ValueError for a policy that does not fit the column's type (a mean of categories), a free-text
// feature, and a constant fill that is not a number in a numeric column.
TablePreparation fit_preparation(const Table& table, const std::vector<ColumnPolicy>& features,
                                 const std::vector<int64_t>& train);

}  // namespace plexus::data
