#include "train/checkpoint.h"

#include <set>

#include "autograd/grad_mode.h"
#include "io/safetensors.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::train {
namespace {
constexpr const char* kFormat = "plexus-checkpoint-1";

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
                     const Metadata& metadata, const nn::NamedTensors& carried) {
  io::NamedTensors tensors;
  io::SafetensorsMetadata meta;
  for (const auto& [k, v] : metadata) {
    if (k.starts_with(kCheckpointOptimPrefix) || k.starts_with("plexus."))
      throw ValueError("save_checkpoint: metadata key '" + k + "' uses a reserved prefix");
    meta[k] = v;
  }
  meta["plexus.format"] = kFormat;
  for (const auto& [name, t] : model.state()) tensors.emplace_back(kCheckpointModelPrefix + name, t);
  std::vector<std::string> frozen;
  for (const auto& [name, p] : model.named_parameters())
    if (!p.requires_grad()) frozen.push_back(name);
  if (!frozen.empty()) meta[kCheckpointFrozenKey] = join(frozen, ",");
  if (optimizer) {
    const optim::OptimizerState st = optimizer->state_dict();
    for (const auto& [name, t] : st.tensors) tensors.emplace_back(kCheckpointOptimPrefix + name, t);
    for (const auto& [k, v] : st.metadata) meta[kCheckpointOptimPrefix + k] = v;
  }
  for (const auto& [name, t] : carried) tensors.emplace_back(kCheckpointCarriedPrefix + name, t);
  io::save_safetensors(path, tensors, meta);
}

Metadata load_checkpoint(const std::filesystem::path& path, nn::Module& model, optim::Optimizer* optimizer,
                         nn::NamedTensors* carried) {
  const io::SafetensorsFile file = io::load_safetensors(path);
  const std::string where = "checkpoint " + path.string();
  const auto fmt = file.metadata.find("plexus.format");
  if (fmt == file.metadata.end() || fmt->second != kFormat)
    throw IoError(where + ": not a Plexus checkpoint (metadata plexus.format is " +
                  (fmt == file.metadata.end() ? std::string("missing") : "'" + fmt->second + "'") + ", expected '" +
                  kFormat + "')");

  // 1. The model: every tensor present, same shape, nothing extra.
  const nn::NamedTensors state = model.state();
  check_model_tensors(file, state, kCheckpointModelPrefix, where);
  std::set<std::string> known;
  for (const auto& entry : state) known.insert(kCheckpointModelPrefix + entry.first);
  optim::OptimizerState opt_state;
  for (const auto& [name, t] : file.tensors) {
    if (name.starts_with(kCheckpointModelPrefix)) {
      if (!known.count(name)) throw IoError(where + ": tensor '" + name.substr(kCheckpointModelPrefix.size()) + "' does not belong to this model");
    } else if (name.starts_with(kCheckpointOptimPrefix)) {
      opt_state.tensors.emplace_back(name.substr(kCheckpointOptimPrefix.size()), t);
    } else if (name.starts_with(kCheckpointCarriedPrefix)) {
      if (carried) carried->emplace_back(name.substr(kCheckpointCarriedPrefix.size()), t);
    } else {
      throw IoError(where + ": unexpected tensor '" + name + "'");
    }
  }
  Metadata user;
  for (const auto& [k, v] : file.metadata) {
    if (k.starts_with(kCheckpointOptimPrefix)) opt_state.metadata[k.substr(kCheckpointOptimPrefix.size())] = v;
    else if (!k.starts_with("plexus.")) user[k] = v;
  }

  // 2. The optimizer validates its whole state before changing anything.
  if (optimizer) {
    if (opt_state.metadata.empty()) throw IoError(where + ": holds no optimizer state");
    optimizer->load_state_dict(opt_state);
  }

  // 3. Nothing can fail any more: copy the model's tensors in place (handles stay valid).
  copy_model_tensors(file, state, kCheckpointModelPrefix);
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
