// The validation split (graph::open_dataset), the normalisation a run computes and stores
// (session/run.h, session/run_folder.h), and trained models loaded from checkpoints and weights
// files (session/trained_model.h).
#include "support/check.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "data/csv.h"
#include "data/synthetic_digits.h"
#include "graph/dataset_info.h"
#include "graph/project.h"
#include "io/safetensors.h"
#include "ops/ops.h"
#include "session/run.h"
#include "session/run_folder.h"
#include "session/trained_model.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "train/checkpoint.h"
#include "util/error.h"
#include "util/text.h"

using namespace plexus;
using plexus::testing::contains;
using plexus::testing::message_of;
namespace fs = std::filesystem;

namespace {

const fs::path kExamples = fs::path(PLEXUS_SOURCE_DIR) / "examples";

// Indices of a split into the training file: a Subset's, or every row of a CSV split (by its
// line numbers, unique per row).
std::vector<int64_t> lines_of(const data::Dataset& d) {
  if (const auto* s = dynamic_cast<const data::Subset*>(&d)) return s->indices();
  if (const auto* c = dynamic_cast<const data::CsvDataset*>(&d)) return c->row_lines();
  return {};
}

// A temporary folder holding 500 generated digits (100 of them for testing) in digits/, made once.
const fs::path& dir() {
  struct Folder {
    testing::TempDir tmp;
    Folder() { data::write_synthetic_digits(tmp.file("digits"), 500, 100); }
  };
  static const Folder folder;
  return folder.tmp.path();
}

// The tiny MLP of examples/mnist_mlp.plexus on synthetic digits in `dir`.
graph::Graph tiny_mlp(const fs::path& dir) {
  graph::Graph g = graph::load_project(kExamples / "mnist_mlp.plexus");
  g.dataset.path = (dir / "digits").string();
  g.training.epochs = 1;
  g.training.batch_size = 50;
  return g;
}

}  // namespace

TEST(imageSplitsAreDisjointSeededAndSized) {
  const graph::DatasetBinding b{.kind = "mnist", .path = (dir() / "digits").string()};
  const graph::DatasetSplits s = graph::open_dataset(b, 7, 0.2);
  COMPARE(s.train->size(), int64_t(400));
  VERIFY(s.validation);
  COMPARE(s.validation->size(), int64_t(100));
  COMPARE(s.test->size(), int64_t(100));
  const std::vector<int64_t> a = lines_of(*s.train), v = lines_of(*s.validation);
  std::set<int64_t> all(a.begin(), a.end());
  all.insert(v.begin(), v.end());
  COMPARE(all.size(), size_t(500));  // together every training image, once
  // The same seed draws the same split; another seed another.
  COMPARE(lines_of(*graph::open_dataset(b, 7, 0.2).validation), v);
  VERIFY(lines_of(*graph::open_dataset(b, 8, 0.2).validation) != v);
  // Nothing held out: no validation split.
  VERIFY(!graph::open_dataset(b, 7, 0).validation);
  COMPARE(graph::open_dataset(b, 7, 0).train->size(), int64_t(500));
}

TEST(csvSplitsStayRawAndHoldOutValidationFromTheTrainingPart) {
  const graph::Graph g = graph::load_project(kExamples / "housing_regression.plexus");
  const graph::DatasetBinding b = graph::resolve_dataset(g.dataset, kExamples);
  const graph::DatasetSplits s = graph::open_dataset(b, 1, 0.25);
  COMPARE(s.test->size(), int64_t(100));  // 20 % of 500 rows
  COMPARE(s.train->size(), int64_t(300));
  COMPARE(s.validation->size(), int64_t(100));
  std::set<int64_t> rows;
  for (const auto* d : {s.train.get(), s.validation.get(), s.test.get()})
    for (int64_t line : lines_of(*d)) VERIFY(rows.insert(line).second);
  // Raw: the first training row's features are the file's numbers, not standardised ones.
  data::CsvOptions options;
  options.target = b.target;
  const data::CsvDataset full(b.path, options);
  const auto& train = dynamic_cast<const data::CsvDataset&>(*s.train);
  const int64_t line = train.row_lines()[0];
  const std::vector<int64_t> lines = full.row_lines();
  const auto at = std::find(lines.begin(), lines.end(), line) - lines.begin();
  COMPARE(train.get(0).input.to_vector(), full.get(at).input.to_vector());
}

