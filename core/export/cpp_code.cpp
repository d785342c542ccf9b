#include "export/cpp_code.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "export/code_graph.h"
#include "io/atomic_file.h"
#include "layers/code_rules.h"
#include "util/text.h"

namespace plexus::exporter {
namespace {

// Names a node's member or variable must not take: C++'s keywords, the program's own names
// and nn::Module's members (a member named `eval` would hide the method).
const std::set<std::string>& reserved() {
  // clang-format off
  static const std::set<std::string> names{
      "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "concept",
      "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await", "co_return",
      "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit",
      "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable",
      "namespace", "new", "noexcept", "not", "nullptr", "operator", "or", "private", "protected", "public",
      "register", "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static", "static_assert",
      "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef",
      "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while",
      "x", "raw", "std", "nn", "io", "train", "session", "plexus", "Tensor", "Shape", "kInputShape", "kStandardise",
      "load", "main", "forward", "predict", "type_name", "extra_repr", "str", "parameters", "named_parameters",
      "buffers", "named_buffers", "state", "children", "num_parameters", "eval", "is_training", "zero_grad", "to",
      "device", "set_carry_state", "reset_state", "register_parameter", "register_buffer", "register_module",
      "add_child", "concat", "reshape", "permute", "mean", "sum", "split", "slice", "contiguous", "index_select",
      "from_vector"};
  // clang-format on
  return names;
}

std::string float_list(const std::vector<float>& v) {
  std::string s;
  for (float f : v) s += (s.empty() ? "" : ", ") + layers::cpp(double(f));
  return "{" + s + "}";
}

// The rules' code in C++: members registered under the node ids, applied in predict.
class CppWriter final : public CodeCollector {
 public:
  // "nn::Linear(784, 128, true)" -> a member made with std::make_shared<nn::Linear>(784, 128, true).
  void module(const std::string& constructor) override {
    const size_t open = constructor.find('(');
    const std::string type = constructor.substr(0, open);
    const std::string arguments = constructor.substr(open + 1, constructor.size() - open - 2);
    const std::string declared = "std::shared_ptr<" + type + "> " + node_name + " =";
    const std::string made =
        "register_module(" + nlohmann::json(node_id).dump() + ", std::make_shared<" + type + ">(" + arguments + "));";
    members.push_back(declared + (declared.size() + made.size() < 116 ? " " : "\n      ") + made);
    submodules.emplace_back(node_id, node_name);
  }
  std::string member(const std::string& name) const override { return name; }
  std::string call(const std::string& name, const std::string& arguments) const override {
    return name + "->forward(" + arguments + ")";
  }
  void assign(const std::string& variable, const std::string& expression) override {
    line("const Tensor " + variable + " = " + expression + ";");
  }
};

constexpr const char* kMain = R"CPP(
  // A run checkpoint (tensors "model.<node>.<param>", and the optimizer's) or a weights file ("<node>.<param>").
  void load(nn::Module& model, const std::string& path) {
    if (io::read_safetensors_header(path).metadata.count("plexus.format"))
      train::load_checkpoint(path, model);
    else
      train::load_weights(path, model);
  }

  int main(int argc, char** argv) {
    if (argc != 2 && argc != 4) {
      std::fprintf(stderr, "usage: %s WEIGHTS [IN.safetensors OUT.safetensors]\n", argv[0]);
      return 2;
    }
    try {
      MODEL model;
      load(model, argv[1]);
      model.eval();
      NoGradGuard no_grad;
      if (argc == 2) {  // the output for a batch of two zero inputs
        Shape batch{2};
        batch.insert(batch.end(), kInputShape.begin(), kInputShape.end());
        for (float v : model.forward(zeros(batch)).to_vector()) std::printf("%g ", double(v));
        std::printf("\n");
        return 0;
      }
      const io::SafetensorsFile in = io::load_safetensors(argv[2]);
      const Tensor* x = in.find("x");
      if (!x) throw IoError(std::string(argv[2]) + " has no tensor \"x\" (the raw inputs)");
      io::NamedTensors out;
      for (const Tensor& t : model.predict(*x)) out.emplace_back("output." + std::to_string(out.size()), t);
      io::save_safetensors(argv[3], out);
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
      return 1;
    }
  }
)CPP";

}  // namespace

