// session/run.h: a training run from a graph's own settings; graph/dataset_info.h: dataset
// paths; weights files.
#include <QtTest>

#include <filesystem>
#include <fstream>

#include "graph/project.h"
#include "graph/dataset_info.h"
#include "plexus.h"
#include "session/run.h"
#include "test_support.h"
#include "train/checkpoint.h"

using namespace plexus;
using namespace plexus::graph;
using namespace plexus::layers;
using namespace plexus::session;
using plexus::testing::contains;
using plexus::testing::message_of;
namespace fs = std::filesystem;

namespace {

const fs::path kExamples = fs::path(PLEXUS_SOURCE_DIR) / "examples";

fs::path temp_dir(const char* name) {
  const fs::path d = fs::temp_directory_path() / ("plexus_test_run_" + std::to_string(::getpid())) / name;
  fs::create_directories(d);
  return d;
}

}  // namespace

class TestRun : public QObject {
  Q_OBJECT

 private slots:
  void cleanupTestCase() {
    std::error_code ec;
    fs::remove_all(fs::temp_directory_path() / ("plexus_test_run_" + std::to_string(::getpid())), ec);
  }

  void datasetPathsResolveNextToTheProjectFirst() {
    const fs::path root = temp_dir("paths");
    fs::create_directories(root / "proj" / "data");
    std::ofstream(root / "proj" / "data" / "a.csv") << "x,y\n1,2\n";
    // Next to the project.
    DatasetLocation loc = locate_dataset("data/a.csv", root / "proj");
    QVERIFY(loc.found);
    QCOMPARE(loc.path, root / "proj" / "data" / "a.csv");
    // Absolute paths are used as they are.
    loc = locate_dataset((root / "proj" / "data" / "a.csv").string(), "/nowhere");
    QVERIFY(loc.found);
    // Not found anywhere: the message says where it looked.
    loc = locate_dataset("data/b.csv", root / "proj");
    QVERIFY(!loc.found);
    QVERIFY2(contains(loc.looked, "data/b.csv") && contains(loc.looked, " or "), loc.looked.c_str());
    const std::string msg = message_of<IoError>([&] {
      resolve_dataset({"csv", "data/b.csv", "y", "regression"}, root / "proj");
    });
    QVERIFY2(contains(msg, "dataset 'data/b.csv' not found (looked in "), msg.c_str());
    // Then the current directory.
    const fs::path old = fs::current_path();
    fs::current_path(root);
    loc = locate_dataset("proj/data/a.csv", root / "elsewhere");
    fs::current_path(old);
    QVERIFY(loc.found);
    QCOMPARE(loc.path, fs::path("proj/data/a.csv"));
  }

  void housingRunIsARegression() {
    const Graph g = load_project(kExamples / "housing_regression.plexus");
    TrainingRun run = make_training_run(g, {.project_dir = kExamples, .train_subset = 100});
    QVERIFY(!run.compiled.classification);
    QVERIFY(!run.trainer_options.classification);
    QCOMPARE(run.data.train->size(), int64_t(100));
    QCOMPARE(run.data.test->size(), int64_t(100));  // 20% of 500 rows
    QCOMPARE(run.data.info.input_shape, (Shape{8}));
    QCOMPARE(run.trainer_options.epochs, int(g.training.epochs));
    QVERIFY(!run.scheduler);
    TrainingRun moved = std::move(run);  // everything sits behind pointers
    train::Trainer trainer(*moved.compiled.model, *moved.optimizer, *moved.train_loader, moved.eval_loader.get(),
                           [&] {
                             train::TrainerOptions o = moved.trainer_options;
                             o.epochs = 3;
                             return o;
                           }());
    const train::RunResult r = trainer.run();
    QVERIFY2(r.status == train::RunStatus::Completed, r.message.c_str());
    QVERIFY(r.history.back().eval_loss < r.history.front().train_loss);
  }

  void badSettingsAreNamed() {
    Graph g = load_project(kExamples / "housing_regression.plexus");
    g.training.batch_size = 0;
    QVERIFY(contains(message_of<ValueError>([&] { make_training_run(g, {.project_dir = kExamples}); }), "batch_size"));
    g.training.batch_size = 10;
    g.training.optimizer = "lbfgs";
    QVERIFY(contains(message_of<ValueError>([&] { check_training_settings(g.training); }), "unknown optimizer 'lbfgs'"));
    g.training.optimizer = "sgd";
    g.training.schedule = "cosine";
    QVERIFY(make_training_run(g, {.project_dir = kExamples}).scheduler);
    g.training.device = "tpu";
    QVERIFY(contains(message_of<ValueError>([&] { check_training_settings(g.training); }), "device"));
  }

  void weightsFilesRoundTripAndNameWhatIsWrong() {
    const fs::path dir = temp_dir("weights");
    const Graph g = load_project(kExamples / "housing_regression.plexus");
    const DatasetInfo info{{8}, {}, 0};
    const CompiledGraph a = compile(g, info, 1), b = compile(g, info, 2);
    train::save_weights(dir / "a.safetensors", *a.model, {{"seed", "1"}});
    QCOMPARE(train::load_weights(dir / "a.safetensors", *b.model).at("seed"), std::string("1"));
    const auto pa = a.model->parameters(), pb = b.model->parameters();
    for (size_t i = 0; i < pa.size(); ++i) QCOMPARE(pa[i].to_vector(), pb[i].to_vector());

    Graph other = g;
    other.find("fc1")->params["out_features"] = int64_t(16);
    const CompiledGraph c = compile(other, info, 1);
    // fc2.bias fits (shape [32]) and differs from the file's: a partial load would change it.
    const auto before = c.model->parameters()[3].to_vector();
    QVERIFY(before != pa[3].to_vector());
    const std::string msg = message_of<ShapeError>([&] { train::load_weights(dir / "a.safetensors", *c.model); });
    QVERIFY2(contains(msg, "tensor 'fc1.weight' has shape [64, 8], the model expects [16, 8]"), msg.c_str());
    // Nothing changed: a failed load leaves the model as it was.
    QCOMPARE(c.model->parameters()[3].to_vector(), before);
  }
};

QTEST_APPLESS_MAIN(TestRun)
#include "test_run.moc"
