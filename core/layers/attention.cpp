// The Attention family, over sequences [N, T, E]: multi-head self- and cross-attention, and
// positions, learned or fixed.
#include <cmath>
#include <limits>
#include <map>

#include "layers/families.h"
#include "layers/shape_rules.h"
#include "nn/layers.h"
#include "ops/ops.h"

namespace plexus::layers {
namespace {

struct AttentionParams {
  int64_t num_heads;
  bool causal;
  double dropout;
};

// Where the optional inputs are among a node's inputs (in port order: input, key, value,
// lengths), from their validated shapes: keys and values are sequences [S, E], lengths one number
// per example []. -1: not wired.
struct Wired {
  int key = -1, value = -1, lengths = -1;
  explicit Wired(const std::vector<Shape>& in) {
    for (int i = 1; i < int(in.size()); ++i) {
      if (in[size_t(i)].empty()) lengths = i;
      else if (key < 0) key = i;
      else value = i;
    }
  }
  // The input each of query, key and value comes from: key defaults to the input, value to the key.
  int query_source() const { return 0; }
  int key_source() const { return key < 0 ? 0 : key; }
  int value_source() const { return value < 0 ? key_source() : value; }
};

void add_multihead_attention(Registrar& r) {
  using P = AttentionParams;
  Layer<P> t;
  t.name = "MultiheadAttention";
  t.category = "Attention";
  t.display_name = "Multi-head attention";
  t.description = "Each position of the input gathers information from the positions it attends to, in num_heads "
                  "heads over the features: of the input itself (self-attention; with causal, only the earlier "
                  "positions), or of key and value when they are wired (cross-attention); PyTorch's "
                  "nn.MultiheadAttention. Without attention dropout it runs as one fused kernel that never "
                  "stores the T×T attention weights, so long sequences train in memory that grows with T, not T².";
  t.inputs = {{"input", "[N, T, E], E divisible by num_heads: the queries"},
              {"key", "[N, S, E]: the keys; the input when not wired", false},
              {"value", "[N, S, E]: the values; the key when not wired", false},
              {"lengths", "[N]: each example's number of keys (Sequence lengths); the keys after it are padding and "
                          "get no attention. All S keys when not wired", false}};
  t.outputs = {{"output", "[N, T, E]"}};
  t.params = {
      graph::param("num_heads", "Attention heads", &P::num_heads, 4, 1, 4096,
                   "Attention heads computed side by side; each sees E / heads of the features."),
      graph::param("causal", "Causal", &P::causal, true,
                   "Each position sees only itself and earlier positions (key and value as long as the input)."),
      graph::param("dropout", "Attention dropout", &P::dropout, 0, 0, 0.99,
                   "Dropout on the attention weights while training.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    std::map<std::string, size_t> at;  // wired port -> input index
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      at[c.input_ports[i]] = i;
      if (c.input_ports[i] == "lengths") {
        if (!c.inputs[i].empty())
          fail("lengths", c.node.label() + " expects lengths [N], one per example (from Sequence lengths), but "
                                           "receives " + batched(c.inputs[i]) + from(c, i));
      } else if (c.inputs[i].size() != 2) {
        fail(c.input_ports[i], c.node.label() + " expects " + c.input_ports[i] +
                                   " [N, T, E] (a sequence of T positions with E features each) but receives " +
                                   batched(c.inputs[i]) + from(c, i));
      }
    }
    const Shape& s = one_input(c);
    const int64_t heads = p.num_heads;
    if (s[1] % heads != 0)
      fail("input", c.node.label() + " splits the " + std::to_string(s[1]) + " features of " + batched(s) + from(c, 0) +
                        " into " + std::to_string(heads) + " heads, but " + std::to_string(s[1]) +
                        " is not divisible by " + std::to_string(heads) + " (change num_heads or the features)");
    if (!at.count("key")) {
      if (at.count("value"))
        fail("key", c.node.label() + ": value is wired but key is not (wire the keys too, or the values to key alone)");
      return {s};
    }
    const size_t k = at["key"];
    const Shape& key = c.inputs[k];
    if (key[1] != s[1])
      fail("key", c.node.label() + " attends with E = " + std::to_string(s[1]) + " features" + from(c, 0) +
                      ", so key must have " + std::to_string(s[1]) + " features too, but receives " + batched(key) +
                      from(c, k));
    if (at.count("value") && c.inputs[at["value"]] != key)
      fail("value", c.node.label() + " expects value of the key's shape " + batched(key) + " but receives " +
                        batched(c.inputs[at["value"]]) + from(c, at["value"]));
    if (p.causal && key[0] != s[0])
      fail("key", c.node.label() + " is causal, which needs as many keys as queries (T = " + std::to_string(s[0]) +
                      "), but key has S = " + std::to_string(key[0]) + " positions" + from(c, k) +
                      " (turn causal off for cross-attention)");
    return {s};
  };
  t.parameter_count = [](const P&, const std::vector<Shape>& in) {
    const double e = double(in.at(0)[1]);
    return 4 * e * e + 4 * e;
  };
  // The projections (E products per output: 2E per query position, the query's and out_proj's,
  // and 2E per key position, its key and value) and the two T×S×E products, scores and
  // weighted values.
  t.macs = [](const P&, const std::vector<Shape>& in, const std::vector<Shape>&) {
    const double time = double(in.at(0)[0]), keys = double(in.at(size_t(Wired(in).key_source()))[0]);
    const double e = double(in.at(0)[1]);
    return 2 * (time + keys) * e * e + 2 * time * keys * e;
  };
  t.build = [](const BuildContext& b, const P& p) -> BuiltNode {
    auto m = std::make_shared<nn::MultiheadAttention>(b.inputs.at(0)[1], p.num_heads, p.causal, float(p.dropout), b.gen);
    if (b.inputs.size() == 1) return single(m);
    return {m, [m = m.get(), w = Wired(b.inputs)](const std::vector<Tensor>& in) {
              return m->forward(in[0], in[size_t(w.key_source())], in[size_t(w.value_source())],
                                w.lengths < 0 ? Tensor() : in[size_t(w.lengths)]);
            }};
  };
  // MatMuls by slices of in_proj_weight, heads by Reshape/Transpose, the causal mask a
  // constant [T, T] of 0 and -inf added to the scores before Softmax.
  t.onnx = [](const OnnxContext& c, const P& p) {
    const int64_t time = c.inputs[0][0], e = c.inputs[0][1], heads = p.num_heads;
    // The tensors the queries, keys and values are projected from: key and value default as the
    // shape rule says.
    const Wired wired(c.inputs);
    const std::string sources[] = {c.input_names[0], c.input_names[size_t(wired.key_source())],
                                   c.input_names[size_t(wired.value_source())]};
    const int64_t keys = c.inputs[size_t(wired.key_source())][0];
    const Tensor w = c.out.weights(c.node.id + ".in_proj_weight"), b = c.out.weights(c.node.id + ".in_proj_bias");
    c.out.add_initializer(c.name("heads_shape"), std::vector<int64_t>{0, -1, heads, e / heads});
    const char* parts[] = {"q", "k", "v"};
    for (int64_t i = 0; i < 3; ++i) {
      const std::string part = parts[i];
      c.out.add_initializer(c.name(part + "_weight_t"), narrow(w, 0, i * e, e).t().contiguous());
      c.out.add_initializer(c.name(part + "_bias"), narrow(b, 0, i * e, e).contiguous());
      c.out.add_node("MatMul", {sources[i], c.name(part + "_weight_t")}, {c.name(part + "_product")});
      c.out.add_node("Add", {c.name(part + "_product"), c.name(part + "_bias")}, {c.name(part + "_flat")});
      c.out.add_node("Reshape", {c.name(part + "_flat"), c.name("heads_shape")}, {c.name(part + "_split")});
      // q and v to [N, H, T, D]; k to [N, H, D, T], ready for q·kᵀ.
      c.out.add_node("Transpose", {c.name(part + "_split")}, {c.name(part + "_heads")},
                     {{"perm", i == 1 ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3}}});
    }
    c.out.add_initializer(c.name("scale"), full({}, 1.f / std::sqrt(float(e / heads))));
    c.out.add_node("MatMul", {c.name("q_heads"), c.name("k_heads")}, {c.name("product")});
    std::string scores = c.name("scores");
    c.out.add_node("Mul", {c.name("product"), c.name("scale")}, {scores});
    if (p.causal) {
      Tensor mask = zeros({time, time});
      for (int64_t i = 0; i < time; ++i)
        for (int64_t j = i + 1; j < time; ++j) mask.data()[i * time + j] = -std::numeric_limits<float>::infinity();
      c.out.add_initializer(c.name("causal_mask"), mask);
      c.out.add_node("Add", {scores, c.name("causal_mask")}, {c.name("masked_scores")});
      scores = c.name("masked_scores");
    }
    if (wired.lengths > 0) {
      // 0 for each example's keys, -inf after them: [N, 1, 1, S], from max(length, 1) as Plexus does.
      std::vector<float> positions;
      for (int64_t j = 0; j < keys; ++j) positions.push_back(float(j));
      c.out.add_initializer(c.name("key_positions"), from_vector(positions, {1, keys}));
      c.out.add_initializer(c.name("one"), full({}, 1.f));
      c.out.add_initializer(c.name("zero"), full({}, 0.f));
      c.out.add_initializer(c.name("minus_inf"), full({}, -std::numeric_limits<float>::infinity()));
      c.out.add_initializer(c.name("padding_shape"), std::vector<int64_t>{-1, 1, 1, keys});
      c.out.add_initializer(c.name("axis1"), std::vector<int64_t>{1});
      c.out.add_node("Max", {c.input_names[size_t(wired.lengths)], c.name("one")}, {c.name("length")});
      c.out.add_node("Unsqueeze", {c.name("length"), c.name("axis1")}, {c.name("length_column")});
      c.out.add_node("Less", {c.name("key_positions"), c.name("length_column")}, {c.name("valid")});
      c.out.add_node("Where", {c.name("valid"), c.name("zero"), c.name("minus_inf")}, {c.name("padding_2d")});
      c.out.add_node("Reshape", {c.name("padding_2d"), c.name("padding_shape")}, {c.name("padding")});
      c.out.add_node("Add", {scores, c.name("padding")}, {c.name("unpadded_scores")});
      scores = c.name("unpadded_scores");
    }
    c.out.add_node("Softmax", {scores}, {c.name("weights")}, {{"axis", int64_t(-1)}});
    c.out.add_node("MatMul", {c.name("weights"), c.name("v_heads")}, {c.name("attended")});
    c.out.add_node("Transpose", {c.name("attended")}, {c.name("attended_t")}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    c.out.add_initializer(c.name("joined_shape"), std::vector<int64_t>{0, -1, e});
    c.out.add_node("Reshape", {c.name("attended_t"), c.name("joined_shape")}, {c.name("joined")});
    c.out.add_initializer(c.name("out_weight_t"), c.out.weights(c.node.id + ".out_proj.weight").t().contiguous());
    c.out.add_node("MatMul", {c.name("joined"), c.name("out_weight_t")}, {c.name("out_product")});
    c.out.add_node("Add", {c.name("out_product"), c.parameter("out_proj.bias")}, c.output_names);
  };
  // torch.nn.MultiheadAttention (batch first) has Plexus' parameters; the causal mask and the
  // keys' padding are its boolean masks (True: not attended), each example keeping at least
  // one key as Plexus does.
  t.pytorch = [](const CodeContext& c, const P& p) {
    const Wired wired(c.inputs);
    const std::string& query = c.input();
    c.out.module("nn.MultiheadAttention(" + std::to_string(c.inputs[0][1]) + ", " + std::to_string(p.num_heads) +
                 py_kwarg("dropout", py(p.dropout), "0.0") + ", batch_first=True)");
    std::string args = query + ", " + c.input_names[size_t(wired.key_source())] + ", " +
                       c.input_names[size_t(wired.value_source())];
    if (p.causal) {
      const std::string t = std::to_string(c.inputs[0][0]);
      c.out.line(c.local("mask") + " = torch.ones(" + t + ", " + t + ", dtype=torch.bool, device=" + query +
                 ".device).triu(1)");
      args += ", attn_mask=" + c.local("mask");
    }
    if (wired.lengths > 0) {
      const std::string keys = std::to_string(c.inputs[size_t(wired.key_source())][0]);
      c.out.line(c.local("padding") + " = torch.arange(" + keys + ", device=" + query + ".device)[None, :] >= " +
                 c.input_names[size_t(wired.lengths)] + ".clamp(min=1)[:, None]");
      args += ", key_padding_mask=" + c.local("padding");
    }
    c.assign(c.call(args + ", need_weights=False") + "[0]");
  };
  t.cpp = [](const CodeContext& c, const P& p) {
    c.out.module("nn::MultiheadAttention(" + std::to_string(c.inputs[0][1]) + ", " + std::to_string(p.num_heads) +
                 ", " + cpp(p.causal) + ", " + cpp(p.dropout) + ")");
    const Wired wired(c.inputs);
    if (c.input_names.size() == 1) return c.assign(c.call(c.input()));
    c.assign(c.call(c.input() + ", " + c.input_names[size_t(wired.key_source())] + ", " +
                    c.input_names[size_t(wired.value_source())] +
                    (wired.lengths > 0 ? ", " + c.input_names[size_t(wired.lengths)] : "")));
  };
  r.add(std::move(t));
}

struct PositionalParams {
  int64_t max_len;
  std::string kind;
};

void add_positional_embedding(Registrar& r) {
  using P = PositionalParams;
  Layer<P> t;
  t.name = "PositionalEmbedding";
  t.category = "Attention";
  t.display_name = "Positional embedding";
  t.description = "Adds a vector for each position 0..T-1, learned or fixed sines and cosines, so that attention "
                  "can tell positions apart.";
  t.inputs = {{"input", "[N, T, E], T at most max_len"}};
  t.outputs = {{"output", "[N, T, E]"}};
  t.params = {graph::param("max_len", "Longest sequence", &P::max_len, 64, 1, graph::kBig,
                           "The longest sequence; one vector per position."),
              graph::param("kind", "Positions", &P::kind, "learned", {"learned", "sinusoidal"},
                           "Learned: a trained vector per position, as GPT learns them. Sinusoidal: the fixed sines "
                           "and cosines of geometric frequencies of the original Transformer, nothing to learn.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    require_rank(c, 2, "[N, T, E] (a sequence of T positions with E features each)");
    const Shape& s = one_input(c);
    if (s[0] > p.max_len)
      fail("input", c.node.label() + " receives sequences of T = " + std::to_string(s[0]) + " positions" + from(c, 0) +
                        " but max_len is " + std::to_string(p.max_len) + " (raise max_len to at least " +
                        std::to_string(s[0]) + ")");
    return {s};
  };
  t.parameter_count = [](const P& p, const std::vector<Shape>& in) {
    return p.kind == "learned" ? double(p.max_len) * double(in.at(0)[1]) : 0.0;
  };
  t.build = [](const BuildContext& b, const P& p) -> BuiltNode {
    const int64_t e = b.inputs.at(0)[1];
    if (p.kind == "learned") return single(std::make_shared<nn::PositionalEmbedding>(p.max_len, e, b.gen));
    return single(std::make_shared<nn::SinusoidalPositions>(p.max_len, e));
  };
  // The table (weight or pe) cut to T rows, T read from the input's shape, and added.
  t.onnx = [](const OnnxContext& c, const P& p) {
    c.out.add_initializer(c.name("one"), std::vector<int64_t>{1});
    c.out.add_initializer(c.name("two"), std::vector<int64_t>{2});
    c.out.add_initializer(c.name("zero"), std::vector<int64_t>{0});
    c.out.add_node("Shape", c.input_names, {c.name("shape")});
    c.out.add_node("Slice", {c.name("shape"), c.name("one"), c.name("two")}, {c.name("time")});
    c.out.add_node("Slice", {c.parameter(p.kind == "learned" ? "weight" : "pe"), c.name("zero"), c.name("time"),
                             c.name("zero")},
                   {c.name("positions")});
    c.out.add_node("Add", {c.input_names[0], c.name("positions")}, c.output_names);
  };
  // Learned: an nn.Embedding whose rows are the positions' vectors; sinusoidal: its fixed table
  // "pe" as a buffer (loaded with the weights).
  t.pytorch = [](const CodeContext& c, const P& p) {
    const std::string e = std::to_string(c.inputs[0][1]), length = std::to_string(p.max_len);
    if (p.kind == "learned") {
      c.out.module("nn.Embedding(" + length + ", " + e + ")");
      return c.assign(c.input() + " + " + c.self() + ".weight[: " + c.input() + ".shape[1]]");
    }
    c.out.helper("SinusoidalPositions", R"(class SinusoidalPositions(nn.Module):
    """Adds Plexus' fixed sines and cosines of each position (the table "pe" comes with the weights)."""

    def __init__(self, max_len, dim):
        super().__init__()
        self.register_buffer("pe", torch.zeros(max_len, dim))

    def forward(self, x):
        return x + self.pe[: x.shape[1]]
)");
    module_call(c, "SinusoidalPositions(" + length + ", " + e + ")");
  };
  t.cpp = [](const CodeContext& c, const P& p) {
    module_call(c, std::string(p.kind == "learned" ? "nn::PositionalEmbedding(" : "nn::SinusoidalPositions(") +
                       std::to_string(p.max_len) + ", " + std::to_string(c.inputs[0][1]) + ")");
  };
  r.add(std::move(t));
}

}  // namespace

void add_attention_layers(Registrar& r) {
  add_multihead_attention(r);
  add_positional_embedding(r);
}

}  // namespace plexus::layers
