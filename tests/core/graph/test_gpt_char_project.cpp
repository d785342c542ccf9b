// bench/projects/gpt_char_6x384.plexus, the GPT-style model of scripts/bench-gpu-models: it
// validates against the names data's shapes, and its size and compute are those worked out by
// hand for L = 6 blocks of width E = 384 over T = 256 characters of a V = 54 vocabulary, which
// the PyTorch twin (bench/reference/torch_gpu_models.py) builds too.
#include <filesystem>
#include <string>

#include "graph/compute.h"
#include "graph/dataset_info.h"
#include "graph/project.h"
#include "graph/validate.h"
#include "layers/compiler.h"
#include "support/check.h"

using namespace plexus;
using namespace plexus::graph;

namespace {

constexpr double L = 6, E = 384, T = 256, V = 54;
const DatasetInfo kNames{{256}, {256}, 54};  // windows of 256 characters, next characters as classes

Graph gpt() { return load_project(PLEXUS_SOURCE_DIR "/bench/projects/gpt_char_6x384.plexus"); }

}  // namespace

TEST(validatesAgainstTheNamesData) {
  const Graph g = gpt();
  const Validation v = validate(g, &kNames);
  VERIFY2(v.problems.empty(), v.problems.empty() ? "" : v.problems[0].message.c_str());
  COMPARE(g.training.batch_size, int64_t(64));
  // The names data's vocabulary is what the embedding and the output layer are sized for.
  const std::string names = PLEXUS_SOURCE_DIR "/data/names/names.txt";
  if (!std::filesystem::exists(names)) return;  // scripts/fetch-names not run
  const DatasetInfo real = describe_dataset(resolve_dataset(g.dataset, PLEXUS_SOURCE_DIR));
  VERIFY(real.input_shape == kNames.input_shape);
  COMPARE(real.classes, kNames.classes);
}

// Per block: two LayerNorms (2E each), attention (in_proj 3E x E + 3E, out_proj E x E + E) and
// the MLP (E x 4E + 4E, 4E x E + E); around them the token and position tables, the last
// LayerNorm and the E x V output layer: 10,787,382.
TEST(parameterCountByHand) {
  const double block = 2 * 2 * E + (4 * E * E + 4 * E) + (E * 4 * E + 4 * E) + (4 * E * E + E);
  const double by_hand = V * E + T * E + L * block + 2 * E + (E * V + V);
  COMPARE(by_hand, 10787382.0);
  const layers::CompiledGraph compiled = layers::compile(gpt(), kNames, 1);
  int64_t parameters = 0;
  for (const Tensor& p : compiled.model->parameters()) parameters += p.numel();
  COMPARE(double(parameters), by_hand);
}

// Per example and block: attention's projections (4 T E^2 multiply-adds) and its causal T x T
// products counted in full (2 T^2 E), the MLP's 8 T E^2; then the output layer's T E V. Every
// product sits after the learned embedding, so training computes 6 FLOPs a multiply-add.
TEST(computeByHand) {
  const Graph g = gpt();
  const ComputeEstimate c = estimate_compute(GraphIndex(g), validate(g, &kNames).shapes);
  const double forward = L * (12 * T * E * E + 2 * T * T * E) + T * E * V;
  COMPARE(c.forward_macs, forward);
  COMPARE(c.training_flops, 6 * forward);  // 18.15 GFLOP per example
  COMPARE(c.nodes.size(), size_t(3 * L + 1));
}
