#include "layers/lowering.h"

#include <unordered_map>

#include "layers/layer.h"

namespace plexus::layers {
namespace {
// Filled with the registry (graph::add_layer_types), under its one-time initialisation.
std::unordered_map<std::string, Lowering>& lowerings() {
  static std::unordered_map<std::string, Lowering> table;
  return table;
}
}  // namespace

BuiltNode single(std::shared_ptr<nn::Module> m) {
  nn::Module* raw = m.get();
  return {std::move(m), [raw](const std::vector<Tensor>& in) { return raw->forward(in.at(0)); }};
}

const Lowering& lowering(const graph::LayerType& type) { return lowerings().at(type.name); }

void Registrar::add(graph::LayerType schema, Lowering lowered) {
  const std::string name = schema.name;
  schemas_.add(std::move(schema));  // refuses a name twice
  lowerings()[name] = std::move(lowered);
}

}  // namespace plexus::layers
