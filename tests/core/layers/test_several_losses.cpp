// Graphs with several loss nodes and losses against the input (autoencoders): validation, the
// compiled loss and its parts, their gradient, and the figures a Trainer reports for each.
#include "support/check.h"

#include <cmath>

#include "autograd/gradcheck.h"
#include "data/dataloader.h"
#include "data/dataset.h"
#include "graph/validate.h"
#include "layers/compiler.h"
#include "layers/lowering.h"
#include "optim/adam.h"
#include "ops/ops.h"
#include "session/run.h"
#include "support/test_support.h"
#include "train/event_json.h"
#include "train/trainer.h"

using namespace plexus;
using namespace plexus::graph;
using namespace plexus::layers;
using plexus::testing::contains;

namespace {

using P = std::map<std::string, ParamValue>;
const DatasetInfo kImages{{1, 6, 6}, {}, 3};

graph::Node node(std::string id, std::string type, P params = {}) {
  return graph::Node{id, std::move(type), id, std::move(params), {}};
}
graph::Edge edge(std::string from, std::string from_port, std::string to, std::string to_port = "input") {
  return graph::Edge{{std::move(from), std::move(from_port)}, {std::move(to), std::move(to_port)}};
}

// A classifier that also reconstructs its input: a shared encoder, a class head scored by
// CrossEntropy against the labels, and a decoder scored by MSE against the examples, weighted
// `weight`. The reconstruction loss comes first in the file: the classification is still the
// primary loss.
Graph classify_and_reconstruct(double weight = 0.5) {
  Graph g;
  g.nodes = {node("in", "Input"),
             node("rec", "MSE", P{{"loss_weight", weight}}),
             node("flat", "Flatten"),
             node("enc", "Linear", P{{"out_features", 8L}}),
             node("act", "Tanh"),
             node("cls", "Linear", P{{"out_features", 3L}}),
             node("ce", "CrossEntropy"),
             node("dec", "Linear", P{{"out_features", 36L}}),
             node("image", "Reshape", P{{"shape", std::vector<int64_t>{1, 6, 6}}})};
  g.edges = {edge("in", "x", "flat"),         edge("flat", "output", "enc"), edge("enc", "output", "act"),
             edge("act", "output", "cls"),     edge("cls", "output", "ce"),   edge("in", "y", "ce", "target"),
             edge("act", "output", "dec"),     edge("dec", "output", "image"), edge("image", "output", "rec"),
             edge("in", "x", "rec", "target")};
  return g;
}

// An autoencoder: Flatten -> Linear(8) -> Tanh -> Linear(36) -> Reshape, MSE against x.
Graph autoencoder() {
  Graph g = classify_and_reconstruct(1.0);
  std::erase_if(g.nodes, [](const graph::Node& n) { return n.id == "cls" || n.id == "ce"; });
  std::erase_if(g.edges, [](const graph::Edge& e) { return e.to.node == "cls" || e.to.node == "ce"; });
  return g;
}

Tensor images(int64_t n, uint64_t seed) {
  Generator gen(seed);
  return uniform({n, 1, 6, 6}, -1.f, 1.f, &gen);
}
Tensor labels(int64_t n) {
  std::vector<float> y;
  for (int64_t i = 0; i < n; ++i) y.push_back(float(i % 3));
  return from_vector(y, {n});
}

std::string first_problem(const Graph& g, const std::string& node_id) {
  for (const Problem& p : validate(g, &kImages).problems)
    if (p.node == node_id) return to_string(p);
  return "";
}

}  // namespace

TEST(theLossIsTheWeightedSumOfEveryLossNode) {
  const Graph g = classify_and_reconstruct(0.5);
  const CompiledGraph c = compile(g, kImages, 1);
  COMPARE(c.terms.size(), size_t(2));
  COMPARE(c.terms[0].node, std::string("rec"));
  VERIFY(c.terms[0].reconstructs && !c.terms[1].reconstructs);
  COMPARE(c.terms[0].weight, 0.5);
  // The classification is the primary loss: its prediction is the model's output.
  COMPARE(c.primary, size_t(1));
  COMPARE(c.loss_node, std::string("ce"));
  VERIFY(c.classification);
  VERIFY(bool(c.loss_parts));

  const Tensor x = images(5, 2), y = labels(5);
  const Tensor out = (*c.model)(x);
  COMPARE(out.shape(), (Shape{5, 3}));
  const float total = c.loss(out, y).item();
  const std::vector<Tensor> parts = c.loss_parts();
  const std::vector<Tensor> predictions = c.model->predictions(x);
  const float rec = mse_loss(predictions[0], x).item(), ce = cross_entropy(predictions[1], y).item();
  COMPARE(parts.size(), size_t(2));
  VERIFY(std::abs(parts[0].item() - rec) < 1e-6f && std::abs(parts[1].item() - ce) < 1e-6f);
  VERIFY2(std::abs(total - (ce + 0.5f * rec)) < 1e-5f, std::to_string(total) + " vs " + std::to_string(ce + 0.5f * rec));
  VERIFY(!parts[0].requires_grad());  // figures, not part of the graph
  // Without the forward pass on the batch, the loss has no predictions to read.
  VERIFY_THROWS(ValueError, c.loss(out, y));
}

