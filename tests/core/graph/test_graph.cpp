// The layer registry, shape inference, validation and the compiler.
#include "support/check.h"

#include <cstdio>
#include <functional>

#include "graph/compute.h"
#include "graph/inference.h"
#include "graph/project.h"
#include "graph/registry.h"
#include "graph/validate.h"
#include "layers/compiler.h"
#include "layers/lowering.h"
#include "plexus.h"

using namespace plexus;
using namespace plexus::graph;
using namespace plexus::layers;

namespace {

const DatasetInfo kMnist{{1, 28, 28}, {}, 10};

graph::Node node(std::string id, std::string type, std::map<std::string, ParamValue> params = {}) {
  return graph::Node{id, std::move(type), id, std::move(params), {}};
}
graph::Edge edge(std::string from, std::string from_port, std::string to, std::string to_port = "input") {
  return graph::Edge{{std::move(from), std::move(from_port)}, {std::move(to), std::move(to_port)}};
}

// Input -> Flatten -> Linear(hidden) -> ReLU -> Linear(10) -> CrossEntropy.
Graph mlp(int64_t hidden = 32) {
  Graph g;
  g.nodes = {node("in", "Input"), node("flat", "Flatten"), node("fc1", "Linear", {{"out_features", hidden}}),
             node("act", "ReLU"), node("fc2", "Linear", {{"out_features", int64_t(10)}}), node("loss", "CrossEntropy")};
  g.edges = {edge("in", "x", "flat"), edge("flat", "output", "fc1"), edge("fc1", "output", "act"),
             edge("act", "output", "fc2"), edge("fc2", "output", "loss"), edge("in", "y", "loss", "target")};
  return g;
}

std::vector<std::string> messages(const Validation& v) {
  std::vector<std::string> out;
  for (const Problem& p : v.problems) out.push_back(to_string(p));
  return out;
}

}  // namespace

TEST(registryIsComplete) {
  const Registry& r = Registry::instance();
  for (const char* name : {"Input", "Linear", "Conv2d", "MaxPool2d", "AvgPool2d", "Flatten", "Reshape", "Dropout",
                           "BatchNorm1d", "BatchNorm2d", "ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "Softmax",
                           "Add", "Mul", "Sub", "Concat", "Permute", "Squeeze", "Unsqueeze", "Mean", "Sum",
                           "Embedding", "CrossEntropy", "MSE", "BCEWithLogits", "NLL", "L1", "SmoothL1", "Huber",
                           "KLDiv", "LayerNorm",
                           "MultiheadAttention", "PositionalEmbedding", "PReLU", "ELU", "SELU", "SiLU", "Mish",
                           "Softplus", "Hardswish", "Hardsigmoid", "LogSoftmax", "Identity", "MaxPool1d",
                           "AvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "ConvTranspose2d", "Conv1d",
                           "Upsample", "ZeroPad2d", "GroupNorm", "InstanceNorm2d", "RMSNorm", "Dropout2d"})
    VERIFY2(r.find(name), name);
  for (const LayerType& t : r.types()) {
    VERIFY2(t.shape, t.name.c_str());
    VERIFY2(bool(lowering(t).build) != t.is_loss(), t.name.c_str());  // layers build, losses compute a loss
    VERIFY2(bool(lowering(t).loss) == t.is_loss(), t.name.c_str());
    VERIFY2(!t.description.empty() && !t.category.empty() && !t.display_name.empty(), t.name.c_str());
    for (const ParamSpec& p : t.params) {
      // Every default passes the type's own checks.
      graph::Node n = node("n", t.name, {{p.name, p.default_value}});
      VERIFY2(check_params(n, t).empty(), (t.name + "." + p.name).c_str());
    }
  }
}

// One check of a value, worded to follow the parameter's name; the validator adds the node,
// the name and the value around it.
TEST(paramValuesAreCheckedInOnePlace) {
  const LayerType& linear = *Registry::instance().find("Linear");
  const ParamSpec& out = *linear.param("out_features");
  COMPARE(check_param_value(out, int64_t(64)), std::string());
  COMPARE(check_param_value(out, int64_t(0)), std::string("must be between 1 and 16777216"));
  COMPARE(check_param_value(out, 64.0), std::string("must be a whole number"));
  COMPARE(check_param_value(*linear.param("bias"), std::string("yes")), std::string("must be true or false"));
  const ParamSpec& p = *Registry::instance().find("Dropout")->param("p");
  COMPARE(check_param_value(p, int64_t(0)), std::string());  // a whole number is a number
  COMPARE(check_param_value(p, 1.5), std::string("must be between 0 and 0.99"));
  COMPARE(check_param_value(p, std::nan("")), std::string("must be a number"));
  const ParamSpec& shape = *Registry::instance().find("Reshape")->param("shape");
  COMPARE(check_param_value(shape, std::vector<int64_t>{4, -2}),
          std::string("must have every entry between -1 and 16777216"));
  COMPARE(check_param_value(shape, std::vector<int64_t>(9, 1)), std::string("must have at most 8 entries"));
  COMPARE(check_param_value(shape, int64_t(4)), std::string("must be a list of whole numbers"));
  const ParamSpec& weight = *Registry::instance().find("CrossEntropy")->param("weight");
  COMPARE(check_param_value(weight, std::vector<double>{0.5, 2}), std::string());
  COMPARE(check_param_value(weight, std::vector<int64_t>{1, 2}), std::string());  // whole numbers are numbers
  COMPARE(check_param_value(weight, std::vector<double>{1, -0.5}), std::string("must have every entry between 0 and 16777216"));
  COMPARE(check_param_value(weight, std::vector<double>{std::nan("")}),
          std::string("must have every entry between 0 and 16777216"));
  COMPARE(check_param_value(weight, std::vector<double>(1025, 1.0)), std::string("must have at most 1024 entries"));
  COMPARE(check_param_value(weight, 1.5), std::string("must be a list of numbers"));

  const std::vector<std::string> problems =
      check_params(node("fc1", "Linear", {{"out_features", int64_t(0)}, {"bias", std::string("yes")}}), linear);
  COMPARE(problems, (std::vector<std::string>{"Linear 'fc1': bias must be true or false, got the text \"yes\"",
                                              "Linear 'fc1': out_features must be between 1 and 16777216, got 0"}));
}

TEST(shapesOnEveryEdge) {
  const Validation v = validate(mlp(64), &kMnist);
  VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
  COMPARE(*v.shapes.edge_shapes[0], (Shape{1, 28, 28}));
  COMPARE(*v.shapes.edge_shapes[1], (Shape{784}));
  COMPARE(*v.shapes.edge_shapes[2], (Shape{64}));
  COMPARE(*v.shapes.edge_shapes[4], (Shape{10}));
  COMPARE(*v.shapes.edge_shapes[5], (Shape{}));
}

TEST(lenetShapes) {
  Graph g;
  g.nodes = {node("in", "Input"),
             node("c1", "Conv2d", {{"out_channels", int64_t(20)}, {"kernel_size", int64_t(5)}}),
             node("p1", "MaxPool2d"),
             node("c2", "Conv2d", {{"out_channels", int64_t(50)}, {"kernel_size", int64_t(5)}}),
             node("p2", "MaxPool2d"),
             node("f", "Flatten"),
             node("fc", "Linear", {{"out_features", int64_t(10)}}),
             node("loss", "CrossEntropy")};
  g.edges = {edge("in", "x", "c1"), edge("c1", "output", "p1"), edge("p1", "output", "c2"), edge("c2", "output", "p2"),
             edge("p2", "output", "f"), edge("f", "output", "fc"), edge("fc", "output", "loss"),
             edge("in", "y", "loss", "target")};
  const Validation v = validate(g, &kMnist);
  VERIFY(v.ok());
  COMPARE(*v.shapes.edge_shapes[1], (Shape{20, 24, 24}));
  COMPARE(*v.shapes.edge_shapes[3], (Shape{50, 8, 8}));
  COMPARE(*v.shapes.edge_shapes[4], (Shape{50, 4, 4}));
  COMPARE(*v.shapes.edge_shapes[5], (Shape{800}));
}

// The registry's multiply-add rules, added up as graph/compute.h says, give for the examples
// what bench/bench_cpu.cpp counts by hand for the same networks (its layer_macs and
// epoch_flops): per weight layer M multiply-adds forward, M for the weight gradient, M for the
// input gradient except the first layer's, 2 FLOPs each.
TEST(trainingFlopsOfTheExamples) {
  const auto count = [](const char* file) {
    const Graph g = load_project(std::string(PLEXUS_SOURCE_DIR "/examples/") + file);
    const Validation v = validate(g, &kMnist);
    return estimate_compute(GraphIndex(g), v.shapes);
  };
  const auto by_hand = [](const std::vector<double>& macs) {
    double flops = 0;
    for (size_t l = 0; l < macs.size(); ++l) flops += 2 * macs[l] * (l == 0 ? 2 : 3);
    return flops;
  };
  const ComputeEstimate mlp = count("mnist_mlp.plexus");
  const std::vector<double> mlp_macs{784.0 * 128, 128.0 * 10};
  COMPARE(mlp.nodes.size(), size_t(2));
  COMPARE(mlp.forward_macs, mlp_macs[0] + mlp_macs[1]);
  COMPARE(mlp.training_flops, by_hand(mlp_macs));
  COMPARE(mlp.training_flops, 2.0 * (2 * 100352 + 3 * 1280));  // 409,088 FLOPs per example

  const ComputeEstimate lenet = count("mnist_lenet.plexus");
  const std::vector<double> lenet_macs{20.0 * 25 * 24 * 24, 50.0 * 500 * 8 * 8, 800.0 * 500, 500.0 * 10};
  COMPARE(lenet.nodes.size(), lenet_macs.size());
  for (size_t l = 0; l < lenet_macs.size(); ++l) {
    COMPARE(lenet.nodes[l].macs, lenet_macs[l]);
    COMPARE(lenet.nodes[l].input_grad, l > 0);
  }
  COMPARE(lenet.training_flops, by_hand(lenet_macs));
}

