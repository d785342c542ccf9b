// `plexus-cli embed` end to end: the MNIST MLP (examples/mnist_mlp.plexus, its initial weights in
// a weights file) on generated digits, its hidden layer mapped with PCA and t-SNE into CSV files
// whose rows are the sampled validation examples with their classes; PCA's points are core's
// explain::pca of core's explain::collect_features; bad requests are refused naming what is wrong.
#include <QtTest/QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/synthetic_digits.h"
#include "explain/features.h"
#include "explain/projection.h"
#include "graph/project.h"
#include "session/run.h"
#include "session/trained_model.h"
#include "support/cli_support.h"
#include "support/work_dir.h"
#include "train/checkpoint.h"

using namespace plexus;
namespace fs = std::filesystem;
using testing::at;
using testing::run_cli;

namespace {

std::vector<std::vector<std::string>> read_csv(const fs::path& file) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace

class TestEmbedCli : public QObject {
  Q_OBJECT

  testing::WorkDir work_;
  fs::path project_, weights_;

 private slots:
  void initTestCase() {
    QVERIFY(work_.isValid());
    data::write_synthetic_digits(work_ / "digits", 1000, 100);
    graph::Graph g = graph::load_project(PLEXUS_SOURCE_DIR "/examples/mnist_mlp.plexus");
    g.dataset.path = (work_ / "digits").string();
    g.training.validation_fraction = 0.2;
    project_ = work_ / "mlp.plexus";
    graph::save_project(project_, g);
    session::TrainingRun run = session::make_training_run(g);
    train::Metadata meta;
    session::write_model_metadata(meta, run.data.info, run.normalization, run.class_names);
    weights_ = work_ / "w.safetensors";
    train::save_weights(weights_, *run.compiled.model, meta);
  }

  void pcaPointsAreCoresAndRowsNameTheirExamples() {
    const fs::path out = work_ / "pca.csv";
    const testing::CliResult r = run_cli({"embed", at(project_), "--checkpoint", at(weights_), "--node", "act", "--method",
                                          "pca", "--examples", "150", "--out", at(out)});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const auto rows = read_csv(out);
    QCOMPARE(rows.size(), size_t(151));
    QVERIFY(rows[0] == (std::vector<std::string>{"index", "label", "predicted", "x", "y", "label_name", "predicted_name"}));
    const session::TrainedModel m = session::load_trained_model(graph::load_project(project_), weights_);
    const explain::FeatureSet f = explain::collect_features(m, {}, {.node = "act", .max_examples = 150});
    const std::vector<float> xy = explain::pca(f.features, 2).points.to_vector();
    for (size_t i = 0; i < 150; ++i) {
      const auto& row = rows[i + 1];
      QCOMPARE(row.size(), size_t(7));
      QCOMPARE(int64_t(std::stoll(row[0])), f.indices[i]);
      QCOMPARE(int64_t(std::stoll(row[1])), f.labels[i]);
      QCOMPARE(int64_t(std::stoll(row[2])), f.predicted[i]);
      QVERIFY(std::abs(std::stof(row[3]) - xy[2 * i]) < 1e-4f && std::abs(std::stof(row[4]) - xy[2 * i + 1]) < 1e-4f);
      QVERIFY(row[5] == m.class_names[size_t(f.labels[i])]);
    }
  }

  void tsneWritesEveryExampleOfTheSplit() {
    const fs::path out = work_ / "tsne.csv";
    const testing::CliResult r =
        run_cli({"embed", at(project_), "--checkpoint", at(weights_), "--node", "fc1", "--examples", "0",
                 "--iterations", "300", "--perplexity", "10", "--out", at(out)});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("tsne"), qPrintable(r.err));  // the times, on stderr
    const auto rows = read_csv(out);
    QCOMPARE(rows.size(), size_t(201));  // the 200 validation examples
    for (size_t i = 1; i < rows.size(); ++i) QVERIFY(std::isfinite(std::stof(rows[i][3])));
  }

  void badRequestsAreRefused() {
    const testing::CliResult node = run_cli({"embed", at(project_), "--checkpoint", at(weights_), "--node", "fc9",
                                             "--out", at(work_ / "x.csv")});
    QCOMPARE(node.code, 2);
    QVERIFY2(node.err.contains("no node 'fc9'") && node.err.contains("fc1"), qPrintable(node.err));
    const testing::CliResult method = run_cli({"embed", at(project_), "--checkpoint", at(weights_), "--node", "fc1",
                                               "--method", "umap", "--out", at(work_ / "x.csv")});
    QCOMPARE(method.code, 2);
    QVERIFY2(method.err.contains("pca or tsne"), qPrintable(method.err));
    const testing::CliResult missing = run_cli({"embed", at(project_), "--checkpoint", at(weights_), "--node", "fc1"});
    QCOMPARE(missing.code, 2);
    QVERIFY2(missing.err.contains("--out"), qPrintable(missing.err));
    QVERIFY(!fs::exists(work_ / "x.csv"));
  }
};

QTEST_MAIN(TestEmbedCli)
#include "test_embed_cli.moc"