TEST(theSummedLossHasTheNumericalGradient) {
  const CompiledGraph c = compile(classify_and_reconstruct(0.7), kImages, 3);
  const Tensor x = images(4, 5), y = labels(4);
  const auto r = gradcheck([&](const std::vector<Tensor>&) { return c.loss((*c.model)(x), y); }, c.model->parameters());
  VERIFY2(r.ok, r.message.c_str());
  // A weight of 0 reports the loss and takes nothing from it: the decoder gets no gradient.
  const CompiledGraph off = compile(classify_and_reconstruct(0.0), kImages, 3);
  off.loss((*off.model)(x), y).backward();
  for (const auto& [name, p] : off.model->named_parameters())
    if (name.starts_with("dec.")) VERIFY2(!p.grad().defined() || max(abs(p.grad())).item() == 0.f, name.c_str());
  VERIFY(off.loss_parts()[0].item() > 0.f);
}

TEST(anAutoencoderScoresItsOutputAgainstItsInput) {
  const CompiledGraph c = compile(autoencoder(), kImages, 4);
  VERIFY(!c.classification);
  VERIFY(!c.loss_parts);  // one loss: no parts to report
  COMPARE(c.loss_node, std::string("rec"));
  const Tensor x = images(3, 6);
  const Tensor out = (*c.model)(x);
  COMPARE(out.shape(), x.shape());
  // The labels given are not what it is scored against.
  VERIFY(std::abs(c.loss(out, labels(3)).item() - mse_loss(out, x).item()) < 1e-6f);
}

TEST(validationExplainsLossesThatCannotTrain) {
  Graph both = classify_and_reconstruct();
  VERIFY2(validate(both, &kImages).ok(), first_problem(both, "ce").c_str());
  // A node feeding neither loss is reported once as unused.
  both.nodes.push_back(node("extra", "ReLU"));
  both.edges.push_back(edge("act", "output", "extra"));
  COMPARE(first_problem(both, "extra"), std::string("warning extra: ReLU 'extra' does not lead to a loss; it is not used"));

  // A target that is neither the labels nor the examples.
  Graph wired = classify_and_reconstruct();
  std::erase_if(wired.edges, [](const graph::Edge& e) { return e.to.node == "rec" && e.to.port == "target"; });
  wired.edges.push_back(edge("image", "output", "rec", "target"));
  COMPARE(first_problem(wired, "rec"),
          std::string("error rec.target: MSE 'rec': target must be connected to the Input, its labels (y) or its "
                      "examples (x) for a reconstruction, not to Reshape 'image'"));

  // Class scores against the examples: the second loss's targets do not suit it.
  Graph crossed = classify_and_reconstruct();
  for (graph::Edge& e : crossed.edges)
    if (e.to.node == "ce" && e.to.port == "target") e.from.port = "x";
  COMPARE(first_problem(crossed, "ce"),
          std::string("error ce.target: CrossEntropy 'ce' scores [N, 3] from 'cls' against targets [N, 1, 6, 6] from "
                      "'in': it needs one class index per example, targets [N]"));

  // A distribution loss scores the examples of a classification dataset, but not its labels.
  Graph kl = classify_and_reconstruct();
  kl.find("rec")->type = "KLDiv";
  VERIFY2(validate(kl, &kImages).ok(), first_problem(kl, "rec").c_str());
  for (graph::Edge& e : kl.edges)
    if (e.to.node == "rec" && e.to.port == "target") e.from.port = "y";
  VERIFY2(contains(first_problem(kl, "rec"), "the dataset's labels are class indices"), first_problem(kl, "rec").c_str());

  // A loss no learned layer leads to.
  Graph fixed;
  fixed.nodes = {node("in", "Input"), node("flat", "Flatten"), node("same", "Reshape", P{{"shape", std::vector<int64_t>{1, 6, 6}}}),
                 node("rec", "MSE")};
  fixed.edges = {edge("in", "x", "flat"), edge("flat", "output", "same"), edge("same", "output", "rec"),
                 edge("in", "x", "rec", "target")};
  COMPARE(first_problem(fixed, "rec"),
          std::string("warning rec.input: MSE 'rec' has nothing to learn: no layer with parameters leads to its "
                      "prediction, so training cannot lower it"));

  // The weight is checked as any parameter.
  Graph negative = classify_and_reconstruct(-1);
  COMPARE(first_problem(negative, "rec"),
          std::string("error rec: MSE 'rec': loss_weight must be between 0 and 16777216, got -1.0"));
}

