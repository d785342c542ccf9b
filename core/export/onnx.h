#pragma once
// ONNX export of a trained model (`plexus-cli export FILE --checkpoint C --onnx OUT.onnx`,
// File > Export ONNX). A library of its own (plexus_onnx, over libonnx and protobuf), so the
// core builds without them.
//
// The file: opset 13, input "x" float32 [N, input shape...] in raw units (what the dataset
// reader yields before standardisation: MNIST pixels / 255) with a dynamic batch N — or, when
// Inputs read a table's columns apart, one input per Input node, named by its id, [N, k] of its
// columns (metadata "input_columns": a JSON object, input name -> its column names) — the
// standardisation as the graph's first nodes, then every node the loss node's prediction
// depends on, in topological order, each by its registry entry's ONNX rule (in inference mode);
// output "logits", the tensor that feeds the loss (the primary one, layers::CompiledGraph), and
// with several loss nodes one more output per other loss, "<loss id>.prediction". Metadata: "class_names" (a JSON array),
// for labelled texts "vocabulary" (a JSON array: the characters of input ids 1, 2, ...), for a
// table's model "input_names" (a JSON array, one name per input value) and "table_preparation"
// (data::TablePreparation::to_json: how raw rows become the input), and "project" (the
// project's name).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "session/trained_model.h"

namespace plexus::exporter {

struct OnnxOptions {
  std::string name;  // the project's name, for the model's metadata ("" = none)
};

// What was written, for people: "x float32 [N, 1, 28, 28]" (several inputs: "num float32 [N, 7], cat float32
// [N, 1]"); the outputs likewise, "logits float32 [N, 10], rec.prediction float32 [N, 1, 28, 28]".
struct OnnxSummary {
  std::string input, output;
  int64_t opset = 0;
  size_t nodes = 0, initializers = 0, bytes = 0;
};

// Builds the model, checks it with ONNX's checker and strict shape inference (its output shape
// must be the one Plexus infers), and writes it atomically. A node that cannot be exported
// throws ValueError naming the node and why; on any failure nothing is written and an existing
// file at `out` stays as it was.
OnnxSummary export_onnx(const session::TrainedModel& model, const std::filesystem::path& out,
                        const OnnxOptions& options = {});

}  // namespace plexus::exporter
