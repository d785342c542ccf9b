// Image folders as a project's dataset, through the same path plexus-cli train and the GUI take
// (session::make_training_run, train::Trainer): the splits a folder gives, augmentation and
// standardisation, and every kind of bad input, strict (a clear error naming the file or
// folder) and skipped (counted and listed, the run goes on).
#include "support/check.h"

#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>

#include "data/image_file.h"
#include "data/synthetic_digits.h"
#include "graph/dataset_info.h"
#include "session/data_pipeline.h"
#include "session/reconstructions.h"
#include "session/run.h"
#include "train/event_json.h"
#include "train/trainer.h"
#include "util/error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using namespace plexus;
using plexus::testing::contains;
namespace fs = std::filesystem;

namespace {

// `per_class` synthetic 28x28 digits of classes 0..classes-1 as PNGs in dir/<class>/.
void write_digits(const fs::path& dir, int per_class, int classes = 10, uint32_t seed = 7) {
  const data::SyntheticDigits d = data::make_synthetic_digits(int64_t(per_class) * 30, seed);  // ~3x per class
  std::vector<int> written(size_t(classes), 0);
  for (size_t i = 0; i < d.labels.size(); ++i) {
    const int c = d.labels[i];
    if (c >= classes || written[size_t(c)] == per_class) continue;
    data::Image image{28, 28, 1, std::vector<uint8_t>(d.images.begin() + long(i * 784), d.images.begin() + long((i + 1) * 784))};
    fs::create_directories(dir / std::to_string(c));
    data::write_png(dir / std::to_string(c) / (std::to_string(written[size_t(c)]++) + ".png"), image);
  }
}

// Input -> Flatten -> Linear(classes) -> CrossEntropy on the folder.
graph::Graph softmax(const fs::path& folder, int64_t classes = 10) {
  graph::Graph g;
  g.nodes = {{"in", "Input", "in", {}, {}},
             {"flat", "Flatten", "flat", {}, {}},
             {"fc", "Linear", "fc", {{"out_features", classes}}, {}},
             {"loss", "CrossEntropy", "loss", {}, {}}};
  g.edges = {{{"in", "x"}, {"flat", "input"}}, {{"flat", "output"}, {"fc", "input"}},
             {{"fc", "output"}, {"loss", "input"}}, {{"in", "y"}, {"loss", "target"}}};
  g.dataset = {.kind = "image_folder", .path = folder.string()};
  g.training.optimizer = "adam";
  g.training.lr = 0.01;
  g.training.batch_size = 20;
  g.training.epochs = 1;
  return g;
}

train::RunResult train_run(session::TrainingRun& run) {
  train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(), run.trainer_options);
  t.set_test_loader(run.test_loader.get());
  return t.run();
}

