#include "cli/command.h"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "cli/project_files.h"
#include "export/cpp_code.h"
#include "export/onnx.h"
#include "export/pytorch_code.h"
#include "session/trained_model.h"
#include "util/error.h"

namespace plexus::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kExportHelp = R"(  Writes the project's model with the weights of CKPT (a run's best.safetensors or
  final.safetensors, or a weights file) as an ONNX model, opset 13: input "x", float32
  [N, input shape...] in raw units (images: pixel / 255; a table's rows prepared, as
  `predict --prepared-csv` writes them, their names and the preparation in the metadata
  "input_names" and "table_preparation"; the model standardises them as the run did), output
  "logits", the tensor that feeds the loss. A node that cannot be exported is named, and
  nothing is written then.
  Without FILE, the project is the one a run checkpoint holds. A run checkpoint also holds
  the input normalisation and the class names, so its dataset need not be at hand; a weights
  file has them computed from the project's dataset, which must then be found (its relative
  path next to FILE, then in the current directory).
  With --pytorch, writes the model as one self-contained Python file instead: an nn.Module
  whose submodules are named after the nodes and whose forward takes raw inputs and
  standardises them as the run did, and load_weights(model, CKPT), which reads the
  safetensors file with the standard library and torch alone. With --cpp, as a C++ program
  against the Plexus core that builds the same model and loads CKPT (docs/using-models.md).
  --checkpoint FILE    the run checkpoint or weights file to export (required)
  --onnx FILE          the ONNX model to write
  --pytorch FILE       the PyTorch code (.py) to write
  --cpp FILE           the C++ program (.cpp) to write (one of --onnx, --pytorch, --cpp)
)";

int cmd_export(const Args& args) {
  args.require("export", {"--checkpoint"});
  const int formats = int(args.has("--onnx")) + int(args.has("--pytorch")) + int(args.has("--cpp"));
  if (formats != 1) throw UsageError{"export needs --onnx FILE, --pytorch FILE or --cpp FILE"};
  const std::string format = args.has("--onnx") ? "--onnx" : args.has("--pytorch") ? "--pytorch" : "--cpp";
  std::optional<std::string> file;
  if (!args.positional().empty()) file = args.positional()[0];
  const std::string checkpoint = args.str("--checkpoint", ""), out = args.str(format, "");
  const std::optional<ProjectSource> p = find_project(file, checkpoint);
  if (!p)
    throw IoError(checkpoint + " holds no project: pass the project FILE it belongs to, as in: plexus-cli export "
                  "FILE --checkpoint " + checkpoint + " " + format + " " + out);
  const session::TrainedModel model = session::load_trained_model(p->graph, checkpoint, {p->dir});
  // The model's name in the ONNX file's metadata: the project's, else the one the user gave OUT.
  const std::string name = p->stem.empty() ? fs::path(out).stem().string() : p->stem;
  if (format != "--onnx") {
    const bool pytorch = format == "--pytorch";
    const exporter::CodeSummary s =
        pytorch ? exporter::export_pytorch(model, out, {name}) : exporter::export_cpp(model, out, {name});
    std::printf("wrote %s: %s, class %s with %zu submodules, %zu lines\n", out.c_str(),
                pytorch ? "PyTorch code" : "a C++ program", s.class_name.c_str(), s.submodules, s.lines);
    return 0;
  }
  const exporter::OnnxSummary s = exporter::export_onnx(model, out, {name});
  std::printf("wrote %s: ONNX opset %lld, %zu nodes, %zu initializers, %zu bytes\n", out.c_str(), (long long)s.opset,
              s.nodes, s.initializers, s.bytes);
  std::printf("  input  %s (%s; the model standardises them)\n  output %s\n", s.input.c_str(),
              model.preparation ? "prepared rows, as predict --prepared-csv writes them" : "raw units", s.output.c_str());
  return 0;
}

}  // namespace

Command export_command() {
  return {"export", "export [FILE] --checkpoint CKPT (--onnx OUT.onnx | --pytorch OUT.py | --cpp OUT.cpp)",
          "write a checkpoint of a project as an ONNX model, PyTorch code or a C++ program",
          [] { return std::string(kExportHelp); },
          {{}, {{"--checkpoint", Takes::Path}, {"--onnx", Takes::Path}, {"--pytorch", Takes::Path}, {"--cpp", Takes::Path}}, 1}, cmd_export};
}

}  // namespace plexus::cli
