#pragma once
// The record layer of CSV files (RFC 4180): fields and records with where they start, a reader
// over a file held in memory, the delimiter a file uses, missing-value tokens and numbers. The
// table reader (data/table.h) and the dataset (data/csv.h) share it, so every CSV error reads
// "PATH: line L, column C ('name'), byte offset B: what" (lines and columns count from 1, the
// offset from 0 at the file's first byte).
//
//  - The first record is the header. A UTF-8 byte-order mark is skipped.
//  - Records end with LF or CRLF; completely empty lines are skipped.
//  - A field may be quoted: "a, b" holds the delimiter, "" is a literal quote, and a quoted field
//    may span lines. A quote inside an unquoted field, text after a closing quote and an
//    unterminated quote are errors.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace plexus::data::csv_format {

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

// Builds the messages: "PATH: line L, column C ('name'), byte offset B: what", with the parts
// that are known (column 0 and offset -1 leave theirs out).
class Locator {
 public:
  explicit Locator(std::string path) : path_(std::move(path)) {}
  void set_header(const std::vector<std::string>* names) { names_ = names; }
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(int64_t line, int64_t column, int64_t offset, const std::string& what) const;

 private:
  std::string path_;
  const std::vector<std::string>* names_ = nullptr;
};

// The delimiters a file may use, by setting: "auto" (detect), "comma", "semicolon", "tab".
const std::vector<std::string>& delimiter_choices();
// The delimiter a setting names; 0 for "auto". ValueError for an unknown name.
char delimiter_of(const std::string& choice);
// The delimiter of a file's text: of ',', ';' and tab, the one that splits the first records
// (quotes respected) into the same number of fields, more than one, most consistently; ',' when
// none does.
char detect_delimiter(std::string_view text);

// RFC 4180 records from a file held in memory (`text` must outlive the reader).
class Reader {
 public:
  Reader(const std::string& text, char delimiter, const Locator& loc);
  int64_t line() const { return line_; }
  int64_t offset() const { return int64_t(pos_); }
  // The next non-empty record, or false at the end of the file.
  bool next(Record& rec);

 private:
  size_t line_end_length(size_t p) const;
  const std::string& s_;
  char delim_;
  const Locator& loc_;
  size_t pos_ = 0;
  int64_t line_ = 1;
};

// The header record's column names: unique; quoted names as written, others trimmed.
std::vector<std::string> read_header(Reader& reader, const Locator& loc, const std::string& text, Record& header);
// The index of column `name`; a "ROLE column 'x' not found in the header; columns: ..." error.
size_t column_of(const std::vector<std::string>& names, const std::string& name, const char* role, const Record& header,
                 const Locator& loc);
// Every record has the header's number of fields.
void check_field_count(const Record& rec, size_t ncols, Locator& loc);

// Cells that mean "no value": an empty cell always, and the tokens of a list (compared without
// case, after trimming spaces): "NA", "N/A", "NaN", "null", "?" by default.
class MissingTokens {
 public:
  MissingTokens() = default;
  explicit MissingTokens(std::vector<std::string> tokens);
  // "NA, N/A, ?" -> {"NA", "N/A", "?"}: comma-separated, each trimmed, empty ones dropped.
  static MissingTokens parse(const std::string& list);
  bool missing(std::string_view cell) const;
  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  std::vector<std::string> tokens_;
};
const std::string& default_missing_values();  // "NA, N/A, NaN, null, ?"

// Decimal numbers (C locale; surrounding spaces and tabs ignored, a leading '+' allowed).
enum class NumStatus { Ok, Empty, NotNumber, NonFinite, OutOfRange };
NumStatus parse_number(std::string_view text, float& out);
// Why a cell is not a number, in words: "'abc' is not a number (feature cells must be numeric)".
std::string number_problem(NumStatus st, const std::string& text, const char* what);

std::string shown(const std::string& text);                      // 'text', cut at 40 bytes
std::string trimmed(std::string_view s);                         // without surrounding spaces and tabs
std::string quoted_list(const std::vector<std::string>& names);  // 'a', 'b'

}  // namespace plexus::data::csv_format
