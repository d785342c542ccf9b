// Code export (core/export/pytorch_code.h, cpp_code.h): every layer type but the losses has a
// PyTorch rule, and each one, alone between an Input and an MSE loss with every weight random,
// exports to a file whose model gives Plexus' outputs in torch (tests/reference/
// pytorch_export_crosscheck.py --check-dir, under Debian's /usr/bin/python3; skipped without
// torch), and has a C++ rule; names become valid identifiers. The example projects in torch and
// C++: reference_pytorch_export and cpp_export.
#include <filesystem>

#include "export/cpp_code.h"
#include "export/pytorch_code.h"
#include "io/safetensors.h"
#include "layers/lowering.h"
#include "support/check.h"
#include "support/graph_fixture.h"
#include "support/onnx_support.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "train/checkpoint.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::testing;
namespace fs = std::filesystem;

namespace {

constexpr const char* kPython = "/usr/bin/python3";  // Debian's, which has torch

bool torch_available() {
  return fs::exists(kPython) && run_process(kPython, {"-c", "import torch"}, {}, std::chrono::minutes(1)).ok();
}

// Exports `m` as `name` into dir/name/: model.py, its weights, and Plexus' outputs on the raw inputs x.
void write_case(const TempDir& dir, const std::string& name, const session::TrainedModel& m, const Tensor& x) {
  const fs::path folder = dir.file(name);
  fs::create_directories(folder);
  exporter::export_pytorch(m, folder / "model.py", {name});
  train::save_weights(folder / "weights.safetensors", *m.compiled.model);
  io::save_safetensors(folder / "outputs.safetensors", {{"x", x}, {"output.0", m.forward(x)}});
}

}  // namespace

TEST(everyTypeButTheLossesHasAPytorchRule) {
  for (const graph::LayerType& t : graph::Registry::instance().types())
    VERIFY2(bool(layers::lowering(t).pytorch) != t.is_loss(), t.name.c_str());
}

// Each type's file (the project named <type>_model, so that its class is no name of the file's
// own), and Inputs reading a table's columns apart (the measurements standardised, the
// category's indices as they are); then one run of the checker over all of them (one start of
// torch).
TEST(everyLayerTypeRunsInTorch) {
  const TempDir dir;
  for (const LayerCase& c : layer_cases()) {
    Shape batch{5};
    batch.insert(batch.end(), c.input.begin(), c.input.end());
    write_case(dir, c.type->name + "_model", c.model, random_input(batch, c.indices));
  }
  const session::TrainedModel columns = trained_model(measurements_and_kind({"d", "a", "c"}),
                                                      graph::DatasetInfo{{5}, {}, 3, 0, {"a", "b", "c", "d", "kind"}},
                                                      {{1.f, 2.f, -1.f, 0.5f, 0.f}, {2.f, 0.5f, 3.f, 1.5f, 1.f}});
  std::vector<float> rows = random_input({5, 5}, false).to_vector();
  for (size_t r = 0; r < 5; ++r) rows[r * 5 + 4] = float(r % 6);  // the category's indices
  write_case(dir, "columns_apart", columns, from_vector(rows, {5, 5}));

  if (!torch_available()) SKIP("/usr/bin/python3 cannot import torch (Debian 12: apt-get install python3-torch)");
  const ProcessResult r = run_process(
      kPython, {PLEXUS_SOURCE_DIR "/tests/reference/pytorch_export_crosscheck.py", "--check-dir", dir.path().string()},
      {}, std::chrono::minutes(5));
  VERIFY2(r.ok(), (r.describe() + ":\n" + r.out + r.err).c_str());
}

// Node ids that are no identifiers, or are Python's or C++'s words, become identifiers of their
// own; a project named like a name of the file's own gets another class name.
TEST(namesBecomeIdentifiers) {
  const session::TrainedModel m =
      trained_model(chain({node("class", "Linear", {{"out_features", int64_t(4)}}), node("second-layer", "ReLU"),
                           node("eval", "Linear", {{"out_features", int64_t(3)}})}),
                    {6});
  const std::string py = exporter::pytorch_code(m, {"my model"});
  VERIFY2(py.find("class MyModel(nn.Module):") != std::string::npos, py.c_str());
  VERIFY2(py.find("self.class_ = nn.Linear(6, 4)") != std::string::npos, py.c_str());
  VERIFY2(py.find("second_layer = self.second_layer(class_)") != std::string::npos, py.c_str());
  VERIFY2(py.find("self.eval_ = nn.Linear(4, 3)") != std::string::npos, py.c_str());
  VERIFY2(py.find(R"("class": "class_")") != std::string::npos, py.c_str());  // where its tensors load
  const std::string cpp = exporter::cpp_code(m, {"my model"});
  VERIFY2(cpp.find(R"(std::shared_ptr<nn::Linear> class_ = register_module("class",)") != std::string::npos,
          cpp.c_str());
  VERIFY2(cpp.find("std::shared_ptr<nn::Linear> eval_ =") != std::string::npos, cpp.c_str());
  const std::string rms = exporter::pytorch_code(trained_model(chain({node("n", "RMSNorm")}), {6}), {"RMSNorm"});
  VERIFY2(rms.find("class RMSNormModel(nn.Module):") != std::string::npos, rms.c_str());
}

// And a C++ rule: the example projects' programs run in cpp_export.
TEST(everyTypeButTheLossesHasACppRule) {
  for (const graph::LayerType& t : graph::Registry::instance().types())
    VERIFY2(bool(layers::lowering(t).cpp) != t.is_loss(), t.name.c_str());
}