std::string error_of(const graph::Graph& g) {
  try {
    session::make_training_run(g);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// The suite's folder, where each test writes its image folders.
const fs::path& root() {
  static const testing::TempDir tmp;
  return tmp.path();
}

}  // namespace

// Loaders keep about kInMemoryPrefetchRows examples ahead of data in memory, at least 2 batches;
// an image folder's 2 batches.
TEST(loaderPrefetchByKind) {
  graph::DatasetBinding b;
  b.kind = "mnist";
  COMPARE(session::loader_prefetch(b, 100), session::kInMemoryPrefetchRows / 100);
  COMPARE(session::loader_prefetch(b, 1000), session::kInMemoryPrefetchRows / 1000);
  COMPARE(session::loader_prefetch(b, 100000), int64_t(2));
  b.kind = "image_folder";
  COMPARE(session::loader_prefetch(b, 100), int64_t(2));
}

TEST(splitsOfAPlainFolder) {
  const fs::path dir = root() / "plain";
  write_digits(dir, 20);
  const graph::Graph g = softmax(dir);
  const graph::DatasetInfo info = graph::describe_dataset(g.dataset);
  COMPARE(info.input_shape, (Shape{1, 28, 28}));
  COMPARE(info.classes, int64_t(10));
  session::TrainingRun run = session::make_training_run(g);
  // 200 pictures: 20% test, then 10% of the rest for validation.
  COMPARE(run.data.test->size(), int64_t(40));
  COMPARE(run.data.validation->size(), int64_t(16));
  COMPARE(run.data.train->size(), int64_t(144));
  COMPARE(run.data.info.examples, int64_t(200));
  COMPARE(run.class_names, (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
  COMPARE(run.normalization.mean.size(), size_t(1));
  VERIFY(run.normalization.std[0] > 0.1f);
  const train::RunResult r = train_run(run);
  COMPARE(int(r.status), int(train::RunStatus::Completed));
  VERIFY(r.history.back().eval_accuracy > 0.5);  // easy synthetic digits
}

TEST(splitFoldersAndRgb) {
  const fs::path dir = root() / "split";
  write_digits(dir / "train", 12, 3);
  write_digits(dir / "val", 4, 3, 8);
  write_digits(dir / "test", 5, 3, 9);
  graph::Graph g = softmax(dir, 3);
  g.dataset.color = "rgb";
  g.dataset.height = 16;
  g.dataset.width = 20;
  g.dataset.fit = "pad";
  COMPARE(graph::describe_dataset(g.dataset).input_shape, (Shape{3, 16, 20}));
  session::TrainingRun run = session::make_training_run(g);
  COMPARE(run.data.train->size(), int64_t(36));
  COMPARE(run.data.validation->size(), int64_t(12));
  COMPARE(run.data.test->size(), int64_t(15));
  COMPARE(run.normalization.mean.size(), size_t(3));  // per channel
  const data::Example e = run.data.train->get(0);
  COMPARE(e.input.shape(), (Shape{3, 16, 20}));
  COMPARE(int(train_run(run).status), int(train::RunStatus::Completed));
}

// Augmentation changes training batches only, reproducibly, and its own seed changes the draws.
TEST(augmentationOfTrainingBatches) {
  const fs::path dir = root() / "augment";
  write_digits(dir, 6, 3);
  graph::Graph g = softmax(dir, 3);
  g.dataset.augment_shift = 3;
  g.dataset.augment_rotation = 20;
  session::TrainingRun run = session::make_training_run(g);
  session::TrainingRun plain_run = session::make_training_run(softmax(dir, 3));
  const Tensor augmented = (*run.train_loader->begin()).inputs;
  const Tensor plain = (*plain_run.train_loader->begin()).inputs;
  COMPARE(augmented.shape(), plain.shape());
  VERIFY(augmented.to_vector() != plain.to_vector());
  COMPARE((*run.test_loader->begin()).inputs.to_vector(), (*plain_run.test_loader->begin()).inputs.to_vector());
  // Same settings, same batch; another augment seed, another batch.
  session::TrainingRun again = session::make_training_run(g);
  COMPARE((*again.train_loader->begin()).inputs.to_vector(), augmented.to_vector());
  g.dataset.augment_seed = 5;
  session::TrainingRun reseeded = session::make_training_run(g);
  VERIFY((*reseeded.train_loader->begin()).inputs.to_vector() != augmented.to_vector());
  // Nothing to augment for a CSV file; none asked for: none built.
  VERIFY(!session::training_augmentation({.kind = "csv", .path = "x.csv"}));
  VERIFY(!session::training_augmentation(softmax(dir, 3).dataset));
}

// Cheap checks when the folder is opened: strict refuses naming the file, skip lists it.
TEST(badFilesFoundByTheScan) {
  const fs::path dir = root() / "scan";
  write_digits(dir, 5, 3);
  testing::write_raw(dir / "1" / "empty.png", "");
  testing::write_raw(dir / "2" / "text.jpg", "this is not a picture");
  testing::write_raw(dir / "0" / "notes.txt", "a file of another kind");
  graph::Graph g = softmax(dir, 3);
  const std::string strict = error_of(g);
  VERIFY2(contains(strict, "empty.png") || contains(strict, "text.jpg"), strict.c_str());

  g.dataset.bad_files = "skip";
  session::TrainingRun run = session::make_training_run(g);
  const std::vector<data::SkippedFile> skipped = run.data.skipped();
  std::string listed;  // one line a file
  for (const data::SkippedFile& f : skipped) listed += (listed.empty() ? "" : "\n") + f.path + ": " + f.reason;
  COMPARE(skipped.size(), size_t(3));
  VERIFY2(contains(listed, "empty.png"), listed);
  VERIFY(contains(listed, "text.jpg"));
  VERIFY(contains(listed, "notes.txt"));
  COMPARE(run.data.info.examples, int64_t(15));
  COMPARE(int(train_run(run).status), int(train::RunStatus::Completed));
}

// A picture whose header is fine but whose data is cut off is found while training: strict
// stops the run with a message naming it (never a crash); skip stands another picture in.
TEST(truncatedPictureWhileTraining) {
  const fs::path dir = root() / "truncated";
  write_digits(dir, 5, 3);
  const std::string png = testing::read_all(dir / "1" / "0.png");
  testing::write_raw(dir / "1" / "cut.png", png.substr(0, png.size() / 2));
  graph::Graph g = softmax(dir, 3);
  g.training.validation_fraction = 0;
  // Standardising reads every picture (stats_sample >= 16): the run does not start.
  const std::string at_start = error_of(g);
  VERIFY2(contains(at_start, "cut.png") && contains(at_start, "truncated"), at_start.c_str());
  // Standardised on one picture, the run starts and stops at the batch that holds it.
  g.dataset.stats_sample = 1;
  session::TrainingRun run = session::make_training_run(g);
  const train::RunResult failed = train_run(run);
  COMPARE(int(failed.status), int(train::RunStatus::Failed));
  VERIFY2(contains(failed.message, "cut.png"), failed.message.c_str());
  g.dataset.stats_sample = 1000;

  g.dataset.bad_files = "skip";
  session::TrainingRun skipping = session::make_training_run(g);
  const train::RunResult done = train_run(skipping);
  COMPARE(int(done.status), int(train::RunStatus::Completed));
  const std::vector<data::SkippedFile> skipped = skipping.data.skipped();
  COMPARE(skipped.size(), size_t(1));
  VERIFY(contains(skipped[0].path, "cut.png"));
}

TEST(foldersThatCannotTrain) {
  const fs::path one = root() / "one-class";
  write_digits(one, 5, 1);
  VERIFY2(contains(error_of(softmax(one)), "at least 2 classes"), error_of(softmax(one)).c_str());
  VERIFY_THROWS(DataError, graph::describe_dataset(softmax(one).dataset));

  const fs::path empty_class = root() / "empty-class";
  write_digits(empty_class, 5, 2);
  fs::create_directories(empty_class / "9");
  const std::string strict = error_of(softmax(empty_class));
  VERIFY2(contains(strict, "9"), strict.c_str());
  graph::Graph skip = softmax(empty_class, 2);
  skip.dataset.bad_files = "skip";
  session::TrainingRun run = session::make_training_run(skip);
  COMPARE(run.class_names, (std::vector<std::string>{"0", "1"}));
  COMPARE(run.data.skipped().size(), size_t(1));

  VERIFY(contains(error_of(softmax(root() / "missing")), "missing"));
  // The editor's cheap description keeps the scan's layout rules.
  const fs::path val_only = root() / "val-only";
  write_digits(val_only / "val", 2, 2);
  try {
    graph::describe_dataset(softmax(val_only, 2).dataset);
    FAIL("a val/ folder without train/ was described");
  } catch (const DataError& e) {
    VERIFY2(contains(e.what(), "no 'train' folder"), e.what());
  }
  graph::Graph wrong = softmax(one);
  wrong.dataset.height = 0;
  COMPARE(error_of(wrong), std::string("dataset: height must be between 1 and 4096, got 0"));
}

// A picture for a trained model is prepared as the training pictures were.
TEST(picturesForATrainedModelMatchTraining) {
  const fs::path dir = root() / "predict";
  write_digits(dir, 3, 2);
  graph::Graph g = softmax(dir, 2);
  g.dataset.height = 12;
  g.dataset.width = 12;
  g.dataset.fit = "pad";
  session::TrainingRun run = session::make_training_run(g);
  const auto& folder = *run.data.image_folder;
  const std::string file = folder.train->files()[0];
  const Tensor expected = folder.train->get(0).input;
  const Tensor got = session::picture_input(data::read_image(file), g.dataset, {1, 12, 12});
  COMPARE(got.to_vector(), expected.to_vector());
}


// An autoencoder on a folder of pictures: after every epoch the first validation pictures and
// what the model made of each, in raw units, in the epoch's figures and metrics.jsonl.
TEST(autoencoderEpochsCarryTheirReconstructions) {
  const fs::path folder = root() / "reconstruct";
  write_digits(folder, 8, 3);
  graph::Graph g = softmax(folder, 16);
  g.nodes.push_back({"act", "ReLU", "act", {}, {}});
  g.nodes.push_back({"dec", "Linear", "dec", {{"out_features", int64_t(784)}}, {}});
  g.nodes.push_back({"image", "Reshape", "image", {{"shape", std::vector<int64_t>{1, 28, 28}}}, {}});
  g.nodes[3].type = "MSE";
  g.edges = {{{"in", "x"}, {"flat", "input"}},     {{"flat", "output"}, {"fc", "input"}},
             {{"fc", "output"}, {"act", "input"}},  {{"act", "output"}, {"dec", "input"}},
             {{"dec", "output"}, {"image", "input"}}, {{"image", "output"}, {"loss", "input"}},
             {{"in", "x"}, {"loss", "target"}}};
  g.training.epochs = 2;
  g.training.validation_fraction = 0.25;
  session::TrainingRun run = session::make_training_run(g);
  VERIFY(run.trainer_options.on_epoch_end);
  const train::RunResult r = train_run(run);
  VERIFY2(r.status == train::RunStatus::Completed, r.message.c_str());
  const int64_t shown = std::min<int64_t>(session::kReconstructionExamples, run.data.validation->size());
  VERIFY(shown > 1);
  for (const train::EpochEnd& e : r.history) {
    COMPARE(e.reconstructions.example, (std::vector<int64_t>{1, 28, 28}));
    COMPARE(e.reconstructions.inputs.size(), size_t(shown * 784));  // the validation split's first
    COMPARE(e.reconstructions.outputs.size(), e.reconstructions.inputs.size());
  }
  // The inputs are the validation pictures as read; the outputs the final model's, in raw units.
  const train::Reconstructions& last = r.history.back().reconstructions;
  std::vector<int64_t> first(static_cast<size_t>(shown));
  std::iota(first.begin(), first.end(), int64_t(0));
  const Tensor raw = run.data.validation->get_batch(first).input;
  COMPARE(last.inputs, raw.to_vector());
  run.compiled.model->eval();
  const std::vector<float> out =
      run.normalization.unapply((*run.compiled.model)(run.normalization.apply(raw))).to_vector();
  double worst = 0;
  for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, double(std::abs(out[i] - last.outputs[i])));
  VERIFY2(worst < 1e-5, std::to_string(worst));

  // metrics.jsonl keeps them to 1/1000 of the range, and refuses a torn set.
  nlohmann::json j = train::to_json(r.history.back(), false);
  const train::EpochEnd back = std::get<train::EpochEnd>(train::event_from_json(j, "metrics.jsonl:3"));
  COMPARE(back.reconstructions.example, last.example);
  for (size_t i = 0; i < last.outputs.size(); ++i) VERIFY(std::abs(back.reconstructions.outputs[i] - last.outputs[i]) <= 5.1e-4f);
  j["reconstructions"]["outputs"].erase(0);
  const std::string torn = testing::message_of<DataError>([&] { train::event_from_json(j, "metrics.jsonl:3"); });
  VERIFY2(contains(torn, "metrics.jsonl:3: reconstructions") && contains(torn, "outputs"), torn.c_str());

  // A classifier has none.
  session::TrainingRun classifier = session::make_training_run(softmax(folder, 3));
  VERIFY(!classifier.trainer_options.on_epoch_end);
}
