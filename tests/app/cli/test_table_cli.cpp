// A model of a messy table, end to end through plexus-cli: a CSV file written here with missing
// cells (empty, "NA", "?"), a category column, a date column, free text (an id, a quoted note
// holding commas) and rows without a target, trained by `plexus-cli train` with every column's
// preparation at its default. Then:
//  - `eval --predictions` names each test row's line in the data file, and `predict` on the
//    file's raw rows gives each of those lines the same class and probability (the preparation
//    stored in the checkpoint, applied to raw cells, against the run's own prepared split);
//  - `predict` takes a category training never saw ("(other)") and missing cells (the training
//    split's fills beside the was-missing inputs), as `--prepared-csv` shows column by column;
//  - the model exported by `export --onnx` names its inputs and holds the preparation in its
//    metadata, and ONNX Runtime's logits on `--prepared-csv`'s rows match the trained model's
//    on the raw file (skipped without ONNX Runtime).
#include <QtTest/QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "data/csv.h"
#include "graph/project.h"
#include "io/safetensors.h"
#include "session/trained_model.h"
#include "support/cli_support.h"
#include "support/onnx_support.h"
#include "support/work_dir.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

using testing::at;
using testing::run_cli;

constexpr int kRows = 400;
const std::vector<std::string> kCities = {"Kyiv", "Lima", "Oslo", "Pune"};
const std::vector<std::string> kGrades = {"high", "low", "mid"};  // the class order: sorted labels

// grade from size and city (each city shifts the size), so the model needs both columns.
std::string grade_of(double size, int city) {
  const double score = size + 15.0 * city;
  return score < 40 ? "low" : score < 75 ? "mid" : "high";
}

// The data file: one line per row (no quoted line breaks), so row r of `predict` is line r + 1.
// Every 13th size, 11th city and 17th date is missing; every 37th grade too (the row is left out).
void write_messy_csv(const fs::path& path) {
  std::mt19937 rng(7);
  std::ofstream out(path);
  out << "id,city,size,measured,note,grade\n";
  for (int r = 0; r < kRows; ++r) {
    const int city = int(rng() % 4);
    const double size = double(rng() % 8000) / 100.0;
    const int month = 1 + int(rng() % 12), day = 1 + int(rng() % 28);
    char date[16];
    std::snprintf(date, sizeof date, "2024-%02d-%02d", month, day);
    char size_text[16];
    std::snprintf(size_text, sizeof size_text, "%.2f", size);
    out << "p" << 1000 + r << ',' << (r % 11 == 5 ? "NA" : kCities[size_t(city)]) << ','
        << (r % 13 == 4 ? "?" : size_text) << ',' << (r % 17 == 3 ? "" : date) << ",\"seen at " << r
        << ", twice\"," << (r % 37 == 9 ? "NA" : grade_of(size, city)) << '\n';
  }
}

void write_project(const fs::path& path, const fs::path& data) {
  std::ofstream(path) << R"({
  "format": 1,
  "nodes": [
    {"id": "in", "type": "Input", "name": "in", "params": {}},
    {"id": "fc1", "type": "Linear", "name": "fc1", "params": {"out_features": 16}},
    {"id": "act", "type": "ReLU", "name": "act", "params": {}},
    {"id": "out", "type": "Linear", "name": "grade", "params": {"out_features": 3}},
    {"id": "loss", "type": "CrossEntropy", "name": "loss", "params": {}}
  ],
  "edges": [
    {"from": ["in", "x"], "to": ["fc1", "input"]},
    {"from": ["fc1", "output"], "to": ["act", "input"]},
    {"from": ["act", "output"], "to": ["out", "input"]},
    {"from": ["out", "output"], "to": ["loss", "input"]},
    {"from": ["in", "y"], "to": ["loss", "target"]}
  ],
  "dataset": {"kind": "csv", "path": ")" + data.string() + R"(", "target": "grade", "task": "classification"},
  "training": {"optimizer": "adam", "lr": 0.02, "batch_size": 32, "epochs": 40, "validation_fraction": 0.1, "seed": 3,
               "device": "cpu"}
})";
}

QStringList read_lines(const fs::path& path) {
  QFile f(at(path));
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
}

// --prepared-csv's file: its header's names and its rows of numbers.
struct PreparedRows {
  QStringList names;
  std::vector<std::vector<float>> rows;
  float at(size_t row, const QString& name) const { return rows.at(row).at(size_t(names.indexOf(name))); }
};

PreparedRows read_prepared(const fs::path& path) {
  PreparedRows p;
  const QStringList lines = read_lines(path);
  if (lines.isEmpty()) return p;
  p.names = lines[0].split(',');
  for (int i = 1; i < lines.size(); ++i) {
    std::vector<float> row;
    for (const QString& v : lines[i].split(',')) row.push_back(v.toFloat());
    p.rows.push_back(std::move(row));
  }
  return p;
}