// What needs an input gradient follows what is learned upstream, not the position: a layer
// after the Input through a pooling and an activation still needs none, one after any
// learned layer does. Only products count; nodes that do not lead to the loss do not.
TEST(trainingFlopsFollowWhatIsLearned) {
  Graph g;
  g.nodes = {node("in", "Input"),
             node("pool", "AvgPool2d"),
             node("c1", "Conv2d", {{"out_channels", int64_t(4)}, {"kernel_size", int64_t(3)}}),
             node("bn", "BatchNorm2d"),
             node("f", "Flatten"),
             node("fc", "Linear", {{"out_features", int64_t(10)}, {"bias", false}}),
             node("loss", "CrossEntropy"),
             node("dangling", "Linear", {{"out_features", int64_t(7)}})};
  g.edges = {edge("in", "x", "pool"), edge("pool", "output", "c1"), edge("c1", "output", "bn"),
             edge("bn", "output", "f"), edge("f", "output", "fc"), edge("fc", "output", "loss"),
             edge("in", "y", "loss", "target"), edge("f", "output", "dangling")};
  const Validation v = validate(g, &kMnist);
  VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
  const ComputeEstimate c = estimate_compute(GraphIndex(g), v.shapes);
  // 28x28 pooled by 2 is 14x14; a 3x3 kernel over one channel leaves 4 x 12 x 12.
  const double conv = 4.0 * 12 * 12 * 9, fc = 4.0 * 12 * 12 * 10;
  COMPARE(c.nodes.size(), size_t(2));
  COMPARE(c.nodes[0].node, std::string("c1"));
  VERIFY(!c.nodes[0].input_grad);
  COMPARE(c.nodes[1].node, std::string("fc"));
  VERIFY(c.nodes[1].input_grad);
  COMPARE(c.forward_macs, conv + fc);
  COMPARE(c.training_flops, 2 * (2 * conv + 3 * fc));
}

TEST(featureMismatchNamesBothNodes) {
  Graph g = mlp(64);
  g.find("fc2")->params["in_features"] = int64_t(128);
  const Validation v = validate(g, &kMnist);
  VERIFY(!v.ok());
  COMPARE(v.problems.at(0).node, std::string("fc2"));
  COMPARE(v.problems.at(0).message,
          std::string("Linear 'fc2' expects 128 input features but receives 64 from 'act'"));
}

// PReLU learns 1 slope or one per channel (dim 1), named and started as PyTorch's; LogSoftmax
// normalises along a feature dimension. Each refusal names the node, what it expects and got.
TEST(activationShapesAndParameters) {
  const LayerType& prelu = *Registry::instance().find("PReLU");
  auto first = [](const Graph& g) {
    const Validation v = validate(g, &kMnist);
    return v.problems.empty() ? std::string() : v.problems.front().message;
  };
  auto after_conv = [](const std::string& type, std::map<std::string, ParamValue> params) {
    Graph g;
    g.nodes = {node("in", "Input"), node("conv", "Conv2d", {{"out_channels", int64_t(4)}, {"kernel_size", int64_t(3)}}),
               node("act", type, std::move(params)), node("flat", "Flatten"),
               node("fc", "Linear", {{"out_features", int64_t(10)}}), node("loss", "CrossEntropy")};
    g.edges = {edge("in", "x", "conv"), edge("conv", "output", "act"), edge("act", "output", "flat"),
               edge("flat", "output", "fc"), edge("fc", "output", "loss"), edge("in", "y", "loss", "target")};
    return g;
  };
  for (int64_t n : {1, 4}) {
    const Graph g = after_conv("PReLU", {{"num_parameters", n}});
    COMPARE(first(g), std::string());
    COMPARE(prelu.parameter_count(*g.find("act"), {{4, 26, 26}}), double(n));
    const CompiledGraph c = compile(g, kMnist, 3);
    Tensor w;
    for (const auto& [name, t] : c.model->named_parameters())
      if (name == "act.weight") w = t;
    VERIFY(w.defined());
    COMPARE(w.shape(), Shape{n});
    COMPARE(w.to_vector(), std::vector<float>(size_t(n), 0.25f));
  }
  COMPARE(first(after_conv("PReLU", {{"num_parameters", int64_t(3)}})),
          std::string("PReLU 'act' learns 3 slopes, one per channel, but receives [N, 4, 26, 26] from 'conv', whose "
                      "dimension 1 has 4 channels (set num_parameters to 1 or 4)"));
  COMPARE(first(after_conv("LogSoftmax", {{"dim", int64_t(1)}})), std::string());
  COMPARE(first(after_conv("LogSoftmax", {{"dim", int64_t(0)}})),
          std::string("LogSoftmax 'act': dim 0 is not a feature dimension of [N, 4, 26, 26] (0 is the batch; -1 is "
                      "the last feature dimension)"));
  COMPARE(first(after_conv("LogSoftmax", {{"dim", int64_t(-5)}})),
          std::string("LogSoftmax 'act': dim -5 is not a feature dimension of [N, 4, 26, 26]"));
  // Parameters out of range are refused before any shape.
  const std::vector<std::string> bad =
      check_params(node("sp", "Softplus", {{"beta", 0.0}}), *Registry::instance().find("Softplus"));
  COMPARE(bad.size(), size_t(1));
}

TEST(compiledMlpMatchesAHandBuiltModel) {
  const CompiledGraph c = compile(mlp(16), kMnist, 7);
  COMPARE(c.model->named_parameters().size(), size_t(4));
  COMPARE(c.model->named_parameters()[0].first, std::string("fc1.weight"));
  nn::Sequential hand{std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(784, 16),
                      std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(16, 10)};
  {
    NoGradGuard g;
    const auto src = c.model->parameters(), dst = hand.parameters();
    for (size_t i = 0; i < src.size(); ++i) Tensor(dst[i]).copy_(src[i]);
  }
  Generator gen(1);
  const Tensor x = rand({8, 1, 28, 28}, &gen), y = from_vector({0, 1, 2, 3, 4, 5, 6, 7}, {8});
  const Tensor la = c.loss((*c.model)(x), y), lb = cross_entropy(hand(x), y);
  COMPARE(la.item(), lb.item());
  la.backward();
  lb.backward();
  const auto pa = c.model->parameters(), pb = hand.parameters();
  for (size_t i = 0; i < pa.size(); ++i) COMPARE(pa[i].grad().to_vector(), pb[i].grad().to_vector());
}

// Conv2d → ReLU → MaxPool2d(2) runs as one op when the inner outputs feed nothing else (c2's
// ReLU output also feeds a second branch, so its pooling stays apart), with the loss and
// gradients of the node-by-node plan, which an observer of the nodes' outputs gets.
TEST(convChainsRunFused) {
  Graph g;
  g.nodes = {node("in", "Input"),
             node("c1", "Conv2d", {{"out_channels", int64_t(4)}, {"kernel_size", int64_t(3)}}),
             node("r1", "ReLU"), node("p1", "MaxPool2d"),
             node("c2", "Conv2d", {{"out_channels", int64_t(6)}, {"kernel_size", int64_t(3)}}),
             node("r2", "ReLU"), node("p2", "MaxPool2d"), node("f", "Flatten"), node("f2", "Flatten"),
             node("cat", "Concat"), node("fc", "Linear", {{"out_features", int64_t(10)}}),
             node("loss", "CrossEntropy")};
  g.edges = {edge("in", "x", "c1"),          edge("c1", "output", "r1"),  edge("r1", "output", "p1"),
             edge("p1", "output", "c2"),     edge("c2", "output", "r2"),  edge("r2", "output", "p2"),
             edge("p2", "output", "f"),      edge("r2", "output", "f2"),  edge("f", "output", "cat", "inputs"),
             edge("f2", "output", "cat", "inputs"), edge("cat", "output", "fc"), edge("fc", "output", "loss"),
             edge("in", "y", "loss", "target")};
  const CompiledGraph c = compile(g, kMnist, 5);
  COMPARE(c.model->fused_chains(),
          (std::vector<std::vector<std::string>>{{"c1", "r1", "p1"}, {"c2", "r2"}}));
  Generator gen(4);
  const Tensor x = randn({3, 1, 28, 28}, &gen), y = from_vector({1, 7, 3}, {3});
  size_t seen_nodes = 0;
  auto loss_and_grads = [&](bool observed) -> std::vector<std::vector<float>> {
    std::vector<std::string> seen;
    if (observed) c.model->set_observer([&seen](const std::string& n, const Tensor&) { seen.push_back(n); });
    for (const Tensor& p : c.model->parameters()) p.set_grad(Tensor());
    const Tensor loss = c.loss((*c.model)(x), y);
    loss.backward();
    c.model->set_observer(nullptr);
    std::vector<std::vector<float>> out{{loss.item()}};
    for (const Tensor& p : c.model->parameters()) out.push_back(p.grad().to_vector());
    seen_nodes = seen.size();
    return out;
  };
  const auto fused = loss_and_grads(false), plain = loss_and_grads(true);
  COMPARE(seen_nodes, size_t(10));  // observed: every node but the input and the loss, one by one
  for (size_t t = 0; t < fused.size(); ++t)
    for (size_t i = 0; i < fused[t].size(); ++i)
      VERIFY2(std::fabs(fused[t][i] - plain[t][i]) <= 1e-5f * std::max(1.f, std::fabs(plain[t][i])),
              "tensor " + std::to_string(t) + " [" + std::to_string(i) + "]: fused " + check::show(fused[t][i]) +
                  ", node by node " + check::show(plain[t][i]));
}