TEST(aValidationFractionThatLeavesNothingToTrainOnIsRefused) {
  graph::Graph g = tiny_mlp(dir());
  g.training.validation_fraction = 0.95;
  COMPARE(message_of<ValueError>([&] { session::make_training_run(g); }),
          std::string("training: validation_fraction must be between 0 and 0.9, got 0.95"));
}

TEST(runsNormaliseWithTheTrainingSplit) {
  const graph::Graph g = tiny_mlp(dir());
  session::TrainingRun run = session::make_training_run(g, {.project_dir = {}, .train_subset = 50});
  COMPARE(run.data.train->size(), int64_t(50));
  COMPARE(run.data.validation->size(), int64_t(50));
  // The mean of the whole training split (450 images), not of the subset trained on.
  const graph::DatasetSplits s = graph::open_dataset(graph::resolve_dataset(g.dataset, {}), 1, 0.1);
  double sum = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < s.train->size(); ++i)
    for (float v : s.train->get(i).input.to_vector()) sum += v, ++n;
  COMPARE(run.normalization.mean.size(), size_t(1));
  VERIFY(std::abs(run.normalization.mean[0] - sum / double(n)) < 1e-6);
  COMPARE(run.class_names, (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
}

TEST(checkpointsAndWeightsFilesLoadWithTheRunsInputs) {
  const graph::Graph g = tiny_mlp(dir());
  session::TrainingRun run = session::make_training_run(g);
  const fs::path folder = dir() / "run1";
  session::RunCheckpoints checkpoints(folder, g, run);
  train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(), run.trainer_options);
  t.set_test_loader(run.test_loader.get());
  const train::RunResult result = t.run();
  VERIFY(result.test.has_value());
  checkpoints.finish(result);

  const session::TrainedModel m = session::load_trained_model(g, folder / "final.safetensors");
  VERIFY(m.kind == session::WeightsKind::Checkpoint);
  VERIFY(m.normalization == run.normalization);
  COMPARE(m.class_names, run.class_names);
  COMPARE(m.metadata.at("test_accuracy"), shortest_text(result.test->eval_accuracy));
  // Raw images through forward() give the run's own outputs on normalised inputs.
  const data::Example batch = run.data.test->get_batch({0, 1, 2, 3});
  const Tensor raw = batch.input;
  run.compiled.model->eval();
  const Tensor expected = (*run.compiled.model)(run.normalization.apply(raw));
  COMPARE(m.forward(raw).to_vector(), expected.to_vector());

  // A weights file with the same metadata: the same model, no dataset needed.
  train::Metadata meta;
  session::write_model_metadata(meta, run.data.info, run.normalization, run.class_names, run.feature_names);
  train::save_weights(dir() / "w.safetensors", *run.compiled.model, meta);
  graph::Graph moved = g;
  moved.dataset.path = (dir() / "gone").string();
  const session::TrainedModel w = session::load_trained_model(moved, dir() / "w.safetensors");
  VERIFY(w.kind == session::WeightsKind::Weights);
  COMPARE(w.forward(raw).to_vector(), expected.to_vector());

  // A bare weights file (plexus-cli init) takes its normalisation from the dataset, as the run did.
  train::save_weights(dir() / "bare.safetensors", *run.compiled.model);
  const session::TrainedModel bare = session::load_trained_model(g, dir() / "bare.safetensors");
  VERIFY(bare.normalization == run.normalization);
  COMPARE(bare.forward(raw).to_vector(), expected.to_vector());
  const std::string missing =
      message_of<IoError>([&] { session::load_trained_model(moved, dir() / "bare.safetensors"); });
  VERIFY2(contains(missing, "not found") && contains(missing, "bare.safetensors does not hold"), missing.c_str());

  // The project inside a checkpoint is the run's, without the editor's view.
  const std::optional<graph::Graph> inside = session::project_in_checkpoint(folder / "final.safetensors");
  VERIFY(inside.has_value());
  COMPARE(inside->nodes, g.nodes);
  VERIFY(!session::project_in_checkpoint(dir() / "bare.safetensors").has_value());
}

