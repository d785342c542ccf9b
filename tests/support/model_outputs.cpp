// model_outputs: what a project's model computes on its first test examples, for the
// cross-checks of exported code (tests/reference/pytorch_export_crosscheck.py).
//
//   model_outputs PROJECT OUT_DIR [--count N]
//
// Writes OUT_DIR/weights.safetensors, the project's initial weights (its seed) moved by
// U(-0.1, 0.1) each and its running variances drawn from [0.5, 1.5], so that every parameter and
// buffer matters to the outputs, and OUT_DIR/outputs.safetensors: "x", the first N (default
// 100) examples of the test split (the training split for a dataset without one) in raw units,
// and "output.<i>", the model's prediction for each loss node i in graph order, computed as
// `plexus-cli predict` and `eval` compute them (session::TrainedModel with those weights).
// Exits 77 ("skipped: ...") when the project's dataset cannot be read.
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

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 5 && std::strcmp(argv[3], "--count") == 0)) {
    std::fprintf(stderr, "usage: model_outputs PROJECT OUT_DIR [--count N]\n");
    return 2;
  }
  const fs::path project = argv[1], out = argv[2];
  const int64_t count = argc == 5 ? std::atoll(argv[4]) : 100;
  try {
    const graph::Graph g = graph::load_project(project);
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