TEST(residualGraphTrainsAndGradchecks) {
  Graph g;
  g.nodes = {node("in", "Input"), node("fc1", "Linear", {{"out_features", int64_t(6)}}), node("a1", "Tanh"),
             node("fc2", "Linear", {{"out_features", int64_t(6)}}), node("sum", "Add"),
             node("cat", "Concat"), node("out", "Linear", {{"out_features", int64_t(3)}}), node("loss", "CrossEntropy")};
  g.edges = {edge("in", "x", "fc1"),          edge("fc1", "output", "a1"),        edge("a1", "output", "fc2"),
             edge("fc2", "output", "sum", "inputs"), edge("fc1", "output", "sum", "inputs"),
             edge("sum", "output", "cat", "inputs"), edge("a1", "output", "cat", "inputs"),
             edge("cat", "output", "out"),    edge("out", "output", "loss"),      edge("in", "y", "loss", "target")};
  const DatasetInfo info{{5}, {}, 3};
  const Validation v = validate(g, &info);
  VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
  COMPARE(*v.shapes.edge_shapes[7], (Shape{12}));
  const CompiledGraph c = compile(g, info, 3);
  Generator gen(2);
  const Tensor x = randn({4, 5}, &gen), y = from_vector({0, 2, 1, 0}, {4});
  const auto r = gradcheck([&](const std::vector<Tensor>&) { return c.loss((*c.model)(x), y); }, c.model->parameters());
  VERIFY2(r.ok, r.message.c_str());
}

// Mul and Sub broadcast as PyTorch does, and refuse shapes that do not, naming both inputs.
TEST(broadcastingMergesShapeTrainAndRefuse) {
  // x [5] -> a [6], gate [1]; Mul(a, gate, a) [6]; Sub(product, gate) [6].
  const auto graph_with = [](int64_t gate_width) {
    Graph g;
    g.nodes = {node("in", "Input"), node("a", "Linear", {{"out_features", int64_t(6)}}),
               node("gate", "Linear", {{"out_features", gate_width}}), node("mul", "Mul"), node("sub", "Sub"),
               node("loss", "MSE")};
    g.edges = {edge("in", "x", "a"),
               edge("in", "x", "gate"),
               edge("a", "output", "mul", "inputs"),
               edge("gate", "output", "mul", "inputs"),
               edge("a", "output", "mul", "inputs"),
               edge("mul", "output", "sub", "input"),
               edge("gate", "output", "sub", "other"),
               edge("sub", "output", "loss"),
               edge("in", "y", "loss", "target")};
    return g;
  };
  const DatasetInfo info{{5}, {6}, 0};
  const Validation v = validate(graph_with(1), &info);
  VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
  COMPARE(*v.shapes.edge_shapes[5], (Shape{6}));  // mul -> sub
  COMPARE(*v.shapes.edge_shapes[7], (Shape{6}));  // sub -> loss
  const CompiledGraph c = compile(graph_with(1), info, 3);
  Generator gen(4);
  const Tensor x = randn({3, 5}, &gen), y = randn({3, 6}, &gen);
  const auto r = gradcheck([&](const std::vector<Tensor>&) { return c.loss((*c.model)(x), y); }, c.model->parameters());
  VERIFY2(r.ok, r.message.c_str());

  // A gate of 4 neither matches 6 nor repeats.
  const Validation bad = validate(graph_with(4), &info);
  VERIFY(!bad.ok());
  const std::string m = messages(bad).at(0);
  VERIFY2(m.find("mul") != std::string::npos && m.find("multiplies [N, 6] from 'a' and [N, 4] from 'gate'") != std::string::npos &&
              m.find("dimension 1 is 6 against 4") != std::string::npos,
          m);

  // As many dimensions are needed: [N, 6] against [N, 2, 3] would line up the batch wrongly.
  Graph ranks = graph_with(1);
  ranks.nodes.push_back(node("r", "Reshape", {{"shape", std::vector<int64_t>{2, 3}}}));
  std::erase_if(ranks.edges, [](const graph::Edge& e) { return e.to.node == "sub" && e.to.port == "other"; });
  ranks.edges.push_back(edge("a", "output", "r"));
  ranks.edges.push_back(edge("r", "output", "sub", "other"));
  const Validation bad_rank = validate(ranks, &info);
  VERIFY(!bad_rank.ok());
  const std::string mr = messages(bad_rank).at(0);
  VERIFY2(mr.find("subtracts [N, 6] from 'mul' and [N, 2, 3] from 'r'") != std::string::npos &&
              mr.find("as many dimensions") != std::string::npos,
          mr);
}

// Permute, Squeeze and Unsqueeze count the batch as 0 and keep it first; each refusal says why.
TEST(reorderingLayersShapeTrainAndRefuse) {
  // x [2, 3] -> Unsqueeze(1) [1, 2, 3] -> Permute(0, 3, 1, 2) [3, 1, 2] -> Squeeze(2) [3, 2] -> fc [3, 4]
  const auto graph_with = [](std::vector<int64_t> dims, int64_t squeeze) {
    Graph g;
    g.nodes = {node("in", "Input"),
               node("un", "Unsqueeze", {{"dim", int64_t(1)}}),
               node("perm", "Permute", {{"dims", std::move(dims)}}),
               node("sq", "Squeeze", {{"dim", squeeze}}),
               node("fc", "Linear", {{"out_features", int64_t(4)}}),
               node("loss", "MSE")};
    g.edges = {edge("in", "x", "un"),        edge("un", "output", "perm"),   edge("perm", "output", "sq"),
               edge("sq", "output", "fc"),    edge("fc", "output", "loss"),   edge("in", "y", "loss", "target")};
    return g;
  };
  const DatasetInfo info{{2, 3}, {3, 4}, 0};
  const Validation v = validate(graph_with({0, 3, 1, 2}, 2), &info);
  VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
  COMPARE(*v.shapes.edge_shapes[1], (Shape{1, 2, 3}));
  COMPARE(*v.shapes.edge_shapes[2], (Shape{3, 1, 2}));
  COMPARE(*v.shapes.edge_shapes[3], (Shape{3, 2}));
  const CompiledGraph c = compile(graph_with({0, 3, 1, 2}, 2), info, 3);
  Generator gen(5);
  const Tensor x = randn({2, 2, 3}, &gen), y = randn({2, 3, 4}, &gen);
  const auto r = gradcheck([&](const std::vector<Tensor>&) { return c.loss((*c.model)(x), y); }, c.model->parameters());
  VERIFY2(r.ok, r.message.c_str());

  const auto first_message = [&](std::vector<int64_t> dims, int64_t squeeze) {
    const Validation bad = validate(graph_with(std::move(dims), squeeze), &info);
    return bad.ok() ? std::string("(accepted)") : messages(bad).at(0);
  };
  const auto says = [](const std::string& m, const char* part) {
    VERIFY2(m.find(part) != std::string::npos, m + " (expected: " + part + ")");
  };
  says(first_message({0, 2, 1}, 2), "dims [0, 2, 1] orders 3 dimensions, but [N, 1, 2, 3] from 'un' has 4");
  says(first_message({1, 0, 2, 3}, 2), "must start with 0: the batch stays first");
  says(first_message({0, 1, 1, 2}, 2), "must name each of 0 to 3 once");
  says(first_message({0, 3, 1, 2}, 1), "dim 1 of [N, 3, 1, 2] from 'perm' is 3, and only a dimension of size 1 can be removed");
  says(first_message({0, 3, 1, 2}, 4), "dim 4 does not exist in [N, 3, 1, 2]");
}

// Mean and Sum reduce the dims named (never the batch), keeping 1s with keepdim.
TEST(reductionsShapeTrainAndRefuse) {
  const auto graph_with = [](const char* type, std::vector<int64_t> dims, bool keepdim) {
    Graph g;
    g.nodes = {node("in", "Input"), node("conv", "Conv2d", {{"out_channels", int64_t(3)}, {"kernel_size", int64_t(3)}}),
               node("red", type, {{"dim", std::move(dims)}, {"keepdim", keepdim}}), node("flat", "Flatten"),
               node("fc", "Linear", {{"out_features", int64_t(2)}}), node("loss", "CrossEntropy")};
    g.edges = {edge("in", "x", "conv"),     edge("conv", "output", "red"), edge("red", "output", "flat"),
               edge("flat", "output", "fc"), edge("fc", "output", "loss"),  edge("in", "y", "loss", "target")};
    return g;
  };
  const DatasetInfo info{{1, 5, 6}, {}, 2};  // conv: [3, 3, 4]
  for (const char* type : {"Mean", "Sum"}) {
    const Validation v = validate(graph_with(type, {2, 3}, false), &info);
    VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
    COMPARE(*v.shapes.edge_shapes[2], (Shape{3}));
    const Validation kept = validate(graph_with(type, {3, 1}, true), &info);
    VERIFY2(kept.ok(), messages(kept).empty() ? "" : messages(kept)[0].c_str());
    COMPARE(*kept.shapes.edge_shapes[2], (Shape{1, 3, 1}));
    const CompiledGraph c = compile(graph_with(type, {2, 3}, false), info, 3);
    Generator gen(6);
    const Tensor x = randn({2, 1, 5, 6}, &gen), y = from_vector({1, 0}, {2});
    const auto r = gradcheck([&](const std::vector<Tensor>&) { return c.loss((*c.model)(x), y); }, c.model->parameters());
    VERIFY2(r.ok, std::string(type) + ": " + r.message);
  }
  const auto first_message = [&](std::vector<int64_t> dims) {
    const Validation bad = validate(graph_with("Mean", std::move(dims), false), &info);
    return bad.ok() ? std::string("(accepted)") : messages(bad).at(0);
  };
  const std::string m = first_message({4});
  VERIFY2(m.find("dim [4] names dimension 4, which [N, 3, 3, 4] from 'conv' does not have (1 to 3; the batch, 0, is "
                 "never reduced)") != std::string::npos,
          m);
  const std::string twice = first_message({2, 2});
  VERIFY2(twice.find("names 2 twice") != std::string::npos, twice);
}

