#pragma once
// A CSV file read as a table of text cells: the header's column names and, per row, each cell's
// text and whether it is missing, with where it is in the file for messages. The record format,
// the delimiter detection and the missing-value tokens are data/csv_format.h's.
#include <cstdint>
#include <string>
#include <vector>

#include "data/csv_format.h"

namespace plexus::data {

struct TableFormat {
  char delimiter = 0;  // 0: detected from the file (csv_format::detect_delimiter)
  csv_format::MissingTokens missing = csv_format::MissingTokens::parse(csv_format::default_missing_values());
};

class Table {
 public:
  const std::string& path() const { return path_; }
  char delimiter() const { return delimiter_; }  // the one used (detected or given)
  const std::vector<std::string>& names() const { return names_; }
  int64_t columns() const { return int64_t(names_.size()); }
  int64_t rows() const { return int64_t(row_lines_.size()); }
  // A cell's text: a quoted field as written, an unquoted one trimmed.
  const std::string& cell(int64_t row, int64_t column) const { return cells_[index(row, column)]; }
  bool missing(int64_t row, int64_t column) const { return missing_[index(row, column)] != 0; }
  int64_t row_line(int64_t row) const { return row_lines_[size_t(row)]; }
  // The column's index, or a DataError naming the file, the role ("feature") and the columns.
  int64_t column(const std::string& name, const char* role) const;
  // DataError "PATH: line L, column C ('name'), byte offset B: what" at a cell.
  [[noreturn]] void fail(int64_t row, int64_t column, const std::string& what) const;
  // DataError at the header ("PATH: line 1, byte offset 0: what").
  [[noreturn]] void fail_header(const std::string& what) const;

 private:
  friend Table read_table(const std::string& path, const TableFormat& format);
  friend Table table_of_rows(const std::vector<std::string>& names, const std::vector<std::vector<std::string>>& rows,
                             const csv_format::MissingTokens& missing, const std::string& source);
  size_t index(int64_t row, int64_t column) const { return size_t(row) * names_.size() + size_t(column); }
  std::string path_;
  char delimiter_ = ',';
  std::vector<std::string> names_;
  int64_t header_line_ = 1, header_offset_ = 0;
  std::vector<std::string> cells_;  // row-major
  std::vector<uint8_t> missing_;    // per cell
  std::vector<int64_t> cell_lines_, cell_offsets_;
  std::vector<int64_t> row_lines_;
};

// A table of typed rows (a form's fields: Try It), each as long as `names`; `source` stands for the
// file in messages, its rows numbered from line 2 as if under a header, without byte offsets.
// ValueError for a row of another length.
Table table_of_rows(const std::vector<std::string>& names, const std::vector<std::vector<std::string>>& rows,
                    const csv_format::MissingTokens& missing, const std::string& source);

// Reads every record of the file. DataError for a malformed file (csv_format.h's rules), a file
// without a header or without data rows, and a row with another number of fields than the header.
Table read_table(const std::string& path, const TableFormat& format = {});

}  // namespace plexus::data
