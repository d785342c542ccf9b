#include "graph/inputs.h"

#include <algorithm>

#include "graph/registry.h"

namespace plexus::graph {

const std::vector<ParamField<InputParams>>& input_fields() {
  static const std::vector<ParamField<InputParams>> fields{
      param("shape", "Input shape", &InputParams::shape, {}, 1, kBig,
            "The shape of one example; empty = taken from the dataset."),
      param("columns", "Columns", &InputParams::columns,
            "The table's (CSV) feature columns this Input reads, in this order, as x [k]; empty = every "
            "feature column. Other kinds of data have no columns to choose.",
            "all"),
      param("standardize", "Standardize", &InputParams::standardize, true,
            "Whether x is standardised with the training split's mean and standard deviation. Off for "
            "columns holding category indices (whole numbers from 0) that feed an Embedding.")};
  return fields;
}

InputRead input_read(const Node& input) { return {decode_lenient(input, input_fields()), &input}; }

std::vector<InputRead> input_reads(const Graph& g) {
  std::vector<InputRead> out;
  const Registry& registry = Registry::instance();
  for (const Node& n : g.nodes) {
    const LayerType* t = registry.find(n.type);
    if (t && t->is_input()) out.push_back(input_read(n));
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
