// The Recurrent family: LSTM, GRU and RNN over a sequence [N, T, features] (batch first), as
// nn::Recurrent. ONNX's LSTM / GRU / RNN (opset 13) are time-major and order the gates their
// own way (LSTM i,o,f,c; GRU z,r,h), so the export transposes around one node per layer,
// reorders the gate blocks of PyTorch's weights and stacks the directions; GRU's
// linear_before_reset=1 is PyTorch's b_hn inside r ⊙ (…). A second output port, `state`, gives
// the last layer's final hidden state (ONNX's Y_h of the last layer) for a classifier to read;
// an optional `lengths` input makes each example its own first steps (ONNX's sequence_lens).
#include "autograd/grad_mode.h"
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "nn/layers.h"
#include "ops/ops.h"
#include "util/text.h"

namespace plexus::layers {
namespace {

struct RecurrentParams {
  int64_t hidden_size, num_layers;
  bool bidirectional;
  double dropout;
  int64_t directions() const { return bidirectional ? 2 : 1; }
};

struct RecurrentKind {
  const char* name;
  const char* display;
  const char* description;
  int64_t gates;
  std::vector<int64_t> onnx_gate_order;  // PyTorch's gate blocks in ONNX's order
};

void add_recurrent(Registrar& r, const RecurrentKind& k) {
  using P = RecurrentParams;
  Layer<P> t;
  t.name = k.name;
  t.category = "Recurrent";
  t.display_name = k.display;
  t.description = k.description;
  t.inputs = {{"input", "a sequence [N, T, features]"},
              {"lengths", "[N]: each example's length (Sequence lengths); its steps after it are padding, which "
                          "neither direction reads and whose outputs are zeros. Every step when not wired", false}};
  t.outputs = {{"output", "the output at every step [N, T, hidden_size x directions]"},
               {"state", "the last layer's final hidden state [N, hidden_size x directions]: after the last step, and "
                         "for the backward direction after the first (PyTorch's h_n of the last layer, directions side "
                         "by side)"}};
  t.params = {
      graph::param("hidden_size", "Hidden size", &P::hidden_size, 128, 1, 65536, "The units of the hidden state."),
      graph::param("num_layers", "Layers", &P::num_layers, 1, 1, 8,
                   "Recurrent layers stacked, each reading the previous one's outputs."),
      graph::param("bidirectional", "Bidirectional", &P::bidirectional, false,
                   "Also runs backward in time; the two directions' outputs are side by side."),
      graph::param("dropout", "Dropout between layers", &P::dropout, 0, 0, 0.99,
                   "Dropout on the outputs of every layer but the last, while training.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    const Shape& s = one_input(c);
    if (s.size() != 2)
      fail("input", c.node.label() + " expects a sequence [N, T, features] but receives " + batched(s) + from(c, 0) +
                        " (an Embedding or a Reshape to [T, F] makes one)");
    if (c.inputs.size() > 1 && !c.inputs[1].empty())
      fail("lengths", c.node.label() + " expects lengths [N], one per example (from Sequence lengths), but receives " +
                          batched(c.inputs[1]) + from(c, 1));
    return {{s[0], p.hidden_size * p.directions()}, {p.hidden_size * p.directions()}};
  };
  // Per layer and direction: W_ih [G*H, in], W_hh [G*H, H] and two biases [G*H].
  auto per_direction = [g = k.gates](const P& p, const Shape& in, auto&& f) {
    const int64_t h = p.hidden_size, dirs = p.directions();
    for (int64_t l = 0; l < p.num_layers; ++l) f(double(g * h), double(l == 0 ? in.back() : h * dirs), double(h), dirs);
  };
  t.parameter_count = [per_direction](const P& p, const std::vector<Shape>& in) {
    double n = 0;
    per_direction(p, in.at(0), [&n](double gh, double fin, double h, int64_t dirs) { n += double(dirs) * gh * (fin + h + 2); });
    return n;
  };
  // Every step: the input projection and the recurrent product of each layer and direction.
  t.macs = [per_direction](const P& p, const std::vector<Shape>& in, const std::vector<Shape>&) {
    double m = 0;
    per_direction(p, in.at(0), [&m](double gh, double fin, double h, int64_t dirs) { m += double(dirs) * gh * (fin + h); });
    return m * double(in.at(0)[0]);
  };
  t.build = [name = std::string(k.name)](const BuildContext& b, const P& p) {
    nn::RecurrentOptions o;
    o.hidden_size = p.hidden_size;
    o.num_layers = p.num_layers;
    o.bidirectional = p.bidirectional;
    o.dropout = float(p.dropout);
    const int64_t in = b.inputs.at(0).back();
    std::shared_ptr<nn::Recurrent> m;
    if (name == "LSTM") m = std::make_shared<nn::LSTM>(in, o, b.gen);
    else if (name == "GRU") m = std::make_shared<nn::GRU>(in, o, b.gen);
    else m = std::make_shared<nn::RNN>(in, o, b.gen);
    return BuiltNode{m, BuiltNode::Run([raw = m.get()](const std::vector<Tensor>& in) {
                       nn::Recurrent::Result r = raw->run(in.at(0), in.size() > 1 ? in[1] : Tensor());
                       return std::vector<Tensor>{std::move(r.output), std::move(r.state)};
                     })};
  };
  t.onnx = [k](const OnnxContext& c, const P& p) {
    NoGradGuard no_grad;
    const int64_t h = p.hidden_size, layers = p.num_layers, dirs = p.directions();
    // [G*H, …] in PyTorch's gate order -> ONNX's.
    auto reorder = [&](const Tensor& w) {
      std::vector<Tensor> blocks;
      for (int64_t g : k.onnx_gate_order) blocks.push_back(w.narrow(0, g * h, h));
      return concat(blocks, 0);
    };
    auto stacked = [&](int64_t l, const std::function<Tensor(const std::string& suffix)>& one) {
      std::vector<Tensor> per_dir;
      for (int64_t d = 0; d < dirs; ++d)
        per_dir.push_back(one("_l" + std::to_string(l) + (d ? "_reverse" : "")).unsqueeze(0));
      return concat(per_dir, 0).contiguous();
    };
    auto weight = [&](const std::string& name) { return c.out.weights(c.node.id + "." + name); };
    // Lengths: ONNX's sequence_lens (int32), clamped to [1, T] as Plexus clamps them.
    std::vector<std::string> lengths;
    if (c.input_names.size() > 1) {
      c.out.add_initializer(c.name("one"), full({}, 1.f));
      c.out.add_initializer(c.name("steps"), full({}, float(c.inputs[0][0])));
      c.out.add_node("Max", {c.input_names[1], c.name("one")}, {c.name("at_least_one")});
      c.out.add_node("Min", {c.name("at_least_one"), c.name("steps")}, {c.name("clamped")});
      c.out.add_node("Cast", {c.name("clamped")}, {c.name("sequence_lens")}, {{"to", kOnnxInt32}});
      lengths.push_back(c.name("sequence_lens"));
    }
    c.out.add_initializer(c.name("reshape"), std::vector<int64_t>{0, 0, -1});
    c.out.add_node("Transpose", {c.input_names[0]}, {c.name("x_l0")}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
    for (int64_t l = 0; l < layers; ++l) {
      const std::string L = "_l" + std::to_string(l);
      c.out.add_initializer(c.name("W" + L), stacked(l, [&](const std::string& sfx) { return reorder(weight("weight_ih" + sfx)); }));
      c.out.add_initializer(c.name("R" + L), stacked(l, [&](const std::string& sfx) { return reorder(weight("weight_hh" + sfx)); }));
      c.out.add_initializer(c.name("B" + L), stacked(l, [&](const std::string& sfx) {
                              return concat({reorder(weight("bias_ih" + sfx)), reorder(weight("bias_hh" + sfx))}, 0);
                            }));
      OnnxAttributes attrs{{"hidden_size", h}};
      if (p.bidirectional) attrs.push_back({"direction", std::string("bidirectional")});
      if (k.gates == 3) attrs.push_back({"linear_before_reset", int64_t(1)});
      // Y [T, dirs, N, H] -> [T, N, dirs, H] -> [T, N, dirs*H], the next layer's input.
      // The last layer's Y_h [dirs, N, H] is the state output: [N, dirs, H], then [N, dirs*H].
      const bool last = l + 1 == layers;
      std::vector<std::string> outs{c.name("y" + L)};
      if (last) outs.push_back(c.name("y_h"));
      std::vector<std::string> ins{c.name("x" + L), c.name("W" + L), c.name("R" + L), c.name("B" + L)};
      ins.insert(ins.end(), lengths.begin(), lengths.end());
      c.out.add_node(k.name, ins, outs, attrs);
      if (last) {
        c.out.add_node("Transpose", {c.name("y_h")}, {c.name("y_ht")}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
        c.out.add_initializer(c.name("state_shape"), std::vector<int64_t>{0, -1});
        c.out.add_node("Reshape", {c.name("y_ht"), c.name("state_shape")}, {c.output_names.at(1)});
      }
      c.out.add_node("Transpose", {c.name("y" + L)}, {c.name("yt" + L)}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
      c.out.add_node("Reshape", {c.name("yt" + L), c.name("reshape")}, {c.name("x_l" + std::to_string(l + 1))});
    }
    c.out.add_node("Transpose", {c.name("x_l" + std::to_string(layers))}, {c.output_names.at(0)},
                   {{"perm", std::vector<int64_t>{1, 0, 2}}});
  };
  // torch.nn's LSTM, GRU and RNN (batch first) have Plexus' parameter names, shapes and gate
  // order. With lengths, the sequence is packed, each example cut to its length clamped to
  // [1, T] as Plexus clamps it, so both directions read only its steps; unpacked, the steps
  // after it are zeros. The state is h_n's last layer, its directions side by side.
  t.pytorch = [name = std::string(k.name)](const CodeContext& c, const P& p) {
    const std::string steps = std::to_string(c.inputs[0][0]);
    c.out.module("nn." + name + "(" + std::to_string(c.inputs[0].back()) + ", " + std::to_string(p.hidden_size) +
                 py_kwarg("num_layers", std::to_string(p.num_layers), "1") +
                 py_kwarg("dropout", py(p.dropout), "0.0") + py_kwarg("bidirectional", py(p.bidirectional), "False") +
                 ", batch_first=True)");
    const bool packed = c.input_names.size() > 1;
    std::string x = c.input();
    if (packed) {
      c.out.line(c.local("packed") + " = nn.utils.rnn.pack_padded_sequence(" + x + ", " + c.input_names[1] +
                 ".clamp(1, " + steps + ").long().cpu(), batch_first=True, enforce_sorted=False)");
      x = c.local("packed");
    }
    const std::string output = !c.used(0) ? "_" : packed ? c.local("packed_output") : c.output_names[0];
    const std::string h = c.used(1) ? c.local("h") : "_";
    c.out.line(output + ", " + (name == "LSTM" ? "(" + h + ", _)" : h) + " = " + c.call(x));
    if (c.used(0) && packed)
      c.out.line(c.output_names[0] + ", _ = nn.utils.rnn.pad_packed_sequence(" + output +
                 ", batch_first=True, total_length=" + steps + ")");
    if (c.used(1))
      c.out.line(c.output_names[1] + " = " +
                 (p.bidirectional ? "torch.cat([" + h + "[-2], " + h + "[-1]], dim=1)" : h + "[-1]"));
  };
  // The core's module itself, its options named; with lengths, or when the state is read, its
  // run() gives both outputs.
  t.cpp = [name = std::string(k.name)](const CodeContext& c, const P& p) {
    std::string options = ".hidden_size = " + std::to_string(p.hidden_size);  // and the options not at their defaults
    if (p.num_layers != 1) options += ", .num_layers = " + std::to_string(p.num_layers);
    if (p.bidirectional) options += ", .bidirectional = true";
    if (p.dropout != 0) options += ", .dropout = " + cpp(p.dropout);
    c.out.module("nn::" + name + "(" + std::to_string(c.inputs[0].back()) + ", nn::RecurrentOptions{" + options + "})");
    if (!c.used(1)) return c.assign(c.call(join(c.input_names)));
    const std::string lengths = c.input_names.size() > 1 ? c.input_names[1] : "Tensor()";
    c.out.line("const nn::Recurrent::Result " + c.local("run") + " = " + c.self() + "->run(" + c.input() + ", " +
               lengths + ");");
    if (c.used(0)) c.out.assign(c.output_names[0], c.local("run") + ".output");
    c.out.assign(c.output_names[1], c.local("run") + ".state");
  };
  r.add(std::move(t));
}

}  // namespace

void add_recurrent_layers(Registrar& r) {
  add_recurrent(r, {"LSTM", "LSTM (long short-term memory)",
                    "A recurrent layer with input, forget and output gates and a cell state.", 4, {0, 3, 1, 2}});
  add_recurrent(r, {"GRU", "GRU (gated recurrent unit)", "A recurrent layer with reset and update gates.", 3, {1, 0, 2}});
  add_recurrent(r, {"RNN", "RNN (tanh)", "A plain recurrent layer: h' = tanh(W_ih x + W_hh h + b).", 1, {0}});
}

}  // namespace plexus::layers
