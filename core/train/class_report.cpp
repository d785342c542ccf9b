#include "train/class_report.h"

#include <cmath>
#include <limits>
#include <string>

#include "util/error.h"

namespace plexus::train {
namespace {

double ratio(int64_t num, int64_t den) { return den ? double(num) / double(den) : 0.0; }

double f1_of(double p, double r) { return p + r > 0 ? 2 * p * r / (p + r) : 0.0; }

}  // namespace

ClassReport class_report(const ConfusionMatrix& m) {
  const int64_t k = m.classes();
  ClassReport out;
  out.classes.resize(size_t(k));
  const int64_t total = m.total();
  int64_t present = 0;
  for (int64_t c = 0; c < k; ++c) {
    int64_t row = 0, column = 0;
    for (int64_t j = 0; j < k; ++j) {
      row += m.count(c, j);
      column += m.count(j, c);
    }
    ClassFigures& f = out.classes[size_t(c)];
    f.support = row;
    if (row == 0 && column == 0) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      f = {nan, nan, nan, 0, false};
      continue;
    }
    f.precision = ratio(m.count(c, c), column);
    f.recall = ratio(m.count(c, c), row);
    f.f1 = f1_of(f.precision, f.recall);
    ++present;
    out.macro.precision += f.precision;
    out.macro.recall += f.recall;
    out.macro.f1 += f.f1;
    const double w = ratio(row, total);
    out.weighted.precision += w * f.precision;
    out.weighted.recall += w * f.recall;
    out.weighted.f1 += w * f.f1;
  }
  if (present) {
    out.macro.precision /= double(present);
    out.macro.recall /= double(present);
    out.macro.f1 /= double(present);
  }
  out.macro.support = out.weighted.support = total;
  out.accuracy = m.accuracy();
  return out;
}

std::vector<int64_t> class_counts(const std::vector<float>& targets, int64_t classes) {
  std::vector<int64_t> counts(size_t(classes), 0);
  for (float t : targets) {
    if (!(t >= 0 && t < float(classes)) || t != std::floor(t))
      throw IndexError("class_counts: target " + std::to_string(t) + " is no class index in [0, " +
                       std::to_string(classes) + ")");
    ++counts[size_t(t)];
  }
  return counts;
}

int64_t majority_class(const std::vector<int64_t>& counts) {
  if (counts.empty()) throw ValueError("majority_class: no classes");
  int64_t best = 0;
  for (size_t c = 1; c < counts.size(); ++c)
    if (counts[c] > counts[size_t(best)]) best = int64_t(c);
  return best;
}

ConfusionMatrix constant_prediction(const ConfusionMatrix& m, int64_t predicted) {
  const int64_t k = m.classes();
  if (predicted < 0 || predicted >= k)
    throw IndexError("constant_prediction: class " + std::to_string(predicted) + " outside [0, " + std::to_string(k) + ")");
  std::vector<int64_t> counts(size_t(k * k), 0);
  for (int64_t t = 0; t < k; ++t)
    for (int64_t j = 0; j < k; ++j) counts[size_t(t * k + predicted)] += m.count(t, j);
  return ConfusionMatrix(k, std::move(counts));
}

}  // namespace plexus::train