QJsonObject json_line(const QString& line) { return QJsonDocument::fromJson(line.toUtf8()).object(); }

// predict --json's probability of each class, by class index.
std::map<int, double> probabilities(const QJsonObject& prediction) {
  std::map<int, double> out;
  for (const QJsonValue& c : prediction["classes"].toArray())
    out[c.toObject()["class"].toInt()] = c.toObject()["probability"].toDouble();
  return out;
}

}  // namespace

class TestTableCli : public QObject {
  Q_OBJECT

  testing::WorkDir work_;
  fs::path data_, project_, checkpoint_;

 private slots:
  void initTestCase() {
    QVERIFY(work_.isValid());
    data_ = work_ / "messy.csv";
    project_ = work_ / "messy.plexus";
    checkpoint_ = work_ / "run" / "final.safetensors";
    write_messy_csv(data_);
    write_project(project_, data_);
    const testing::CliResult trained =
        run_cli({"train", at(project_), "--run-dir", at(work_ / "run"), "--quiet", "--threads", "1"});
    QVERIFY2(trained.code == 0, qPrintable(trained.err));
    QVERIFY(fs::exists(checkpoint_));
  }

  void predictOnRawRowsAgreesWithEvalByLine() {
    const fs::path csv = work_ / "predictions.csv";
    const testing::CliResult evaluated =
        run_cli({"eval", at(project_), "--checkpoint", at(checkpoint_), "--predictions", at(csv)});
    QVERIFY2(evaluated.code == 0, qPrintable(evaluated.err));
    const QStringList rows = read_lines(csv);
    QCOMPARE(rows.value(0), QString("index,line,label,predicted,probability"));
    // 400 rows less the 11 without a grade; a fifth of them is the test split.
    QCOMPARE(rows.size() - 1, 78);

    const testing::CliResult predicted =
        run_cli({"predict", at(project_), "--checkpoint", at(checkpoint_), "--json", "--top", "3", at(data_)});
    QVERIFY2(predicted.code == 0, qPrintable(predicted.err));
    const QStringList predictions = predicted.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(predictions.size(), kRows);  // every row, with or without a grade
    const QStringList file = read_lines(data_);

    int right = 0;
    for (int i = 1; i < rows.size(); ++i) {
      const QStringList e = rows[i].split(',');
      QCOMPARE(e.size(), 5);
      const int line = e[1].toInt(), label = e[2].toInt(), cls = e[3].toInt();
      QVERIFY2(line >= 2 && line <= kRows + 1, qPrintable(rows[i]));
      // The line holds the row: its grade is the label eval read.
      const QString grade = file[line - 1].section(',', -1);
      QCOMPARE(grade, QString::fromStdString(kGrades[size_t(label)]));
      const QJsonObject p = json_line(predictions[line - 2]);
      QCOMPARE(p["row"].toInt(), line - 1);
      const std::map<int, double> probs = probabilities(p);
      const int top = p["classes"].toArray()[0].toObject()["class"].toInt();
      QVERIFY2(top == cls, qPrintable(QString("line %1: predict says %2, eval %3").arg(line).arg(top).arg(cls)));
      QVERIFY2(std::abs(probs.at(cls) - e[4].toDouble()) <= 1e-5,
               qPrintable(QString("line %1: probability %2 from predict, %3 from eval").arg(line).arg(probs.at(cls)).arg(e[4])));
      right += cls == label;
    }
    // A model that learnt the rule, not the most frequent grade.
    QVERIFY2(right >= 60, qPrintable(QString("%1 of 78 test rows right").arg(right)));
  }

  void predictTakesUnseenCategoriesAndMissingCells() {
    // Other columns, in another order, without the target or the free text.
    const fs::path rows = work_ / "new.csv", prepared = work_ / "new-prepared.csv";
    std::ofstream(rows) << "measured,size,city\n"
                           "2024-06-15,50,Atlantis\n"   // a city training never saw
                           "2024-06-15,50,Zanzibar\n"   // another one: the same input
                           "2024-06-15,,Oslo\n"         // a missing size
                           "NA,50,Oslo\n"               // a missing date
                           "2024-06-15,50,?\n";         // a missing city
    const testing::CliResult predicted = run_cli({"predict", at(project_), "--checkpoint", at(checkpoint_), "--json",
                                                  "--prepared-csv", at(prepared), at(rows)});
    QVERIFY2(predicted.code == 0, qPrintable(predicted.err));
    const QStringList lines = predicted.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 5);
    const std::map<int, double> atlantis = probabilities(json_line(lines[0])), zanzibar = probabilities(json_line(lines[1]));
    QCOMPARE(atlantis.size(), size_t(3));
    for (const auto& [cls, probability] : atlantis) QVERIFY(std::abs(zanzibar.at(cls) - probability) <= 1e-6);

