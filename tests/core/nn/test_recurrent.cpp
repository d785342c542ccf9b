// Recurrent layers: the sequence ops' gradients (autograd/gradcheck.h) for every input,
// both directions and all outputs; forward values against the cells' formulas written out;
// the LSTM / GRU / RNN modules (PyTorch's parameter names, layers x directions, dropout,
// carried state); and the graph registry's rules for them.
#include "support/check.h"

#include <cmath>
#include <algorithm>
#include <exception>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/node.h"
#include "graph/inference.h"
#include "graph/registry.h"
#include "layers/compiler.h"
#include "layers/lowering.h"
#include "nn/layers.h"
#include "ops/ops.h"
#include "optim/adam.h"
#include "ops/rnn_sequence.h"
#include "ops/recurrent_cells.h"
#include "util/error.h"

using namespace plexus;

namespace {

using TV = std::vector<Tensor>;

Tensor normal_leaf(const Shape& s, uint64_t seed, float scale = 1.f) {
  Generator gen(seed);
  Tensor t = randn(s, &gen) * scale;
  t.requires_grad_();
  return t;
}

// Everything a sequence op returns, flattened into one tensor for gradcheck.
Tensor all_outputs(const RecurrentOutput& r) {
  TV parts{r.output.flatten(), r.h.flatten()};
  if (r.c.defined()) parts.push_back(r.c.flatten());
  return concat(parts, 0);
}

void expect_gradcheck(const std::string& label, const TensorFunction& f, const TV& inputs) {
  GradcheckResult r;
  try {
    r = gradcheck(f, inputs);
  } catch (const std::exception& e) {
    FAIL((label + " threw: " + e.what()).c_str());
  }
  VERIFY2(r.ok, (label + ": " + r.message).c_str());
  VERIFY2(r.checked > 0, label.c_str());
}

// Input [in_shape] (per example) -> layers, each fed by the one before.
graph::Graph sequence_graph(const Shape& in_shape, std::vector<graph::Node> layers) {
  graph::Graph g;
  graph::Node in;
  in.id = "in", in.type = "Input", in.params["shape"] = std::vector<int64_t>(in_shape.begin(), in_shape.end());
  g.nodes.push_back(in);
  std::string prev = "in", port = "x";
  for (graph::Node& n : layers) {
    g.edges.push_back({{prev, port}, {n.id, "input"}});
    prev = n.id, port = "output";
    g.nodes.push_back(std::move(n));
  }
  return g;
}

graph::Node layer(std::string id, std::string type, std::map<std::string, graph::ParamValue> params = {}) {
  graph::Node n;
  n.id = std::move(id), n.type = std::move(type), n.params = std::move(params);
  return n;
}

float sig(float x) { return 1.f / (1.f + std::exp(-x)); }

template <class E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// The host's branch-free gate functions against the exact values (in double), over the
// whole range, saturation and tiny arguments included.
TEST(gateFunctionsAreAccurate) {
  double worst_tanh = 0, worst_sigmoid = 0;
  for (float x = -30.f; x <= 30.f; x += 7.7e-4f) {
    const double t = std::tanh(double(x)), s = 1 / (1 + std::exp(-double(x)));
    worst_tanh = std::max(worst_tanh, std::fabs(math::gate_tanh(x) - t) / std::max(std::fabs(t), 1e-30));
    worst_sigmoid = std::max(worst_sigmoid, std::fabs(math::gate_sigmoid(x) - s) / s);
  }
  for (float x = 1e-8f; x < 1e-2f; x *= 1.05f)
    worst_tanh = std::max(worst_tanh, std::fabs(math::gate_tanh(-x) + std::tanh(double(x))) / std::tanh(double(x)));
  VERIFY2(worst_tanh < 4e-7, std::to_string(worst_tanh).c_str());
  VERIFY2(worst_sigmoid < 4e-7, std::to_string(worst_sigmoid).c_str());
  COMPARE(math::gate_sigmoid(-200.f), 0.f);
  COMPARE(math::gate_sigmoid(200.f), 1.f);
  COMPARE(math::gate_tanh(200.f), 1.f);
  COMPARE(math::gate_tanh(-std::numeric_limits<float>::infinity()), -1.f);
}

// ---- the ops' gradients ----------------------------------------------------------------
TEST(lstmGradients) {
  const int64_t n = 2, t = 3, h = 3;
  for (bool reverse : {false, true}) {
    const Tensor gx = normal_leaf({n, t, 4 * h}, 1), w = normal_leaf({4 * h, h}, 2, 0.5f);
    const Tensor b = normal_leaf({4 * h}, 3, 0.5f), h0 = normal_leaf({n, h}, 4), c0 = normal_leaf({n, h}, 5);
    expect_gradcheck(
        std::string("lstm_sequence reverse=") + (reverse ? "1" : "0"),
        [reverse](const TV& v) { return all_outputs(lstm_sequence(v[0], v[1], v[2], v[3], v[4], reverse)); },
        {gx, w, b, h0, c0});
  }
}

TEST(gruGradients) {
  const int64_t n = 2, t = 3, h = 3;
  for (bool reverse : {false, true}) {
    const Tensor gx = normal_leaf({n, t, 3 * h}, 11), w = normal_leaf({3 * h, h}, 12, 0.5f);
    const Tensor b = normal_leaf({3 * h}, 13, 0.5f), h0 = normal_leaf({n, h}, 14);
    expect_gradcheck(std::string("gru_sequence reverse=") + (reverse ? "1" : "0"),
                     [reverse](const TV& v) { return all_outputs(gru_sequence(v[0], v[1], v[2], v[3], reverse)); },
                     {gx, w, b, h0});
  }
}

TEST(rnnTanhGradients) {
  const int64_t n = 2, t = 4, h = 3;
  for (bool reverse : {false, true}) {
    const Tensor gx = normal_leaf({n, t, h}, 21), w = normal_leaf({h, h}, 22, 0.5f);
    const Tensor b = normal_leaf({h}, 23, 0.5f), h0 = normal_leaf({n, h}, 24);
    expect_gradcheck(std::string("rnn_tanh_sequence reverse=") + (reverse ? "1" : "0"),
                     [reverse](const TV& v) { return all_outputs(rnn_tanh_sequence(v[0], v[1], v[2], v[3], reverse)); },
                     {gx, w, b, h0});
  }
}

// Without h0 / c0 / bias_hh: zeros, and the gradients of what is given are still right.
TEST(gradientsWithoutInitialState) {
  const Tensor gx = normal_leaf({2, 3, 8}, 31), w = normal_leaf({8, 2}, 32, 0.5f);
  expect_gradcheck("lstm_sequence, zero state, no bias",
                   [](const TV& v) { return all_outputs(lstm_sequence(v[0], v[1], Tensor(), Tensor(), Tensor())); },
                   {gx, w});
}

// An LSTM, GRU or RNN by type name.
static std::shared_ptr<nn::Recurrent> make_recurrent(const std::string& type, int64_t input, const nn::RecurrentOptions& opt,
                                              Generator* gen) {
  if (type == "LSTM") return std::make_shared<nn::LSTM>(input, opt, gen);
  if (type == "GRU") return std::make_shared<nn::GRU>(input, opt, gen);
  return std::make_shared<nn::RNN>(input, opt, gen);
}

// The modules end to end: a 2-layer bidirectional stack, every parameter and the input.
TEST(moduleGradients) {
  for (const char* type : {"LSTM", "GRU", "RNN"}) {
    Generator gen(7);
    nn::RecurrentOptions opt;
    opt.hidden_size = 2, opt.num_layers = 2, opt.bidirectional = true;
    const std::shared_ptr<nn::Recurrent> m = make_recurrent(type, 3, opt, &gen);
    TV inputs{normal_leaf({2, 3, 3}, 41)};
    for (const Tensor& p : m->parameters()) inputs.push_back(p);
    expect_gradcheck(std::string(type) + " 2 layers bidirectional",
                     [m](const TV& v) { return m->forward(v[0]); }, inputs);
  }
}

// ---- forward values --------------------------------------------------------------------
// One LSTM step by the formula: c = f c0 + i g, h = o tanh(c).
TEST(lstmOneStepByFormula) {
  const int64_t h = 2;
  const Tensor gx = from_vector({0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f, 0.7f, -0.8f}, {1, 1, 4 * h});
  const Tensor w = from_vector({0.1f, 0.2f, -0.3f, 0.4f, 0.5f, -0.6f, 0.7f, 0.8f,
                                -0.9f, 1.0f, 0.2f, 0.1f, 0.3f, -0.2f, 0.4f, 0.6f}, {4 * h, h});
  const Tensor b = from_vector({0.05f, -0.05f, 0.1f, -0.1f, 0.2f, -0.2f, 0.3f, -0.3f}, {4 * h});
  const Tensor h0 = from_vector({0.5f, -0.4f}, {1, h}), c0 = from_vector({0.3f, 0.9f}, {1, h});
  const RecurrentOutput r = lstm_sequence(gx, w, b, h0, c0);
  const std::vector<float> vx = gx.to_vector(), vw = w.to_vector(), vb = b.to_vector();
  const std::vector<float> vh = h0.to_vector(), vc = c0.to_vector();
  for (int64_t j = 0; j < h; ++j) {
    auto pre = [&](int64_t k) {
      const int64_t row = k * h + j;
      return vx[size_t(row)] + vb[size_t(row)] + vw[size_t(row * h)] * vh[0] + vw[size_t(row * h + 1)] * vh[1];
    };
    const float i = sig(pre(0)), f = sig(pre(1)), g = std::tanh(pre(2)), o = sig(pre(3));
    const float c = f * vc[size_t(j)] + i * g, hv = o * std::tanh(c);
    VERIFY(std::fabs(r.c.at({0, j}) - c) < 1e-6f);
    VERIFY(std::fabs(r.h.at({0, j}) - hv) < 1e-6f);
    VERIFY(std::fabs(r.output.at({0, 0, j}) - hv) < 1e-6f);
  }
}

// One GRU step by the formula, b_hn inside r ⊙ (…): h = (1 - z) n + z h0.
TEST(gruOneStepByFormula) {
  const int64_t h = 2;
  const Tensor gx = from_vector({0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f}, {1, 1, 3 * h});
  const Tensor w = from_vector({0.1f, 0.2f, -0.3f, 0.4f, 0.5f, -0.6f, 0.7f, 0.8f, -0.9f, 1.0f, 0.2f, 0.1f}, {3 * h, h});
  const Tensor b = from_vector({0.05f, -0.05f, 0.1f, -0.1f, 0.2f, -0.3f}, {3 * h});
  const Tensor h0 = from_vector({0.5f, -0.4f}, {1, h});
  const RecurrentOutput r = gru_sequence(gx, w, b, h0);
  const std::vector<float> vx = gx.to_vector(), vw = w.to_vector(), vb = b.to_vector(), vh = h0.to_vector();
  for (int64_t j = 0; j < h; ++j) {
    auto rec = [&](int64_t k) {
      const int64_t row = k * h + j;
      return vb[size_t(row)] + vw[size_t(row * h)] * vh[0] + vw[size_t(row * h + 1)] * vh[1];
    };
    const float rg = sig(vx[size_t(j)] + rec(0)), z = sig(vx[size_t(h + j)] + rec(1));
    const float nv = std::tanh(vx[size_t(2 * h + j)] + rg * rec(2));
    const float hv = (1.f - z) * nv + z * vh[size_t(j)];
    VERIFY(std::fabs(r.h.at({0, j}) - hv) < 1e-6f);
  }
}

// Reversed: the output stays in time order, and the final state is the one after t = 0;
// it equals the forward op over the time-flipped sequence.
TEST(reverseIsTheFlippedSequence) {
  const Tensor gx = normal_leaf({2, 4, 12}, 51).detach(), w = normal_leaf({12, 3}, 52, 0.5f).detach();
  const Tensor flipped = index_select(gx, 1, from_vector({3, 2, 1, 0}, {4}));
  const RecurrentOutput a = lstm_sequence(gx, w, Tensor(), Tensor(), Tensor(), true);
  const RecurrentOutput b = lstm_sequence(flipped, w, Tensor(), Tensor(), Tensor(), false);
  const Tensor b_back = index_select(b.output, 1, from_vector({3, 2, 1, 0}, {4}));
  VERIFY(max(abs(a.output - b_back)).item() < 1e-6f);
  VERIFY(max(abs(a.h - b.h)).item() < 1e-6f);
  VERIFY(max(abs(a.c - b.c)).item() < 1e-6f);
}

TEST(badShapesAreNamed) {
  const Tensor w = zeros({8, 2});
  VERIFY(error_of<ShapeError>([&] { lstm_sequence(zeros({1, 3, 6}), w, Tensor(), Tensor(), Tensor()); })
             .find("input projection must have shape [batch, time, 8]") != std::string::npos);
  VERIFY(error_of<ShapeError>([&] { lstm_sequence(zeros({1, 3, 8}), zeros({8, 3}), Tensor(), Tensor(), Tensor()); })
             .find("weight_hh must have shape [4*hidden, hidden]") != std::string::npos);
  VERIFY(error_of<ShapeError>([&] { lstm_sequence(zeros({1, 3, 8}), w, Tensor(), zeros({2, 2}), Tensor()); })
             .find("h0 must have shape [1, 2]") != std::string::npos);
}

// ---- modules ---------------------------------------------------------------------------
TEST(parameterNamesAndShapesArePyTorchs) {
  nn::RecurrentOptions opt;
  opt.hidden_size = 5, opt.num_layers = 2, opt.bidirectional = true;
  nn::GRU gru(3, opt);
  const nn::NamedTensors p = gru.named_parameters();
  const std::vector<std::string> names{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                       "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse",
                                       "bias_hh_l0_reverse", "weight_ih_l1", "weight_hh_l1", "bias_ih_l1",
                                       "bias_hh_l1", "weight_ih_l1_reverse", "weight_hh_l1_reverse",
                                       "bias_ih_l1_reverse", "bias_hh_l1_reverse"};
  COMPARE(p.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) COMPARE(p[i].first, names[i]);
  COMPARE(p[0].second.shape(), (Shape{15, 3}));
  COMPARE(p[8].second.shape(), (Shape{15, 10}));  // layer 1 reads both directions
  COMPARE(p[9].second.shape(), (Shape{15, 5}));
  const float bound = 1.f / std::sqrt(5.f);
  for (const auto& [name, t] : p) VERIFY2(max(abs(t)).item() <= bound, name.c_str());
  COMPARE(gru.forward(zeros({4, 6, 3})).shape(), (Shape{4, 6, 10}));
}

// Bidirectional output = [forward direction, backward direction] from the ops directly.
TEST(bidirectionalConcatenatesDirections) {
  Generator gen(3);
  nn::RecurrentOptions opt;
  opt.hidden_size = 4, opt.bidirectional = true;
  nn::LSTM lstm(3, opt, &gen);
  const nn::NamedTensors p = lstm.named_parameters();
  const Tensor x = normal_leaf({2, 5, 3}, 61).detach();
  const Tensor y = lstm.forward(x);
  const Tensor fwd =
      lstm_sequence(linear(x, p[0].second, p[2].second), p[1].second, p[3].second, Tensor(), Tensor()).output;
  const Tensor bwd =
      lstm_sequence(linear(x, p[4].second, p[6].second), p[5].second, p[7].second, Tensor(), Tensor(), true).output;
  VERIFY(max(abs(y - concat({fwd, bwd}, 2))).item() < 1e-6f);
}

// Padded examples are their own first steps, as PyTorch's packed sequences: each example's
// outputs over its length are those of its steps alone, zeros after, and its final state is
// the state after its last step (backward direction: after step 0), through 2 layers both ways;
// also when no example fills the padding (the CPU then runs only the longest one's steps).
TEST(lengthsMakeEachExampleItsOwnSteps) {
  for (const char* type : {"LSTM", "GRU", "RNN"}) {
    Generator gen(8);
    nn::RecurrentOptions opt;
    opt.hidden_size = 3, opt.num_layers = 2, opt.bidirectional = true;
    const std::shared_ptr<nn::Recurrent> m = make_recurrent(type, 2, opt, &gen);
    const Tensor x = normal_leaf({3, 5, 2}, 63).detach();
    // All, some, none (counted as 1) of the 5 steps; then at most 3 of them.
    for (const std::vector<float>& lengths : {std::vector<float>{5, 2, 0}, std::vector<float>{3, 2, 0}}) {
      const std::string what = std::string(type) + " over lengths " + std::to_string(int(lengths[0])) + ", 2, 0";
      const nn::Recurrent::Result padded = m->run(x, from_vector(lengths, {3}));
      COMPARE(padded.output.shape(), (Shape{3, 5, 6}));
      COMPARE(padded.state.shape(), (Shape{3, 6}));
      const std::vector<float> out = padded.output.to_vector(), state = padded.state.to_vector();
      for (int64_t b = 0; b < 3; ++b) {
        const int64_t len = std::max<int64_t>(1, int64_t(lengths[size_t(b)]));
        const nn::Recurrent::Result alone = m->run(narrow(narrow(x, 0, b, 1), 1, 0, len), Tensor());
        const std::vector<float> want = alone.output.to_vector(), want_state = alone.state.to_vector();
        for (int64_t t = 0; t < 5; ++t)
          for (int64_t j = 0; j < 6; ++j) {
            const float got = out[size_t((b * 5 + t) * 6 + j)], expected = t < len ? want[size_t(t * 6 + j)] : 0.f;
            VERIFY2(std::abs(got - expected) <= 1e-5f, what + ": example " + std::to_string(b) + ", step " +
                                                           std::to_string(t) + ", unit " + std::to_string(j));
          }
        for (int64_t j = 0; j < 6; ++j)
          VERIFY2(std::abs(state[size_t(b * 6 + j)] - want_state[size_t(j)]) <= 1e-5f,
                  what + ": state of example " + std::to_string(b));
      }
    }
    // Lengths 3 and 1 of 4 steps (the CPU runs 3): gradients against finite differences.
    TV inputs{normal_leaf({2, 4, 2}, 64)};
    for (const Tensor& p : m->parameters()) inputs.push_back(p);
    expect_gradcheck(std::string(type) + " over lengths 3 and 1", [m](const TV& v) {
      const nn::Recurrent::Result r = m->run(v[0], from_vector({3, 1}, {2}));
      return concat({r.output.flatten(), r.state.flatten()}, 0);
    }, inputs);
  }
  nn::GRU gru(2, {3, 1, false, 0.f});
  VERIFY(error_of<ShapeError>([&] { gru.run(zeros({2, 4, 2}), zeros({3})); }).find("expected lengths [2]") !=
         std::string::npos);
  gru.set_carry_state(true);
  gru.train();
  VERIFY(error_of<ValueError>([&] { gru.run(zeros({2, 4, 2}), zeros({2})); }).find("carry_state") != std::string::npos);
}

TEST(dropoutOnlyBetweenLayersInTraining) {
  Generator gen(5);
  nn::RecurrentOptions opt;
  opt.hidden_size = 8, opt.num_layers = 2, opt.dropout = 0.5f;
  nn::LSTM lstm(3, opt, &gen);
  const Tensor x = normal_leaf({2, 4, 3}, 62).detach();
  lstm.eval();
  const Tensor e1 = lstm.forward(x), e2 = lstm.forward(x);
  VERIFY(max(abs(e1 - e2)).item() == 0.f);  // eval: deterministic
  lstm.train();
  const Tensor t1 = lstm.forward(x);
  VERIFY(max(abs(t1 - e1)).item() > 1e-4f);  // training: dropped units change the result
  VERIFY_THROWS(ValueError, nn::LSTM(3, {8, 1, false, 1.f}));
}

TEST(badInputIsNamed) {
  nn::RNN rnn(3, {4, 1, false, 0.f});
  VERIFY(error_of<ShapeError>([&] { rnn.forward(zeros({2, 3})); }).find("RNN: expected input [batch, time, 3]") !=
         std::string::npos);
}

// ---- the registry -----------------------------------------------------------------------
TEST(registryShapesAndErrors) {
  using P = std::map<std::string, graph::ParamValue>;
  const graph::InferenceResult ok = graph::infer_shapes(
      sequence_graph({7, 5}, {layer("lstm1", "LSTM", P{{"hidden_size", int64_t(6)}, {"bidirectional", true}}),
                              layer("gru1", "GRU", P{{"hidden_size", int64_t(4)}, {"num_layers", int64_t(2)}})}),
      nullptr);
  VERIFY(ok.problems.empty());
  COMPARE(ok.outputs.at("lstm1"), (std::vector<Shape>{{7, 12}, {12}}));  // every step's output, the final state
  COMPARE(ok.outputs.at("gru1"), (std::vector<Shape>{{7, 4}, {4}}));
  graph::Node flat = layer("flat", "Flatten");
  const graph::InferenceResult bad =
      graph::infer_shapes(sequence_graph({1, 28, 28}, {std::move(flat), layer("lstm1", "LSTM")}), nullptr);
  COMPARE(bad.problems.size(), size_t(1));
  COMPARE(bad.problems[0].message,
          std::string("LSTM 'lstm1' expects a sequence [N, T, features] but receives [N, 784] from 'flat' (an "
                      "Embedding or a Reshape to [T, F] makes one)"));
}

// parameter_count and the built module agree, for every type with layers and directions.
TEST(registryCountsWhatItBuilds) {
  for (const char* type : {"LSTM", "GRU", "RNN"}) {
    const graph::LayerType* t = graph::Registry::instance().find(type);
    VERIFY(t);
    COMPARE(t->category, std::string("Recurrent"));
    graph::Node n =
        layer("r", type, {{"hidden_size", int64_t(5)}, {"num_layers", int64_t(3)}, {"bidirectional", true}});
    Generator gen(1);
    const layers::BuiltNode b = layers::lowering(*t).build({n, {{4, 3}}, &gen});
    COMPARE(t->parameter_count(n, {{4, 3}}), double(b.module->num_parameters()));
    const std::vector<Tensor> out = b.run({zeros({2, 4, 3})});
    COMPARE(out.size(), size_t(2));
    COMPARE(out[0].shape(), (Shape{2, 4, 10}));
    COMPARE(out[1].shape(), (Shape{2, 10}));
    // macs: the products of both projections, per step, summed over layers and directions.
    const int64_t g = std::string(type) == "LSTM" ? 4 : std::string(type) == "GRU" ? 3 : 1;
    const double per_step = 2.0 * g * 5 * ((3 + 5) + 2 * (10 + 5));
    COMPARE(t->macs(n, {{4, 3}}, {{4, 10}}), 4 * per_step);
  }
}

// A sequence classifier reading the final state: GRU state -> Linear -> CrossEntropy learns which
// of two signals a sequence carries, which only its whole history tells (the state, not a step).
TEST(classifierOnTheStateTrains) {
  graph::Graph g = sequence_graph({8, 1}, {layer("gru", "GRU", {{"hidden_size", int64_t(8)}})});
  g.nodes.push_back(layer("fc", "Linear", {{"out_features", int64_t(2)}}));
  g.nodes.push_back(layer("loss", "CrossEntropy"));
  g.edges.push_back({{"gru", "state"}, {"fc", "input"}});
  g.edges.push_back({{"fc", "output"}, {"loss", "input"}});
  g.edges.push_back({{"in", "y"}, {"loss", "target"}});
  const graph::DatasetInfo info{{8, 1}, {}, 2};
  const layers::CompiledGraph c = layers::compile(g, info, 9);
  // Class 1: the sequence's sum is positive; noise on every step.
  Generator gen(12);
  const auto batch = [&](int64_t n) {
    const Tensor x = randn({n, 8, 1}, &gen);
    std::vector<float> labels;
    for (int64_t i = 0; i < n; ++i) labels.push_back(x.narrow(0, i, 1).sum().item() > 0 ? 1.f : 0.f);
    return std::pair{x, from_vector(labels, {n})};
  };
  optim::Adam adam(c.model->parameters(), {.lr = 0.03});
  float first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    const auto [x, y] = batch(32);
    adam.zero_grad();
    const Tensor loss = c.loss((*c.model)(x), y);
    loss.backward();
    adam.step();
    (step == 0 ? first : last) = loss.item();
  }
  c.model->eval();
  const auto [x, y] = batch(400);
  const std::vector<float> predicted = argmax((*c.model)(x), 1).to_vector(), want = y.to_vector();
  int right = 0;
  for (size_t i = 0; i < want.size(); ++i) right += predicted[i] == want[i];
  std::printf("INFO   : loss %.3f -> %.3f, accuracy %d / 400\n", first, last, right);
  VERIFY2(right >= 360, std::to_string(right) + " of 400 right");
  VERIFY(last < first / 2);
}