// The adaptive poolings pool an image to output_size (global at [1, 1]) and refuse to enlarge it;
// the transposed convolution enlarges it, PyTorch's sizes.
TEST(adaptivePoolingsAndTransposedConvolution) {
  const auto graph_with = [](graph::Node pool, int64_t conv_kernel) {
    Graph g;
    pool.id = "pool";
    g.nodes = {node("in", "Input"),
               node("conv", "Conv2d", {{"out_channels", int64_t(3)}, {"kernel_size", conv_kernel}}), std::move(pool),
               node("flat", "Flatten"), node("fc", "Linear", {{"out_features", int64_t(2)}}), node("loss", "CrossEntropy")};
    g.edges = {edge("in", "x", "conv"),     edge("conv", "output", "pool"), edge("pool", "output", "flat"),
               edge("flat", "output", "fc"), edge("fc", "output", "loss"),  edge("in", "y", "loss", "target")};
    return g;
  };
  const DatasetInfo info{{1, 7, 9}, {}, 2};  // conv 3x3: [3, 5, 7]; conv 1x1: [3, 7, 9]
  const struct {
    graph::Node pool;
    Shape out;
  } cases[] = {
      {node("", "AdaptiveAvgPool2d"), {3, 1, 1}},
      {node("", "AdaptiveMaxPool2d", {{"output_size", std::vector<int64_t>{2, 3}}}), {3, 2, 3}},
      {node("", "AdaptiveAvgPool2d", {{"output_size", std::vector<int64_t>{4}}}), {3, 4, 4}},
      {node("", "ConvTranspose2d",
            {{"out_channels", int64_t(2)}, {"stride", int64_t(2)}, {"padding", int64_t(1)}, {"output_padding", int64_t(1)}}),
       {2, 10, 14}},
      {node("", "ConvTranspose2d",
            {{"out_channels", int64_t(6)}, {"kernel_size", int64_t(2)}, {"dilation", int64_t(2)}, {"groups", int64_t(3)}}),
       {6, 7, 9}},
      {node("", "Upsample", {{"scale_factor", int64_t(3)}, {"mode", std::string("bilinear")}}), {3, 15, 21}},
      {node("", "ZeroPad2d", {{"padding", std::vector<int64_t>{1, 2, 3, 4}}}), {3, 12, 10}},
      {node("", "ZeroPad2d", {{"padding", std::vector<int64_t>{2}}}), {3, 9, 11}},
  };
  for (const auto& c : cases) {
    const Validation v = validate(graph_with(c.pool, 3), &info);
    VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
    COMPARE(*v.shapes.edge_shapes[2], c.out);
    const CompiledGraph compiled = compile(graph_with(c.pool, 3), info, 3);
    Generator gen(9);
    const Tensor x = randn({2, 1, 7, 9}, &gen), y = from_vector({1, 0}, {2});
    const auto r = gradcheck([&](const std::vector<Tensor>&) { return compiled.loss((*compiled.model)(x), y); },
                             compiled.model->parameters());
    VERIFY2(r.ok, c.pool.type + ": " + r.message);
  }
  const auto first_message = [&](graph::Node pool, int64_t conv_kernel) {
    const Validation bad = validate(graph_with(std::move(pool), conv_kernel), &info);
    return bad.ok() ? std::string("(accepted)") : messages(bad).at(0);
  };
  const std::string larger =
      first_message(node("", "AdaptiveMaxPool2d", {{"output_size", std::vector<int64_t>{6, 6}}}), 3);
  VERIFY2(larger.find("pools to 6x6, larger than its input 5x7 from 'conv': pooling cannot enlarge") != std::string::npos,
          larger);
  const std::string three = first_message(node("", "AdaptiveAvgPool2d", {{"output_size", std::vector<int64_t>{1, 2, 3}}}), 3);
  VERIFY2(three.find("output_size [1, 2, 3] must be [height, width] or one number") != std::string::npos, three);
  const std::string rank = first_message(node("", "MaxPool1d"), 3);
  VERIFY2(rank.find("[N, C, L]") != std::string::npos, rank);
  const std::string op =
      first_message(node("", "ConvTranspose2d", {{"stride", int64_t(2)}, {"output_padding", int64_t(2)}}), 3);
  VERIFY2(op.find("output_padding 2 must be smaller than the stride 2") != std::string::npos, op);
  const std::string groups = first_message(node("", "ConvTranspose2d", {{"groups", int64_t(2)}}), 3);
  VERIFY2(groups.find("groups = 2 must divide the input channels (3)") != std::string::npos, groups);
  const std::string corners = first_message(node("", "Upsample", {{"align_corners", true}}), 3);
  VERIFY2(corners.find("align_corners applies to bilinear upsampling only, not to nearest") != std::string::npos,
          corners);
  const std::string sides = first_message(node("", "ZeroPad2d", {{"padding", std::vector<int64_t>{1, 2}}}), 3);
  VERIFY2(sides.find("padding [1, 2] must be [left, right, top, bottom] or one number") != std::string::npos, sides);
  const std::string trimmed =
      first_message(node("", "ConvTranspose2d", {{"kernel_size", int64_t(1)}, {"padding", int64_t(3)}}), 3);
  VERIFY2(trimmed.find("padding 3 trims the whole output of input [N, 3, 5, 7] from 'conv'") != std::string::npos,
          trimmed);
}

// MaxPool1d, AvgPool1d and Conv1d on a sequence of channels [N, C, L].
TEST(poolings1dOnSequences) {
  const auto graph_with = [](const char* type, int64_t kernel, int64_t stride) {
    Graph g;
    g.nodes = {node("in", "Input"), node("re", "Reshape", {{"shape", std::vector<int64_t>{2, 6}}}),
               node("pool", type, {{"kernel_size", kernel}, {"stride", stride}}), node("flat", "Flatten"),
               node("fc", "Linear", {{"out_features", int64_t(2)}}), node("loss", "CrossEntropy")};
    g.edges = {edge("in", "x", "re"),     edge("re", "output", "pool"), edge("pool", "output", "flat"),
               edge("flat", "output", "fc"), edge("fc", "output", "loss"), edge("in", "y", "loss", "target")};
    return g;
  };
  const DatasetInfo info{{12}, {}, 2};
  for (const char* type : {"MaxPool1d", "AvgPool1d"}) {
    const Validation v = validate(graph_with(type, 3, 1), &info);
    VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
    COMPARE(*v.shapes.edge_shapes[2], (Shape{2, 4}));
    const CompiledGraph c = compile(graph_with(type, 2, 0), info, 3);
    Generator gen(4);
    const Tensor x = randn({3, 12}, &gen), y = from_vector({1, 0, 1}, {3});
    const auto r = gradcheck([&](const std::vector<Tensor>&) { return c.loss((*c.model)(x), y); }, c.model->parameters());
    VERIFY2(r.ok, std::string(type) + ": " + r.message);
    const Validation big = validate(graph_with(type, 7, 1), &info);
    VERIFY(!big.ok());
    VERIFY2(messages(big).at(0).find("length") != std::string::npos, messages(big).at(0).c_str());
  }
  Graph conv = graph_with("Conv1d", 3, 2);
  conv.nodes[2].params["out_channels"] = int64_t(4);
  conv.nodes[2].params["padding"] = int64_t(1);
  const Validation v = validate(conv, &info);
  VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
  COMPARE(*v.shapes.edge_shapes[2], (Shape{4, 3}));
  const CompiledGraph c = compile(conv, info, 3);
  Generator gen(5);
  const Tensor x = randn({3, 12}, &gen), y = from_vector({0, 1, 1}, {3});
  const auto r = gradcheck([&](const std::vector<Tensor>&) { return c.loss((*c.model)(x), y); }, c.model->parameters());
  VERIFY2(r.ok, "Conv1d: " + r.message);
}

