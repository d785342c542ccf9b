#include "cli/command.h"

#include <cstdio>
#include <filesystem>

#include "cli/project_files.h"
#include "export/onnx.h"
#include "graph/project.h"
#include "session/trained_model.h"

namespace plexus::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kHelp = R"(  Writes the project's model with the weights of CKPT (a run's best.safetensors or
  final.safetensors, or a weights file) as an ONNX model, opset 13: input "x", float32
  [N, input shape...] in raw units (images: pixel / 255; the model standardises them as the
  run did), output "logits", the tensor that feeds the loss. A node that cannot be exported
  is named, and nothing is written then.
)";

int cmd_export(const Args& args) {
  args.allow({"--checkpoint", "--onnx"});
  if (args.positional().empty()) throw UsageError{"export needs a project FILE"};
  args.require("export", {"--checkpoint", "--onnx"});
  const std::string file = args.positional()[0], out = args.str("--onnx", "");
  const session::TrainedModel model =
      session::load_trained_model(graph::load_project(file), args.str("--checkpoint", ""), {project_dir(file)});
  const exporter::OnnxSummary s = exporter::export_onnx(model, out, {fs::path(file).stem().string()});
  std::printf("wrote %s: ONNX opset %lld, %zu nodes, %zu initializers, %zu bytes\n", out.c_str(), (long long)s.opset,
              s.nodes, s.initializers, s.bytes);
  std::printf("  input  %s (raw units; the model standardises them)\n  output %s\n", s.input.c_str(), s.output.c_str());
  return 0;
}

}  // namespace

Command export_command() {
  return {"export", "export FILE --checkpoint CKPT --onnx OUT.onnx",
          "write a checkpoint of a project as an ONNX model",
          [] { return std::string(kHelp); }, {{}, 1, {}}, cmd_export};
}

}  // namespace plexus::cli