std::string cpp_code(const session::TrainedModel& m, const CodeOptions& options, CodeSummary* summary) {
  CppWriter emitter;
  const CodeGraph graph =
      walk_code_graph(m, options.name, {"C++", &layers::Lowering::cpp, &reserved(), "_out", "x"}, emitter);
  const std::string& cls = graph.class_name;
  const std::string program = options.name.empty() ? "model" : options.name;
  std::string shape;
  for (int64_t d : m.info.input_shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);

  std::string s;
  s += "// " + (options.name.empty() ? std::string("A Plexus model") : options.name) +
       ": a Plexus model exported as C++ (plexus-cli export --cpp), a program against the Plexus\n"
       "// core. Build it with the core's CMake package (cmake --install BUILD --component plexus_dev):\n"
       "//   find_package(Plexus REQUIRED)\n"
       "//   add_executable(" +
       program + " " + program +
       ".cpp)\n"
       "//   target_link_libraries(" +
       program +
       " PRIVATE Plexus::core)\n"
       "// Run it:\n"
       "//   " +
       program +
       " WEIGHTS          prints the output for a batch of zeros\n"
       "//   " +
       program + " WEIGHTS IN OUT   reads tensor \"x\", raw inputs [N, " + shape +
       "], from the safetensors file IN and\n"
       "//   writes each loss node's prediction, \"output.0\", ..., to the safetensors file OUT\n";
  s += "#include <cstdio>\n#include <memory>\n#include <string>\n#include <vector>\n\n"
       "#include \"plexus.h\"\n#include \"session/trained_model.h\"\n#include \"train/checkpoint.h\"\n\n"
       "using namespace plexus;\n\n";
  s += "// One example's raw input, as the dataset reader yields it (" + raw_input_kind(m) + ").\n";
  s += "const Shape kInputShape{" + shape + "};\n";
  if (!m.normalization.empty()) {
    s += "// The run's standardisation: (x - mean) / std, one pair per channel (dim 1) or one for all.\n";
    s += "const session::InputNormalization kStandardise{" + float_list(m.normalization.mean) + ", " +
         float_list(m.normalization.std) + "};\n";
  }
  for (const std::string& h : emitter.helpers) s += "\n" + h;
  s += "\n// The project's graph: a member per node with a module, registered under the node's id.\n";
  s += "struct " + cls + " : nn::Module {\n";
  for (const std::string& l : emitter.members) s += "  " + l + "\n";
  s += "\n  // Raw inputs [N, " + shape + "] -> what feeds each loss node, in graph order: " + join(graph.loss_nodes) +
       ".\n";
  s += "  std::vector<Tensor> predict(const Tensor& raw) {\n";
  s += m.normalization.empty() ? "    const Tensor& x = raw;\n" : "    const Tensor x = kStandardise.apply(raw);\n";
  for (const std::string& l : emitter.forward) s += "    " + l + "\n";
  s += "    return {" + join(graph.predictions) + "};\n  }\n\n";
  s += "  Tensor forward(const Tensor& raw) override { return predict(raw).at(0); }\n";
  s += "  std::string type_name() const override { return \"" + cls + "\"; }\n};\n";
  std::string main = kMain;
  main.replace(main.find("MODEL model;"), 5, cls);
  s += main;
  if (summary) *summary = summarize(s, graph, emitter);
  return s;
}

CodeSummary export_cpp(const session::TrainedModel& model, const std::filesystem::path& out,
                       const CodeOptions& options) {
  CodeSummary summary;
  const std::string code = cpp_code(model, options, &summary);
  io::write_file_atomically(out, code);
  return summary;
}

}  // namespace plexus::exporter