// The 2-D windows take one number or [h, w] for kernel, stride, padding and dilation, and a
// convolution's padding "same" (even kernels padded at the end, as PyTorch does) or "valid";
// PyTorch's sizes, gradients through the compiled graph, and refusals naming the node.
TEST(rectangularWindowsAndSamePadding) {
  using Params = std::map<std::string, ParamValue>;
  using Pair = std::vector<int64_t>;
  const auto graph_with = [](const char* type, Params params) {
    Graph g;
    g.nodes = {node("in", "Input"), node("layer", type, std::move(params)), node("flat", "Flatten"),
               node("fc", "Linear", {{"out_features", int64_t(2)}}), node("loss", "CrossEntropy")};
    g.edges = {edge("in", "x", "layer"),  edge("layer", "output", "flat"), edge("flat", "output", "fc"),
               edge("fc", "output", "loss"), edge("in", "y", "loss", "target")};
    return g;
  };
  const DatasetInfo info{{2, 7, 9}, {}, 2};
  const std::string same = "same";
  const struct {
    const char* type;
    Params params;
    Shape out;
  } cases[] = {
      {"Conv2d", {{"out_channels", int64_t(3)}, {"kernel_size", Pair{5, 1}}}, {3, 3, 9}},
      {"Conv2d",
       {{"out_channels", int64_t(2)}, {"kernel_size", Pair{3, 2}}, {"stride", Pair{2, 1}}, {"padding", Pair{1, 0}},
        {"dilation", Pair{1, 2}}},
       {2, 4, 7}},
      {"Conv2d", {{"out_channels", int64_t(2)}, {"kernel_size", int64_t(4)}, {"padding", same}}, {2, 7, 9}},
      {"Conv2d",
       {{"out_channels", int64_t(2)}, {"kernel_size", Pair{2, 3}}, {"dilation", Pair{3, 2}}, {"padding", same},
        {"groups", int64_t(2)}},
       {2, 7, 9}},
      {"Conv2d", {{"out_channels", int64_t(2)}, {"padding", std::string("valid")}}, {2, 5, 7}},
      {"ConvTranspose2d",
       {{"out_channels", int64_t(2)}, {"kernel_size", Pair{3, 1}}, {"stride", Pair{2, 1}},
        {"output_padding", Pair{1, 0}}, {"padding", Pair{0, 1}}},
       {2, 16, 7}},
      {"MaxPool2d", {{"kernel_size", Pair{2, 3}}, {"stride", Pair{2, 1}}}, {2, 3, 7}},
      {"AvgPool2d", {{"kernel_size", Pair{3, 1}}, {"stride", int64_t(1)}, {"padding", Pair{1, 0}}}, {2, 7, 9}},
  };
  for (const auto& c : cases) {
    const Graph g = graph_with(c.type, c.params);
    const Validation v = validate(g, &info);
    VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
    COMPARE(*v.shapes.edge_shapes[1], c.out);
    const CompiledGraph compiled = compile(g, info, 3);
    COMPARE(v.memory.parameters, double(compiled.model->num_parameters()));
    Generator gen(11);
    const Tensor x = randn({2, 2, 7, 9}, &gen), y = from_vector({1, 0}, {2});
    const auto r = gradcheck([&](const std::vector<Tensor>&) { return compiled.loss((*compiled.model)(x), y); },
                             compiled.model->parameters());
    VERIFY2(r.ok, std::string(c.type) + ": " + r.message);
  }

  const auto first_message = [&](const char* type, Params params) {
    const Validation bad = validate(graph_with(type, std::move(params)), &info);
    return bad.ok() ? std::string("(accepted)") : messages(bad).at(0);
  };
  const struct {
    const char* type;
    Params params;
    std::string message;
  } refusals[] = {
      {"Conv2d", {{"padding", same}, {"stride", int64_t(2)}},
       "Conv2d 'layer': padding \"same\" needs stride 1, got stride 2 (PyTorch refuses it"},
      {"Conv2d", {{"padding", same}, {"stride", Pair{1, 2}}}, "needs stride 1, got stride [1, 2]"},
      {"Conv2d", {{"kernel_size", Pair{3}}}, "Conv2d 'layer': kernel_size must be a whole number or a pair [h, w], got [3]"},
      {"Conv2d", {{"dilation", Pair{0, 2}}}, "dilation must have both entries between 1 and 64, got [0, 2]"},
      {"Conv2d", {{"stride", Pair{1, 2, 3}}}, "stride must be a whole number or a pair [h, w], got [1, 2, 3]"},
      {"Conv2d", {{"padding", std::string("samee")}},
       "padding must be a whole number, a pair [h, w] or one of same, valid, got the text \"samee\""},
      {"Conv1d", {{"padding", Pair{1, 1}}}, "padding must be a whole number or one of same, valid, got [1, 1]"},
      {"Conv1d", {{"kernel_size", Pair{3, 3}}}, "kernel_size must be a whole number, got [3, 3]"},
      {"ConvTranspose2d", {{"padding", same}}, "padding must be a whole number or a pair [h, w], got the text \"same\""},
      {"MaxPool2d", {{"padding", same}}, "padding must be a whole number or a pair [h, w], got the text \"same\""},
      {"Conv2d", {{"kernel_size", Pair{9, 1}}},
       "Conv2d 'layer': its 9x1 kernel is larger than the height (7) of input [N, 2, 7, 9] from 'in'"},
      {"Conv2d", {{"kernel_size", Pair{1, 4}}, {"dilation", Pair{1, 3}}},
       "its 1x4 kernel with dilation 3 (spanning 10) is larger than the width (9)"},
      {"MaxPool2d", {{"kernel_size", Pair{4, 2}}, {"padding", Pair{1, 2}}},
       "padding [1, 2] is more than half the kernel size [4, 2] (at most [2, 1])"},
      {"ConvTranspose2d", {{"stride", Pair{2, 1}}, {"output_padding", Pair{1, 1}}},
       "output_padding 1 must be smaller than the stride [2, 1] along each axis"},
  };
  for (const auto& r : refusals) {
    const std::string m = first_message(r.type, r.params);
    VERIFY2(m.find(r.message) != std::string::npos, m + "\n  expected: " + r.message);
  }

  // Conv1d's "same": an even kernel keeps the length too.
  Graph seq = graph_with("Conv1d", {{"out_channels", int64_t(3)}, {"kernel_size", int64_t(4)}, {"padding", same}});
  seq.nodes.insert(seq.nodes.begin() + 1, node("re", "Reshape", {{"shape", Pair{2, 6}}}));
  seq.edges[0] = edge("in", "x", "re");
  seq.edges.push_back(edge("re", "output", "layer"));
  const DatasetInfo flat{{12}, {}, 2};
  const Validation v = validate(seq, &flat);
  VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
  COMPARE(*v.shapes.edge_shapes[1], (Shape{3, 6}));
  const CompiledGraph c = compile(seq, flat, 3);
  Generator gen(5);
  const Tensor x = randn({3, 12}, &gen), y = from_vector({0, 1, 1}, {3});
  const auto r = gradcheck([&](const std::vector<Tensor>&) { return c.loss((*c.model)(x), y); }, c.model->parameters());
  VERIFY2(r.ok, "Conv1d same: " + r.message);
  seq.find("layer")->params["stride"] = int64_t(3);
  const Validation strided = validate(seq, &flat);
  VERIFY(!strided.ok());
  VERIFY2(messages(strided).at(0).find("Conv1d 'layer': padding \"same\" needs stride 1, got stride 3") != std::string::npos,
          messages(strided).at(0));
}

// The normalisations and Dropout2d keep their input's shape, train through the compiled graph
// (gradients checked), learn what PyTorch's modules learn, and refuse what PyTorch would: groups
// that do not divide the channels, the wrong rank, a single position per channel.
TEST(normalizationsShapeTrainAndRefuse) {
  using Params = std::map<std::string, ParamValue>;
  // in -> conv (a 3x3 kernel) -> the layer -> flat -> fc -> loss
  const auto graph_with = [](const char* type, Params params, int64_t conv_channels = 4) {
    Graph g;
    g.nodes = {node("in", "Input"),
               node("conv", "Conv2d", {{"out_channels", conv_channels}, {"kernel_size", int64_t(3)}}),
               node("norm", type, std::move(params)), node("flat", "Flatten"),
               node("fc", "Linear", {{"out_features", int64_t(2)}}), node("loss", "CrossEntropy")};
    g.edges = {edge("in", "x", "conv"),     edge("conv", "output", "norm"), edge("norm", "output", "flat"),
               edge("flat", "output", "fc"), edge("fc", "output", "loss"),   edge("in", "y", "loss", "target")};
    return g;
  };
  const DatasetInfo info{{1, 5, 6}, {}, 2};  // conv: [4, 3, 4]
  const struct {
    const char* type;
    Params params;
    double parameters;  // of the norm node
    size_t buffers;
  } cases[] = {
      {"GroupNorm", {}, 8, 0},
      {"GroupNorm", {{"num_groups", int64_t(4)}, {"affine", false}}, 0, 0},
      {"InstanceNorm2d", {}, 0, 0},
      {"InstanceNorm2d", {{"affine", true}, {"track_running_stats", true}}, 8, 3},
      {"RMSNorm", {}, 4, 0},  // one weight per feature of the last dim
      {"RMSNorm", {{"elementwise_affine", false}}, 0, 0},
      {"BatchNorm2d", {{"affine", false}, {"track_running_stats", false}}, 0, 0},
      {"BatchNorm2d", {}, 8, 3},
      {"Dropout2d", {{"p", 0.0}}, 0, 0},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    const auto& k = cases[i];
    const std::string what = std::string(k.type) + " (case " + std::to_string(i) + ")";
    const Graph g = graph_with(k.type, k.params);
    const Validation v = validate(g, &info);
    VERIFY2(v.ok(), what + ": " + (messages(v).empty() ? "" : messages(v)[0]));
    COMPARE(*v.shapes.edge_shapes[1], (Shape{4, 3, 4}));
    const CompiledGraph c = compile(g, info, 3);
    double learned = 0;
    for (const auto& [name, t] : c.model->named_parameters())
      if (name.starts_with("norm.")) learned += double(t.numel());
    COMPARE(learned, k.parameters);
    COMPARE(c.model->named_buffers().size(), k.buffers);
    Generator gen(6);
    const Tensor x = randn({3, 1, 5, 6}, &gen), y = from_vector({1, 0, 1}, {3});
    const auto r = gradcheck([&](const std::vector<Tensor>&) { return c.loss((*c.model)(x), y); }, c.model->parameters());
    VERIFY2(r.ok, what + ": " + r.message);
  }
  const auto first_message = [&](const Graph& g, const DatasetInfo& in) {
    const Validation bad = validate(g, &in);
    return bad.ok() ? std::string("(accepted)") : bad.problems.at(0).message;
  };
  COMPARE(first_message(graph_with("GroupNorm", {{"num_groups", int64_t(3)}}), info),
          std::string("GroupNorm 'norm': num_groups 3 does not divide the 4 channels of [N, 4, 3, 4] from 'conv'"));
  COMPARE(first_message(graph_with("GroupNorm", {{"num_channels", int64_t(6)}}), info),
          std::string("GroupNorm 'norm' expects 6 channels but receives 4 from 'conv'"));
  COMPARE(first_message(graph_with("InstanceNorm2d", {{"num_features", int64_t(3)}}), info),
          std::string("InstanceNorm2d 'norm' expects 3 channels but receives 4 from 'conv'"));
  // A 3x3 kernel over 3x3 leaves one position per channel: no instance statistics.
  COMPARE(first_message(graph_with("InstanceNorm2d", {}), DatasetInfo{{1, 3, 3}, {}, 2}),
          std::string("InstanceNorm2d 'norm' normalises each channel over its H x W positions but receives "
                      "[N, 4, 1, 1] from 'conv', with a single position per channel"));
  // The wrong rank: features [N, 6] straight from the Input.
  const auto on_features = [](const char* type) {
    Graph g;
    g.nodes = {node("in", "Input"), node("norm", type), node("fc", "Linear", {{"out_features", int64_t(2)}}),
               node("loss", "CrossEntropy")};
    g.edges = {edge("in", "x", "norm"), edge("norm", "output", "fc"), edge("fc", "output", "loss"),
               edge("in", "y", "loss", "target")};
    return g;
  };
  const DatasetInfo features{{6}, {}, 2};
  COMPARE(first_message(on_features("GroupNorm"), features), std::string("(accepted)"));  // [N, C]: 2 groups of 3
  COMPARE(first_message(on_features("RMSNorm"), features), std::string("(accepted)"));
  for (const char* type : {"InstanceNorm2d", "Dropout2d"})
    COMPARE(first_message(on_features(type), features),
            std::string(type) + " 'norm' expects input [N, C, H, W] but receives [N, 6] from 'in'");
}

