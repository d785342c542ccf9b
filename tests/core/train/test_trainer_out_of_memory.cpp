// A training run whose step cannot get memory ends with a Failed event that names the epoch, the
// batch, where in the step (the forward pass of which node, the backward pass of which op, the
// loading of the batch) and the size, instead of aborting; the model and the process stay usable.
// The refusals come from the allocator's test hook (util/out_of_memory.h), exact on every machine
// and under the sanitizers; tests/core/tensor/test_out_of_memory.cpp makes real ones.
#include <new>
#include <string>
#include <vector>

#include "data/dataloader.h"
#include "layers/compiler.h"
#include "optim/factory.h"
#include "plexus.h"
#include "support/check.h"
#include "support/graph_fixture.h"
#include "support/test_support.h"
#include "train/trainer.h"
#include "util/out_of_memory.h"

using namespace plexus;
using testing::edge;
using testing::node;

namespace {

// Input [4] -> Linear 'wide' (4096) -> ReLU -> Linear (3) -> CrossEntropy. At batch 64 the wide
// layer's output, [64, 4096] float32, is 1 MiB, and nothing else in a step reaches 512 KiB.
graph::Graph wide_mlp() {
  graph::Graph g;
  g.nodes = {node("in", "Input"), node("fc1", "Linear", {{"out_features", int64_t(4096)}}), node("act", "ReLU"),
             node("fc2", "Linear", {{"out_features", int64_t(3)}}), node("loss", "CrossEntropy")};
  g.nodes[1].name = "wide";
  g.edges = {edge("in", "x", "fc1"), edge("fc1", "output", "act"), edge("act", "output", "fc2"),
             edge("fc2", "output", "loss"), edge("in", "y", "loss", "target")};
  return g;
}
constexpr uint64_t kRefuseFrom = 512 << 10;

std::shared_ptr<data::TensorDataset> points(int64_t n) {
  Generator gen(7);
  std::vector<float> labels;
  for (int64_t i = 0; i < n; ++i) labels.push_back(float(i % 3));
  return std::make_shared<data::TensorDataset>(randn({n, 4}, &gen), from_vector(labels, {n}));
}

struct HookOff {
  ~HookOff() { refuse_allocations_from(0); }
};

// A compiled wide_mlp with its optimizer and a loader of 128 points in batches of 64.
struct Run {
  graph::Graph graph = wide_mlp();
  layers::CompiledGraph compiled = layers::compile(graph, {{4}, {}, 3, 0}, 1);
  std::unique_ptr<optim::Optimizer> opt =
      optim::make_optimizer({.optimizer = "sgd", .lr = 0.1}, compiled.model->parameters());
  data::DataLoader loader{points(128), {.batch_size = 64}};

  train::TrainerOptions options() const {
    train::TrainerOptions o;
    o.epochs = 2;
    o.loss = compiled.loss;
    o.classification = true;
    for (const graph::Node& n : graph.nodes) o.nodes[n.id] = {n.type, n.label()};
    return o;
  }
  // Runs a trainer; the message of its Failed event, "" when none came.
  std::pair<train::RunResult, std::string> train(const train::TrainerOptions& o, data::DataLoader& from) {
    train::Trainer trainer(*compiled.model, *opt, from, nullptr, o);
    std::string failed;
    trainer.set_callback([&](const train::Event& e) {
      if (const auto* f = std::get_if<train::Failed>(&e)) failed = f->message;
    });
    train::RunResult r = trainer.run();
    return {std::move(r), failed};
  }
  std::vector<std::vector<float>> weights() const {
    std::vector<std::vector<float>> out;
    for (const Tensor& p : compiled.model->parameters()) out.push_back(p.to_vector());
    return out;
  }
};

}  // namespace

TEST(aForwardPassOutOfMemoryNamesTheStepTheNodeAndTheSize) {
  const HookOff off;
  Run run;
  const auto before = run.weights();
  refuse_allocations_from(kRefuseFrom);
  const auto [result, failed] = run.train(run.options(), run.loader);
  COMPARE(result.status, train::RunStatus::Failed);
  VERIFY_CONTAINS(result.message,
                  "out of memory at epoch 1, batch 1, in the forward pass of Linear 'wide': cannot allocate 1.0 MiB "
                  "for a tensor of shape [64, 4096] float32 (the machine has ");
  COMPARE(failed, result.message);
  VERIFY(run.weights() == before);  // no step was taken
  // The model, the optimizer and the allocator go on: the same run now trains to the end.
  const auto [again, none] = run.train(run.options(), run.loader);
  COMPARE(again.status, train::RunStatus::Completed);
  COMPARE(again.epochs_completed, 2);
  VERIFY(none.empty());
}

TEST(aBackwardPassOutOfMemoryNamesTheGradient) {
  const HookOff off;
  Run run;
  train::TrainerOptions o = run.options();
  // The loss of the second batch turns the hook on: its forward pass is done, its backward not.
  int batches = 0;
  o.loss = [loss = run.compiled.loss, &batches](const Tensor& out, const Tensor& target) {
    if (++batches == 2) refuse_allocations_from(kRefuseFrom);
    return loss(out, target);
  };
  const auto [result, failed] = run.train(o, run.loader);
  COMPARE(result.status, train::RunStatus::Failed);
  // fc2's gradient with respect to its input, [64, 4096], is the first 1 MiB the backward pass asks for.
  VERIFY_CONTAINS(result.message,
                  "out of memory at epoch 1, batch 2, in the backward pass (the gradient of linear): cannot allocate "
                  "1.0 MiB for a tensor of shape [64, 4096] float32 (");
  COMPARE(failed, result.message);
}

TEST(aBatchThatCannotBeLoadedSaysSo) {
  // A dataset whose batches come from a container that throws std::bad_alloc: the size is not
  // known, the step is.
  struct Refusing : data::Dataset {
    std::shared_ptr<data::TensorDataset> inner = points(128);
    int64_t size() const override { return inner->size(); }
    data::Example get(int64_t i) const override { return inner->get(i); }
    data::Example get_batch(const std::vector<int64_t>& indices) const override {
      if (indices.front() >= 64) throw std::bad_alloc();
      return inner->get_batch(indices);
    }
  };
  Run run;
  data::DataLoader loader(std::make_shared<Refusing>(), {.batch_size = 64});
  const auto [result, failed] = run.train(run.options(), loader);
  COMPARE(result.status, train::RunStatus::Failed);
  VERIFY_CONTAINS(result.message,
                  "out of memory at epoch 1, batch 2, loading the batch: the system refused an allocation");
  COMPARE(failed, result.message);
}
