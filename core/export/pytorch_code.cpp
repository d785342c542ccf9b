#include "export/pytorch_code.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "graph/inference.h"
#include "graph/inputs.h"
#include "graph/registry.h"
#include "io/atomic_file.h"
#include "layers/lowering.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::exporter {
namespace {

using graph::Node;

// "Linear 'fc1'", and the node's id where its name is another.
std::string where(const Node& n) {
  return n.label() + (n.name.empty() || n.name == n.id ? "" : " (node " + n.id + ")");
}

[[noreturn]] void fail(const std::string& message) { throw ValueError("PyTorch export: " + message); }

// Names a node's submodule or variable must not take: Python's keywords, the file's own
// top-level names and forward's argument, and nn.Module's attributes (a submodule named
// `eval` would be hidden by the method).
const std::set<std::string>& reserved() {
  // clang-format off
  static const std::set<std::string> names{
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
      "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
      "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "torch", "nn", "json", "struct", "sys", "_",
      "x", "self", "standardise", "load_weights", "read_safetensors", "pool_sequence", "SinusoidalPositions",
      "RMSNorm", "_DTYPES", "SUBMODULES", "INPUT_SHAPE", "INPUT_MEAN", "INPUT_STD", "CLASS_NAMES", "forward",
      "training", "eval", "train", "to", "cuda", "cpu", "float", "double", "half", "bfloat16", "apply", "modules",
      "children", "parameters", "buffers", "state_dict", "load_state_dict", "named_modules", "named_children",
      "named_parameters", "named_buffers", "type", "zero_grad", "register_buffer", "register_parameter",
      "register_module", "add_module", "extra_repr", "requires_grad_", "share_memory", "get_submodule",
      "get_parameter", "get_buffer", "dump_patches"};
  // clang-format on
  return names;
}

// A valid Python identifier for a node id, unique among `taken`: "conv-1" -> conv_1, "1x1" -> n1x1, "in" -> in_.
std::string python_name(const std::string& id, std::set<std::string>& taken) {
  std::string s;
  for (unsigned char ch : id) s += std::isalnum(ch) || ch == '_' ? char(ch) : '_';
  if (s.empty()) s = "node";
  if (std::isdigit((unsigned char)s[0])) s = "n" + s;
  std::string name = s;
  if (reserved().count(name)) name += "_";
  for (int i = 2; taken.count(name); ++i) name = s + "_" + std::to_string(i);
  taken.insert(name);
  return name;
}

// "mnist_mlp" -> MnistMlp: the class's name, from the project's.
std::string class_name(const std::string& project) {
  std::string out;
  bool upper = true;
  for (unsigned char ch : project) {
    if (!std::isalnum(ch)) {
      upper = true;
      continue;
    }
    out += upper ? char(std::toupper(ch)) : char(ch);
    upper = false;
  }
  if (out.empty() || std::isdigit((unsigned char)out[0])) out = "Model" + out;
  return out;
}

std::string float_list(const std::vector<float>& v) {
  std::string s;
  for (float f : v) s += (s.empty() ? "" : ", ") + shortest_float_text(f);
  return "[" + s + "]";
}

// Collects what the rules write: __init__'s submodules, forward's lines, the helpers.
class CodeEmitter final : public layers::PytorchEmitter {
 public:
  void begin(const Node& node, const std::string& name) {
    node_ = &node;
    name_ = name;
  }
  void module(const std::string& constructor) override {
    init_.push_back("self." + name_ + " = " + constructor);
    submodules_.emplace_back(node_->id, name_);
  }
  void line(const std::string& code) override { forward_.push_back(code); }
  void helper(const std::string& name, const std::string& code) override {
    if (std::find(helper_names_.begin(), helper_names_.end(), name) != helper_names_.end()) return;
    helper_names_.push_back(name);
    helpers_.push_back(code);
  }

  std::vector<std::string> init_, forward_, helpers_;
  std::vector<std::pair<std::string, std::string>> submodules_;  // node id, submodule

 private:
  std::vector<std::string> helper_names_;
  const Node* node_ = nullptr;
  std::string name_;
};

constexpr const char* kLoader = R"PY(
_DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
           "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
           "BOOL": torch.bool}


def read_safetensors(path):
    """The tensors and metadata of a safetensors file, read with the standard library: an 8-byte
    little-endian header length, a JSON header {name: {dtype, shape, data_offsets}} and
    "__metadata__", then the tensors' little-endian bytes."""
    if sys.byteorder != "little":
        raise RuntimeError("read_safetensors reads little-endian data on little-endian machines only")
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
        data = f.read()
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        dtype = _DTYPES[entry["dtype"]]
        flat = torch.frombuffer(bytearray(data[begin:end]), dtype=dtype) if end > begin else torch.zeros(0, dtype=dtype)
        tensors[name] = flat.reshape(entry["shape"])
    return tensors, metadata