// Each loss type: its shape rule accepts the graph, its compiled loss is the op with the node's
// parameters (the value) and trains (a gradient check through the model), and its refusals say why.
TEST(lossesShapeTrainAndRefuse) {
  // x [5] -> fc [k] (-> LogSoftmax) -> loss.
  const auto graph_with = [](const char* type, std::map<std::string, ParamValue> params, int64_t k, bool log_softmax) {
    Graph g;
    g.nodes = {node("in", "Input"), node("fc", "Linear", {{"out_features", k}}), node("loss", type, std::move(params))};
    g.edges = {edge("in", "x", "fc"), edge("fc", "output", "loss"), edge("in", "y", "loss", "target")};
    if (log_softmax) {
      g.nodes.push_back(node("lsm", "LogSoftmax"));
      g.edges[1] = edge("fc", "output", "lsm");
      g.edges.push_back(edge("lsm", "output", "loss"));
    }
    return g;
  };
  struct Case {
    const char* type;
    std::map<std::string, ParamValue> params;
    bool log_softmax;
    std::function<Tensor(const Tensor&, const Tensor&)> op;  // the loss the node computes
  };
  const Tensor w = from_vector({0.5f, 2.f, 1.f}, {3});
  const std::vector<Case> classification = {
      {"CrossEntropy", {{"weight", std::vector<double>{0.5, 2, 1}}, {"ignore_index", int64_t(1)}, {"label_smoothing", 0.2}},
       false, [&](const Tensor& p, const Tensor& y) { return cross_entropy(p, y, 0.2f, Reduction::Mean, w, 1); }},
      {"NLL", {{"weight", std::vector<double>{0.5, 2, 1}}}, true,
       [&](const Tensor& p, const Tensor& y) { return nll_loss(p, y, Reduction::Mean, w); }},
      {"NLL", {{"ignore_index", int64_t(2)}}, true,
       [](const Tensor& p, const Tensor& y) { return nll_loss(p, y, Reduction::Mean, Tensor(), 2); }},
  };
  const std::vector<Case> regression = {
      {"L1", {}, false, [](const Tensor& p, const Tensor& y) { return l1_loss(p, y); }},
      {"SmoothL1", {{"beta", 0.5}}, false,
       [](const Tensor& p, const Tensor& y) { return smooth_l1_loss(p, y, Reduction::Mean, 0.5f); }},
      {"Huber", {{"delta", 0.5}}, false,
       [](const Tensor& p, const Tensor& y) { return huber_loss(p, y, Reduction::Mean, 0.5f); }},
      {"KLDiv", {}, true, [](const Tensor& p, const Tensor& y) { return kl_div(p, y, Reduction::Sum) / 4.f; }},
      {"KLDiv", {{"log_target", true}}, true,
       [](const Tensor& p, const Tensor& y) { return kl_div(p, y, Reduction::Sum, true) / 4.f; }},
      {"BCEWithLogits", {{"pos_weight", 3.0}}, false,
       [](const Tensor& p, const Tensor& y) { return binary_cross_entropy_with_logits(p, y, Reduction::Mean, 3.f); }},
  };
  const DatasetInfo classes{{5}, {}, 3}, columns{{5}, {3}, 0};
  Generator gen(7);
  const Tensor x = randn({4, 5}, &gen);
  const Tensor labels = from_vector({0, 1, 2, 1}, {4}), distributions = softmax(randn({4, 3}, &gen), 1);
  for (const bool is_classification : {true, false})
    for (const Case& k : is_classification ? classification : regression) {
      const DatasetInfo& info = is_classification ? classes : columns;
      const Graph g = graph_with(k.type, k.params, 3, k.log_softmax);
      const Validation v = validate(g, &info);
      VERIFY2(v.ok(), std::string(k.type) + ": " + (messages(v).empty() ? "" : messages(v)[0]));
      const CompiledGraph c = compile(g, info, 3);
      const Tensor y = is_classification ? labels : distributions;
      const Tensor pred = (*c.model)(x);
      COMPARE(c.loss(pred, y).item(), k.op(pred, y).item());
      const auto r = gradcheck([&](const std::vector<Tensor>&) { return c.loss((*c.model)(x), y); }, c.model->parameters());
      VERIFY2(r.ok, std::string(k.type) + ": " + r.message);
    }

  const auto first_message = [&](const Graph& g, const DatasetInfo& info) {
    const Validation bad = validate(g, &info);
    return bad.problems.empty() ? std::string("(accepted)") : bad.problems.front().message;
  };
  COMPARE(first_message(graph_with("CrossEntropy", {{"weight", std::vector<double>{1, 2}}}, 3, false), classes),
          std::string("CrossEntropy 'loss' has 2 class weights but receives 3 class scores from 'fc': it needs one "
                      "weight per class, 3"));
  COMPARE(first_message(graph_with("NLL", {{"weight", std::vector<double>{1, 2, 3, 4}}}, 3, true), classes),
          std::string("NLL 'loss' has 4 class weights but receives 3 log-probabilities from 'lsm': it needs one weight "
                      "per class, 3"));
  COMPARE(first_message(graph_with("NLL", {}, 3, true), columns),
          std::string("NLL 'loss' scores [N, 3] from 'lsm' against targets [N, 3] from 'in': it needs one class index "
                      "per example, targets [N]"));
  COMPARE(first_message(graph_with("KLDiv", {}, 3, true), classes),
          std::string("KLDiv 'loss' needs a target distribution per example, but the dataset's labels are class "
                      "indices (a classification task): use NLL after LogSoftmax"));
  COMPARE(first_message(graph_with("Huber", {}, 2, false), columns),
          std::string("Huber 'loss' compares the prediction [N, 2] from 'fc' with targets [N, 3] from 'in': they need "
                      "the same number of values per example"));
  const std::string range = first_message(graph_with("Huber", {{"delta", 0.0}}, 3, false), columns);
  VERIFY2(range.find("delta must be between 1e-06 and 16777216") != std::string::npos, range);
  const std::string entries =
      first_message(graph_with("CrossEntropy", {{"weight", std::vector<double>{1, -2, 1}}}, 3, false), classes);
  VERIFY2(entries.find("weight must have every entry between 0 and 16777216") != std::string::npos, entries);
}

// ---- sequence models: tokens [N, T] -> [N, T, E] -> ... -> [N, T, V] against targets [N, T] ----
static Graph sequence_model(int64_t heads = 2, int64_t max_len = 16) {
  Graph g;
  g.nodes = {node("in", "Input"),
             node("emb", "Embedding", {{"num_embeddings", int64_t(7)}, {"embedding_dim", int64_t(8)}}),
             node("pos", "PositionalEmbedding", {{"max_len", max_len}}),
             node("norm", "LayerNorm"),
             node("attn", "MultiheadAttention", {{"num_heads", heads}}),
             node("out", "Linear", {{"out_features", int64_t(7)}}),
             node("loss", "CrossEntropy")};
  g.edges = {edge("in", "x", "emb"),      edge("emb", "output", "pos"),  edge("pos", "output", "norm"),
             edge("norm", "output", "attn"), edge("attn", "output", "out"), edge("out", "output", "loss"),
             edge("in", "y", "loss", "target")};
  return g;
}

TEST(sequenceModelShapesAndTraining) {
  const DatasetInfo info{{5}, {5}, 7};  // 5 tokens in, the 5 next tokens out, vocabulary 7
  const Validation v = validate(sequence_model(), &info);
  VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
  COMPARE(*v.shapes.edge_shapes[1], (Shape{5, 8}));  // [N, T, E] on the wire
  COMPARE(*v.shapes.edge_shapes[4], (Shape{5, 8}));
  COMPARE(*v.shapes.edge_shapes[5], (Shape{5, 7}));
  const CompiledGraph c = compile(sequence_model(), info, 5);
  std::vector<std::string> names;
  for (const auto& [name, t] : c.model->named_parameters()) names.push_back(name);
  COMPARE(names, (std::vector<std::string>{"emb.weight", "pos.weight", "norm.weight", "norm.bias",
                                           "attn.in_proj_weight", "attn.in_proj_bias", "attn.out_proj.weight",
                                           "attn.out_proj.bias", "out.weight", "out.bias"}));
  const Tensor x = from_vector({0, 1, 2, 3, 4, 6, 5, 4, 3, 2}, {2, 5}), y = from_vector({1, 2, 3, 4, 5, 5, 4, 3, 2, 1}, {2, 5});
  const auto params = c.model->parameters();
  const auto r = gradcheck([&](const std::vector<Tensor>&) { return c.loss((*c.model)(x), y); },
                           {params.begin() + 1, params.end()});  // the embedding's rows: indices, piecewise
  VERIFY2(r.ok, r.message.c_str());
  // The speed display counts attention's products.
  const LayerType& attn = *Registry::instance().find("MultiheadAttention");
  const Graph g = sequence_model();
  const Node& n = *g.find("attn");
  COMPARE(attn.macs(n, {{5, 8}}, {{5, 8}}), 4.0 * 5 * 64 + 2.0 * 25 * 8);
  COMPARE(attn.parameter_count(n, {{5, 8}}), 4.0 * 64 + 4 * 8);
}

