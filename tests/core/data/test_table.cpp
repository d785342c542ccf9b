// Real tables (data/csv_format.h, data/table.h, data/table_columns.h, data/table_prep.h): messy
// CSV files as they come (every delimiter, quoting, a BOM, CRLF, missing-value tokens, text,
// numeric-categorical and date columns, a column missing throughout, a target with a missing
// cell), each prepared value checked, each message checked for its file, line, column and byte
// offset; the preparation fitted on the training rows only and stored as JSON; a run's split.
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "data/csv.h"
#include "data/table.h"
#include "data/table_columns.h"
#include "data/table_prep.h"
#include "graph/dataset_info.h"
#include "graph/dataset_params.h"
#include "graph/project.h"
#include "support/check.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::data;
using plexus::testing::message_of;

namespace {

std::string write(const plexus::testing::TempDir& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir.file(name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::vector<float> row(const TablePreparation& p, const Table& t, int64_t r) {
  std::vector<float> out(size_t(p.width()));
  p.apply(t, r, p.columns_in(t), out.data());
  return out;
}

std::vector<int64_t> all_rows(const Table& t) {
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < t.rows(); ++r) rows.push_back(r);
  return rows;
}

ColumnPolicy policy(const std::string& name) {
  ColumnPolicy p;
  p.name = name;
  return p;
}

}  // namespace

// ---- reading ------------------------------------------------------------------------------

TEST(delimiterDetectedAndOverridden) {
  const plexus::testing::TempDir dir;
  // Semicolons with decimal points, a quoted field holding semicolons and commas.
  const std::string semi = write(dir, "semi.csv", "a;b;c\n1.5;\"x; y, z\";3\n2;w;4\n");
  const Table t = read_table(semi);
  COMPARE(t.delimiter(), ';');
  COMPARE(t.names(), (std::vector<std::string>{"a", "b", "c"}));
  COMPARE(t.cell(0, 1), std::string("x; y, z"));
  // Tabs, with commas inside the cells; a BOM and CRLF line ends.
  const std::string tabs = write(dir, "tabs.tsv", "\xEF\xBB\xBFname\tcity\r\n\"Smith, J\"\tParis, FR\r\nLee\tRome\r\n");
  const Table u = read_table(tabs);
  COMPARE(u.delimiter(), '\t');
  COMPARE(u.names(), (std::vector<std::string>{"name", "city"}));
  COMPARE(u.cell(0, 0), std::string("Smith, J"));
  COMPARE(u.cell(1, 1), std::string("Rome"));
  // Commas, with a semicolon in one quoted cell and a quoted field spanning lines.
  const std::string commas = write(dir, "commas.csv", "p,q\n\"a;b\",1\n\"two\nlines\",2\n");
  const Table v = read_table(commas);
  COMPARE(v.delimiter(), ',');
  COMPARE(v.cell(1, 0), std::string("two\nlines"));
  COMPARE(v.row_line(1), int64_t(3));
  // The setting overrides detection: read as commas, a semicolon file has one column.
  TableFormat f;
  f.delimiter = ',';
  const Table one = read_table(write(dir, "plain.csv", "a;b\n1;2\n"), f);
  COMPARE(one.names(), (std::vector<std::string>{"a;b"}));
  COMPARE(one.cell(0, 0), std::string("1;2"));
  COMPARE(csv_format::delimiter_of("semicolon"), ';');
  COMPARE(csv_format::delimiter_of("auto"), char(0));
  VERIFY_CONTAINS(message_of<ValueError>([] { csv_format::delimiter_of("pipe"); }), "unknown delimiter 'pipe'");
  // A single column: nothing to detect, a comma it is.
  COMPARE(csv_format::detect_delimiter("x\n1\n2\n"), ',');
}

TEST(missingTokens) {
  const csv_format::MissingTokens standard = csv_format::MissingTokens::parse(csv_format::default_missing_values());
  COMPARE(standard.tokens(), (std::vector<std::string>{"NA", "N/A", "NaN", "null", "?"}));
  for (const char* cell : {"", "  ", "NA", "na", " N/A ", "nan", "NULL", "?"}) VERIFY2(standard.missing(cell), cell);
  for (const char* cell : {"0", "NAB", "none", "-", "?!"}) VERIFY2(!standard.missing(cell), cell);
  const csv_format::MissingTokens custom = csv_format::MissingTokens::parse(" -, none ,,");
  COMPARE(custom.tokens(), (std::vector<std::string>{"-", "none"}));
  VERIFY(custom.missing("-") && custom.missing("None") && custom.missing(""));
  VERIFY(!custom.missing("NA"));
}

// ---- column types and profiles -------------------------------------------------------------

TEST(columnTypesDetected) {
  const plexus::testing::TempDir dir;
  std::string text = "num,cat,code,day,stamp,note,empty\n";
  for (int i = 0; i < 60; ++i) {
    text += std::to_string(i % 7 == 0 ? -1 : i) + ",";       // numbers
    text += std::string(i % 3 == 0 ? "red" : "blue") + ",";  // categories
    text += std::to_string(i % 4) + ",";                     // numbers (a user may call them categories)
    text += "2024-0" + std::to_string(1 + i % 9) + "-1" + std::to_string(i % 10) + ",";  // dates
    text += "2024/02/29 1" + std::to_string(i % 10) + ":30:05Z,";                        // dates with a time
    text += "note number " + std::to_string(i) + ",";                                    // free text: all distinct
    text += i % 2 ? "NA\n" : "\n";                                                       // missing throughout
  }
  const Table t = read_table(write(dir, "types.csv", text));
  COMPARE(std::string(type_name(detect_column_type(t, 0))), std::string("numeric"));
  COMPARE(std::string(type_name(detect_column_type(t, 1))), std::string("categorical"));
  COMPARE(std::string(type_name(detect_column_type(t, 2))), std::string("numeric"));
  COMPARE(std::string(type_name(detect_column_type(t, 3))), std::string("date"));
  COMPARE(std::string(type_name(detect_column_type(t, 4))), std::string("date"));
  COMPARE(std::string(type_name(detect_column_type(t, 5))), std::string("text"));
  COMPARE(std::string(type_name(detect_column_type(t, 6))), std::string("numeric"));

  const std::vector<ColumnProfile> p = profile_table(t);
  COMPARE(p[0].present, int64_t(60));
  COMPARE(p[0].min, -1.0);
  COMPARE(p[0].max, 59.0);
  int64_t binned = 0;
  for (int64_t n : p[0].histogram) binned += n;
  COMPARE(binned, int64_t(60));
  COMPARE(p[1].distinct, int64_t(2));
  COMPARE(p[1].top.at(0), (std::pair<std::string, int64_t>{"blue", 40}));
  COMPARE(p[1].top.at(1), (std::pair<std::string, int64_t>{"red", 20}));
  COMPARE(p[5].distinct, int64_t(60));
  COMPARE(int64_t(p[5].top.size()), int64_t(ColumnProfile::kTop));
  COMPARE(p[6].missing, int64_t(60));
  COMPARE(p[6].present, int64_t(0));
  VERIFY(p[6].histogram.empty());
  // By default, free text is no feature; a column missing throughout is (the fit sees no value).
  CsvOptions o;
  o.target = "cat";
  o.task = CsvTask::Classification;
  const CsvSource source(t.path(), o);
  std::vector<std::string> features;
  for (const ColumnPolicy& p : source.feature_policies()) features.push_back(p.name);
  COMPARE(features, (std::vector<std::string>{"num", "code", "day", "stamp", "empty"}));
  // The user's type wins: the codes as categories.
  const ColumnProfile codes = profile_column(t, 2, ColumnType::Categorical);
  COMPARE(codes.distinct, int64_t(4));
  COMPARE(int64_t(codes.top.size()), int64_t(4));
}

TEST(datesParsed) {
  const auto d = parse_date("2024-02-29");
  VERIFY(d.has_value());
  COMPARE(d->weekday(), 3);  // a Thursday
  COMPARE(d->days(), 19782.0);
  const auto t = parse_date(" 1970-01-01T06:00 ");
  VERIFY(t && t->has_time);
  COMPARE(t->days(), 0.25);
  COMPARE(t->weekday(), 3);
  for (const char* bad : {"2023-02-29", "2024-13-01", "2024-1-01", "2024-01-01x", "2024-01/01", "01/02/2024",
                          "2024-01-01T25:00", "2024-01-01T10", "2024-01-01 10:00:00."})
    VERIFY2(!parse_date(bad), bad);
}

// ---- preparation ---------------------------------------------------------------------------

TEST(fillsFittedOnTrainingRowsOnly) {
  const plexus::testing::TempDir dir;
  // Rows 0-3 train; row 4 holds a huge value and a category training never saw.
  const Table t = read_table(write(dir, "fit.csv", "x,colour,y\n1,red,0\nNA,blue,1\n3,,0\n5,red,1\n1000,green,0\n"));
  std::vector<ColumnPolicy> features{policy("x"), policy("colour")};
  const TablePreparation p = fit_preparation(t, features, {0, 1, 2, 3});
  COMPARE(p.input_names(), (std::vector<std::string>{"x", "x=(missing)", "colour=blue", "colour=red", "colour=(other)",
                                                     "colour=(missing)"}));
  COMPARE(p.width(), int64_t(6));
  COMPARE(p.columns[0].fill, (std::vector<double>{3.0}));  // mean of 1, 3, 5: not of 1000
  COMPARE(p.columns[1].fill_category, std::string("red"));
  COMPARE(row(p, t, 0), (std::vector<float>{1, 0, 0, 1, 0, 0}));
  COMPARE(row(p, t, 1), (std::vector<float>{3, 1, 1, 0, 0, 0}));
  COMPARE(row(p, t, 2), (std::vector<float>{3, 0, 0, 1, 0, 1}));     // a missing colour: the most frequent
  COMPARE(row(p, t, 4), (std::vector<float>{1000, 0, 0, 0, 1, 0}));  // green: unseen
  COMPARE(p.standardised(), (std::vector<bool>{true, false, false, false, false, false}));

  // Median, most frequent, constant; no indicator when asked for none.
  features[0].missing = MissingPolicy::Median;
  features[0].indicator = false;
  features[1].missing = MissingPolicy::Constant;
  features[1].fill = "unknown";
  const TablePreparation q = fit_preparation(t, features, {0, 1, 2, 3, 4});
  COMPARE(q.columns[0].fill, (std::vector<double>{4.0}));  // median of 1, 3, 5, 1000
  COMPARE(q.columns[1].categories, (std::vector<std::string>{"blue", "green", "red", "unknown"}));
  COMPARE(q.input_names(), (std::vector<std::string>{"x", "colour=blue", "colour=green", "colour=red", "colour=unknown",
                                                     "colour=(other)", "colour=(missing)"}));
  COMPARE(row(q, t, 2), (std::vector<float>{3, 0, 0, 0, 1, 0, 1}));
  features[0].missing = MissingPolicy::MostFrequent;
  COMPARE(fit_preparation(t, features, {0, 2, 3}).columns[0].fill, (std::vector<double>{1.0}));  // ties: the smallest

  // A category's index for an Embedding: 0 for an unseen one.
  features[1] = policy("colour");
  features[1].encoding = CategoryEncoding::Index;
  const TablePreparation e = fit_preparation(t, features, {0, 1, 2, 3});
  COMPARE(e.input_names(), (std::vector<std::string>{"x", "colour", "colour=(missing)"}));
  COMPARE(row(e, t, 1), (std::vector<float>{1, 1, 0}));  // x: the most frequent, as set above
  COMPARE(row(e, t, 0), (std::vector<float>{1, 2, 0}));
  COMPARE(row(e, t, 4), (std::vector<float>{1000, 0, 0}));
  COMPARE(e.standardised(), (std::vector<bool>{true, false, false}));
}

TEST(numericCategoricalAndDateColumns) {
  const plexus::testing::TempDir dir;
  const Table t =
      read_table(write(dir, "mixed.csv", "code,when,y\n3,2024-03-04,1\n1,2024-03-05 12:30,0\n3,,1\n2,2025-01-01,0\n"));
  ColumnPolicy code = policy("code");
  code.type = ColumnType::Categorical;
  const TablePreparation p = fit_preparation(t, {code, policy("when")}, {0, 1, 2});
  COMPARE(p.input_names(),
          (std::vector<std::string>{"code=1", "code=3", "code=(other)", "when:year", "when:month", "when:day",
                                    "when:weekday", "when:hour", "when:minute", "when=(missing)"}));
  COMPARE(row(p, t, 0), (std::vector<float>{0, 1, 0, 2024, 3, 4, 0, 0, 0, 0}));  // a Monday
  COMPARE(row(p, t, 1), (std::vector<float>{1, 0, 0, 2024, 3, 5, 1, 12, 30, 0}));
  COMPARE(row(p, t, 2), (std::vector<float>{0, 1, 0, 2024, 3, 4.5f, 0.5f, 6, 15, 1}));  // means of the two
  COMPARE(row(p, t, 3), (std::vector<float>{0, 0, 1, 2025, 1, 1, 2, 0, 0, 0}));         // code 2: unseen
  COMPARE(p.standardised(), (std::vector<bool>{false, false, false, true, true, true, true, true, true, false}));
}

TEST(columnMissingThroughoutTraining) {
  const plexus::testing::TempDir dir;
  const Table t = read_table(write(dir, "gone.csv", "x,z,y\n1,NA,0\n2,,1\n3,7,0\n"));
  const TablePreparation p = fit_preparation(t, {policy("x"), policy("z")}, {0, 1});
  COMPARE(p.input_names(), (std::vector<std::string>{"x", "z", "z=(missing)"}));
  COMPARE(row(p, t, 0), (std::vector<float>{1, 0, 1}));  // nothing to learn a fill from: 0, flagged
  COMPARE(row(p, t, 2), (std::vector<float>{3, 7, 0}));
}

TEST(preparationMessages) {
  const plexus::testing::TempDir dir;
  const std::string path = write(dir, "bad.csv", "x,name,y\n1,Adelie,0\nTorgersen,Gentoo,1\n,Adelie,1\n");
  const Table t = read_table(path);
  // A text cell in a column declared numeric: file, line, column, byte offset.
  ColumnPolicy x = policy("x");
  x.type = ColumnType::Numeric;
  COMPARE(message_of<DataError>([&] {
            fit_preparation(t, {x}, {0, 1});
          }),
          path +
              ": line 3, column 1 ('x'), byte offset 20: 'Torgersen' is not a number, but the column is numeric "
              "(set its type to categorical to use text)");
  // Missing cells refused where the policy says so.
  x.missing = MissingPolicy::Error;
  const TablePreparation strict = fit_preparation(t, {x}, {0});
  VERIFY_CONTAINS(message_of<DataError>([&] { row(strict, t, 2); }),
                  path +
                      ": line 4, column 1 ('x'), byte offset 39: missing value, and the column's missing values are "
                      "errors");
  // Policies that do not fit the type, free text, a constant that is not a number.
  ColumnPolicy name = policy("name");
  name.missing = MissingPolicy::Mean;
  VERIFY_CONTAINS(message_of<ValueError>([&] {
                    fit_preparation(t, {name}, {0, 1});
                  }),
                  "column 'name' is categorical: its missing values cannot be filled with a mean");
  name = policy("name");
  name.type = ColumnType::Text;
  VERIFY_CONTAINS(message_of<ValueError>([&] { fit_preparation(t, {name}, {0}); }), "column 'name' holds free text");
  ColumnPolicy y = policy("y");
  y.missing = MissingPolicy::Constant;
  y.fill = "zero";
  VERIFY_CONTAINS(message_of<ValueError>([&] { fit_preparation(t, {y}, {0}); }),
                  "column 'y' is numeric: its fill constant must be a number, got 'zero'");
  VERIFY_CONTAINS(message_of<DataError>([&] { fit_preparation(t, {policy("nope")}, {0}); }),
                  "feature column 'nope' not found in the header; columns: 'x', 'name', 'y'");
}

TEST(preparationJsonRoundTrip) {
  const plexus::testing::TempDir dir;
  const Table t = read_table(write(dir, "j.csv", "a,b,c,y\n1,u,2024-01-01,0\nNA,v,2024-02-01T08:00,1\n2,,NA,0\n"));
  ColumnPolicy b = policy("b");
  b.encoding = CategoryEncoding::Index;
  TablePreparation p = fit_preparation(t, {policy("a"), b, policy("c")}, all_rows(t));
  p.missing_values = "NA, -";
  const TablePreparation back = TablePreparation::from_json(p.to_json(), "model.safetensors");
  VERIFY(back == p);
  COMPARE(row(back, t, 2), row(p, t, 2));
  for (const char* bad : {"[]", "{\"missing_values\": \"\", \"columns\": [{\"name\": \"a\"}]}",
                          "{\"missing_values\": \"\", \"columns\": [{\"name\": \"a\", \"type\": \"text\", \"missing\": "
                          "\"mean\", \"indicator\": false, \"fill\": [0]}]}",
                          "{\"missing_values\": \"\", \"columns\": [{\"name\": \"a\", \"type\": \"categorical\", "
                          "\"missing\": \"mean\", \"indicator\": false, \"encoding\": \"one_hot\", \"categories\": "
                          "[\"b\", \"a\"], \"fill\": \"a\"}]}",
                          "{\"missing_values\": \"\", \"columns\": [{\"name\": \"a\", \"type\": \"date\", \"missing\": "
                          "\"mean\", \"indicator\": false, \"time_of_day\": false, \"fill\": [1, 2]}]}"})
    VERIFY_CONTAINS(message_of<IoError>([&] { TablePreparation::from_json(bad, "model.safetensors"); }),
                    "model.safetensors: metadata 'table_preparation': ");
}

// ---- datasets ------------------------------------------------------------------------------

// A messy file as it comes: semicolons, a BOM, CRLF, quoted cells, tokens, a text column, a
// target with a missing cell, and a drop policy.
TEST(messyCsvDataset) {
  const plexus::testing::TempDir dir;
  const std::string path = write(dir, "penguins.csv",
                                 "\xEF\xBB\xBF"
                                 "species;island;bill;mass;sex;comment\r\n"
                                 "Adelie;Torgersen;39.1;3750;male;\"first; of many\"\r\n"
                                 "Adelie;Torgersen;NA;NA;NA;\"said \"\"hi\"\"\"\r\n"
                                 "Gentoo;Biscoe;46.1;N/A;female;c3\r\n"
                                 "NA;Dream;40;3000;female;c4\r\n"
                                 "Chinstrap;Dream;?;3500;null;c5\r\n"
                                 "Gentoo;Biscoe;47;5000;male;c6\r\n");
  CsvOptions o;
  o.target = "species";
  o.task = CsvTask::Classification;
  o.features = {"island", "bill", "mass", "sex"};
  ColumnPolicy mass = policy("mass");
  mass.missing = MissingPolicy::Drop;
  o.columns = {mass};
  const CsvSource source(path, o);
  COMPARE(source.table().delimiter(), ';');
  COMPARE(source.size(), int64_t(3));  // one without a species, two without a mass
  COMPARE(source.left_out().missing_target, int64_t(1));
  COMPARE(source.left_out().dropped, int64_t(2));
  COMPARE(source.left_out().text(),
          std::string("3 rows left out: 1 without a target, 2 with a missing cell in a 'drop' column"));
  const CsvDataset ds(source, std::make_shared<const TablePreparation>(source.fit_all()));
  COMPARE(ds.class_names(), (std::vector<std::string>{"Adelie", "Chinstrap", "Gentoo"}));
  COMPARE(ds.targets().to_vector(), (std::vector<float>{0, 1, 2}));
  COMPARE(ds.row_lines(), (std::vector<int64_t>{2, 6, 7}));
  COMPARE(ds.feature_names(),
          (std::vector<std::string>{"island=Biscoe", "island=Dream", "island=Torgersen", "island=(other)", "bill",
                                    "bill=(missing)", "mass", "sex=male", "sex=(other)", "sex=(missing)"}));
  // Only males are left among the rows kept; a missing bill is the mean of the two others.
  COMPARE(ds.features().to_vector(), (std::vector<float>{0, 0, 1, 0, 39.1f,  0, 3750, 1, 0, 0,  //
                                                         0, 1, 0, 0, 43.05f, 1, 3500, 1, 0, 1,  //
                                                         1, 0, 0, 0, 47,     0, 5000, 1, 0, 0}));
  // By default every other column is a feature: six comments are categories here.
  CsvOptions d;
  d.target = "species";
  d.task = CsvTask::Classification;
  const CsvDataset all(path, d);
  COMPARE(all.preparation().columns.size(), size_t(5));
  COMPARE(all.preparation().columns[4].name, std::string("comment"));

  // Predicting from raw rows in another column order, without the target: an unseen island and
  // sex, a missing bill.
  const std::string rows = write(dir, "rows.csv", "sex,mass,bill,island\nfemale,3100,,Atlantis\n");
  COMPARE(read_csv_features(rows, ds.preparation()).to_vector(),
          (std::vector<float>{0, 0, 0, 1, 43.05f, 1, 3100, 0, 1, 0}));
  // The same row typed into a form (Try It).
  const Table typed = table_of_rows({"island", "bill", "mass", "sex"}, {{"Atlantis", " ", "3100", "female"}},
                                    csv_format::MissingTokens::parse(ds.preparation().missing_values), "Try It");
  COMPARE(row(ds.preparation(), typed, 0), (std::vector<float>{0, 0, 0, 1, 43.05f, 1, 3100, 0, 1, 0}));
  const Table wrong = table_of_rows({"island", "bill", "mass", "sex"}, {{"Dream", "long", "3100", "male"}},
                                    csv_format::MissingTokens(), "Try It");
  COMPARE(message_of<DataError>([&] { row(ds.preparation(), wrong, 0); }),
          std::string("Try It: line 2, column 2 ('bill'): 'long' is not a number, but the column is numeric (set its "
                      "type to categorical to use text)"));
  const std::string no_mass = write(dir, "no_mass.csv", "sex,mass,bill,island\nfemale,NA,1,Dream\n");
  VERIFY_CONTAINS(message_of<DataError>([&] { read_csv_features(no_mass, ds.preparation()); }),
                  no_mass +
                      ": line 2, column 2 ('mass'), byte offset 28: missing value in a column whose rows with "
                      "missing values are left out");
}

// A run's preparation learns from its training split alone, and the split is the one a run uses.
TEST(runFitsOnItsTrainingSplit) {
  const plexus::testing::TempDir dir;
  std::string text = "x,c,y\n";
  for (int i = 0; i < 50; ++i)
    text += std::to_string(i) + "," + (i % 5 ? "a" : "b") + "," + std::to_string(i % 2) + "\n";
  text += "1000000,z,1\n";  // one extreme row with its own category: in training or not
  graph::DatasetBinding b;
  b.kind = "csv";
  b.path = write(dir, "t.csv", text);
  b.target = "y";
  b.task = "classification";
  for (uint64_t seed : {1u, 2u, 3u}) {
    const graph::DatasetSplits s = graph::open_dataset(b, seed, 0.1);
    const auto& train = dynamic_cast<const CsvDataset&>(*s.train);
    const auto& test = dynamic_cast<const CsvDataset&>(*s.test);
    VERIFY(train.shared_preparation() == test.shared_preparation());
    double sum = 0;
    bool extreme = false;
    for (int64_t i = 0; i < train.size(); ++i) {
      const float x = train.features().at({i, 0});
      sum += x;
      extreme = extreme || x == 1e6f;
    }
    COMPARE(train.preparation().columns[0].fill.at(0), sum / double(train.size()));
    const std::vector<std::string>& cats = train.preparation().columns[1].categories;
    COMPARE(std::find(cats.begin(), cats.end(), "z") != cats.end(), extreme);
    COMPARE(graph::describe_dataset(b, seed, 0.1).feature_names, train.feature_names());
  }
}

// The column settings live in the project file, and read back.
TEST(columnSettingsInTheProject) {
  graph::Graph g;
  g.dataset.kind = "csv";
  g.dataset.path = "data/penguins.csv";
  g.dataset.target = "species";
  g.dataset.task = "classification";
  g.dataset.delimiter = "semicolon";
  g.dataset.missing_values = "NA, -";
  graph::ColumnSetting island;
  island.name = "island";
  island.encoding = "index";
  graph::ColumnSetting sex;
  sex.name = "sex \"quoted\"";
  sex.missing = "constant";
  sex.fill = "unknown";
  sex.indicator = false;
  g.dataset.columns = {island, sex};
  const std::string text = graph::serialize_project(g);
  VERIFY_CONTAINS(text,
                  "\"columns\": {\n      \"island\": {\"encoding\": \"index\"},\n      \"sex \\\"quoted\\\"\": "
                  "{\"missing\": \"constant\", \"fill\": \"unknown\", \"indicator\": false}\n    }");
  const graph::Graph back = graph::parse_project(text, "p.plexus");
  VERIFY(back.dataset == g.dataset);
  // Checked against the table.
  graph::DatasetBinding bad = g.dataset;
  bad.columns[0].missing = "avg";
  VERIFY_CONTAINS(message_of<ValueError>([&] { graph::check_dataset_values(bad); }),
                  "dataset: column 'island': unknown missing 'avg' (known: auto, drop, mean, median, most_frequent, "
                  "constant, error)");
  bad = g.dataset;
  bad.columns[1].fill.clear();
  VERIFY_CONTAINS(message_of<ValueError>([&] { graph::check_dataset_values(bad); }),
                  "missing 'constant' needs a fill value");
}
