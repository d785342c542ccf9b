#include "export/pytorch_code.h"

#include <nlohmann/json.hpp>
#include <set>

#include "export/code_graph.h"
#include "io/atomic_file.h"
#include "util/text.h"

namespace plexus::exporter {
namespace {

// Names a node's submodule or variable must not take: Python's keywords, the file's own
// top-level names and forward's argument, and nn.Module's attributes (a submodule named
// `eval` would be hidden by the method).
const std::set<std::string>& reserved() {
  // clang-format off
  static const std::set<std::string> names{
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
      "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
      "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "torch", "nn", "json", "struct", "sys",
      "_", "x", "self", "standardise", "load_weights", "read_safetensors", "pool_sequence", "SinusoidalPositions",
      "RMSNorm", "_DTYPES", "SUBMODULES", "INPUT_SHAPE", "INPUT_MEAN", "INPUT_STD", "CLASS_NAMES", "forward",
      "training", "eval", "train", "to", "cuda", "cpu", "float", "double", "half", "bfloat16", "apply", "modules",
      "children", "parameters", "buffers", "state_dict", "load_state_dict", "named_modules", "named_children",
      "named_parameters", "named_buffers", "type", "zero_grad", "register_buffer", "register_parameter",
      "register_module", "add_module", "extra_repr", "requires_grad_", "share_memory", "get_submodule",
      "get_parameter", "get_buffer", "dump_patches"};
  // clang-format on
  return names;
}

std::string float_list(const std::vector<float>& v) {
  std::string s;
  for (float f : v) s += (s.empty() ? "" : ", ") + shortest_float_text(f);
  return "[" + s + "]";
}

// The rules' code in Python: submodules made in __init__, applied in forward.
class PythonWriter final : public CodeCollector {
 public:
  void module(const std::string& constructor) override {
    members.push_back("self." + node_name + " = " + constructor);
    submodules.emplace_back(node_id, node_name);
  }
  std::string member(const std::string& name) const override { return "self." + name; }
  std::string call(const std::string& name, const std::string& arguments) const override {
    return "self." + name + "(" + arguments + ")";
  }
  void assign(const std::string& variable, const std::string& expression) override {
    line(variable + " = " + expression);
  }
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
  PythonWriter emitter;
  const CodeGraph graph =
      walk_code_graph(m, options.name, {"PyTorch", &layers::Lowering::pytorch, &reserved(), "", "x"}, emitter);
  const std::string& cls = graph.class_name;
  const std::vector<std::string>& loss_names = graph.loss_nodes;
  const bool standardised = !m.normalization.empty();
  const std::string returned = join(graph.predictions);

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
  s += "# One example's raw input, as the dataset reader yields it (" + raw_input_kind(m) +
       ").\nINPUT_SHAPE = " + layers::py(std::vector<int64_t>(m.info.input_shape.begin(), m.info.input_shape.end())) +
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
  for (const std::string& h : emitter.helpers) s += "\n\n" + h;
  s += "\n\nclass " + cls + "(nn.Module):\n";
  s += "    \"\"\"The project's graph: a submodule per node with weights or a torch.nn layer, wired in "
       "forward.\"\"\"\n\n";
  s += "    def __init__(self):\n        super().__init__()\n";
  for (const std::string& l : emitter.members) s += "        " + l + "\n";
  s += "\n    def forward(self, x):\n";
  s += "        \"\"\"Raw inputs [N, *INPUT_SHAPE] -> " +
       std::string(loss_names.size() == 1 ? "what feeds the loss node '" + loss_names[0] + "'"
                                          : "a tuple of what feeds each loss node: " + join(loss_names)) +
       (m.classification() && loss_names.size() == 1 ? " (class scores)" : "") + ".\"\"\"\n";
  if (standardised) s += "        x = standardise(x)\n";
  for (const std::string& l : emitter.forward) s += "        " + l + "\n";
  s += "        return " + returned + "\n\n\n";
  s += "# The submodule each node's tensors \"<node id>.<param>\" load into.\nSUBMODULES = {";
  for (size_t i = 0; i < emitter.submodules.size(); ++i)
    s += std::string(i ? ", " : "") + nlohmann::json(emitter.submodules[i].first).dump() + ": \"" +
         emitter.submodules[i].second + "\"";
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
  if (summary) *summary = summarize(s, graph, emitter);
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
