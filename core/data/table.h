#pragma once
// A CSV file read as a table of text cells: the header's column names and, per row, each cell's
// text and whether it is missing, with where it is in the file for messages. The record format,
// the delimiter detection and the missing-value tokens are data/csv_format.h's.
//
// The file is memory-mapped (data/mapped_file.h) and checked whole when it is read. A table whose
// cells would take more memory than its budget (about 8 bytes of memory per byte of file) is
// streamed: it keeps only each row's byte offset and line, and parses a row again from the
// mapping when one of its cells is asked for (one row cached per thread), letting go of the
// mapping's pages as it goes. Either way it reads the same and fails with the same messages;
// a streamed table is read best row by row.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "data/csv_format.h"

namespace plexus::data {

class MappedFile;

// The memory a table's cells or a dataset's prepared values may take before they are streamed
// from the file instead: an eighth of this machine's memory (util/system_memory.h), at most 256 MiB.
uint64_t default_memory_budget();

struct TableFormat {
  char delimiter = 0;  // 0: detected from the file (csv_format::detect_delimiter)
  csv_format::MissingTokens missing = csv_format::MissingTokens::parse(csv_format::default_missing_values());
  uint64_t memory_budget = 0;  // bytes; 0: default_memory_budget()
};

class Table {
 public:
  const std::string& path() const { return path_; }
  char delimiter() const { return delimiter_; }  // the one used (detected or given)
  const std::vector<std::string>& names() const { return names_; }
  int64_t columns() const { return int64_t(names_.size()); }
  int64_t rows() const { return rows_; }
  bool streamed() const { return file_ != nullptr; }
  // A cell's text: a quoted field as written, an unquoted one trimmed. In a streamed table the
  // reference holds until this thread reads another row of a streamed table.
  const std::string& cell(int64_t row, int64_t column) const;
  bool missing(int64_t row, int64_t column) const;
  int64_t row_line(int64_t row) const;
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
  struct Cells;
  size_t index(int64_t row, int64_t column) const { return size_t(row) * names_.size() + size_t(column); }
  const Cells& parsed(int64_t row) const;  // a streamed table's row, from this thread's cache
  void add_row(int64_t line);
  std::string path_;
  char delimiter_ = ',';
  std::vector<std::string> names_;
  int64_t header_line_ = 1, header_offset_ = 0;
  std::vector<std::string> cells_;  // row-major
  std::vector<uint8_t> missing_;    // per cell
  std::vector<int64_t> cell_lines_, cell_offsets_;
  int64_t rows_ = 0;
  // (row, line) where a row does not start on the line after the previous row's (the first row, and
  // rows after a blank line or a field spanning lines): most files need one.
  std::vector<std::pair<int64_t, int64_t>> line_starts_;
  // Streamed: the mapping, each row's first byte, the tokens and this table's cache key.
  std::shared_ptr<const MappedFile> file_;
  std::vector<int64_t> row_offsets_;
  csv_format::MissingTokens missing_tokens_;
  uint64_t id_ = 0;
};

// A table of typed rows (a form's fields: Try It), each as long as `names`; `source` stands for the
// file in messages, its rows numbered from line 2 as if under a header, without byte offsets.
// ValueError for a row of another length.
Table table_of_rows(const std::vector<std::string>& names, const std::vector<std::vector<std::string>>& rows,
                    const csv_format::MissingTokens& missing, const std::string& source);

// Reads every record of the file, streamed when its cells would take more than the format's
// memory budget. DataError for a malformed file (csv_format.h's rules), a file without a header or
// without data rows, and a row with another number of fields than the header.
Table read_table(const std::string& path, const TableFormat& format = {});

}  // namespace plexus::data