    // The checkpoint's preparation: the fills the missing cells take.
    const io::SafetensorsMetadata meta = io::read_safetensors_header(checkpoint_.string()).metadata;
    QVERIFY(meta.count("table_preparation"));
    const data::TablePreparation prep =
        data::TablePreparation::from_json(meta.at("table_preparation"), checkpoint_.string());
    QCOMPARE(prep.columns.size(), size_t(3));  // city, size, measured: no id, no note

    const PreparedRows p = read_prepared(prepared);
    QStringList names;
    for (const std::string& n : prep.input_names()) names << QString::fromStdString(n);
    QCOMPARE(p.names, names);
    QCOMPARE(p.rows.size(), size_t(5));
    for (const std::string& city : kCities) QCOMPARE(p.at(0, QString::fromStdString("city=" + city)), 0.f);
    QCOMPARE(p.at(0, "city=(other)"), 1.f);
    QCOMPARE(p.at(0, "city=(missing)"), 0.f);
    const data::PreparedColumn& size = prep.columns[1];
    QCOMPARE(size.name, std::string("size"));
    QCOMPARE(p.at(2, "size"), float(size.fill.at(0)));  // the training split's mean
    QCOMPARE(p.at(2, "size=(missing)"), 1.f);
    QCOMPARE(p.at(0, "size=(missing)"), 0.f);
    const data::PreparedColumn& date = prep.columns[2];
    QCOMPARE(p.at(3, "measured:month"), float(date.fill.at(1)));
    QCOMPARE(p.at(3, "measured=(missing)"), 1.f);
    QCOMPARE(p.at(0, "measured:month"), 6.f);
    QCOMPARE(p.at(0, "measured:weekday"), 5.f);  // 2024-06-15 is a Saturday
    const QString fill_city = QString::fromStdString("city=" + prep.columns[0].fill_category);
    QCOMPARE(p.at(4, fill_city), 1.f);  // the most frequent city
    QCOMPARE(p.at(4, "city=(missing)"), 1.f);
  }

  void exportedModelRunsOnPreparedRows() {
    if (const std::string why = testing::ort_unavailable(); !why.empty()) QSKIP(why.c_str());
    const fs::path onnx = work_ / "messy.onnx", prepared = work_ / "prepared.csv";
    const testing::CliResult exported =
        run_cli({"export", at(project_), "--checkpoint", at(checkpoint_), "--onnx", at(onnx)});
    QVERIFY2(exported.code == 0, qPrintable(exported.err));
    const testing::CliResult predicted =
        run_cli({"predict", at(project_), "--checkpoint", at(checkpoint_), "--prepared-csv", at(prepared), at(data_)});
    QVERIFY2(predicted.code == 0, qPrintable(predicted.err));

    // The model says what its input is: the prepared columns' names, and the preparation.
    onnx::ModelProto proto;
    std::ifstream file(onnx, std::ios::binary);
    QVERIFY(proto.ParseFromIstream(&file));
    std::map<std::string, std::string> meta;
    for (const auto& e : proto.metadata_props()) meta[e.key()] = e.value();

    // The trained model, as every front end loads it: export says its input is prepared rows.
    const session::TrainedModel model =
        session::load_trained_model(graph::load_project(project_.string()), checkpoint_.string(), {work_.path()});
    QVERIFY(model.preparation);
    const QString input = "input  x float32 [N, " + QString::number(model.preparation->width()) + "] (prepared rows";
    QVERIFY2(exported.out.contains(input), qPrintable(exported.out));
    QCOMPARE(meta["input_names"], nlohmann::json(model.preparation->input_names()).dump());
    QVERIFY(data::TablePreparation::from_json(meta["table_preparation"], "the ONNX model") == *model.preparation);
    // The prepared rows are the model's input, as core prepares the raw file.
    const Tensor x = data::read_csv_features(data_.string(), *model.preparation);
    const PreparedRows p = read_prepared(prepared);
    QCOMPARE(int64_t(p.rows.size()), x.size(0));
    std::vector<float> values;
    for (const auto& row : p.rows) values.insert(values.end(), row.begin(), row.end());
    QVERIFY(values == x.to_vector());

    const testing::OrtOutput got =
        testing::run_ort(onnx, from_vector(values, {x.size(0), x.size(1)}), work_.path());
    const std::vector<float> want = model.forward(x).to_vector();
    QCOMPARE(got.dims, (std::vector<int64_t>{x.size(0), 3}));
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, double(std::abs(got.values[i] - want[i])));
    QVERIFY2(worst <= 1e-4, qPrintable(QString("largest logit difference %1").arg(worst)));
  }
};

QTEST_GUILESS_MAIN(TestTableCli)
#include "test_table_cli.moc"
