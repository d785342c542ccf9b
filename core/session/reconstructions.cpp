#include "session/reconstructions.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "autograd/grad_mode.h"

namespace plexus::session {

std::optional<size_t> drawn_reconstruction(const layers::CompiledGraph& compiled, const graph::DatasetInfo& info) {
  const Shape& x = info.input_shape;
  if (x.size() != 3 || (x[0] != 1 && x[0] != 3)) return std::nullopt;
  for (size_t i = 0; i < compiled.terms.size(); ++i)
    if (compiled.terms[i].reconstructs && compiled.terms[i].prediction == x) return i;
  return std::nullopt;
}

std::function<std::string(train::EpochEnd&)> epoch_reconstructions(const TrainingRun& run) {
  const std::optional<size_t> term = drawn_reconstruction(run.compiled, run.data.info);
  const std::shared_ptr<const data::Dataset> split =
      run.data.validation ? run.data.validation : run.data.test ? run.data.test : run.data.train;
  if (!term || !split || split->size() == 0) return nullptr;
  std::vector<int64_t> picked(size_t(std::min(kReconstructionExamples, split->size())));
  std::iota(picked.begin(), picked.end(), int64_t(0));
  const Tensor raw = split->get_batch(picked).input;
  // The model, not the TrainingRun: a run may be moved, its model stays where it is.
  layers::GraphModel* model = run.compiled.model.get();
  const InputNormalization normalization = run.normalization;
  const Shape example = run.data.info.input_shape;
  return [=](train::EpochEnd& e) -> std::string {
    const bool was_training = model->is_training();
    model->eval();
    Tensor out;
    {
      NoGradGuard no_grad;
      out = model->predictions(normalization.apply(raw).to(model->device())).at(*term).to(Device::cpu());
    }
    model->train(was_training);
    e.reconstructions = {example, raw.to_vector(), normalization.unapply(out.reshape(raw.shape())).to_vector()};
    return "";
  };
}

}  // namespace plexus::session
