#include "graph/inputs.h"

#include <algorithm>

#include "graph/registry.h"

namespace plexus::graph {

std::vector<InputRead> input_reads(const Graph& g) {
  std::vector<InputRead> out;
  const Registry& registry = Registry::instance();
  for (const Node& n : g.nodes) {
    const LayerType* t = registry.find(n.type);
    if (!t || !t->is_input()) continue;
    InputRead read{&n, {}, true};
    if (const auto* names = std::get_if<std::vector<std::string>>(&param_value(n, *t->param("columns"))))
      read.columns = *names;
    if (const bool* on = std::get_if<bool>(&param_value(n, *t->param("standardize")))) read.standardize = *on;
    out.push_back(std::move(read));
  }
  return out;
}

Standardized standardized_columns(const Graph& g, const std::vector<std::string>& features) {
  const size_t n = std::max<size_t>(features.size(), 1);
  std::vector<const InputRead*> reader(n, nullptr);
  Standardized out{std::vector<bool>(n, true), std::nullopt};
  const std::vector<InputRead> reads = input_reads(g);
  for (const InputRead& r : reads) {
    for (size_t i = 0; i < n; ++i) {
      const bool reads_it =
          r.columns.empty() || (!features.empty() && std::ranges::find(r.columns, features[i]) != r.columns.end());
      if (!reads_it) continue;
      if (reader[i] && reader[i]->standardize != r.standardize && !out.conflict) {
        const InputRead& on = r.standardize ? r : *reader[i];
        const InputRead& off = r.standardize ? *reader[i] : r;
        const std::string what = features.empty() ? std::string("the examples") : "column '" + features[i] + "'";
        out.conflict = {{r.node->id, on.node->label() + " standardises " + what + ", which " + off.node->label() +
                                         " reads as it is; the examples are standardised once, so turn "
                                         "standardize the same way on both"}};
      }
      reader[i] = &r;
      out.columns[i] = r.standardize;
    }
  }
  return out;
}

}  // namespace plexus::graph
