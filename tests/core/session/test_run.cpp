// session/run.h: a training run from a graph's own settings; graph/dataset_info.h: dataset
// paths; weights files.
#include "support/check.h"

#include <filesystem>
#include <fstream>

#include "graph/project.h"
#include "graph/dataset_info.h"
#include "plexus.h"
#include "session/run.h"
#include "support/suite_dir.h"
#include "support/test_support.h"
#include "train/checkpoint.h"

using namespace plexus;
using namespace plexus::graph;
using namespace plexus::layers;
using namespace plexus::session;
using plexus::testing::contains;
using plexus::testing::message_of;
using plexus::testing::suite_subdir;
namespace fs = std::filesystem;

namespace {

const fs::path kExamples = fs::path(PLEXUS_SOURCE_DIR) / "examples";

}  // namespace

TEST(datasetPathsResolveNextToTheProjectFirst) {
  const fs::path root = suite_subdir("paths");
  fs::create_directories(root / "proj" / "data");
  std::ofstream(root / "proj" / "data" / "a.csv") << "x,y\n1,2\n";
  // Next to the project.
  DatasetLocation loc = locate_dataset("data/a.csv", root / "proj");
  VERIFY(loc.found);
  COMPARE(loc.path, root / "proj" / "data" / "a.csv");
  // Absolute paths are used as they are.
  loc = locate_dataset((root / "proj" / "data" / "a.csv").string(), "/nowhere");
  VERIFY(loc.found);
  // Not found anywhere: the message says where it looked.
  loc = locate_dataset("data/b.csv", root / "proj");
  VERIFY(!loc.found);
  VERIFY2(contains(loc.looked, "data/b.csv") && contains(loc.looked, " or "), loc.looked.c_str());
  const std::string msg = message_of<IoError>([&] {
    resolve_dataset({"csv", "data/b.csv", "y", "regression"}, root / "proj");
  });
  VERIFY2(contains(msg, "dataset 'data/b.csv' not found (looked in "), msg.c_str());
  // Then the current directory.
  const fs::path old = fs::current_path();
  fs::current_path(root);
  loc = locate_dataset("proj/data/a.csv", root / "elsewhere");
  fs::current_path(old);
  VERIFY(loc.found);
  COMPARE(loc.path, fs::path("proj/data/a.csv"));

  // Saved elsewhere, a project finds the dataset beside its old folder by a path from the new one.
  COMPARE(moved_dataset_path("data/a.csv", root / "proj", root / "elsewhere" / "deeper"),
          std::string("../../proj/data/a.csv"));
  COMPARE(moved_dataset_path("data/a.csv", root / "proj", root / "proj"), std::string("data/a.csv"));
  COMPARE(moved_dataset_path("data/a.csv", root / "proj", root / "proj" / "sub"), std::string("../data/a.csv"));
  // Not found beside the project, absolute, or no folder to move from: kept.
  COMPARE(moved_dataset_path("data/b.csv", root / "proj", root / "elsewhere"), std::string("data/b.csv"));
  COMPARE(moved_dataset_path("/abs/a.csv", root / "proj", root / "elsewhere"), std::string("/abs/a.csv"));
  COMPARE(moved_dataset_path("data/a.csv", "", root / "elsewhere"), std::string("data/a.csv"));
}

TEST(housingRunIsARegression) {
  const Graph g = load_project(kExamples / "housing_regression.plexus");
  TrainingRun run = make_training_run(g, {.project_dir = kExamples, .train_subset = 100});
  VERIFY(!run.compiled.classification);
  VERIFY(!run.trainer_options.classification);
  COMPARE(run.data.train->size(), int64_t(100));
  COMPARE(run.data.test->size(), int64_t(100));  // 20% of 500 rows
  COMPARE(run.data.info.input_shape, (Shape{8}));
  COMPARE(run.trainer_options.epochs, int(g.training.epochs));
  VERIFY(!run.scheduler);
  TrainingRun moved = std::move(run);  // everything sits behind pointers
  train::Trainer trainer(*moved.compiled.model, *moved.optimizer, *moved.train_loader, moved.eval_loader.get(),
                         [&] {
                           train::TrainerOptions o = moved.trainer_options;
                           o.epochs = 3;
                           return o;
                         }());
  const train::RunResult r = trainer.run();
  VERIFY2(r.status == train::RunStatus::Completed, r.message.c_str());
  VERIFY(r.history.back().eval_loss < r.history.front().train_loss);
}

TEST(badSettingsAreNamed) {
  Graph g = load_project(kExamples / "housing_regression.plexus");
  g.training.batch_size = 0;
  VERIFY(contains(message_of<ValueError>([&] { make_training_run(g, {.project_dir = kExamples}); }), "batch_size"));
  g.training.batch_size = 10;
  g.training.optimizer = "lbfgs";
  VERIFY(contains(message_of<ValueError>([&] { check_training_settings(g.training); }), "unknown optimizer 'lbfgs'"));
  g.training.optimizer = "sgd";
  g.training.schedule = "cosine";
  VERIFY(make_training_run(g, {.project_dir = kExamples}).scheduler);
  g.training.device = "tpu";
  VERIFY(contains(message_of<ValueError>([&] { check_training_settings(g.training); }), "device"));
}

TEST(weightsFilesRoundTripAndNameWhatIsWrong) {
  const fs::path dir = suite_subdir("weights");
  const Graph g = load_project(kExamples / "housing_regression.plexus");
  const DatasetInfo info{{8}, {}, 0};
  const CompiledGraph a = compile(g, info, 1), b = compile(g, info, 2);
  train::save_weights(dir / "a.safetensors", *a.model, {{"seed", "1"}});
  COMPARE(train::load_weights(dir / "a.safetensors", *b.model).at("seed"), std::string("1"));
  const auto pa = a.model->parameters(), pb = b.model->parameters();
  for (size_t i = 0; i < pa.size(); ++i) COMPARE(pa[i].to_vector(), pb[i].to_vector());

  Graph other = g;
  other.find("fc1")->params["out_features"] = int64_t(16);
  const CompiledGraph c = compile(other, info, 1);
  // fc2.bias fits (shape [32]) and differs from the file's: a partial load would change it.
  const auto before = c.model->parameters()[3].to_vector();
  VERIFY(before != pa[3].to_vector());
  const std::string msg = message_of<ShapeError>([&] { train::load_weights(dir / "a.safetensors", *c.model); });
  VERIFY2(contains(msg, "tensor 'fc1.weight' has shape [64, 8], the model expects [16, 8]"), msg.c_str());
  // Nothing changed: a failed load leaves the model as it was.
  COMPARE(c.model->parameters()[3].to_vector(), before);
}

