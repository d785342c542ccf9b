#include "train/checkpoint.h"

#include <set>

#include "autograd/grad_mode.h"
#include "io/safetensors.h"
#include "util/error.h"

namespace plexus::train {
namespace {
constexpr const char* kFormat = "plexus-checkpoint-1";
const std::string kModel = "model.", kOptim = "optim.";

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Every tensor of `state` is in `file` under prefix + name, with the same shape.
void check_model_tensors(const io::SafetensorsFile& file, const nn::NamedTensors& state, const std::string& prefix,
                         const std::string& where) {
  for (const auto& [name, t] : state) {
    const Tensor* found = file.find(prefix + name);
    if (!found) throw IoError(where + ": tensor '" + name + "' of the model is missing");
    if (found->shape() != t.shape())
      throw ShapeError(where + ": tensor '" + name + "' has shape " + to_string(found->shape()) + ", the model expects " +
                       to_string(t.shape()));
  }
}

// Copies the checked tensors in place (handles stay valid). Cannot fail.
void copy_model_tensors(const io::SafetensorsFile& file, const nn::NamedTensors& state, const std::string& prefix) {
  NoGradGuard no_grad;
  for (const auto& [name, t] : state) {
    Tensor dst = t;
    dst.copy_(*file.find(prefix + name));
  }
}
}  // namespace

void save_checkpoint(const std::filesystem::path& path, const nn::Module& model, const optim::Optimizer* optimizer,
                     const Metadata& metadata) {
  io::NamedTensors tensors;
  io::SafetensorsMetadata meta;
  for (const auto& [k, v] : metadata) {
    if (starts_with(k, kOptim) || starts_with(k, "plexus."))
      throw ValueError("save_checkpoint: metadata key '" + k + "' uses a reserved prefix");
    meta[k] = v;
  }
  meta["plexus.format"] = kFormat;
  for (const auto& [name, t] : model.state()) tensors.emplace_back(kModel + name, t);
  if (optimizer) {
    const optim::OptimizerState st = optimizer->state_dict();
    for (const auto& [name, t] : st.tensors) tensors.emplace_back(kOptim + name, t);
    for (const auto& [k, v] : st.metadata) meta[kOptim + k] = v;
  }
  io::save_safetensors(path, tensors, meta);
}

Metadata load_checkpoint(const std::filesystem::path& path, nn::Module& model, optim::Optimizer* optimizer) {
  const io::SafetensorsFile file = io::load_safetensors(path);
  const std::string where = "checkpoint " + path.string();
  const auto fmt = file.metadata.find("plexus.format");
  if (fmt == file.metadata.end() || fmt->second != kFormat)
    throw IoError(where + ": not a Plexus checkpoint (metadata plexus.format is " +
                  (fmt == file.metadata.end() ? std::string("missing") : "'" + fmt->second + "'") + ", expected '" +
                  kFormat + "')");

  // 1. The model: every tensor present, same shape, nothing extra.
  const nn::NamedTensors state = model.state();
  check_model_tensors(file, state, kModel, where);
  std::set<std::string> known;
  for (const auto& entry : state) known.insert(kModel + entry.first);
  optim::OptimizerState opt_state;
  for (const auto& [name, t] : file.tensors) {
    if (starts_with(name, kModel)) {
      if (!known.count(name)) throw IoError(where + ": tensor '" + name.substr(kModel.size()) + "' does not belong to this model");
    } else if (starts_with(name, kOptim)) {
      opt_state.tensors.emplace_back(name.substr(kOptim.size()), t);
    } else {
      throw IoError(where + ": unexpected tensor '" + name + "'");
    }
  }
  Metadata user;
  for (const auto& [k, v] : file.metadata) {
    if (starts_with(k, kOptim)) opt_state.metadata[k.substr(kOptim.size())] = v;
    else if (!starts_with(k, "plexus.")) user[k] = v;
  }

  // 2. The optimizer validates its whole state before changing anything.
  if (optimizer) {
    if (opt_state.metadata.empty()) throw IoError(where + ": holds no optimizer state");
    optimizer->load_state_dict(opt_state);
  }

  // 3. Nothing can fail any more: copy the model's tensors in place (handles stay valid).
  copy_model_tensors(file, state, kModel);
  return user;
}

void save_weights(const std::filesystem::path& path, const nn::Module& model, const Metadata& metadata) {
  io::NamedTensors tensors;
  for (const auto& [name, t] : model.state()) tensors.emplace_back(name, t);
  io::save_safetensors(path, tensors, metadata);
}

Metadata load_weights(const std::filesystem::path& path, nn::Module& model) {
  const io::SafetensorsFile file = io::load_safetensors(path);
  const std::string where = "weights " + path.string();
  const nn::NamedTensors state = model.state();
  check_model_tensors(file, state, "", where);
  std::set<std::string> known;
  for (const auto& entry : state) known.insert(entry.first);
  for (const auto& [name, t] : file.tensors)
    if (!known.count(name)) throw IoError(where + ": tensor '" + name + "' does not belong to this model");
  copy_model_tensors(file, state, "");
  return file.metadata;
}

}  // namespace plexus::train
