#include "data/table.h"

#include "data/file_bytes.h"
#include "util/error.h"

namespace plexus::data {

int64_t Table::column(const std::string& name, const char* role) const {
  for (size_t c = 0; c < names_.size(); ++c)
    if (names_[c] == name) return int64_t(c);
  fail_header(std::string(role) + " column " + csv_format::shown(name) +
              " not found in the header; columns: " + csv_format::quoted_list(names_));
}

void Table::fail(int64_t row, int64_t column, const std::string& what) const {
  csv_format::Locator loc(path_);
  loc.set_header(&names_);
  const size_t i = index(row, column);
  loc.fail(cell_lines_[i], column + 1, cell_offsets_[i], what);
}

void Table::fail_header(const std::string& what) const {
  csv_format::Locator(path_).fail(header_line_, 0, header_offset_, what);
}

Table table_of_rows(const std::vector<std::string>& names, const std::vector<std::vector<std::string>>& rows,
                    const csv_format::MissingTokens& missing, const std::string& source) {
  Table t;
  t.path_ = source;
  t.names_ = names;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != names.size())
      throw ValueError(source + ": row " + std::to_string(r + 1) + " has " + std::to_string(rows[r].size()) +
                       " cells, the columns are " + std::to_string(names.size()));
    t.row_lines_.push_back(int64_t(r) + 2);
    for (const std::string& cell : rows[r]) {
      t.missing_.push_back(missing.missing(cell) ? 1 : 0);
      t.cell_lines_.push_back(int64_t(r) + 2);
      t.cell_offsets_.push_back(-1);
      t.cells_.push_back(cell);
    }
  }
  return t;
}

Table read_table(const std::string& path, const TableFormat& format) {
  Table t;
  t.path_ = path;
  const std::string text = read_file_bytes(path);
  t.delimiter_ = format.delimiter ? format.delimiter : csv_format::detect_delimiter(text);
  csv_format::Locator loc(path);
  csv_format::Reader reader(text, t.delimiter_, loc);
  csv_format::Record rec;
  t.names_ = csv_format::read_header(reader, loc, text, rec);
  t.header_line_ = rec.line;
  t.header_offset_ = rec.offset;
  loc.set_header(&t.names_);
  while (reader.next(rec)) {
    csv_format::check_field_count(rec, t.names_.size(), loc);
    t.row_lines_.push_back(rec.line);
    for (csv_format::Field& f : rec.fields) {
      t.missing_.push_back(format.missing.missing(f.text) ? 1 : 0);
      t.cell_lines_.push_back(f.line);
      t.cell_offsets_.push_back(f.offset);
      t.cells_.push_back(f.quoted ? std::move(f.text) : csv_format::trimmed(f.text));
    }
  }
  if (t.row_lines_.empty()) loc.fail(reader.line(), 0, reader.offset(), "no data rows after the header");
  return t;
}

}  // namespace plexus::data
