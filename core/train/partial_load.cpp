#include "train/partial_load.h"

#include <charconv>
#include <set>

#include "autograd/grad_mode.h"
#include "io/safetensors.h"
#include "train/checkpoint.h"
#include "util/error.h"

namespace plexus::train {
namespace {

std::string node_of(const std::string& tensor) { return tensor.substr(0, tensor.find('.')); }

std::optional<int64_t> integer(const std::string& s) {
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// "784,128" (as Optimizer::state_dict writes shapes); none when it is not one.
std::optional<Shape> shape_of(const std::string& s) {
  Shape out;
  size_t start = 0;
  while (start < s.size()) {
    const size_t comma = std::min(s.find(',', start), s.size());
    const auto d = integer(s.substr(start, comma - start));
    if (!d || *d < 0) return std::nullopt;
    out.push_back(*d);
    start = comma + 1;
  }
  return out;
}

// A checkpoint's optimizer state by parameter name. Parameter k (counting through the groups)
// is the checkpoint's k-th model tensor that trained (`model` leaves out the frozen ones):
// Plexus optimizes a model's trainable parameters() in order (its groups too,
// session/optimizer_groups.h), and state() puts them first. Returns why not when the metadata does not bear that out.
std::string read_optimizer(const io::SafetensorsFile& file, const std::vector<std::pair<std::string, Shape>>& model,
                           SourceState& out) {
  const auto meta = [&](const std::string& key) -> const std::string* {
    const auto it = file.metadata.find(kCheckpointOptimPrefix + key);
    return it == file.metadata.end() ? nullptr : &it->second;
  };
  const std::string* kind = meta("optimizer");
  if (!kind) return "";  // saved without its optimizer
  const std::string* groups_text = meta("groups");
  const auto groups = groups_text ? integer(*groups_text) : std::nullopt;
  if (!groups || *groups < 0) return "its optimizer state has no readable group count";
  std::map<std::string, optim::ParamState> state;
  size_t k = 0;
  for (int64_t g = 0; g < *groups; ++g) {
    const std::string gk = "group" + std::to_string(g);
    const std::string* count_text = meta(gk + ".params");
    const auto count = count_text ? integer(*count_text) : std::nullopt;
    if (!count || *count < 0) return "its optimizer state has no readable parameter count for " + gk;
    for (int64_t i = 0; i < *count; ++i, ++k) {
      const std::string pk = gk + ".param" + std::to_string(i);
      const std::string* shape_text = meta(pk + ".shape");
      const auto shape = shape_text ? shape_of(*shape_text) : std::nullopt;
      if (k >= model.size() || !shape || *shape != model[k].second)
        return "its optimizer's parameter " + std::to_string(k) + " does not line up with its model tensors";
      optim::ParamState st;
      if (const std::string* step = meta(pk + ".step")) st.step = integer(*step).value_or(0);
      const std::string prefix = kCheckpointOptimPrefix + pk + ".";
      for (const auto& [name, t] : file.tensors)
        if (name.starts_with(prefix)) st.tensors.emplace_back(name.substr(prefix.size()), t);
      if (st.step > 0 || !st.tensors.empty()) state.emplace(model[k].first, std::move(st));
    }
  }
  out.optimizer = *kind;
  out.optimizer_state = std::move(state);
  return "";
}

std::string shape_text(const Shape& s) { return to_string(s); }

}  // namespace

SourceState live_state(const nn::Module& model, const optim::Optimizer* optimizer, std::string label) {
  SourceState s;
  s.label = std::move(label);
  s.tensors = model.state();
  if (!optimizer) return s;
  s.optimizer = optimizer->kind();
  for (const auto& [name, p] : model.named_parameters())
    if (const optim::ParamState* st = optimizer->state(p)) s.optimizer_state.emplace(name, *st);
  return s;
}

SourceState read_state(const std::filesystem::path& path) {
  const io::SafetensorsFile file = io::load_safetensors(path);
  SourceState s;
  const auto format = file.metadata.find("plexus.format");
  const bool checkpoint = format != file.metadata.end() && format->second.starts_with("plexus-checkpoint");
  s.label = checkpoint ? "in the checkpoint" : "in the weights file";
  if (!checkpoint) {
    s.tensors = file.tensors;
    return s;
  }
  std::set<std::string> frozen;
  if (const auto it = file.metadata.find(kCheckpointFrozenKey); it != file.metadata.end())
    for (size_t start = 0; start < it->second.size();) {
      const size_t comma = std::min(it->second.find(',', start), it->second.size());
      frozen.insert(it->second.substr(start, comma - start));
      start = comma + 1;
    }
  std::vector<std::pair<std::string, Shape>> model;  // file order, the tensors that trained
  for (const auto& [name, t] : file.tensors)
    if (name.starts_with(kCheckpointModelPrefix)) {
      const std::string here = name.substr(kCheckpointModelPrefix.size());
      s.tensors.emplace_back(here, t);
      if (!frozen.count(here)) model.emplace_back(here, t.shape());
    }
  if (std::string why = read_optimizer(file, model, s); !why.empty())
    s.optimizer_note = "optimizer state not carried: " + why;
  return s;
}

CarryReport carry_over(const SourceState& source, nn::Module& model, optim::Optimizer* optimizer) {
  CarryReport report;
  report.source = source.label;
  report.optimizer_note = source.optimizer_note;
  const nn::NamedTensors here = model.state();
  std::map<std::string, const Tensor*> from;
  for (const auto& [name, t] : source.tensors) from.emplace(name, &t);
  std::set<std::string> nodes_here, taken;
  for (const auto& [name, t] : here) nodes_here.insert(node_of(name));

  std::vector<std::pair<Tensor, const Tensor*>> copies;  // destination, source
  for (const auto& [name, t] : here) {
    const auto it = from.find(name);
    if (it != from.end() && it->second->shape() == t.shape()) {
      report.kept.push_back(name);
      copies.emplace_back(t, it->second);
      taken.insert(name);
    } else {
      report.reset.push_back({name, t.shape(),
                              it == from.end() ? std::nullopt : std::optional<Shape>(it->second->shape())});
      if (it != from.end()) taken.insert(name);  // it has a place here, only not this shape
    }
  }
  for (const auto& [name, t] : source.tensors)
    if (!taken.count(name)) report.ignored.push_back({name, nodes_here.count(node_of(name)) != 0});

  // The optimizer state the kept parameters take, gathered (and the kind checked) first.
  std::vector<std::pair<Tensor, const optim::ParamState*>> states;
  if (optimizer && !source.optimizer.empty()) {
    if (source.optimizer != optimizer->kind()) {
      report.optimizer_note = "optimizer state not carried: " + source.optimizer + "'s " + source.label +
                              ", this run uses " + optimizer->kind();
    } else {
      const std::set<std::string> kept(report.kept.begin(), report.kept.end());
      for (const auto& [name, p] : model.named_parameters())
        if (kept.count(name) && p.requires_grad())  // a frozen one is in no optimizer
          if (const auto it = source.optimizer_state.find(name); it != source.optimizer_state.end())
            states.emplace_back(p, &it->second);
    }
  }
  // A state the optimizer refuses (a name its rule does not keep) throws here, before any copy.
  for (const auto& [p, st] : states) optimizer->check_state(p, *st);

  NoGradGuard no_grad;
  for (auto& [dst, src] : copies) dst.copy_(*src);
  for (const auto& [p, st] : states) optimizer->set_state(p, *st);
  report.optimizer_carried = int64_t(states.size());
  return report;
}

std::string init_from(const std::filesystem::path& file, nn::Module& model, optim::Optimizer* optimizer) {
  return "initialised from " + file.string() + ": " + carry_over(read_state(file), model, optimizer).text();
}

std::string CarryReport::text() const {
  std::string out = "kept " + std::to_string(kept.size()) + (kept.size() == 1 ? " tensor" : " tensors");
  if (optimizer_carried > 0) out += " (optimizer state of " + std::to_string(optimizer_carried) + ")";
  if (!reset.empty()) {
    out += "; reset ";
    for (size_t i = 0; i < reset.size(); ++i) {
      const ResetTensor& r = reset[i];
      out += (i ? ", " : "") + r.name + " (" + shape_text(r.shape) + " here, " +
             (r.source_shape ? shape_text(*r.source_shape) : "none") + " " + source + ")";
    }
  }
  if (!ignored.empty()) {
    out += "; ignored ";
    for (size_t i = 0; i < ignored.size(); ++i)
      out += (i ? ", " : "") + ignored[i].name + (ignored[i].node_here ? " (no such tensor here)" : " (no such node here)");
  }
  if (!optimizer_note.empty()) out += "; " + optimizer_note;
  return out;
}

}  // namespace plexus::train