// The Trainer reports each loss by its node beside the total, in the events and their JSON.
TEST(trainingReportsEveryLoss) {
  const CompiledGraph c = compile(classify_and_reconstruct(0.5), kImages, 7);
  auto train = std::make_shared<data::TensorDataset>(images(48, 8), labels(48));
  auto held = std::make_shared<data::TensorDataset>(images(24, 9), labels(24));
  data::DataLoader train_loader(train, {.batch_size = 8, .shuffle = true, .seed = 1});
  data::DataLoader eval_loader(held, {.batch_size = 10});
  optim::Adam adam(c.model->parameters(), {.lr = 1e-2});
  train::TrainerOptions o;
  o.epochs = 6;
  o.seed = 3;
  session::set_loss(o, c);
  COMPARE(o.loss_parts.names, (std::vector<std::string>{"rec", "ce"}));
  train::Trainer trainer(*c.model, adam, train_loader, &eval_loader, o);
  std::vector<train::BatchEnd> batches;
  trainer.set_callback([&](const train::Event& e) {
    if (const auto* b = std::get_if<train::BatchEnd>(&e)) batches.push_back(*b);
  });
  const train::RunResult r = trainer.run();
  VERIFY2(r.status == train::RunStatus::Completed, r.message.c_str());
  COMPARE(r.history.size(), size_t(6));
  for (const train::EpochEnd& e : r.history) {
    COMPARE(e.train_losses.size(), size_t(2));
    COMPARE(e.eval_losses.size(), size_t(2));
    COMPARE(e.train_losses[0].node, std::string("rec"));
    COMPARE(e.eval_losses[1].node, std::string("ce"));
    // Means over the same examples: the total's mean is the weighted sum of the parts' means.
    const double sum = 0.5 * e.train_losses[0].value + e.train_losses[1].value;
    VERIFY2(std::abs(e.train_loss - sum) < 1e-4 * sum, std::to_string(e.train_loss) + " vs " + std::to_string(sum));
    const double eval_sum = 0.5 * e.eval_losses[0].value + e.eval_losses[1].value;
    VERIFY(std::abs(e.eval_loss - eval_sum) < 1e-4 * eval_sum);
  }
  // Both losses are trained.
  VERIFY(r.history.back().train_losses[0].value < 0.8 * r.history.front().train_losses[0].value);
  VERIFY(r.history.back().train_losses[1].value < r.history.front().train_losses[1].value);
  COMPARE(batches.size(), size_t(36));
  for (const train::BatchEnd& b : batches) COMPARE(b.losses.size(), size_t(2));

  // The figures as metrics.jsonl keeps them, and back.
  const nlohmann::json j = train::to_json(r.history.back(), true);
  COMPARE(j["train_losses"][1]["node"].get<std::string>(), std::string("ce"));
  const train::Event back = train::event_from_json(j, "metrics.jsonl:9");
  COMPARE(std::get<train::EpochEnd>(back).train_losses, r.history.back().train_losses);
  COMPARE(std::get<train::EpochEnd>(back).eval_losses, r.history.back().eval_losses);
  const train::Event batch = train::event_from_json(train::to_json(batches.back(), true), "metrics.jsonl:8");
  COMPARE(std::get<train::BatchEnd>(batch).losses, batches.back().losses);
  // A part without its value is refused, naming where.
  nlohmann::json bad = j;
  bad["train_losses"][0].erase("loss");
  VERIFY_THROWS(DataError, train::event_from_json(bad, "metrics.jsonl:9"));

  // The same figures from evaluate() alone.
  const train::EpochEnd ev = train::evaluate(*c.model, eval_loader, o);
  COMPARE(ev.eval_losses.size(), size_t(2));
  VERIFY(std::abs(ev.eval_losses[1].value - r.history.back().eval_losses[1].value) < 1e-5);
}
