#include <cstdio>
#include <filesystem>

#include "cli/command.h"
#include "cli/project_files.h"
#include "export/onnx_import.h"
#include "graph/project.h"
#include "io/atomic_file.h"

namespace plexus::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kImportHelp =
    R"(  Reads an ONNX model (PyTorch's torch.onnx.export, Plexus's own export, ...) and writes
  it as a project and its weights: each ONNX node, or the nodes an exporter writes for one
  layer (MatMul + Add: a Linear), becomes a layer of the editor's; the initialisers become
  the weights, "<node id>.<param>". Node names follow the model's module names, and a module
  hierarchy ("layer1.0.conv1") becomes blocks. The prediction (the model's output) feeds a
  CrossEntropy loss for class scores, MSE for a single value; bind a dataset to train it.
  Nodes that cannot be mapped are listed with their ONNX names and op types, and nothing
  is written then.
  --out FILE           the project to write (required)
  --weights FILE       its weights (default: the project's path with .safetensors)
)";

int cmd_import(const Args& args) {
  args.require("import", {"--out"});
  if (args.positional().size() != 1)
    throw UsageError{"import takes one ONNX file: plexus-cli import MODEL.onnx --out P.plexus"};
  const fs::path onnx = args.positional()[0], out = args.str("--out", "");
  const fs::path weights = args.str("--weights", fs::path(out).replace_extension(".safetensors").string());
  const exporter::ImportedModel m = exporter::import_onnx(onnx);
  const std::string project_text = graph::serialize_project(m.graph);  // refuses before anything is written
  exporter::save_imported_weights(m, weights);
  io::write_file_atomically(out, project_text);
  size_t values = 0;
  for (const auto& w : m.weights) values += size_t(w.second.numel());
  std::printf("imported %s (%s, opset %lld): %zu nodes, %zu blocks, %zu tensors (%zu values)\n", onnx.c_str(),
              m.producer.empty() ? "unknown producer" : m.producer.c_str(), (long long)m.opset, m.graph.nodes.size(),
              m.graph.blocks.size(), m.weights.size(), values);
  std::printf("  input  %s%s\n  loss   %s on %s\n", shape_text(m.info.input_shape).c_str(),
              m.input_mean.empty() ? "" : " (standardised by the model's own mean and std)",
              m.info.classes ? "CrossEntropy" : "MSE",
              m.info.classes ? (std::to_string(m.info.classes) + " classes").c_str() : "targets");
  std::printf("wrote %s and %s\n", out.c_str(), weights.c_str());
  return 0;
}

}  // namespace

Command import_command() {
  return {"import",
          "import MODEL.onnx --out P.plexus [--weights W.safetensors]",
          "turn an ONNX model into a project and its weights",
          [] { return std::string(kImportHelp); },
          {{}, {{"--out", Takes::Path}, {"--weights", Takes::Path}}, 1},
          cmd_import};
}

}  // namespace plexus::cli
