#pragma once
// ONNX import (`plexus-cli import model.onnx --out project.plexus`, File > Open of a .onnx
// file): an ONNX model becomes a Plexus project and its weights. Each ONNX node, or a run of
// nodes an exporter writes for one layer (MatMul + Add: a Linear), maps onto a registry layer
// type (onnx_import_ops.cpp); initialisers become the weights "<node id>.<param>" in Plexus's
// layouts. Node names come from the ONNX node names: PyTorch's scopes ("/layer1/layer1.0/conv1/
// Conv") give the module path "layer1.0.conv1", and with it blocks layer1 > 0; Plexus's own
// export ("conv1/Conv") gives back the node id it came from.
//
// The model's prediction (its one output) feeds a loss a user can train on: CrossEntropy on the
// labels for class scores [N, C] (per position [N, T, C] of a model reading ids, or as many as
// the file's "class_names" metadata names), MSE against targets of its shape otherwise.
// No dataset is bound: the user binds one to train; the weights file's metadata describes the
// inputs and classes, so that export, predict and grad work without one.
//
// Nothing half-imported: a model with nodes that cannot be mapped is refused with every such node
// named (ONNX name and op type); a file that is not a valid ONNX model is an IoError.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "graph/registry.h"
#include "nn/module.h"

namespace plexus::exporter {

struct ImportedModel {
  graph::Graph graph;        // laid out left to right, blocks from module names, no dataset bound
  nn::NamedTensors weights;  // every tensor the compiled graph holds, "<node id>.<param>"
  graph::DatasetInfo info;   // input and label shape per example, classes (0: regression)
  // The standardisation in front of the model that Plexus's own export writes (Sub mean, Mul
  // 1/std after the input), taken out of the graph; empty when the model has none.
  std::vector<float> input_mean, input_std;
  std::vector<std::string> class_names;  // the file's metadata "class_names", else "0", "1", ...
  std::string producer;                  // "pytorch 1.13.0"
  int64_t opset = 0;
};

// Reads and maps the file. IoError for a file that is not a readable ONNX model (truncated,
// not protobuf, failing ONNX's checker); ValueError listing every node that cannot be mapped.
ImportedModel import_onnx(const std::filesystem::path& file);
// The same from the file's bytes; `source` names it in messages.
ImportedModel import_onnx_bytes(std::string_view bytes, const std::string& source);

// The weights file that goes with an imported project: its tensors, and metadata describing the
// inputs, their standardisation and the classes (session::write_model_metadata), so that the
// project exports and predicts before a dataset is bound.
void save_imported_weights(const ImportedModel& model, const std::filesystem::path& path);

}  // namespace plexus::exporter
