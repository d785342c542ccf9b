// Malformed data files, generated into a temporary folder: every one must fail with a
// DataError whose message names the file and the place (byte offset for IDX, line, column
// and byte offset for CSV) and says what is wrong; none may crash, hang or allocate what a
// header merely claims (run under the sanitizer build to check the "crash" part).
#include <QtTest/QtTest>

#include <zlib.h>

#include <fstream>
#include <string>
#include <vector>

#include "data/csv.h"
#include "data/idx.h"
#include "data/mnist.h"
#include "tensor/generator.h"
#include "util/error.h"
#include "test_support.h"

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

void verify_all(const std::string& message, const QStringList& parts) {
  for (const QString& p : parts)
    QVERIFY2(contains(message, p.toStdString()),
             qPrintable(QString("message\n  %1\ndoes not contain\n  %2").arg(QString::fromStdString(message), p)));
}

}  // namespace

class TestMalformedData : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::string path(const QString& name) const { return dir_.filePath(name).toStdString(); }

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  // ---- IDX: each case is checked raw and gzipped; offsets are the same, in the file or
  // in the decompressed stream. -------------------------------------------------------------
  void idx_data() {
    QTest::addColumn<Bytes>("bytes");
    QTest::addColumn<QStringList>("expected");
    const Bytes ok_payload = {1, 2, 3, 4};
    QTest::newRow("empty file") << Bytes{} << QStringList{"byte offset 0", "truncated header", "ends after 0"};
    QTest::newRow("truncated magic") << Bytes{0, 0, 8} << QStringList{"byte offset 3", "truncated header"};
    QTest::newRow("wrong magic") << concat({0x50, 0x4b, 0x03, 0x04}, Bytes(20, 0))
                                 << QStringList{"byte offset 0", "not an IDX file", "50 4b 03 04"};
    QTest::newRow("unknown type 0x07") << idx_file(0x07, {4}, ok_payload)
                                       << QStringList{"byte offset 2", "unknown IDX element type code 0x07"};
    QTest::newRow("unknown type 0x0a") << idx_file(0x0a, {4}, ok_payload) << QStringList{"byte offset 2", "code 0x0a"};
    QTest::newRow("unknown type 0xff") << idx_file(0xff, {4}, ok_payload) << QStringList{"byte offset 2", "code 0xff"};
    QTest::newRow("zero dims") << Bytes{0, 0, 8, 0, 1, 2, 3} << QStringList{"byte offset 3", "0 dimensions"};
    QTest::newRow("too many dims") << concat({0, 0, 8, 9}, Bytes(36, 1)) << QStringList{"byte offset 3", "9 dimensions"};
    QTest::newRow("truncated dims") << Bytes{0, 0, 8, 3, 0, 0, 0, 2, 0, 0}
                                    << QStringList{"byte offset 10", "truncated header", "3 dimensions need 12 bytes"};
    QTest::newRow("zero-sized dim") << idx_file(0x08, {3, 0, 2}, {}) << QStringList{"byte offset 8", "dimension 1", "is 0"};
    QTest::newRow("absurd dims 2^31 x 2^31") << idx_file(0x08, {0x80000000u, 0x80000000u}, ok_payload)
                                             << QStringList{"byte offset 8", "more than 2147483648 elements"};
    QTest::newRow("absurd single dim") << idx_file(0x08, {0xffffffffu}, ok_payload)
                                       << QStringList{"byte offset 4", "more than 2147483648 elements"};
    QTest::newRow("absurd product of four") << idx_file(0x0e, {65536, 65536, 65536, 65536}, ok_payload)
                                            << QStringList{"byte offset 8", "elements"};
    QTest::newRow("data shorter than header says") << idx_file(0x08, {10}, {1, 2, 3, 4, 5})
                                                   << QStringList{"byte offset 13", "truncated data", "expected 10",
                                                                  "found 5"};
    QTest::newRow("huge claim, tiny file") << idx_file(0x08, {1u << 30}, {1, 2, 3})
                                           << QStringList{"byte offset 11", "expected 1073741824", "found 3"};
    QTest::newRow("float64 claim of 16 GiB") << idx_file(0x0e, {1u << 31}, {1, 2, 3})
                                             << QStringList{"byte offset 11", "expected 17179869184", "found 3"};
    QTest::newRow("int32 data short by one byte") << idx_file(0x0c, {2}, {0, 0, 0, 1, 0, 0, 0})
                                                  << QStringList{"byte offset 15", "expected 8", "found 7"};
    QTest::newRow("header only, no data") << idx_file(0x08, {2, 2}, {})
                                          << QStringList{"byte offset 12", "truncated data", "found 0"};
    QTest::newRow("trailing bytes") << idx_file(0x08, {4}, {1, 2, 3, 4, 5, 6})
                                    << QStringList{"byte offset 12", "2 trailing bytes"};
    QTest::newRow("trailing bytes after float32") << idx_file(0x0d, {1}, {0, 0, 0, 0, 9})
                                                  << QStringList{"byte offset 12", "1 trailing byte:"};
  }

  void idx() {
    QFETCH(Bytes, bytes);
    QFETCH(QStringList, expected);
    const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_').replace('^', 'p');
    const std::string raw = path(tag + ".idx");
    write_bytes(raw, bytes);
    const std::string raw_msg = plexus::testing::message_of<DataError>([&] { read_idx(raw); });
    verify_all(raw_msg, expected + QStringList{QString::fromStdString(raw)});
    QVERIFY2(!contains(raw_msg, "gzip"), raw_msg.c_str());

    const std::string gz = path(tag + "-idx.gz");
    write_bytes(gz, gzip(bytes, path(tag + ".scratch.gz")));
    const std::string gz_msg = plexus::testing::message_of<DataError>([&] { read_idx(gz); });
    // "ends after" counts bytes of the file vs. the stream; the rest must match exactly.
    QStringList gz_expected;
    for (const QString& e : expected)
      if (!e.startsWith("ends after")) gz_expected << e;
    verify_all(gz_msg, gz_expected + QStringList{QString::fromStdString(gz), "of the decompressed gzip stream"});
  }

  // ---- gzip-specific damage -------------------------------------------------------------------
  void gzipDamage_data() {
    QTest::addColumn<QString>("damage");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("cut in half") << "half" << QStringList{"truncated gzip stream", "decompressed gzip stream"};
    QTest::newRow("cut before trailer") << "no-trailer" << QStringList{"truncated gzip stream"};
    QTest::newRow("only the gzip magic") << "magic-only" << QStringList{"gzip stream", "byte offset 0"};
    QTest::newRow("bad crc") << "crc" << QStringList{"corrupt gzip stream", "incorrect data check"};
    QTest::newRow("bad length") << "isize" << QStringList{"corrupt gzip stream", "incorrect length check"};
    QTest::newRow("corrupt deflate data") << "flip" << QStringList{"corrupt gzip stream"};
    QTest::newRow("unknown method") << "method" << QStringList{"corrupt gzip stream", "byte offset 0"};
  }

  void gzipDamage() {
    QFETCH(QString, damage);
    QFETCH(QStringList, expected);
    // A valid file of incompressible-ish content, so the deflate data is long.
    Bytes payload;
    Generator gen(5);
    for (int i = 0; i < 4000; ++i) payload.push_back(uint8_t(gen.next_u64() % 7));
    Bytes gz = gzip(idx_file(0x08, {4000}, payload), path("good.scratch.gz"));
    QVERIFY(gz.size() > 100);
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
    verify_all(msg, expected + QStringList{QString::fromStdString(file)});
  }

  // Every truncation and many random corruptions of a small valid file (raw and gzip) must
  // either read or throw DataError: no crash, no other exception.
  void idxTruncationsAndMutationsNeverCrash() {
    Bytes payload;
    for (int i = 0; i < 48; ++i) payload.push_back(uint8_t(i));
    const Bytes good = idx_file(0x08, {3, 4, 4}, payload);
    const Bytes good_gz = gzip(good, path("fuzz.scratch.gz"));
    const std::string file = path("fuzz.idx");
    for (const Bytes* base : {&good, &good_gz}) {
      for (size_t n = 0; n < base->size(); ++n) {
        write_bytes(file, Bytes(base->begin(), base->begin() + std::ptrdiff_t(n)));
        const std::string msg = plexus::testing::message_of<DataError>([&] { read_idx(file); });
        QVERIFY2(contains(msg, file) && contains(msg, "byte offset"), msg.c_str());
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
        QVERIFY2(contains(e.what(), file), e.what());
      }
    }
    QVERIFY(errors > 0);
  }

  void idxUnreadablePaths() {
    const std::string missing = path("does-not-exist.idx");
    verify_all(plexus::testing::message_of<DataError>([&] { read_idx(missing); }), {QString::fromStdString(missing), "cannot open"});
    const std::string folder = dir_.path().toStdString();
    verify_all(plexus::testing::message_of<DataError>([&] { read_idx(folder); }), {QString::fromStdString(folder), "not a regular file"});
  }

  // ---- MNIST folders -------------------------------------------------------------------------------
  void mnist_data() {
    QTest::addColumn<Bytes>("images");
    QTest::addColumn<Bytes>("labels");
    QTest::addColumn<QString>("bad_file");  // "images" or "labels"
    QTest::addColumn<QStringList>("expected");
    const Bytes images = idx_file(0x08, {5, 2, 2}, Bytes(20, 128));
    QTest::newRow("label out of range") << images << idx_file(0x08, {5}, {0, 1, 2, 10, 4}) << "labels"
                                        << QStringList{"byte offset 11", "label 10", "example 3", "[0, 9]"};
    QTest::newRow("label 255") << images << idx_file(0x08, {5}, {255, 1, 2, 3, 4}) << "labels"
                               << QStringList{"byte offset 8", "label 255"};
    QTest::newRow("fewer labels than images") << images << idx_file(0x08, {4}, {0, 1, 2, 3}) << "labels"
                                              << QStringList{"byte offset 4", "4 labels", "5 images"};
    QTest::newRow("more labels than images") << images << idx_file(0x08, {6}, {0, 1, 2, 3, 4, 5}) << "labels"
                                             << QStringList{"6 labels", "5 images"};
    QTest::newRow("images not bytes") << idx_file(0x0d, {1, 1, 1}, {0, 0, 0, 0}) << idx_file(0x08, {1}, {0}) << "images"
                                      << QStringList{"byte offset 2", "unsigned bytes", "float32"};
    QTest::newRow("images not 3-d") << idx_file(0x08, {5, 4}, Bytes(20, 1)) << idx_file(0x08, {5}, {0, 1, 2, 3, 4}) << "images"
                                    << QStringList{"byte offset 3", "3 dimensions"};
    QTest::newRow("labels 2-d") << images << idx_file(0x08, {5, 1}, {0, 1, 2, 3, 4}) << "labels"
                                << QStringList{"byte offset 3", "1 dimension"};
    QTest::newRow("truncated labels") << images << Bytes{0, 0, 8, 1, 0, 0, 0, 5, 1, 2} << "labels"
                                      << QStringList{"byte offset 10", "expected 5", "found 2"};
  }

  void mnist() {
    QFETCH(Bytes, images);
    QFETCH(Bytes, labels);
    QFETCH(QString, bad_file);
    QFETCH(QStringList, expected);
    for (bool gz : {false, true}) {
      QTemporaryDir folder;
      const std::string d = folder.path().toStdString();
      const std::string suffix = gz ? ".gz" : "";
      const std::string img = d + "/train-images-idx3-ubyte" + suffix, lab = d + "/train-labels-idx1-ubyte" + suffix;
      write_bytes(img, gz ? gzip(images, d + "/scratch") : images);
      write_bytes(lab, gz ? gzip(labels, d + "/scratch") : labels);
      const std::string msg = plexus::testing::message_of<DataError>([&] { MnistDataset(d, Split::Train); });
      verify_all(msg, expected + QStringList{QString::fromStdString(bad_file == "images" ? img : lab)});
    }
  }

  void mnistMissingFiles() {
    QTemporaryDir folder;
    const std::string d = folder.path().toStdString();
    verify_all(plexus::testing::message_of<DataError>([&] { MnistDataset(d + "/nope", Split::Train); }), {"folder not found", "/nope"});
    verify_all(plexus::testing::message_of<DataError>([&] { FashionMnistDataset(d, Split::Test); }),
               {"Fashion-MNIST", "t10k-images-idx3-ubyte", "t10k-images-idx3-ubyte.gz", "tried"});
    write_bytes(d + "/train-images-idx3-ubyte", idx_file(0x08, {1, 1, 1}, {0}));
    verify_all(plexus::testing::message_of<DataError>([&] { MnistDataset(d, Split::Train); }), {"train-labels-idx1-ubyte", "labels"});
  }

  // ---- CSV -------------------------------------------------------------------------------------------
  void csv_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("target");
    QTest::addColumn<bool>("classification");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("empty file") << "" << "y" << false << QStringList{"line 1", "byte offset 0", "empty file"};
    QTest::newRow("only blank lines") << "\n\r\n\n" << "y" << false << QStringList{"line 4", "no header row"};
    QTest::newRow("header only") << "x,y\n" << "y" << false << QStringList{"line 2", "byte offset 4", "no data rows"};
    QTest::newRow("header only, no newline") << "x,y" << "y" << false << QStringList{"line 1", "no data rows"};
    QTest::newRow("missing target column") << "a,b,c\n1,2,3\n" << "y" << false
                                           << QStringList{"line 1", "target column 'y' not found", "'a', 'b', 'c'"};
    QTest::newRow("only the target column") << "y\n1\n" << "y" << false << QStringList{"line 1", "no feature columns"};
    QTest::newRow("duplicate column") << "a,b,a,y\n1,2,3,4\n" << "y" << false
                                      << QStringList{"line 1, column 3, byte offset 4", "duplicate column name 'a'"};
    QTest::newRow("ragged row, too few") << "a,b,c\n1,2,3\n4,5\n" << "c" << false
                                         << QStringList{"line 3, column 3, byte offset 15", "expected 3 fields",
                                                        "found 2"};
    QTest::newRow("ragged row, too many") << "a,b,c\n1,2,3\n4,5,6,7\n" << "c" << false
                                          << QStringList{"line 3, column 4, byte offset 18", "found 4"};
    QTest::newRow("non-numeric cell") << "a,b,y\n1,x,3\n" << "y" << false
                                      << QStringList{"line 2, column 2 ('b'), byte offset 8", "'x' is not a number"};
    QTest::newRow("number with junk") << "a,b,y\n1,2.5kg,3\n" << "y" << false
                                      << QStringList{"column 2 ('b')", "'2.5kg' is not a number"};
    QTest::newRow("NaN feature") << "a,b,y\n1,2,3\n4,nan,6\n" << "y" << false
                                 << QStringList{"line 3, column 2 ('b'), byte offset 14", "non-finite value 'nan'"};
    QTest::newRow("NaN target") << "a,y\n1,NaN\n" << "y" << false
                                << QStringList{"line 2, column 2 ('y'), byte offset 6", "non-finite"};
    QTest::newRow("infinity") << "a,y\n-inf,1\n" << "y" << false << QStringList{"line 2, column 1 ('a')", "non-finite"};
    QTest::newRow("float overflow") << "a,y\n1e39,1\n" << "y" << false << QStringList{"column 1", "float32 range"};
    QTest::newRow("double overflow") << "a,y\n1e999,1\n" << "y" << false << QStringList{"column 1", "float32 range"};
    QTest::newRow("empty cell") << "a,b,y\n1,,3\n" << "y" << false
                                << QStringList{"line 2, column 2 ('b'), byte offset 8", "empty cell"};
    QTest::newRow("unterminated quote") << "a,y\n1,\"2\n3,4\n" << "y" << false
                                        << QStringList{"line 2, column 2 ('y'), byte offset 6", "unterminated"};
    QTest::newRow("quote inside unquoted field") << "a,y\n1,2\"3\n" << "y" << false
                                                 << QStringList{"line 2, column 2 ('y'), byte offset 7",
                                                                "quote inside an unquoted field"};
    QTest::newRow("text after closing quote") << "a,y\n\"1\"x,2\n" << "y" << false
                                              << QStringList{"line 2, column 1 ('a'), byte offset 7",
                                                             "after the closing quote"};
    QTest::newRow("bare carriage return") << "a,y\r1,2\r" << "y" << false
                                          << QStringList{"line 1, column 2", "byte offset 3", "carriage return"};
    QTest::newRow("quoted comma in numeric column") << "a,y\n\"1,5\",2\n" << "y" << false
                                                    << QStringList{"line 2, column 1 ('a'), byte offset 4",
                                                                   "'1,5' is not a number"};
    QTest::newRow("CRLF error lines and offsets") << "a,b,y\r\n1,2,3\r\n4,five,6\r\n" << "y" << false
                                                  << QStringList{"line 3, column 2 ('b'), byte offset 16", "'five'"};
    QTest::newRow("error after multi-line quoted field")
        << "name,a,y\n\"two\nlines\",1,2\nok,x,3\n" << "name" << true
        << QStringList{"line 4, column 2 ('a'), byte offset 28", "'x' is not a number"};
    QTest::newRow("class label not whole") << "a,y\n1,0\n2,1.5\n" << "y" << true
                                           << QStringList{"line 3, column 2 ('y'), byte offset 10", "not a whole number"};
    QTest::newRow("class label negative") << "a,y\n1,-1\n" << "y" << true
                                          << QStringList{"line 2, column 2 ('y')", "not a whole number"};
    QTest::newRow("class label NaN") << "a,y\n1,nan\n" << "y" << true << QStringList{"line 2, column 2", "non-finite"};
    QTest::newRow("empty string label") << "a,y\n1,cat\n2,\n" << "y" << true
                                        << QStringList{"line 3, column 2 ('y'), byte offset 12", "empty class label"};
  }

  void csv() {
    QFETCH(QString, text);
    QFETCH(QString, target);
    QFETCH(bool, classification);
    QFETCH(QStringList, expected);
    const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_').replace(',', '_');
    const std::string file = path(tag + ".csv");
    write_text(file, text.toStdString());
    CsvOptions opt;
    opt.target = target.toStdString();
    opt.task = classification ? CsvTask::Classification : CsvTask::Regression;
    const std::string msg = plexus::testing::message_of<DataError>([&] { CsvDataset(file, opt); });
    verify_all(msg, expected + QStringList{QString::fromStdString(file)});
  }

  void csvClassOutOfDeclaredRange() {
    const std::string file = path("k.csv");
    write_text(file, "a,y\n1,0\n2,3\n");
    CsvOptions opt;
    opt.target = "y";
    opt.task = CsvTask::Classification;
    opt.num_classes = 3;
    verify_all(plexus::testing::message_of<DataError>([&] { CsvDataset(file, opt); }),
               {QString::fromStdString(file), "line 3, column 2 ('y'), byte offset 10", "out of range [0, 2]"});
  }

  void csvUnknownFeatureColumn() {
    const std::string file = path("f.csv");
    write_text(file, "a,b,y\n1,2,3\n");
    CsvOptions opt;
    opt.target = "y";
    opt.features = {"a", "zzz"};
    verify_all(plexus::testing::message_of<DataError>([&] { CsvDataset(file, opt); }),
               {QString::fromStdString(file), "feature column 'zzz' not found"});
    verify_all(plexus::testing::message_of<DataError>([&] { CsvDataset(path("absent.csv"), opt); }), {"absent.csv", "cannot open"});
  }

  // read_csv_features: the errors of CsvDataset, for the columns it reads.
  void csvFeatureRowsMalformed() {
    // "<file>: <where>: <what>" for `text` read with `features`.
    const auto check = [&](const QString& name, const std::string& text, const std::vector<std::string>& features,
                           const QString& where, const QString& what) {
      const std::string file = path(name);
      write_text(file, text);
      verify_all(plexus::testing::message_of<DataError>([&] { read_csv_features(file, features); }),
                 {QString::fromStdString(file) + ": " + where + ": ", what});
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
    verify_all(plexus::testing::message_of<ValueError>([&] { read_csv_features(path("n.csv"), {"a", "a"}); }),
               {"feature column 'a' listed twice"});
  }

  // Quoted fields with delimiters, quotes and newlines, and CRLF line ends, are valid.
  void csvValidQuotingAndCrlf() {
    const std::string file = path("valid.csv");
    write_text(file, "\"a\",\"the, label\"\r\n\"1.5\",\"x, \"\"y\"\"\r\nz\"\r\n 2 ,plain\r\n");
    CsvOptions opt;
    opt.target = "the, label";
    opt.task = CsvTask::Classification;
    CsvDataset ds(file, opt);
    QCOMPARE(ds.size(), int64_t(2));
    QCOMPARE(ds.class_names(), (std::vector<std::string>{"plain", "x, \"y\"\r\nz"}));
    QCOMPARE(ds.features().to_vector(), (std::vector<float>{1.5f, 2.f}));
    QCOMPARE(ds.targets().to_vector(), (std::vector<float>{1.f, 0.f}));
    QCOMPARE(ds.row_lines(), (std::vector<int64_t>{2, 4}));
  }

  // Random corruptions of a valid CSV: a DataError or a dataset, never anything else.
  void csvMutationsNeverCrash() {
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
        QVERIFY(ds.size() > 0);
      } catch (const DataError& e) {
        QVERIFY2(contains(e.what(), file) && contains(e.what(), "line "), e.what());
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestMalformedData)
#include "test_malformed_data.moc"
