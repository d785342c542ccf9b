// model_outputs: what a project's model computes on its first test examples, for the
// cross-checks of exported code (tests/reference/pytorch_export_crosscheck.py).
//
//   model_outputs PROJECT OUT_DIR [--count N]
//   model_outputs --compare EXPECTED GOT [TOLERANCE]
//
// Writes OUT_DIR/<project's file name>, the project with its dataset's path made absolute (and
// overridden, below), which the exporters are to read; OUT_DIR/weights.safetensors, the
// project's initial weights (its seed) moved by U(-0.1, 0.1) each and its running variances drawn from [0.5, 1.5], so that every parameter and
// buffer matters to the outputs, and OUT_DIR/outputs.safetensors: "x", the first N (default
// 100) examples of the test split (the training split for a dataset without one) in raw units,
// and "output.<i>", the model's prediction for each loss node i in graph order, computed as
// `plexus-cli predict` and `eval` compute them (session::TrainedModel with those weights).
// Exits 77 ("skipped: ...") when the project's dataset cannot be read. An image_folder project reads
// the folder PLEXUS_TEST_IMAGE_FOLDER names instead of its own, where that is set.
// --compare: GOT (an exported program's outputs.safetensors) must hold every "output.<i>" of
// EXPECTED with its shape, each value within TOLERANCE (1e-4: torch's kernels are not the core's)
// of the largest magnitude (at least 1) of the expected tensor; exit 1, naming the tensor, when not.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>

#include "graph/dataset_info.h"
#include "graph/project.h"
#include "io/safetensors.h"
#include "layers/compiler.h"
#include "session/trained_model.h"
#include "train/checkpoint.h"
#include "util/error.h"

namespace fs = std::filesystem;
using namespace plexus;

namespace {

int compare(const fs::path& expected_file, const fs::path& got_file, double tolerance) {
  const io::SafetensorsFile expected = io::load_safetensors(expected_file), got = io::load_safetensors(got_file);
  double worst = 0;
  for (const auto& [name, e] : expected.tensors) {
    if (!name.starts_with("output.")) continue;
    const Tensor* g = got.find(name);
    if (!g || g->shape() != e.shape()) {
      std::printf(
          "FAIL %s: %s %s\n", got_file.string().c_str(), name.c_str(),
          g ? ("has shape " + to_string(g->shape()) + ", expected " + to_string(e.shape())).c_str() : "is missing");
      return 1;
    }
    const std::vector<float> ev = e.to_vector(), gv = g->to_vector();
    double scale = 1, difference = 0;
    for (float v : ev) scale = std::max(scale, double(std::abs(v)));
    for (size_t i = 0; i < ev.size(); ++i) difference = std::max(difference, double(std::abs(ev[i] - gv[i])));
    worst = std::max(worst, difference / scale);
  }
  const bool ok = worst <= tolerance;
  std::printf("%s %s: largest difference %.2g of the largest magnitude\n", ok ? "ok  " : "FAIL",
              got_file.string().c_str(), worst);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if ((argc == 4 || argc == 5) && std::strcmp(argv[1], "--compare") == 0) try {
      return compare(argv[2], argv[3], argc == 5 ? std::atof(argv[4]) : 1e-4);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "model_outputs: %s\n", e.what());
      return 1;
    }
  if (argc != 3 && !(argc == 5 && std::strcmp(argv[3], "--count") == 0)) {
    std::fprintf(stderr, "usage: model_outputs PROJECT OUT_DIR [--count N] | --compare EXPECTED GOT\n");
    return 2;
  }
  const fs::path project = argv[1], out = argv[2];
  const int64_t count = argc == 5 ? std::atoll(argv[4]) : 100;
  try {
    graph::Graph g = graph::load_project(project);
    // A folder of pictures is not in a fresh clone: ctest names one it writes (tests/CMakeLists.txt).
    const char* folder = std::getenv("PLEXUS_TEST_IMAGE_FOLDER");
    if (g.dataset.kind == "image_folder" && folder && *folder) g.dataset.path = folder;
    graph::DatasetBinding binding;
    graph::DatasetInfo info;
    try {
      binding = graph::resolve_dataset(g.dataset, project.parent_path());
      info = graph::describe_dataset(binding, g.training.seed, g.training.validation_fraction);
    } catch (const Error& e) {
      std::printf("skipped: %s: its dataset cannot be read: %s\n", project.string().c_str(), e.what());
      return 77;
    }
    fs::create_directories(out);
    // The project as read here, its dataset's path made absolute, for the exporter to read in turn.
    g.dataset.path = fs::absolute(binding.path).string();
    graph::save_project(out / project.filename(), g);
    const layers::CompiledGraph c = layers::compile(g, info, g.training.seed);
    Generator gen(g.training.seed + 1);
    for (auto& [name, t] : c.model->state()) {
      if (name.ends_with("num_batches_tracked")) continue;
      const bool variance = name.ends_with("running_var");
      const Tensor noise = variance ? uniform(t.shape(), 0.5f, 1.5f, &gen) : uniform(t.shape(), -0.1f, 0.1f, &gen);
      float* v = t.data();
      for (int64_t i = 0; i < t.numel(); ++i) v[i] = variance ? noise.data()[i] : v[i] + noise.data()[i];
    }
    const fs::path weights = out / "weights.safetensors";
    train::save_weights(weights, *c.model, {{"project", project.filename().string()}});

    const session::TrainedModel m = session::load_trained_model(g, weights, {project.parent_path()});
    const graph::DatasetSplits splits =
        graph::open_dataset(binding, g.training.seed, g.training.validation_fraction, m.preparation);
    const auto& examples = splits.test ? splits.test : splits.train;
    std::vector<int64_t> first(size_t(std::min(count, examples->size())));
    std::iota(first.begin(), first.end(), int64_t(0));
    const Tensor x = examples->get_batch(first).input;
    io::NamedTensors tensors{{"x", x}};
    const std::vector<Tensor> predictions = m.predictions(x);
    for (size_t i = 0; i < predictions.size(); ++i) tensors.emplace_back("output." + std::to_string(i), predictions[i]);
    io::save_safetensors(out / "outputs.safetensors", tensors);
    std::printf("%s: %zu examples, %zu outputs\n", project.string().c_str(), first.size(), predictions.size());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "model_outputs: %s\n", e.what());
    return 1;
  }
}