TEST(sequenceShapeMessages) {
  const DatasetInfo info{{5}, {5}, 7};
  auto first = [](const Graph& g, const DatasetInfo& d) {
    const Validation v = validate(g, &d);
    return v.problems.empty() ? std::string() : v.problems.front().message;
  };
  COMPARE(first(sequence_model(3), info),
          std::string("MultiheadAttention 'attn' splits the 8 features of [N, 5, 8] from 'norm' into 3 heads, but 8 is "
                      "not divisible by 3 (change num_heads or the features)"));
  COMPARE(first(sequence_model(2, 4), info),
          std::string("PositionalEmbedding 'pos' receives sequences of T = 5 positions from 'emb' but max_len is 4 "
                      "(raise max_len to at least 5)"));
  // One class index per example against per-position scores.
  COMPARE(first(sequence_model(), DatasetInfo{{5}, {}, 7}),
          std::string("CrossEntropy 'loss' scores [N, 5, 7] from 'out' against targets [N] from 'in': it needs one "
                      "class index per position, targets [N, 5]"));
  // Attention on a flat feature vector: the expected layout, in words.
  Graph flat = sequence_model();
  flat.nodes.erase(flat.nodes.begin() + 1, flat.nodes.begin() + 4);
  flat.edges = {edge("in", "x", "attn"), edge("attn", "output", "out"), edge("out", "output", "loss"),
                edge("in", "y", "loss", "target")};
  const std::string m = first(flat, DatasetInfo{{8}, {}, 7});
  std::printf("INFO   : %s\n", m.c_str());
  VERIFY2(m.find("expects input [N, T, E]") != std::string::npos && m.find("receives [N, 8]") != std::string::npos,
          m.c_str());
}

// Tokens [N, 6] embedded with fixed positions, attending to themselves max-pooled to 3 positions.
static Graph cross_attention_model(bool causal, bool values) {
  Graph g;
  g.nodes = {node("in", "Input"),
             node("emb", "Embedding", {{"num_embeddings", int64_t(7)}, {"embedding_dim", int64_t(8)}}),
             node("pos", "PositionalEmbedding", {{"max_len", int64_t(6)}, {"kind", std::string("sinusoidal")}}),
             node("to_channels", "Permute", {{"dims", std::vector<int64_t>{0, 2, 1}}}),
             node("pool", "MaxPool1d"),
             node("memory", "Permute", {{"dims", std::vector<int64_t>{0, 2, 1}}}),
             node("values", "Linear", {{"out_features", int64_t(8)}}),
             node("attn", "MultiheadAttention", {{"num_heads", int64_t(2)}, {"causal", causal}}),
             node("out", "Linear", {{"out_features", int64_t(7)}}),
             node("loss", "CrossEntropy")};
  g.edges = {edge("in", "x", "emb"),           edge("emb", "output", "pos"),     edge("pos", "output", "to_channels"),
             edge("to_channels", "output", "pool"), edge("pool", "output", "memory"), edge("memory", "output", "values"),
             edge("pos", "output", "attn"),    edge("memory", "output", "attn", "key"),
             edge("attn", "output", "out"),    edge("out", "output", "loss"),     edge("in", "y", "loss", "target")};
  if (values) g.edges.push_back(edge("values", "output", "attn", "value"));
  return g;
}

TEST(crossAttentionShapesTrainAndRefuse) {
  const DatasetInfo info{{6}, {6}, 7};
  auto first = [&info](const Graph& g) {
    const Validation v = validate(g, &info);
    return v.problems.empty() ? std::string() : v.problems.front().message;
  };
  for (const bool values : {false, true}) {
    const Graph g = cross_attention_model(false, values);
    const Validation v = validate(g, &info);
    VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
    COMPARE(v.shapes.outputs.at("memory").at(0), (Shape{3, 8}));
    COMPARE(v.shapes.outputs.at("attn").at(0), (Shape{6, 8}));
    const LayerType& attn = *Registry::instance().find("MultiheadAttention");
    // Projections: 2E per query (its own and out_proj's), 2E per key; scores and sums T·S·E each.
    COMPARE(attn.macs(*g.find("attn"), {{6, 8}, {3, 8}}, {{6, 8}}), 2.0 * (6 + 3) * 64 + 2.0 * 6 * 3 * 8);
    const LayerType& pos = *Registry::instance().find("PositionalEmbedding");
    COMPARE(pos.parameter_count(*g.find("pos"), {{6, 8}}), 0.0);
    const CompiledGraph c = compile(g, info, 3);
    std::vector<std::string> names;
    for (const auto& [name, t] : c.model->named_parameters()) names.push_back(name);
    COMPARE(names.front(), std::string("emb.weight"));  // nothing learned for the positions
    VERIFY(std::find(names.begin(), names.end(), "values.weight") != names.end() || !values);
    const Tensor x = from_vector({0, 1, 2, 3, 4, 6, 5, 4, 3, 2, 1, 0}, {2, 6});
    const Tensor y = from_vector({1, 2, 3, 4, 5, 6, 4, 3, 2, 1, 0, 0}, {2, 6});
    const auto params = c.model->parameters();
    const auto r = gradcheck([&](const std::vector<Tensor>&) { return c.loss((*c.model)(x), y); },
                             {params.begin() + 1, params.end()});
    VERIFY2(r.ok, r.message.c_str());
  }
  COMPARE(first(cross_attention_model(true, false)),
          std::string("MultiheadAttention 'attn' is causal, which needs as many keys as queries (T = 6), but key has "
                      "S = 3 positions from 'memory' (turn causal off for cross-attention)"));
  Graph no_key = cross_attention_model(false, true);
  std::erase_if(no_key.edges, [](const Edge& e) { return e.to.port == "key"; });
  COMPARE(first(no_key), std::string("MultiheadAttention 'attn': value is wired but key is not (wire the keys too, or "
                                     "the values to key alone)"));
  // Key lengths: one per example, from the ids; else refused.
  Graph padded = cross_attention_model(false, false);
  padded.nodes.push_back(node("len", "SequenceLengths"));
  padded.edges.push_back(edge("in", "x", "len"));
  padded.edges.push_back(edge("len", "output", "attn", "lengths"));
  VERIFY(validate(padded, &info).ok());
  const CompiledGraph with_lengths = compile(padded, info, 3);
  COMPARE((*with_lengths.model)(from_vector({1, 2, 3, 4, 0, 0}, {1, 6})).shape(), (Shape{1, 6, 7}));
  padded.edges.back().from.node = "emb";
  COMPARE(first(padded), std::string("MultiheadAttention 'attn' expects lengths [N], one per example (from Sequence "
                                     "lengths), but receives [N, 6, 8] from 'emb'"));
  Graph narrow_values = cross_attention_model(false, true);
  narrow_values.find("values")->params["out_features"] = int64_t(5);
  COMPARE(first(narrow_values), std::string("MultiheadAttention 'attn' expects value of the key's shape [N, 3, 8] but "
                                            "receives [N, 3, 5] from 'values'"));
  Graph narrow_keys = cross_attention_model(false, false);
  narrow_keys.edges.push_back(edge("values", "output", "attn", "key"));
  std::erase_if(narrow_keys.edges, [](const Edge& e) { return e.from.node == "memory" && e.to.port == "key"; });
  narrow_keys.find("values")->params["out_features"] = int64_t(4);
  COMPARE(first(narrow_keys), std::string("MultiheadAttention 'attn' attends with E = 8 features from 'pos', so key "
                                          "must have 8 features too, but receives [N, 3, 4] from 'values'"));
}

// Six token ids per example (0 pads), three classes.
static const DatasetInfo kPaddedTexts{{6}, {}, 3};

// A classifier of padded token sequences [N, T]: Embedding → GRU → SequencePool over each
// example's length (Sequence lengths of the ids) → Linear → CrossEntropy.
static Graph pooled_classifier(const std::string& mode, bool lengths) {
  Graph g;
  g.nodes = {node("in", "Input"),
             node("len", "SequenceLengths"),
             node("emb", "Embedding", {{"num_embeddings", int64_t(5)}, {"embedding_dim", int64_t(4)}}),
             node("gru", "GRU", {{"hidden_size", int64_t(6)}}),
             node("pool", "SequencePool", {{"mode", mode}}),
             node("out", "Linear", {{"out_features", int64_t(3)}}),
             node("loss", "CrossEntropy")};
  g.edges = {edge("in", "x", "len"),      edge("in", "x", "emb"),        edge("emb", "output", "gru"),
             edge("gru", "output", "pool"), edge("pool", "output", "out"), edge("out", "output", "loss"),
             edge("in", "y", "loss", "target")};
  if (lengths) g.edges.push_back(edge("len", "output", "pool", "lengths"));
  return g;
}

