#include "session/weights_import.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>

#include "autograd/grad_mode.h"
#include "graph/dataset_info.h"
#include "util/error.h"

namespace plexus::session {
namespace {

// The parameter's own name, the last segment: "weight" of "attn.out_proj.weight".
std::string last_segment(const std::string& name) {
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

// Case and separators ignored: "Features.Conv-1" and "features_conv_1" compare equal.
std::string normalised(const std::string& s) {
  std::string out;
  for (char c : s) out += (c == '.' || c == '-' || c == ' ') ? '_' : char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Does the module path `prefix` (normalised) end with `key` on a segment boundary?
bool path_ends_with(const std::string& prefix, const std::string& key) {
  if (key.empty() || prefix.size() < key.size()) return false;
  if (prefix.compare(prefix.size() - key.size(), key.size(), key) != 0) return false;
  return prefix.size() == key.size() || prefix[prefix.size() - key.size() - 1] == '_';
}

bool counter(const std::string& name) { return last_segment(name) == "num_batches_tracked"; }

// The `safetensors` package writes its header sorted by name, which loses a state_dict's
// order: a file whose loadable tensors are in ascending byte order of their names, two or more,
// is taken to be one of those.
bool sorted_by_name(const std::vector<FileTensor>& file) {
  const std::string* last = nullptr;
  size_t n = 0;
  for (const FileTensor& f : file) {
    if (!f.loadable) continue;
    if (last && !(*last < f.name)) return false;
    last = &f.name;
    ++n;
  }
  return n >= 2;
}

// Where a parameter comes among its module's in a state_dict: weight, bias, BatchNorm's
// running statistics, then a recurrent layer's by layer and direction (weight_ih, weight_hh,
// bias_ih, bias_hh), then any other.
int64_t parameter_rank(const std::string& param) {
  static const std::vector<std::string> first{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"};
  if (const auto it = std::find(first.begin(), first.end(), param); it != first.end()) return it - first.begin();
  static const std::regex recurrent("(weight|bias)_(ih|hh)_l([0-9]+)(_reverse)?");
  std::smatch m;
  if (std::regex_match(param, m, recurrent)) {
    const int64_t kind = (m[1] == "weight" ? 0 : 2) + (m[2] == "ih" ? 0 : 1);
    return 10 + (std::stoll(m[3]) * 2 + (m[4].matched ? 1 : 0)) * 4 + kind;
  }
  return std::numeric_limits<int64_t>::max();
}

// A state_dict's order, as far as names tell it: module paths segment by segment (numbers as
// numbers, so an nn.Sequential's "2" comes before its "10"), then parameter_rank.
bool registration_before(const std::string& a, const std::string& b) {
  const auto segments = [](const std::string& name) {
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t dot; (dot = name.find('.', start)) != std::string::npos; start = dot + 1)
      out.push_back(name.substr(start, dot - start));
    return std::pair(out, name.substr(start));
  };
  const auto [path_a, param_a] = segments(a);
  const auto [path_b, param_b] = segments(b);
  const auto number = [](const std::string& s) {
    return !s.empty() && s.size() < 18 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  for (size_t i = 0; i < std::min(path_a.size(), path_b.size()); ++i) {
    const std::string &x = path_a[i], &y = path_b[i];
    if (x == y) continue;
    if (number(x) && number(y)) return std::stoll(x) < std::stoll(y);
    return x < y;
  }
  if (path_a.size() != path_b.size()) return path_a.size() < path_b.size();
  const int64_t ra = parameter_rank(param_a), rb = parameter_rank(param_b);
  return ra != rb ? ra < rb : param_a < param_b;
}

// The order pass: the alignment of `ps` (project indices) with `fs` (file indices) keeping
// both orders that has the most weight, a pair of equal shapes weighing 2 with the same
// parameter name and 1 without. Returns the aligned pairs as positions in `ps` and `fs`, in order.
std::vector<std::pair<size_t, size_t>> align(const std::vector<ExpectedTensor>& project,
                                             const std::vector<FileTensor>& file, const std::vector<size_t>& ps,
                                             const std::vector<size_t>& fs) {
  const size_t n = ps.size(), m = fs.size();
  const auto weight = [&](size_t i, size_t j) {
    const ExpectedTensor& p = project[ps[i]];
    const FileTensor& f = file[fs[j]];
    if (p.shape != f.shape) return 0;
    return last_segment(p.name) == last_segment(f.name) ? 2 : 1;
  };
  // best[i][j]: the most weight aligning ps[i..] with fs[j..].
  std::vector<int64_t> best((n + 1) * (m + 1), 0);
  const auto at = [&](size_t i, size_t j) -> int64_t& { return best[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;) {
      int64_t b = std::max(at(i + 1, j), at(i, j + 1));
      if (const int w = weight(i, j)) b = std::max(b, at(i + 1, j + 1) + w);
      at(i, j) = b;
    }
  std::vector<std::pair<size_t, size_t>> pairs;
  size_t i = 0, j = 0;
  while (i < n && j < m) {
    const int w = weight(i, j);
    if (w && at(i, j) == at(i + 1, j + 1) + w) {
      pairs.emplace_back(i++, j++);
    } else if (at(i, j) == at(i + 1, j)) {
      ++i;
    } else {
      ++j;
    }
  }
  return pairs;
}

std::string shape_text(const Shape& s) { return plexus::to_string(s); }

}  // namespace

const char* to_text(ImportStatus s) {
  switch (s) {
    case ImportStatus::Matched:
      return "matched";
    case ImportStatus::ShapeMismatch:
      return "shape-mismatched";
    case ImportStatus::LeftOut:
      return "left out";
    case ImportStatus::Missing:
      return "missing";
  }
  return "";
}

const char* to_text(MatchedBy b) {
  switch (b) {
    case MatchedBy::Exact:
      return "exact";
    case MatchedBy::Name:
      return "name";
    case MatchedBy::Order:
      return "order";
    case MatchedBy::None:
      return "";
  }
  return "";
}

WeightsImportPlan match_weights(const std::vector<ExpectedTensor>& project, const std::vector<FileTensor>& file) {
  constexpr size_t kNone = size_t(-1);
  std::vector<size_t> partner(project.size(), kNone);  // project index -> file index
  std::vector<MatchedBy> by(project.size(), MatchedBy::None);
  std::vector<bool> file_taken(file.size(), false);
  const auto take = [&](size_t p, size_t f, MatchedBy how) {
    partner[p] = f;
    by[p] = how;
    file_taken[f] = true;
  };

  // 1. Exact names.
  std::map<std::string, size_t> project_index;
  for (size_t p = 0; p < project.size(); ++p) project_index.emplace(project[p].name, p);
  for (size_t f = 0; f < file.size(); ++f) {
    if (!file[f].loadable) continue;
    const auto it = project_index.find(file[f].name);
    if (it != project_index.end() && partner[it->second] == kNone) take(it->second, f, MatchedBy::Exact);
  }

  // 2. Module paths ending with a node's id or (unique) name.
  std::map<std::string, std::set<std::string>> ids_of_name;
  for (const ExpectedTensor& e : project)
    if (!e.node_name.empty()) ids_of_name[normalised(e.node_name)].insert(e.name.substr(0, e.name.find('.')));
  for (size_t f = 0; f < file.size(); ++f) {
    if (!file[f].loadable || file_taken[f]) continue;
    const std::string& fname = file[f].name;
    size_t chosen = kNone, chosen_key = 0;
    for (size_t p = 0; p < project.size(); ++p) {
      if (partner[p] != kNone) continue;
      const std::string& pname = project[p].name;
      const size_t dot = pname.find('.');
      const std::string rest = pname.substr(dot + 1);
      if (fname.size() <= rest.size() + 1 || !fname.ends_with("." + rest)) continue;
      const std::string prefix = normalised(fname.substr(0, fname.size() - rest.size() - 1));
      std::vector<std::string> keys{normalised(pname.substr(0, dot))};
      const std::string name_key = normalised(project[p].node_name);
      if (!name_key.empty() && ids_of_name[name_key].size() == 1) keys.push_back(name_key);
      for (const std::string& key : keys)
        if (path_ends_with(prefix, key) && (chosen == kNone || key.size() > chosen_key)) {
          chosen = p;
          chosen_key = key.size();
        }
    }
    if (chosen != kNone) take(chosen, f, MatchedBy::Name);
  }

  // 3. The rest by order.
  std::vector<size_t> ps, fs;
  for (size_t p = 0; p < project.size(); ++p)
    if (partner[p] == kNone) ps.push_back(p);
  for (size_t f = 0; f < file.size(); ++f)
    if (file[f].loadable && !file_taken[f]) fs.push_back(f);
  if (sorted_by_name(file))
    std::stable_sort(fs.begin(), fs.end(),
                     [&](size_t a, size_t b) { return registration_before(file[a].name, file[b].name); });
  const auto pairs = align(project, file, ps, fs);
  for (const auto& [i, j] : pairs) take(ps[i], fs[j], MatchedBy::Order);
  // Between two order matches (or the ends), a left-over project tensor facing a left-over
  // file tensor of its parameter name and rank is the same tensor in another shape.
  std::vector<bool> mismatched_by_order(project.size(), false);
  size_t pi = 0, fi = 0;  // positions in ps and fs
  for (size_t k = 0; k <= pairs.size(); ++k) {
    const size_t p_end = k < pairs.size() ? pairs[k].first : ps.size();
    const size_t f_end = k < pairs.size() ? pairs[k].second : fs.size();
    for (size_t i = pi; i < p_end; ++i) {
      const size_t p = ps[i];
      for (size_t j = fi; j < f_end; ++j) {
        const size_t f = fs[j];
        if (!file_taken[f] && last_segment(file[f].name) == last_segment(project[p].name) &&
            file[f].shape.size() == project[p].shape.size()) {
          take(p, f, MatchedBy::Order);
          mismatched_by_order[p] = true;
          break;
        }
      }
    }
    if (k < pairs.size()) {
      pi = pairs[k].first + 1;
      fi = pairs[k].second + 1;
    }
  }

  WeightsImportPlan plan;
  for (size_t p = 0; p < project.size(); ++p) {
    ImportRow row;
    row.project_tensor = project[p].name;
    row.expected = project[p].shape;
    if (partner[p] == kNone) {
      row.status = ImportStatus::Missing;
      row.optional = counter(project[p].name);
      if (row.optional) row.note = "a batch counter, not a weight: stays as initialised";
    } else {
      const FileTensor& f = file[partner[p]];
      row.file_tensor = f.name;
      row.got = f.shape;
      row.by = by[p];
      row.status =
          f.shape == project[p].shape && !mismatched_by_order[p] ? ImportStatus::Matched : ImportStatus::ShapeMismatch;
    }
    plan.rows.push_back(std::move(row));
  }
  for (size_t f = 0; f < file.size(); ++f) {
    if (file_taken[f]) continue;
    ImportRow row;
    row.status = ImportStatus::LeftOut;
    row.file_tensor = file[f].name;
    row.got = file[f].shape;
    if (!file[f].loadable)
      row.note = "dtype " + file[f].dtype + " is not loaded" +
                 (counter(file[f].name) ? " (PyTorch's batch counter, not a weight)" : "");
    plan.rows.push_back(std::move(row));
  }
  return plan;
}

int64_t WeightsImportPlan::count(ImportStatus s) const {
  return std::count_if(rows.begin(), rows.end(), [s](const ImportRow& r) { return r.status == s; });
}

bool WeightsImportPlan::complete() const {
  return std::none_of(rows.begin(), rows.end(), [](const ImportRow& r) {
    return r.status == ImportStatus::ShapeMismatch || (r.status == ImportStatus::Missing && !r.optional);
  });
}

std::string WeightsImportPlan::text() const {
  std::string out;
  for (const ImportRow& r : rows) {
    std::string line = to_text(r.status);
    line.resize(std::max<size_t>(line.size() + 1, 17), ' ');
    std::string how = r.by == MatchedBy::None ? "" : std::string("by ") + to_text(r.by);
    how.resize(std::max<size_t>(how.size() + 1, 9), ' ');
    line += how;
    switch (r.status) {
      case ImportStatus::Matched:
        line += r.file_tensor + " -> " + r.project_tensor + "  " + shape_text(r.expected);
        break;
      case ImportStatus::ShapeMismatch:
        line += r.file_tensor + " -> " + r.project_tensor + "  expected " + shape_text(r.expected) + ", got " +
                shape_text(r.got);
        break;
      case ImportStatus::LeftOut:
        line += r.file_tensor + "  " + shape_text(r.got) + " (in the file, unused)";
        break;
      case ImportStatus::Missing:
        line += r.project_tensor + "  " + shape_text(r.expected) + " (not in the file)";
        break;
    }
    if (!r.note.empty()) line += ": " + r.note;
    out += line + "\n";
  }
  const auto n = [&](ImportStatus s) { return std::to_string(count(s)); };
  out += n(ImportStatus::Matched) + " matched, " + n(ImportStatus::ShapeMismatch) + " shape-mismatched, " +
         n(ImportStatus::LeftOut) + " left out, " + n(ImportStatus::Missing) + " missing";
  const int64_t optional = std::count_if(rows.begin(), rows.end(), [](const ImportRow& r) { return r.optional; });
  if (optional > 0) out += " (" + std::to_string(optional) + " of them batch counters, which stay as initialised)";
  out += "\n";
  return out;
}

std::string WeightsImportPlan::json() const {
  nlohmann::ordered_json j;
  j["complete"] = complete();
  for (ImportStatus s :
       {ImportStatus::Matched, ImportStatus::ShapeMismatch, ImportStatus::LeftOut, ImportStatus::Missing})
    j[to_text(s)] = count(s);
  j["tensors"] = nlohmann::ordered_json::array();
  for (const ImportRow& r : rows) {
    nlohmann::ordered_json t;
    t["status"] = to_text(r.status);
    if (r.by != MatchedBy::None) t["by"] = to_text(r.by);
    if (!r.file_tensor.empty()) t["file"] = r.file_tensor;
    if (!r.project_tensor.empty()) t["project"] = r.project_tensor;
    if (r.status != ImportStatus::LeftOut) t["expected"] = r.expected;
    if (r.status != ImportStatus::Missing) t["got"] = r.got;
    if (r.optional) t["optional"] = true;
    if (!r.note.empty()) t["note"] = r.note;
    j["tensors"].push_back(std::move(t));
  }
  return j.dump(2) + "\n";
}

std::vector<ExpectedTensor> expected_tensors(const nn::Module& model, const graph::Graph& project) {
  // Kahn's algorithm with a stack: the node made ready last (the first consumer, pushed last)
  // goes next.
  std::map<std::string, size_t> indegree;
  std::map<std::string, std::vector<std::string>> consumers;  // in edge order
  for (const graph::Node& n : project.nodes) indegree.emplace(n.id, 0);
  for (const graph::Edge& e : project.edges)
    if (indegree.count(e.from.node) && indegree.count(e.to.node)) {
      ++indegree[e.to.node];
      consumers[e.from.node].push_back(e.to.node);
    }
  std::vector<std::string> ready, order;
  for (auto n = project.nodes.rbegin(); n != project.nodes.rend(); ++n)
    if (indegree[n->id] == 0) ready.push_back(n->id);
  while (!ready.empty()) {
    const std::string id = ready.back();
    ready.pop_back();
    order.push_back(id);
    const std::vector<std::string>& next = consumers[id];
    for (auto c = next.rbegin(); c != next.rend(); ++c)
      if (--indegree[*c] == 0) ready.push_back(*c);
  }
  std::map<std::string, size_t> place;
  for (size_t i = 0; i < order.size(); ++i) place.emplace(order[i], i);
  std::vector<std::pair<std::string, const nn::Module*>> nodes;
  for (const auto& [id, child] : model.children()) nodes.emplace_back(id, child.get());
  std::stable_sort(nodes.begin(), nodes.end(), [&](const auto& a, const auto& b) {
    const auto pa = place.find(a.first), pb = place.find(b.first);
    return (pa == place.end() ? order.size() : pa->second) < (pb == place.end() ? order.size() : pb->second);
  });

  std::vector<ExpectedTensor> out;
  for (const auto& [id, module] : nodes) {
    const graph::Node* node = project.find(id);
    for (const auto& [name, t] : module->state()) out.push_back({id + "." + name, t.shape(), node ? node->name : ""});
  }
  return out;
}

ForeignWeights read_foreign_weights(const std::filesystem::path& file) {
  ForeignWeights w;
  io::SafetensorsHeader header = io::read_safetensors_header(file, io::OtherDtypes::List);
  std::sort(
      header.entries.begin(), header.entries.end(),
      [](const io::SafetensorsEntry& a, const io::SafetensorsEntry& b) { return a.header_index < b.header_index; });
  w.data = io::load_safetensors(file, io::OtherDtypes::List);
  std::set<std::string> loaded;
  for (const auto& [name, t] : w.data.tensors) loaded.insert(name);
  for (const io::SafetensorsEntry& e : header.entries)
    w.tensors.push_back({e.name, e.shape, e.dtype, loaded.count(e.name) != 0});
  return w;
}

int64_t apply_import(const WeightsImportPlan& plan, const ForeignWeights& weights, nn::Module& model) {
  std::map<std::string, Tensor> here;
  for (const auto& [name, t] : model.state()) here.emplace(name, t);
  std::vector<std::pair<Tensor, const Tensor*>> copies;  // destination, source
  for (const ImportRow& r : plan.rows) {
    if (r.status != ImportStatus::Matched) continue;
    const auto dst = here.find(r.project_tensor);
    const Tensor* src = weights.data.find(r.file_tensor);
    if (dst == here.end() || !src || src->shape() != dst->second.shape())
      throw ValueError("importing weights: " + r.file_tensor + " -> " + r.project_tensor +
                       " does not fit this model (was the plan made for another project?)");
    copies.emplace_back(dst->second, src);
  }
  NoGradGuard no_grad;
  for (auto& [dst, src] : copies) dst.copy_(*src);
  return int64_t(copies.size());
}

ProjectImport plan_import(const graph::Graph& project, const std::filesystem::path& project_dir,
                          const std::filesystem::path& weights, uint64_t seed) {
  const graph::DatasetInfo info =
      graph::describe_dataset(graph::resolve_dataset(project.dataset, project_dir, /*must_exist=*/false),
                              project.training.seed, project.training.validation_fraction);
  ProjectImport out{layers::compile(project, info, seed), read_foreign_weights(weights), {}, seed};
  out.plan = match_weights(expected_tensors(*out.compiled.model, project), out.foreign.tensors);
  return out;
}

int64_t save_imported(ProjectImport& import, const std::filesystem::path& weights, const std::filesystem::path& out,
                      train::Metadata metadata) {
  const int64_t copied = apply_import(import.plan, import.foreign, *import.compiled.model);
  metadata["imported_from"] = weights.filename().string();
  metadata["seed"] = std::to_string(import.seed);
  train::save_weights(out, *import.compiled.model, metadata);
  return copied;
}

}  // namespace plexus::session