TEST(csvCheckpointsNameTheirFeatureColumns) {
  graph::Graph g = graph::load_project(kExamples / "housing_regression.plexus");
  g.dataset.path = (kExamples / "data" / "housing.csv").string();
  g.training.epochs = 1;
  session::TrainingRun run = session::make_training_run(g);
  COMPARE(run.feature_names, dynamic_cast<const data::CsvDataset&>(*run.data.train).feature_names());
  COMPARE(int64_t(run.feature_names.size()), run.data.info.input_shape[0]);
  session::RunCheckpoints checkpoints(dir() / "housing-run", g, run);
  train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(), run.trainer_options);
  checkpoints.finish(t.run());
  // Without the data file the checkpoint still says which column is which.
  graph::Graph moved = g;
  moved.dataset.path = (dir() / "gone.csv").string();
  const session::TrainedModel m = session::load_trained_model(moved, dir() / "housing-run" / "final.safetensors");
  COMPARE(m.feature_names, run.feature_names);
  VERIFY(m.class_names.empty());
  // A checkpoint naming more columns than the model takes is refused.
  io::NamedTensors tensors;
  for (const auto& [name, tensor] : run.compiled.model->state()) tensors.emplace_back(name, tensor);
  train::Metadata meta;
  session::write_model_metadata(meta, run.data.info, run.normalization, {}, {"a", "b"});
  io::save_safetensors(dir() / "two_names.safetensors", tensors, meta);
  const std::string why =
      message_of<IoError>([&] { session::load_trained_model(moved, dir() / "two_names.safetensors"); });
  VERIFY2(contains(why, "names 2 feature columns, the model's input is [8]"), why.c_str());
}

TEST(malformedFilesAreRefusedNamingWhatIsWrong) {
  const graph::Graph g = tiny_mlp(dir());
  session::TrainingRun run = session::make_training_run(g);
  auto write = [&](const std::string& name, const io::NamedTensors& tensors, const io::SafetensorsMetadata& meta) {
    io::save_safetensors(dir() / name, tensors, meta);
    return dir() / name;
  };
  io::NamedTensors good;
  for (const auto& [name, t] : run.compiled.model->state()) good.emplace_back(name, t);

  // A tensor under another name, or of another shape.
  io::NamedTensors renamed = good;
  renamed[0].first = "fc9.weight";
  std::string m = message_of<IoError>([&] { session::load_trained_model(g, write("renamed.safetensors", renamed, {})); });
  VERIFY2(contains(m, "renamed.safetensors") && contains(m, "'" + good[0].first + "' of the model is missing"), m.c_str());
  io::NamedTensors reshaped = good;
  reshaped[0].second = zeros({3, 3});
  m = message_of<ShapeError>([&] { session::load_trained_model(g, write("reshaped.safetensors", reshaped, {})); });
  VERIFY2(contains(m, "'" + good[0].first + "' has shape [3, 3]"), m.c_str());

  // Metadata that does not parse or disagrees with the model.
  m = message_of<IoError>([&] {
    session::load_trained_model(g, write("meta1.safetensors", good, {{"input_mean", "[0.1"}, {"input_std", "[1]"}}));
  });
  VERIFY2(contains(m, "metadata 'input_mean' is not a JSON array of numbers"), m.c_str());
  m = message_of<IoError>([&] {
    session::load_trained_model(g, write("meta2.safetensors", good, {{"input_mean", "[0.1]"}}));
  });
  VERIFY2(contains(m, "has 'input_mean' without 'input_std'"), m.c_str());
  m = message_of<IoError>([&] {
    session::load_trained_model(g, write("meta3.safetensors", good, {{"input_mean", "[0.1]"}, {"input_std", "[0]"}}));
  });
  VERIFY2(contains(m, "not positive"), m.c_str());
  m = message_of<IoError>([&] {
    session::load_trained_model(g, write("meta4.safetensors", good, {{"input_shape", "[8]"}, {"classes", "0"}}));
  });
  VERIFY2(contains(m, "was trained for inputs [8] and regression targets, but the project's dataset has inputs "
                      "[1, 28, 28] and 10 classes"),
          m.c_str());

  // A truncated file.
  const fs::path whole = write("whole.safetensors", good, {});
  std::string bytes;
  {
    std::ifstream in(whole, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(dir() / "cut.safetensors", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  m = message_of<IoError>([&] { session::load_trained_model(g, dir() / "cut.safetensors"); });
  VERIFY2(contains(m, "cut.safetensors"), m.c_str());

  // forward() checks the shape of what it is given.
  const session::TrainedModel ok = session::load_trained_model(g, whole);
  m = message_of<ShapeError>([&] { ok.forward(zeros({2, 784})); });
  COMPARE(m, std::string("the model takes inputs [N, 1, 28, 28], got shape [2, 784]"));
}