TEST(sequencePoolingShapesTrainAndRefuse) {
  for (const char* mode : {"mean", "max", "last", "first"}) {
    const Graph g = pooled_classifier(mode, true);
    const Validation v = validate(g, &kPaddedTexts);
    VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
    COMPARE(v.shapes.outputs.at("len").at(0), Shape{});
    COMPARE(v.shapes.outputs.at("pool").at(0), Shape{6});
    // Padding after an example's length changes nothing its pooling sees: the same example
    // padded to 6 and to 3 positions (same seed, so the same weights).
    const CompiledGraph c6 = compile(g, kPaddedTexts, 9), c3 = compile(g, DatasetInfo{{3}, {}, 3}, 9);
    const Tensor long_ids = from_vector({3, 1, 2, 0, 0, 0, 4, 4, 0, 0, 0, 0}, {2, 6});
    const Tensor short_ids = from_vector({3, 1, 2, 4, 4, 0}, {2, 3});
    const std::vector<float> a = (*c6.model)(long_ids).to_vector(), b = (*c3.model)(short_ids).to_vector();
    COMPARE(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) VERIFY2(std::abs(a[i] - b[i]) <= 1e-5f, std::string(mode) + ": " + std::to_string(i));
    const Tensor y = from_vector({2, 0}, {2});
    const auto params = c6.model->parameters();
    const auto r = gradcheck([&](const std::vector<Tensor>&) { return c6.loss((*c6.model)(long_ids), y); },
                             {params.begin() + 1, params.end()});  // past the embedding's rows
    VERIFY2(r.ok, (std::string(mode) + ": " + r.message).c_str());
  }
  // A bidirectional GRU over the lengths too: its backward direction starts at each example's
  // last letter, so every pooling, and the GRU's state, ignore the padding after it.
  for (const char* mode : {"mean", "last"}) {
    Graph g = pooled_classifier(mode, true);
    g.find("gru")->params["bidirectional"] = true;
    g.edges.push_back(edge("len", "output", "gru", "lengths"));
    Graph by_state = g;
    std::erase_if(by_state.edges, [](const Edge& e) { return e.to.node == "pool" || e.from.node == "pool"; });
    std::erase_if(by_state.nodes, [](const Node& n) { return n.id == "pool"; });
    by_state.edges.push_back(edge("gru", "state", "out"));
    for (const Graph* graph : {&g, &by_state}) {
      const Validation v = validate(*graph, &kPaddedTexts);
      VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
      const CompiledGraph c6 = compile(*graph, kPaddedTexts, 9), c3 = compile(*graph, DatasetInfo{{3}, {}, 3}, 9);
      const std::vector<float> a = (*c6.model)(from_vector({3, 1, 2, 0, 0, 0, 4, 4, 0, 0, 0, 0}, {2, 6})).to_vector();
      const std::vector<float> b = (*c3.model)(from_vector({3, 1, 2, 4, 4, 0}, {2, 3})).to_vector();
      for (size_t i = 0; i < a.size(); ++i)
        VERIFY2(std::abs(a[i] - b[i]) <= 1e-5f, std::string(mode) + (graph == &g ? " pooled " : " state ") + std::to_string(i));
    }
  }
  // Without lengths a pooling sees every position, padding too.
  VERIFY(validate(pooled_classifier("mean", false), &kPaddedTexts).ok());
  auto first = [](const Graph& g, const DatasetInfo& d) {
    const Validation v = validate(g, &d);
    return v.problems.empty() ? std::string() : v.problems.front().message;
  };
  COMPARE(first(pooled_classifier("last", true), DatasetInfo{{1, 6, 6}, {}, 3}),
          std::string("SequenceLengths 'len' expects input [N, T] (token ids padded with 0, such as a labelled-texts "
                      "dataset's inputs) but receives [N, 1, 6, 6] from 'in'"));
  Graph wrong_gru_lengths = pooled_classifier("mean", true);
  wrong_gru_lengths.edges.push_back(edge("emb", "output", "gru", "lengths"));
  COMPARE(first(wrong_gru_lengths, kPaddedTexts),
          std::string("GRU 'gru' expects lengths [N], one per example (from Sequence lengths), but receives [N, 6, 4] "
                      "from 'emb'"));
  Graph wrong_lengths = pooled_classifier("max", false);
  wrong_lengths.edges.push_back(edge("emb", "output", "pool", "lengths"));
  COMPARE(first(wrong_lengths, kPaddedTexts),
          std::string("SequencePool 'pool' expects lengths [N], one per example (from Sequence lengths), but receives "
                      "[N, 6, 4] from 'emb'"));
  Graph flat = pooled_classifier("mean", true);
  std::erase_if(flat.edges, [](const Edge& e) { return e.from.node == "gru" || e.to.node == "gru"; });
  flat.edges.push_back(edge("in", "x", "pool"));
  std::erase_if(flat.nodes, [](const Node& n) { return n.id == "gru"; });
  COMPARE(first(flat, kPaddedTexts), std::string("SequencePool 'pool' expects input [N, T, E] (a sequence of T positions "
                                                 "with E features each) but receives [N, 6] from 'in'"));
}

TEST(compileRefusesAnInvalidGraph) {
  Graph g = mlp();
  g.edges.pop_back();  // the loss target is left open
  try {
    compile(g, kMnist, 1);
    FAIL("compile accepted a graph with an open port");
  } catch (const ValueError& e) {
    VERIFY2(std::string(e.what()).find("target is not connected") != std::string::npos, e.what());
  }
}


// Split, Chunk and Slice: a node whose parameters decide its output ports, each port's shape on
// its wires, and the pieces compiled and differentiated back into the input; bad parameters
// and a wire from a port the node does not have are refused, naming the node.
TEST(splitsShapeTrainAndRefuse) {
  // x [6, 4] -> Split [2, 3, 1] along dim 1; the middle piece's last dim sliced -3::2 ([3, 2]);
  // the pieces joined in another order than the ports'.
  const auto graph_with = [](std::map<std::string, ParamValue> split_params, std::map<std::string, ParamValue> slice_params,
                             const std::string& last_port = "output2") {
    Graph g;
    g.nodes = {node("in", "Input"),          node("split", "Split", std::move(split_params)),
               node("slice", "Slice", std::move(slice_params)),
               node("f0", "Flatten"),        node("f1", "Flatten"),
               node("f2", "Flatten"),        node("join", "Concat"),
               node("fc", "Linear", {{"out_features", int64_t(3)}}), node("loss", "CrossEntropy")};
    g.edges = {edge("in", "x", "split"),        edge("split", "output1", "slice"), edge("slice", "output", "f1"),
               edge("split", last_port, "f2"),  edge("split", "output0", "f0"),    edge("f2", "output", "join", "inputs"),
               edge("f0", "output", "join", "inputs"), edge("f1", "output", "join", "inputs"),
               edge("join", "output", "fc"),    edge("fc", "output", "loss"),      edge("in", "y", "loss", "target")};
    return g;
  };
  const std::map<std::string, ParamValue> sections{{"sections", std::vector<int64_t>{2, 3, 1}}};
  const std::map<std::string, ParamValue> tail{{"dim", int64_t(2)}, {"start", int64_t(-3)}, {"step", int64_t(2)}};
  const DatasetInfo info{{6, 4}, {}, 3};
  const Graph g = graph_with(sections, tail);
  const LayerType& split = *Registry::instance().find("Split");
  COMPARE(split.outputs_of(*g.find("split")).size(), size_t(3));
  COMPARE(split.outputs.size(), size_t(2));  // at the default sections [1, 1]
  const Validation v = validate(g, &info);
  VERIFY2(v.ok(), messages(v).empty() ? "" : messages(v)[0].c_str());
  COMPARE(v.shapes.outputs.at("split"), (std::vector<Shape>{{2, 4}, {3, 4}, {1, 4}}));
  COMPARE(*v.shapes.edge_shapes[1], (Shape{3, 4}));  // output1 into the Slice
  COMPARE(*v.shapes.edge_shapes[2], (Shape{3, 2}));  // indices 1 and 3 of the last dim
  COMPARE(*v.shapes.edge_shapes[3], (Shape{1, 4}));  // output2
  COMPARE(*v.shapes.edge_shapes[8], (Shape{18}));    // 4 + 8 + 6 joined

  // The model computes the pieces as torch.split and slicing do: rows 2..4 of x, columns 1 and 3.
  const CompiledGraph c = compile(g, info, 3);
  Generator gen(8);
  const Tensor x = randn({2, 6, 4}, &gen), y = from_vector({2, 0}, {2});
  std::vector<std::pair<std::string, Tensor>> seen;
  c.model->set_observer([&](const std::string& id, const Tensor& out) { seen.emplace_back(id, out); });
  (*c.model)(x);
  c.model->set_observer(nullptr);
  for (const auto& [id, out] : seen) {
    if (id == "split") COMPARE(out.to_vector(), slice(x, 1, 0, 2).contiguous().to_vector());  // its first port
    if (id == "slice") COMPARE(out.to_vector(), slice(slice(x, 1, 2, 5), 2, 1, 4, 2).contiguous().to_vector());
    if (id == "f2") COMPARE(out.to_vector(), slice(x, 1, 5, 6).contiguous().to_vector());
  }
  COMPARE(seen.size(), size_t(7));
  const auto r = gradcheck([&](const std::vector<Tensor>&) { return c.loss((*c.model)(x), y); }, c.model->parameters());
  VERIFY2(r.ok, r.message.c_str());
  // Chunk cuts as torch.chunk: 6 rows in 3 chunks of 2.
  Graph chunked = graph_with({}, tail);
  chunked.nodes[1] = node("split", "Chunk", {{"chunks", int64_t(3)}});
  const Validation cv = validate(chunked, &info);
  VERIFY2(cv.ok(), messages(cv).empty() ? "" : messages(cv)[0].c_str());
  COMPARE(cv.shapes.outputs.at("split"), (std::vector<Shape>{{2, 4}, {2, 4}, {2, 4}}));

  const auto first_message = [&](const Graph& bad) {
    const Validation b = validate(bad, &info);
    return b.ok() ? std::string("(accepted)") : messages(b).at(0);
  };
  const auto says = [](const std::string& m, const std::string& part) {
    VERIFY2(m.find(part) != std::string::npos, m + " (expected: " + part + ")");
  };
  says(first_message(graph_with({{"sections", std::vector<int64_t>{2, 3, 2}}}, tail)),
       "Split 'split': sections [2, 3, 2] add up to 7, but dim 1 of [N, 6, 4] from 'in' has size 6");
  says(first_message(graph_with({{"sections", std::vector<int64_t>{2, 3, 1}}, {"dim", int64_t(3)}}, tail)),
       "Split 'split': dim 3 does not exist in [N, 6, 4] from 'in' (it has dims 1 to 2 besides the batch)");
  says(first_message(graph_with(sections, tail, "output3")),
       "Split 'split' has no output 'output3' (outputs: output0, output1, output2); its parameters decide its outputs");
  // Fewer sections: the wire from output2 is left without a port.
  says(first_message(graph_with({{"sections", std::vector<int64_t>{3, 3}}}, tail)),
       "Split 'split' has no output 'output2' (outputs: output0, output1)");
  says(first_message(graph_with(sections, {{"dim", int64_t(2)}, {"start", int64_t(3)}, {"end", int64_t(-2)}})),
       "Slice 'slice': 3:-2:1 keeps nothing of dim 2 of [N, 3, 4] from 'split', of size 4");
  chunked.nodes[1] = node("split", "Chunk", {{"chunks", int64_t(4)}});
  says(first_message(chunked),
       "Chunk 'split': dim 1 of [N, 6, 4] from 'in' has size 6, which cuts into 3 pieces of at most 2, not 4 (use a "
       "Split with explicit sections)");
  try {
    compile(graph_with(sections, tail, "output3"), info, 1);
    FAIL("compile accepted a wire from a port Split 'split' does not have");
  } catch (const ValueError& e) {
    says(e.what(), "Split 'split' has no output 'output3'");
  }
}
