// libFuzzer target: the ONNX importer (export/onnx_import.h) — the path a model file from a
// stranger takes when it is opened. Bad bytes must be an IoError (not a model) or a ValueError
// (a model that cannot be mapped), naming the file; nothing else may escape. An accepted model
// must give a project that saves and loads back unchanged and whose compiled graph holds exactly
// the imported weights, each of its shape, and, when small, runs forward on a batch of two to
// the class scores (or value) its loss reads.
#include "export/onnx_import.h"
#include "fuzz_support.h"
#include "graph/project.h"
#include "layers/compiler.h"
#include "util/error.h"

using namespace plexus;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string source = "fuzz.onnx";
  exporter::ImportedModel m;
  try {
    m = exporter::import_onnx_bytes({reinterpret_cast<const char*>(data), size}, source);
  } catch (const IoError& e) {
    fuzz::require_names(e.what(), source);
    fuzz::rejected(e.what());
    return 0;
  } catch (const ValueError& e) {
    fuzz::require_names(e.what(), source);
    fuzz::rejected(e.what());
    return 0;
  }
  fuzz::accepted();
  const graph::Graph back = graph::parse_project(graph::serialize_project(m.graph), source);
  fuzz::require(back == m.graph, "the imported project does not read back unchanged");
  const layers::CompiledGraph c = layers::compile(m.graph, m.info, 1);
  const nn::NamedTensors state = c.model->state();
  fuzz::require(state.size() == m.weights.size(), "the compiled graph holds other tensors than were imported");
  for (size_t i = 0; i < state.size(); ++i) {
    fuzz::require(state[i].first == m.weights[i].first, "tensor " + state[i].first + " is not the imported one");
    fuzz::require(state[i].second.shape() == m.weights[i].second.shape(), "tensor " + state[i].first + "'s shape");
  }
  if (numel(m.info.input_shape) <= 4096 && c.model->num_parameters() <= 1'000'000) {
    Shape batch{2};
    batch.insert(batch.end(), m.info.input_shape.begin(), m.info.input_shape.end());
    c.model->eval();
    const Tensor out = (*c.model)(zeros(batch));
    fuzz::require(out.dim() >= 1 && out.shape()[0] == 2, "the prediction is not one per example");
    if (m.info.classes)
      fuzz::require(out.shape().back() == m.info.classes, "the prediction is not one score per class");
  }
  return 0;
}
