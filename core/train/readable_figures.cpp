#include "train/readable_figures.h"

#include <algorithm>
#include <cstdio>

namespace plexus::train {

std::vector<Confusion> top_confusions(const ConfusionMatrix& matrix, size_t limit) {
  const int64_t k = matrix.classes();
  std::vector<Confusion> out;
  for (int64_t truth = 0; truth < k; ++truth) {
    int64_t row = 0;
    for (int64_t j = 0; j < k; ++j) row += matrix.count(truth, j);
    for (int64_t predicted = 0; predicted < k; ++predicted)
      if (const int64_t n = matrix.count(truth, predicted); predicted != truth && n > 0)
        out.push_back({truth, predicted, n, double(n) / double(row)});
  }
  // Stable: cells of equal count keep their row-major order.
  std::stable_sort(out.begin(), out.end(), [](const Confusion& a, const Confusion& b) { return a.count > b.count; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::string parts_text(const std::vector<LossPart>& parts) {
  if (parts.empty()) return "";
  std::string out = " (";
  for (const LossPart& p : parts) {
    char value[32];
    std::snprintf(value, sizeof value, "%.4g", p.value);
    out += (out.size() > 2 ? ", " : "") + p.node + " " + value;
  }
  return out + ")";
}

}  // namespace plexus::train
