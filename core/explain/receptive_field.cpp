#include "explain/receptive_field.h"

#include <map>
#include <set>
#include <variant>
#include <vector>

#include "graph/registry.h"

namespace plexus::explain {

namespace {

// Types that keep every value where it is (or compute it from values at the same position).
bool keeps_positions(const graph::LayerType& type) {
  static const std::set<std::string> kinds = {
      "BatchNorm2d", "GroupNorm", "InstanceNorm2d", "Dropout", "Dropout2d", "Add", "Mul", "Sub"};
  return type.category == "Activation" || kinds.count(type.name) > 0;
}

// A window parameter's [h, w]: one number for both, a pair, or the type's default when absent.
// "same" padding reads as its zeros before each axis (`dilation · (kernel - 1) / 2`, as
// layers/conv.cpp pads); "valid" as none.
struct Pair {
  double h = 0, w = 0;
};
Pair pair_param(const graph::Node& node, const graph::LayerType& type, const std::string& name) {
  const auto it = node.params.find(name);
  const graph::ParamValue* value = it != node.params.end() ? &it->second : nullptr;
  if (!value) {
    const graph::ParamSpec* spec = type.param(name);
    if (!spec) return {};
    value = &spec->default_value;
  }
  if (const auto* n = std::get_if<int64_t>(value)) return {double(*n), double(*n)};
  if (const auto* v = std::get_if<std::vector<int64_t>>(value); v && v->size() == 2)
    return {double((*v)[0]), double((*v)[1])};
  return {};
}

AxisPlacement through_window(const AxisPlacement& in, double kernel, double stride, double padding, double dilation) {
  return {in.offset + in.stride * (dilation * (kernel - 1) / 2 - padding), in.stride * stride};
}

class Walker {
 public:
  explicit Walker(const graph::Graph& graph) : graph_(graph) {}

  std::optional<Placement> at(const std::string& id) {
    if (const auto it = done_.find(id); it != done_.end()) return it->second;
    if (!visiting_.insert(id).second) return std::nullopt;  // a cycle: the validator refuses it anyway
    const std::optional<Placement> p = compute(id);
    visiting_.erase(id);
    return done_[id] = p;
  }

 private:
  std::optional<Placement> compute(const std::string& id) {
    const graph::Node* node = graph_.find(id);
    if (!node) return std::nullopt;
    const graph::LayerType* type = graph::Registry::instance().find(node->type);
    if (!type) return std::nullopt;
    if (type->is_input()) return Placement{};
    // The one placement all inputs share.
    std::optional<Placement> in;
    for (const graph::Edge* e : graph_.edges_into(id)) {
      const std::optional<Placement> p = at(e->from.node);
      if (!p || (in && !(*in == *p))) return std::nullopt;
      in = p;
    }
    if (!in) return std::nullopt;
    if (keeps_positions(*type)) return in;
    const bool conv = type->name == "Conv2d";
    if (!conv && type->name != "MaxPool2d" && type->name != "AvgPool2d") return std::nullopt;
    const Pair k = pair_param(*node, *type, "kernel_size"), pad = pair_param(*node, *type, "padding");
    Pair s = pair_param(*node, *type, "stride");
    const Pair d = conv ? pair_param(*node, *type, "dilation") : Pair{1, 1};
    if (!conv) s = {s.h > 0 ? s.h : k.h, s.w > 0 ? s.w : k.w};  // a pooling's stride 0: the kernel's
    Pair before = pad;
    if (const auto it = node->params.find("padding"); it != node->params.end())
      if (const auto* word = std::get_if<std::string>(&it->second); word && *word == "same")
        before = {double(int64_t(d.h) * (int64_t(k.h) - 1) / 2), double(int64_t(d.w) * (int64_t(k.w) - 1) / 2)};
    if (k.h < 1 || k.w < 1 || s.h < 1 || s.w < 1) return std::nullopt;
    return Placement{through_window(in->y, k.h, s.h, before.h, d.h), through_window(in->x, k.w, s.w, before.w, d.w)};
  }

  const graph::Graph& graph_;
  std::map<std::string, std::optional<Placement>> done_;
  std::set<std::string> visiting_;
};

}  // namespace

std::optional<Placement> cell_placement(const graph::Graph& graph, const std::string& node) {
  return Walker(graph).at(node);
}

}  // namespace plexus::explain