def load_weights(model, path):
    """Loads a Plexus run checkpoint (best.safetensors, final.safetensors) or weights file into
    `model`, and puts it in evaluation mode."""
    tensors, metadata = read_safetensors(path)
    checkpoint = "plexus.format" in metadata  # its tensors are "model.<node>.<param>" and "optim.*"
    state = {}
    for name, tensor in tensors.items():
        if checkpoint:
            if not name.startswith("model."):
                continue  # the optimizer's state
            name = name[len("model."):]
        node, _, param = name.partition(".")
        if node not in SUBMODULES:
            raise ValueError(f"{path}: tensor {name!r} belongs to no node of this model")
        state[SUBMODULES[node] + "." + param] = tensor
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("num_batches_tracked")]  # a count, unused in evaluation
    if missing or unexpected:
        raise ValueError(f"{path} does not fit this model: missing {missing}, unexpected {unexpected}")
    return model.eval()
)PY";

}  // namespace

std::string pytorch_code(const session::TrainedModel& m, const CodeOptions& options, CodeSummary* summary) {
  const graph::Graph& g = m.project;
  const graph::Registry& registry = graph::Registry::instance();
  const graph::GraphIndex index(g);
  const graph::InferenceResult shapes = graph::infer_shapes(index, &m.info);

  // Every loss's prediction, in graph order: the edge into its "input" port.
  std::vector<size_t> predictions, ends;
  for (const layers::LossTerm& term : m.compiled.terms) {
    const Node* loss = index.find(term.node);
    if (!loss) fail("the project has no loss node '" + term.node + "' (the compiled model's)");
    size_t prediction = graph::GraphIndex::npos;
    for (size_t e : index.edges_into(loss->id))
      if (g.edges[e].to.port == "input") prediction = e;
    if (prediction == graph::GraphIndex::npos || index.source[prediction] == graph::GraphIndex::npos)
      fail(where(*loss) + " has no prediction input");
    predictions.push_back(prediction);
    ends.push_back(index.source[prediction]);
  }
  const std::vector<char> needed = index.feeding(ends);

  // Names: each needed node's, then the variables of the output ports something reads.
  const std::string cls = class_name(options.name);
  std::set<std::string> taken{cls};
  std::map<std::string, std::string> name_of;
  for (const std::string& id : shapes.order)
    if (needed[index.node.at(id)]) name_of[id] = python_name(id, taken);
  std::set<std::pair<std::string, std::string>> read;  // (node, port)
  for (size_t e = 0; e < g.edges.size(); ++e)
    if (index.target[e] != graph::GraphIndex::npos && needed[index.target[e]])
      read.insert({g.edges[e].from.node, g.edges[e].from.port});
  for (size_t e : predictions) read.insert({g.edges[e].from.node, g.edges[e].from.port});

  CodeEmitter emitter;
  std::map<std::pair<std::string, std::string>, std::string> variable;  // (node, port) -> Python variable
  for (const std::string& id : shapes.order) {
    if (!needed[index.node.at(id)]) continue;
    const Node& node = *index.find(id);
    const graph::LayerType& type = *registry.find(node.type);
    const layers::PytorchRule& rule = layers::lowering(type).pytorch;
    if (!rule) fail(where(node) + ": layer type " + type.name + " has no PyTorch export rule");
    const std::string& name = name_of.at(id);
    std::vector<Shape> in_shapes;
    std::vector<std::string> in_names;
    std::vector<int64_t> columns;
    if (type.is_input()) {
      in_names.push_back("x");
      columns = layers::input_columns(graph::input_read(node), m.info);
    }
    for (const auto& [port, edges] : graph::input_edges(index, node, type))
      for (size_t e : edges) {
        in_names.push_back(variable.at({g.edges[e].from.node, g.edges[e].from.port}));
        in_shapes.push_back(*shapes.edge_shapes[e]);
      }
    const std::vector<graph::PortSpec> out_ports = type.outputs_of(node);
    std::vector<std::string> out_names;
    for (const graph::PortSpec& p : out_ports) {
      std::string v = "_";
      if (read.count({id, p.name}))
        v = type.is_input() && columns.empty() ? "x" : out_ports.size() == 1 ? name : name + "_" + p.name;
      out_names.push_back(v);
    }
    emitter.begin(node, name);
    try {
      rule({node, in_shapes, shapes.outputs.at(id), in_names, out_names, name, columns, emitter});
    } catch (const layers::CodeUnsupported& u) {
      fail(where(node) + " cannot be exported: " + u.reason);
    }
    for (size_t i = 0; i < out_names.size(); ++i) variable[{id, out_ports[i].name}] = out_names[i];
  }

  const bool standardised = !m.normalization.empty();
  std::string returned;
  for (size_t e : predictions)
    returned += (returned.empty() ? "" : ", ") + variable.at({g.edges[e].from.node, g.edges[e].from.port});
  std::vector<std::string> loss_names;
  for (const layers::LossTerm& term : m.compiled.terms) loss_names.push_back(term.node);

  std::string s;
  s += "\"\"\"" + (options.name.empty() ? std::string("A Plexus model") : options.name) +
       ": a PyTorch model exported by Plexus (plexus-cli export --pytorch).\n\n"
       "Needs only Python 3 and PyTorch. Use:\n\n"
       "    model = load_weights(" +
       cls +
       "(), \"best.safetensors\")  # a run checkpoint or weights file\n"
       "    with torch.no_grad():\n"
       "        out = model(x)  # x: raw inputs [N, *INPUT_SHAPE]\n\n"
       "or run it, `python3 " +
       (options.name.empty() ? "model" : options.name) +
       ".py WEIGHTS`, to print the output for a batch of zeros.\n\"\"\"\n";
  s += "import json\nimport struct\nimport sys\n\nimport torch\nfrom torch import nn\n\n";
  s += "# One example's raw input, as the dataset reader yields it";
  s += m.preparation ? " (a table's rows prepared: missing cells filled, categories one-hot, as\n"
                       "# `plexus-cli predict --prepared-csv` writes them)"
                     : (m.vocabulary.empty() ? " (images: pixel / 255)" : " (character ids, 0 = padding)");
  s += ".\nINPUT_SHAPE = " + layers::py(std::vector<int64_t>(m.info.input_shape.begin(), m.info.input_shape.end())) +
       "\n";
  if (!m.class_names.empty()) {
    std::vector<std::string> quoted;
    for (const std::string& c : m.class_names) quoted.push_back(nlohmann::json(c).dump());
    s += "CLASS_NAMES = [" + join(quoted) + "]\n";
  }
  if (standardised) {
    s += "# The run's standardisation: (x - mean) / std, one pair per channel (dim 1) or one for all.\n";
    s += "INPUT_MEAN = " + float_list(m.normalization.mean) + "\n";
    s += "INPUT_STD = " + float_list(m.normalization.std) + "\n\n\n";
    s += "def standardise(x):\n"
         "    \"\"\"Raw inputs [N, *INPUT_SHAPE] -> what the model's first layers take.\"\"\"\n"
         "    mean = torch.tensor(INPUT_MEAN, dtype=x.dtype, device=x.device)\n"
         "    std = torch.tensor(INPUT_STD, dtype=x.dtype, device=x.device)\n"
         "    if len(INPUT_MEAN) > 1:\n"
         "        shape = (1, -1) + (1,) * (x.dim() - 2)\n"
         "        mean, std = mean.view(shape), std.view(shape)\n"
         "    return (x - mean) * (1 / std)\n";
  }
  for (const std::string& h : emitter.helpers_) s += "\n\n" + h;
  s += "\n\nclass " + cls + "(nn.Module):\n";
  s += "    \"\"\"The project's graph: a submodule per node with weights or a torch.nn layer, wired in forward.\"\"\"\n\n";
  s += "    def __init__(self):\n        super().__init__()\n";
  for (const std::string& l : emitter.init_) s += "        " + l + "\n";
  s += "\n    def forward(self, x):\n";
  s += "        \"\"\"Raw inputs [N, *INPUT_SHAPE] -> " +
       std::string(loss_names.size() == 1 ? "what feeds the loss node '" + loss_names[0] + "'"
                                          : "a tuple of what feeds each loss node: " + join(loss_names)) +
       (m.classification() && loss_names.size() == 1 ? " (class scores)" : "") + ".\"\"\"\n";
  if (standardised) s += "        x = standardise(x)\n";
  for (const std::string& l : emitter.forward_) s += "        " + l + "\n";
  s += "        return " + returned + "\n\n\n";
  s += "# The submodule each node's tensors \"<node id>.<param>\" load into.\nSUBMODULES = {";
  for (size_t i = 0; i < emitter.submodules_.size(); ++i)
    s += std::string(i ? ", " : "") + nlohmann::json(emitter.submodules_[i].first).dump() + ": \"" +
         emitter.submodules_[i].second + "\"";
  s += "}\n\n";
  s += kLoader;
  s += "\n\nif __name__ == \"__main__\":\n"
       "    if len(sys.argv) != 2:\n"
       "        sys.exit(f\"usage: {sys.argv[0]} WEIGHTS.safetensors\")\n"
       "    model = load_weights(" +
       cls +
       "(), sys.argv[1])\n"
       "    with torch.no_grad():\n"
       "        print(model(torch.zeros(2, *INPUT_SHAPE)))\n";
  if (summary) {
    summary->class_name = cls;
    summary->submodules = emitter.submodules_.size();
    summary->lines = size_t(std::count(s.begin(), s.end(), '\n'));
    summary->bytes = s.size();
  }
  return s;
}

CodeSummary export_pytorch(const session::TrainedModel& model, const std::filesystem::path& out,
                           const CodeOptions& options) {
  CodeSummary summary;
  const std::string code = pytorch_code(model, options, &summary);
  io::write_file_atomically(out, code);
  return summary;
}

}  // namespace plexus::exporter