// ---- carried state (truncated BPTT) ----------------------------------------------------
// Two chunks with the state carried give the whole sequence's output (a GRU, 2 layers).
TEST(carriedStateContinuesTheSequence) {
  Generator gen(9);
  nn::GRU gru(2, {3, 2, false, 0.f}, &gen);
  const Tensor x = normal_leaf({2, 6, 2}, 71).detach();
  const Tensor full = gru.forward(x);
  gru.set_carry_state(true);
  const Tensor a = gru.forward(narrow(x, 1, 0, 3));
  const Tensor b = gru.forward(narrow(x, 1, 3, 3));
  VERIFY(max(abs(concat({a, b}, 1) - full)).item() < 1e-5f);
  gru.set_carry_state(false);  // turning it off drops the state: from zeros again
  VERIFY(max(abs(gru.forward(narrow(x, 1, 3, 3)) - b)).item() > 1e-4f);
}

TEST(carriedStateResets) {
  Generator gen(10);
  nn::RNN rnn(2, {3, 1, false, 0.f}, &gen);
  const Tensor x = normal_leaf({2, 3, 2}, 72).detach();
  const Tensor fresh = rnn.forward(x);
  rnn.set_carry_state(true);
  rnn.forward(x);
  VERIFY(max(abs(rnn.forward(x) - fresh)).item() > 1e-4f);  // carried
  rnn.reset_state();
  VERIFY(max(abs(rnn.forward(x) - fresh)).item() < 1e-6f);  // reset: from zeros again
  // A batch of another size starts from zeros, and then carries at its own size.
  const Tensor x3 = normal_leaf({3, 3, 2}, 73).detach();
  rnn.set_carry_state(false);
  const Tensor fresh3 = rnn.forward(x3);
  rnn.set_carry_state(true);
  rnn.forward(x);
  VERIFY(max(abs(rnn.forward(x3) - fresh3)).item() < 1e-6f);
  VERIFY(max(abs(rnn.forward(x3) - fresh3)).item() > 1e-4f);
  // Eval never carries: always from zeros.
  rnn.eval();
  VERIFY(max(abs(rnn.forward(x3) - fresh3)).item() < 1e-6f);
  VERIFY(max(abs(rnn.forward(x3) - fresh3)).item() < 1e-6f);
}

TEST(carriedStateIsDetached) {
  Generator gen(11);
  nn::LSTM lstm(2, {3, 1, false, 0.f}, &gen);
  lstm.set_carry_state(true);
  const Tensor x = normal_leaf({2, 3, 2}, 74).detach();
  const Tensor first = lstm.forward(x);
  const Tensor second = lstm.forward(x);
  // Backward from the second chunk alone succeeds after the first chunk's graph was freed
  // (no path into it), and twice in a row would fail only if it reached the first one.
  sum(first).backward();
  sum(second).backward();
  for (const Tensor& p : lstm.parameters()) VERIFY(p.grad().defined());
}

