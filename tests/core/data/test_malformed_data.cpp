// Malformed data files, generated into a temporary folder: every one must fail with a
// DataError whose message names the file and the place (byte offset for IDX, line, column
// and byte offset for CSV) and says what is wrong; none may crash, hang or allocate what a
// header merely claims (run under the sanitizer build to check the "crash" part).
#include "support/check.h"

#include <zlib.h>

#include <fstream>
#include <string>
#include <vector>

#include "data/csv.h"
#include "data/idx.h"
#include "data/mnist.h"
#include "tensor/generator.h"
#include "util/error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using namespace plexus;
using namespace plexus::data;

namespace {

using Bytes = std::vector<uint8_t>;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

void write_bytes(const std::string& path, const Bytes& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

void write_text(const std::string& path, const std::string& text) { write_bytes(path, Bytes(text.begin(), text.end())); }

Bytes gzip(const Bytes& bytes, const std::string& scratch_path) {
  gzFile gz = gzopen(scratch_path.c_str(), "wb");
  if (!bytes.empty()) gzwrite(gz, bytes.data(), unsigned(bytes.size()));
  gzclose(gz);
  std::ifstream f(scratch_path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

Bytes idx_file(uint8_t type, const std::vector<uint32_t>& dims, const Bytes& payload) {
  Bytes b = {0, 0, type, uint8_t(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(d >> s));
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

Bytes concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void verify_all(const std::string& message, const std::vector<std::string>& parts) {
  for (const std::string& p : parts)
    VERIFY2(contains(message, p), "message\n  " + message + "\ndoes not contain\n  " + p);
}

// The parts a message must hold: a row's, then more.
std::vector<std::string> plus(std::vector<std::string> parts, const std::vector<std::string>& more) {
  parts.insert(parts.end(), more.begin(), more.end());
  return parts;
}

// A row's tag as a file name: `from` characters replaced by `to`.
std::string file_tag(std::string tag, const std::string& from, const std::string& to) {
  for (char& c : tag)
    if (const size_t k = from.find(c); k != std::string::npos) c = to[k];
  return tag;
}

// The suite's folder, for the files the tests write.
const plexus::testing::TempDir& dir() {
  static const plexus::testing::TempDir d;
  return d;
}
std::string path(const std::string& name) { return dir().file(name).string(); }

}  // namespace

// ---- IDX: each case is checked raw and gzipped; offsets are the same, in the file or
// in the decompressed stream. -------------------------------------------------------------
namespace {

struct IdxRow {
  std::string name;
  Bytes bytes;
  std::vector<std::string> expected;
};

std::vector<IdxRow> idx_rows() {
  const Bytes ok_payload = {1, 2, 3, 4};
  return {
      {"empty file", Bytes{}, {"byte offset 0", "truncated header", "ends after 0"}},
      {"truncated magic", Bytes{0, 0, 8}, {"byte offset 3", "truncated header"}},
      {"wrong magic", concat({0x50, 0x4b, 0x03, 0x04}, Bytes(20, 0)),
       {"byte offset 0", "not an IDX file", "50 4b 03 04"}},
      {"unknown type 0x07", idx_file(0x07, {4}, ok_payload), {"byte offset 2", "unknown IDX element type code 0x07"}},
      {"unknown type 0x0a", idx_file(0x0a, {4}, ok_payload), {"byte offset 2", "code 0x0a"}},
      {"unknown type 0xff", idx_file(0xff, {4}, ok_payload), {"byte offset 2", "code 0xff"}},
      {"zero dims", Bytes{0, 0, 8, 0, 1, 2, 3}, {"byte offset 3", "0 dimensions"}},
      {"too many dims", concat({0, 0, 8, 9}, Bytes(36, 1)), {"byte offset 3", "9 dimensions"}},
      {"truncated dims", Bytes{0, 0, 8, 3, 0, 0, 0, 2, 0, 0},
       {"byte offset 10", "truncated header", "3 dimensions need 12 bytes"}},
      {"zero-sized dim", idx_file(0x08, {3, 0, 2}, {}), {"byte offset 8", "dimension 1", "is 0"}},
      {"absurd dims 2^31 x 2^31", idx_file(0x08, {0x80000000u, 0x80000000u}, ok_payload),
       {"byte offset 8", "more than 2147483648 elements"}},
      {"absurd single dim", idx_file(0x08, {0xffffffffu}, ok_payload),
       {"byte offset 4", "more than 2147483648 elements"}},
      {"absurd product of four", idx_file(0x0e, {65536, 65536, 65536, 65536}, ok_payload),
       {"byte offset 8", "elements"}},
      {"data shorter than header says", idx_file(0x08, {10}, {1, 2, 3, 4, 5}),
       {"byte offset 13", "truncated data", "expected 10", "found 5"}},
      {"huge claim, tiny file", idx_file(0x08, {1u << 30}, {1, 2, 3}),
       {"byte offset 11", "expected 1073741824", "found 3"}},
      {"float64 claim of 16 GiB", idx_file(0x0e, {1u << 31}, {1, 2, 3}),
       {"byte offset 11", "expected 17179869184", "found 3"}},
      {"int32 data short by one byte", idx_file(0x0c, {2}, {0, 0, 0, 1, 0, 0, 0}),
       {"byte offset 15", "expected 8", "found 7"}},
      {"header only, no data", idx_file(0x08, {2, 2}, {}), {"byte offset 12", "truncated data", "found 0"}},
      {"trailing bytes", idx_file(0x08, {4}, {1, 2, 3, 4, 5, 6}), {"byte offset 12", "2 trailing bytes"}},
      {"trailing bytes after float32", idx_file(0x0d, {1}, {0, 0, 0, 0, 9}), {"byte offset 12", "1 trailing byte:"}},
  };
}

}  // namespace

TEST_ROWS(idx, idx_rows()) {
  const std::string tag = file_tag(row.name, " ^", "_p");
  const std::string raw = path(tag + ".idx");
  write_bytes(raw, row.bytes);
  const std::string raw_msg = plexus::testing::message_of<DataError>([&] { read_idx(raw); });
  verify_all(raw_msg, plus(row.expected, {raw}));
  VERIFY2(!contains(raw_msg, "gzip"), raw_msg);

  const std::string gz = path(tag + "-idx.gz");
  write_bytes(gz, gzip(row.bytes, path(tag + ".scratch.gz")));
  const std::string gz_msg = plexus::testing::message_of<DataError>([&] { read_idx(gz); });
  // "ends after" counts bytes of the file vs. the stream; the rest must match exactly.
  std::vector<std::string> gz_expected;
  for (const std::string& e : row.expected)
    if (!e.starts_with("ends after")) gz_expected.push_back(e);
  verify_all(gz_msg, plus(gz_expected, {gz, "of the decompressed gzip stream"}));
}

// ---- gzip-specific damage -------------------------------------------------------------------
namespace {

struct GzipDamageRow {
  std::string name, damage;
  std::vector<std::string> expected;
};

std::vector<GzipDamageRow> gzip_damage_rows() {
  return {
      {"cut in half", "half", {"truncated gzip stream", "decompressed gzip stream"}},
      {"cut before trailer", "no-trailer", {"truncated gzip stream"}},
      {"only the gzip magic", "magic-only", {"gzip stream", "byte offset 0"}},
      {"bad crc", "crc", {"corrupt gzip stream", "incorrect data check"}},
      {"bad length", "isize", {"corrupt gzip stream", "incorrect length check"}},
      {"corrupt deflate data", "flip", {"corrupt gzip stream"}},
      {"unknown method", "method", {"corrupt gzip stream", "byte offset 0"}},
  };
}

}  // namespace

TEST_ROWS(gzipDamage, gzip_damage_rows()) {
  const std::string& damage = row.damage;
  // A valid file of incompressible-ish content, so the deflate data is long.
  Bytes payload;
  Generator gen(5);
  for (int i = 0; i < 4000; ++i) payload.push_back(uint8_t(gen.next_u64() % 7));
  Bytes gz = gzip(idx_file(0x08, {4000}, payload), path("good.scratch.gz"));
  VERIFY(gz.size() > 100);
  // Truncations by erase (not resize, whose growth path GCC 12 misreads as overflowing).
  if (damage == "half") gz.erase(gz.begin() + std::ptrdiff_t(gz.size() / 2), gz.end());
  else if (damage == "no-trailer") gz.erase(gz.end() - 8, gz.end());
  else if (damage == "magic-only") gz.erase(gz.begin() + 2, gz.end());
  else if (damage == "crc") gz[gz.size() - 8] ^= 0xff;
  else if (damage == "isize") gz[gz.size() - 4] ^= 0x01;
  else if (damage == "flip") for (size_t i = 40; i < 60; ++i) gz[i] ^= 0x5a;
  else if (damage == "method") gz[2] = 0x07;
  const std::string file = path("damaged-" + damage + ".gz");
  write_bytes(file, gz);
  const std::string msg = plexus::testing::message_of<DataError>([&] { read_idx(file); });
  verify_all(msg, plus(row.expected, {file}));
}

// Every truncation and many random corruptions of a small valid file (raw and gzip) must
// either read or throw DataError: no crash, no other exception.
TEST(idxTruncationsAndMutationsNeverCrash) {
  Bytes payload;
  for (int i = 0; i < 48; ++i) payload.push_back(uint8_t(i));
  const Bytes good = idx_file(0x08, {3, 4, 4}, payload);
  const Bytes good_gz = gzip(good, path("fuzz.scratch.gz"));
  const std::string file = path("fuzz.idx");
  for (const Bytes* base : {&good, &good_gz}) {
    for (size_t n = 0; n < base->size(); ++n) {
      write_bytes(file, Bytes(base->begin(), base->begin() + std::ptrdiff_t(n)));
      const std::string msg = plexus::testing::message_of<DataError>([&] { read_idx(file); });
      VERIFY2(contains(msg, file) && contains(msg, "byte offset"), msg);
    }
  }
  Generator gen(17);
  int errors = 0;
  for (int iter = 0; iter < 600; ++iter) {
    Bytes b = iter % 2 ? good_gz : good;
    const int flips = 1 + int(gen.next_u64() % 4);
    for (int f = 0; f < flips; ++f) b[size_t(gen.next_u64() % b.size())] = uint8_t(gen.next_u64());
    write_bytes(file, b);
    try {
      read_idx(file);
    } catch (const DataError& e) {
      ++errors;
      VERIFY2(contains(e.what(), file), e.what());
    }
  }
  VERIFY(errors > 0);
}

TEST(idxUnreadablePaths) {
  const std::string missing = path("does-not-exist.idx");
  verify_all(plexus::testing::message_of<DataError>([&] { read_idx(missing); }), {missing, "cannot open"});
  const std::string folder = dir().path().string();
  verify_all(plexus::testing::message_of<DataError>([&] { read_idx(folder); }), {folder, "not a regular file"});
}

// ---- MNIST folders -------------------------------------------------------------------------------
namespace {

struct MnistRow {
  std::string name;
  Bytes images, labels;
  std::string bad_file;  // "images" or "labels"
  std::vector<std::string> expected;
};

std::vector<MnistRow> mnist_rows() {
  const Bytes images = idx_file(0x08, {5, 2, 2}, Bytes(20, 128));
  return {
      {"label out of range", images, idx_file(0x08, {5}, {0, 1, 2, 10, 4}), "labels",
       {"byte offset 11", "label 10", "example 3", "[0, 9]"}},
      {"label 255", images, idx_file(0x08, {5}, {255, 1, 2, 3, 4}), "labels", {"byte offset 8", "label 255"}},
      {"fewer labels than images", images, idx_file(0x08, {4}, {0, 1, 2, 3}), "labels",
       {"byte offset 4", "4 labels", "5 images"}},
      {"more labels than images", images, idx_file(0x08, {6}, {0, 1, 2, 3, 4, 5}), "labels", {"6 labels", "5 images"}},
      {"images not bytes", idx_file(0x0d, {1, 1, 1}, {0, 0, 0, 0}), idx_file(0x08, {1}, {0}), "images",
       {"byte offset 2", "unsigned bytes", "float32"}},
      {"images not 3-d", idx_file(0x08, {5, 4}, Bytes(20, 1)), idx_file(0x08, {5}, {0, 1, 2, 3, 4}), "images",
       {"byte offset 3", "3 dimensions"}},
      {"labels 2-d", images, idx_file(0x08, {5, 1}, {0, 1, 2, 3, 4}), "labels", {"byte offset 3", "1 dimension"}},
      {"truncated labels", images, Bytes{0, 0, 8, 1, 0, 0, 0, 5, 1, 2}, "labels",
       {"byte offset 10", "expected 5", "found 2"}},
  };
}

}  // namespace

TEST_ROWS(mnist, mnist_rows()) {
  for (bool gz : {false, true}) {
    const plexus::testing::TempDir folder;
    const std::string d = folder.path().string();
    const std::string suffix = gz ? ".gz" : "";
    const std::string img = d + "/train-images-idx3-ubyte" + suffix, lab = d + "/train-labels-idx1-ubyte" + suffix;
    write_bytes(img, gz ? gzip(row.images, d + "/scratch") : row.images);
    write_bytes(lab, gz ? gzip(row.labels, d + "/scratch") : row.labels);
    const std::string msg = plexus::testing::message_of<DataError>([&] { MnistDataset(d, Split::Train); });
    verify_all(msg, plus(row.expected, {row.bad_file == "images" ? img : lab}));
  }
}

TEST(mnistMissingFiles) {
  const plexus::testing::TempDir folder;
  const std::string d = folder.path().string();
  verify_all(plexus::testing::message_of<DataError>([&] { MnistDataset(d + "/nope", Split::Train); }), {"folder not found", "/nope"});
  verify_all(plexus::testing::message_of<DataError>([&] { FashionMnistDataset(d, Split::Test); }),
             {"Fashion-MNIST", "t10k-images-idx3-ubyte", "t10k-images-idx3-ubyte.gz", "tried"});
  write_bytes(d + "/train-images-idx3-ubyte", idx_file(0x08, {1, 1, 1}, {0}));
  verify_all(plexus::testing::message_of<DataError>([&] { MnistDataset(d, Split::Train); }), {"train-labels-idx1-ubyte", "labels"});
}

// ---- CSV -------------------------------------------------------------------------------------------
namespace {

struct CsvRow {
  std::string name, text, target;
  bool classification;
  std::vector<std::string> expected;
};

std::vector<CsvRow> csv_rows() {
  return {
      {"empty file", "", "y", false, {"line 1", "byte offset 0", "empty file"}},
      {"only blank lines", "\n\r\n\n", "y", false, {"line 4", "no header row"}},
      {"header only", "x,y\n", "y", false, {"line 2", "byte offset 4", "no data rows"}},
      {"header only, no newline", "x,y", "y", false, {"line 1", "no data rows"}},
      {"missing target column", "a,b,c\n1,2,3\n", "y", false,
       {"line 1", "target column 'y' not found", "'a', 'b', 'c'"}},
      {"only the target column", "y\n1\n", "y", false, {"line 1", "no feature columns"}},
      {"duplicate column", "a,b,a,y\n1,2,3,4\n", "y", false,
       {"line 1, column 3, byte offset 4", "duplicate column name 'a'"}},
      {"ragged row, too few", "a,b,c\n1,2,3\n4,5\n", "c", false,
       {"line 3, column 3, byte offset 15", "expected 3 fields", "found 2"}},
      {"ragged row, too many", "a,b,c\n1,2,3\n4,5,6,7\n", "c", false, {"line 3, column 4, byte offset 18", "found 4"}},
      {"non-numeric cell", "a,b,y\n1,x,3\n", "y", false,
       {"line 2, column 2 ('b'), byte offset 8", "'x' is not a number"}},
      {"number with junk", "a,b,y\n1,2.5kg,3\n", "y", false, {"column 2 ('b')", "'2.5kg' is not a number"}},
      {"NaN feature", "a,b,y\n1,2,3\n4,nan,6\n", "y", false,
       {"line 3, column 2 ('b'), byte offset 14", "missing value, and the column's missing values are errors"}},
      {"infinite feature", "a,b,y\n1,2,3\n4,inf,6\n", "y", false,
       {"line 3, column 2 ('b'), byte offset 14", "non-finite value 'inf'"}},
      {"NaN target", "a,y\n1,NaN\n", "y", false, {"line 1, byte offset 0", "no rows left: 1 without a target"}},
      {"infinity", "a,y\n-inf,1\n", "y", false, {"line 2, column 1 ('a')", "non-finite"}},
      {"float overflow", "a,y\n1e39,1\n", "y", false, {"column 1", "float32 range"}},
      {"double overflow", "a,y\n1e999,1\n", "y", false, {"column 1", "float32 range"}},
      {"empty cell", "a,b,y\n1,,3\n", "y", false, {"line 2, column 2 ('b'), byte offset 8", "missing value"}},
      {"unterminated quote", "a,y\n1,\"2\n3,4\n", "y", false,
       {"line 2, column 2 ('y'), byte offset 6", "unterminated"}},
      {"quote inside unquoted field", "a,y\n1,2\"3\n", "y", false,
       {"line 2, column 2 ('y'), byte offset 7", "quote inside an unquoted field"}},
      {"text after closing quote", "a,y\n\"1\"x,2\n", "y", false,
       {"line 2, column 1 ('a'), byte offset 7", "after the closing quote"}},
      {"bare carriage return", "a,y\r1,2\r", "y", false, {"line 1, column 2", "byte offset 3", "carriage return"}},
      {"quoted comma in numeric column", "a,y\n\"1,5\",2\n", "y", false,
       {"line 2, column 1 ('a'), byte offset 4", "'1,5' is not a number"}},
      {"CRLF error lines and offsets", "a,b,y\r\n1,2,3\r\n4,five,6\r\n", "y", false,
       {"line 3, column 2 ('b'), byte offset 16", "'five'"}},
      {"error after multi-line quoted field", "name,a,y\n\"two\nlines\",1,2\nok,x,3\n", "name", true,
       {"line 4, column 2 ('a'), byte offset 28", "'x' is not a number"}},
      {"class label not whole", "a,y\n1,0\n2,1.5\n", "y", true,
       {"line 3, column 2 ('y'), byte offset 10", "not a whole number"}},
      {"class label negative", "a,y\n1,-1\n", "y", true, {"line 2, column 2 ('y')", "not a whole number"}},
      {"class label infinite", "a,y\n1,inf\n", "y", true, {"line 2, column 2", "non-finite"}},
      {"no label at all", "a,y\n1,\n2,NA\n", "y", true, {"line 1", "no rows left: 2 without a target"}},
  };
}

}  // namespace

TEST_ROWS(csv, csv_rows()) {
  const std::string file = path(file_tag(row.name, " ,", "__") + ".csv");
  write_text(file, row.text);
  CsvOptions opt;
  opt.target = row.target;
  opt.task = row.classification ? CsvTask::Classification : CsvTask::Regression;
  for (const char* name : {"a", "b"}) {  // declared numbers, a missing cell an error: no policy applies
    ColumnPolicy strict;
    strict.name = name;
    strict.type = ColumnType::Numeric;
    strict.missing = MissingPolicy::Error;
    opt.columns.push_back(strict);
  }
  const std::string msg = plexus::testing::message_of<DataError>([&] { CsvDataset(file, opt); });
  verify_all(msg, plus(row.expected, {file}));
}

TEST(csvClassOutOfDeclaredRange) {
  const std::string file = path("k.csv");
  write_text(file, "a,y\n1,0\n2,3\n");
  CsvOptions opt;
  opt.target = "y";
  opt.task = CsvTask::Classification;
  opt.num_classes = 3;
  verify_all(plexus::testing::message_of<DataError>([&] { CsvDataset(file, opt); }),
             {file, "line 3, column 2 ('y'), byte offset 10", "out of range [0, 2]"});
}

TEST(csvUnknownFeatureColumn) {
  const std::string file = path("f.csv");
  write_text(file, "a,b,y\n1,2,3\n");
  CsvOptions opt;
  opt.target = "y";
  opt.features = {"a", "zzz"};
  verify_all(plexus::testing::message_of<DataError>([&] { CsvDataset(file, opt); }),
             {file, "feature column 'zzz' not found"});
  verify_all(plexus::testing::message_of<DataError>([&] { CsvDataset(path("absent.csv"), opt); }), {"absent.csv", "cannot open"});
}

// read_csv_features: the errors of CsvDataset, for the columns it reads.
TEST(csvFeatureRowsMalformed) {
  // "<file>: <where>: <what>" for `text` read with `features`.
  const auto check = [&](const std::string& name, const std::string& text, const std::vector<std::string>& features,
                         const std::string& where, const std::string& what) {
    const std::string file = path(name);
    write_text(file, text);
    verify_all(plexus::testing::message_of<DataError>(
                   [&] { read_csv_features(file, TablePreparation::numbers(features)); }),
               {file + ": " + where + ": ", what});
  };
  check("e.csv", "", {"a"}, "line 1, byte offset 0", "empty file; expected a header row");
  check("h.csv", "a,b\n", {"a"}, "line 2, byte offset 4", "no data rows after the header");
  check("m.csv", "a,b\n1,2\n", {"a", "c"}, "line 1, byte offset 0",
        "feature column 'c' not found in the header; columns: 'a', 'b'");
  check("n.csv", "a,b\n1,2\n3,x\n", {"b"}, "line 3, column 2 ('b'), byte offset 10", "'x' is not a number");
  check("c.csv", "a,b\n1,2\n3\n", {"a"}, "line 3, column 2, byte offset 9",
        "expected 2 fields as in the header, found 1");
  check("d.csv", "a,a\n1,2\n", {"a"}, "line 1, column 2, byte offset 2", "duplicate column name 'a'");
  check("q.csv", "a,b\n\"1,2\n", {"a"}, "line 2, column 1 ('a'), byte offset 4", "unterminated quoted field");
  verify_all(plexus::testing::message_of<DataError>([&] { read_csv_header(path("absent.csv")); }),
             {"absent.csv", "cannot open"});
  verify_all(plexus::testing::message_of<ValueError>([&] { read_csv_features(path("n.csv"), TablePreparation::numbers({"a", "a"})); }),
             {"feature column 'a' listed twice"});
}

// Quoted fields with delimiters, quotes and newlines, and CRLF line ends, are valid.
TEST(csvValidQuotingAndCrlf) {
  const std::string file = path("valid.csv");
  write_text(file, "\"a\",\"the, label\"\r\n\"1.5\",\"x, \"\"y\"\"\r\nz\"\r\n 2 ,plain\r\n");
  CsvOptions opt;
  opt.target = "the, label";
  opt.task = CsvTask::Classification;
  CsvDataset ds(file, opt);
  COMPARE(ds.size(), int64_t(2));
  COMPARE(ds.class_names(), (std::vector<std::string>{"plain", "x, \"y\"\r\nz"}));
  COMPARE(ds.features().to_vector(), (std::vector<float>{1.5f, 2.f}));
  COMPARE(ds.targets().to_vector(), (std::vector<float>{1.f, 0.f}));
  COMPARE(ds.row_lines(), (std::vector<int64_t>{2, 4}));
}

// Random corruptions of a valid CSV: a DataError or a dataset, never anything else.
TEST(csvMutationsNeverCrash) {
  const std::string good = "id,\"x\",y,label\r\n1,2.5,-3,\"a,b\"\r\n2,1e3,4,c\r\n3,0,0,\"q\"\"\"\r\n";
  const std::string file = path("fuzz.csv");
  const char alphabet[] = ",\"\r\n0.5e-+xa ";
  Generator gen(23);
  for (int iter = 0; iter < 800; ++iter) {
    std::string s = good;
    const int edits = 1 + int(gen.next_u64() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t at = size_t(gen.next_u64() % s.size());
      switch (gen.next_u64() % 3) {
        case 0: s[at] = alphabet[gen.next_u64() % (sizeof alphabet - 1)]; break;
        case 1: s.erase(at, 1); break;
        default: s.insert(at, 1, alphabet[gen.next_u64() % (sizeof alphabet - 1)]); break;
      }
    }
    write_text(file, s);
    CsvOptions opt;
    opt.target = "label";
    opt.task = CsvTask::Classification;
    opt.features = {"x", "y"};
    try {
      CsvDataset ds(file, opt);
      VERIFY(ds.size() > 0);
    } catch (const DataError& e) {
      VERIFY2(contains(e.what(), file) && contains(e.what(), "line "), e.what());
    }
  }
}

