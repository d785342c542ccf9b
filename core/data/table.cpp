#include "data/table.h"

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "data/mapped_file.h"
#include "util/error.h"
#include "util/system_memory.h"

namespace plexus::data {
namespace {

// A table's cells in memory: the texts' bytes and a std::string, a missing flag, a line and an
// offset each (a file's byte holds a little more than one cell's share of that).
constexpr uint64_t kMemoryPerFileByte = 8;
// How much of a mapping a thread reads before letting go of its pages: a row read at random
// brings in the kernel's fault-around window (64 KiB) with it.
constexpr int64_t kReleaseBytes = int64_t(64) << 20, kFaultAround = 64 << 10;

}  // namespace

uint64_t default_memory_budget() {
  const uint64_t cap = uint64_t(256) << 20, machine = machine_memory();
  return machine ? std::min(cap, machine / 8) : cap;
}

struct Table::Cells {
  uint64_t table = 0;
  int64_t row = -1;
  std::vector<std::string> text;
  std::vector<uint8_t> missing;
  std::vector<int64_t> lines, offsets;
  csv_format::Record record;
  int64_t unreleased = 0;  // bytes of mappings read since their pages were last let go
};

const Table::Cells& Table::parsed(int64_t row) const {
  thread_local Cells cells;
  if (cells.table == id_ && cells.row == row) return cells;
  const int64_t previous = cells.table == id_ ? cells.row : -2;
  cells.table = id_;
  cells.row = -1;  // until the row is read: the reader may throw
  const std::string_view text = file_->text();
  const csv_format::Locator loc(path_);
  csv_format::Reader reader(text, delimiter_, loc);
  reader.seek(row_offsets_[size_t(row)], row_line(row));
  reader.next(cells.record);  // checked when the table was read
  cells.text.clear();
  cells.missing.clear();
  cells.lines.clear();
  cells.offsets.clear();
  for (csv_format::Field& f : cells.record.fields) {
    cells.missing.push_back(missing_tokens_.missing(f.text) ? 1 : 0);
    cells.lines.push_back(f.line);
    cells.offsets.push_back(f.offset);
    cells.text.push_back(f.quoted ? std::move(f.text) : csv_format::trimmed(f.text));
  }
  cells.row = row;
  cells.unreleased += reader.offset() - row_offsets_[size_t(row)] + (row == previous + 1 ? 0 : kFaultAround);
  if (cells.unreleased > kReleaseBytes) {
    file_->release();
    cells.unreleased = 0;
  }
  return cells;
}

int64_t Table::row_line(int64_t row) const {
  const auto after = std::upper_bound(line_starts_.begin(), line_starts_.end(), std::pair{row, INT64_MAX});
  const auto& [first, line] = *(after - 1);
  return line + (row - first);
}

void Table::add_row(int64_t line) {
  if (rows_ == 0 || row_line(rows_ - 1) + 1 != line) line_starts_.emplace_back(rows_, line);
  ++rows_;
}

const std::string& Table::cell(int64_t row, int64_t column) const {
  return streamed() ? parsed(row).text[size_t(column)] : cells_[index(row, column)];
}

bool Table::missing(int64_t row, int64_t column) const {
  return (streamed() ? parsed(row).missing[size_t(column)] : missing_[index(row, column)]) != 0;
}

int64_t Table::column(const std::string& name, const char* role) const {
  for (size_t c = 0; c < names_.size(); ++c)
    if (names_[c] == name) return int64_t(c);
  fail_header(std::string(role) + " column " + csv_format::shown(name) +
              " not found in the header; columns: " + csv_format::quoted_list(names_));
}

void Table::fail(int64_t row, int64_t column, const std::string& what) const {
  csv_format::Locator loc(path_);
  loc.set_header(&names_);
  if (streamed()) {
    const Cells& cells = parsed(row);
    loc.fail(cells.lines[size_t(column)], column + 1, cells.offsets[size_t(column)], what);
  }
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
    t.add_row(int64_t(r) + 2);
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
  auto file = std::make_shared<const MappedFile>(path);
  const std::string_view text = file->text();
  const uint64_t budget = format.memory_budget ? format.memory_budget : default_memory_budget();
  const bool stream = uint64_t(text.size()) > budget / kMemoryPerFileByte;
  t.delimiter_ = format.delimiter ? format.delimiter : csv_format::detect_delimiter(text);
  csv_format::Locator loc(path);
  csv_format::Reader reader(text, t.delimiter_, loc);
  csv_format::Record rec;
  t.names_ = csv_format::read_header(reader, loc, text, rec);
  t.header_line_ = rec.line;
  t.header_offset_ = rec.offset;
  loc.set_header(&t.names_);
  int64_t released_at = 0;
  while (reader.next(rec)) {
    csv_format::check_field_count(rec, t.names_.size(), loc);
    t.add_row(rec.line);
    if (stream) {
      t.row_offsets_.push_back(rec.offset);
      if (reader.offset() - released_at > kReleaseBytes) {
        file->release();
        released_at = reader.offset();
      }
      continue;
    }
    for (csv_format::Field& f : rec.fields) {
      t.missing_.push_back(format.missing.missing(f.text) ? 1 : 0);
      t.cell_lines_.push_back(f.line);
      t.cell_offsets_.push_back(f.offset);
      t.cells_.push_back(f.quoted ? std::move(f.text) : csv_format::trimmed(f.text));
    }
  }
  if (t.rows_ == 0) loc.fail(reader.line(), 0, reader.offset(), "no data rows after the header");
  if (stream) {
    static std::atomic<uint64_t> tables{0};
    file->release();
    t.file_ = std::move(file);
    t.missing_tokens_ = format.missing;
    t.id_ = ++tables;
  }
  return t;
}

}  // namespace plexus::data
