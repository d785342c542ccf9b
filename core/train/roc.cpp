#include "train/roc.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "util/error.h"

namespace plexus::train {
namespace {

// Cumulative true and false positives at each distinct score, from the highest down
// (sklearn's _binary_clf_curve).
struct Steps {
  std::vector<double> threshold;
  std::vector<int64_t> tp, fp;
};

void check(const std::vector<float>& scores, const std::vector<int32_t>& labels, const char* who) {
  if (scores.size() != labels.size())
    throw ValueError(std::string(who) + ": " + std::to_string(scores.size()) + " scores for " +
                     std::to_string(labels.size()) + " labels");
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] != 0 && labels[i] != 1)
      throw IndexError(std::string(who) + ": label " + std::to_string(labels[i]) + " of example " + std::to_string(i) +
                       " is not 0 or 1");
}

Steps steps(const std::vector<float>& scores, const std::vector<int32_t>& labels, const char* who) {
  check(scores, labels, who);
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  Steps s;
  int64_t tp = 0, fp = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    (labels[order[i]] ? tp : fp) += 1;
    const bool last_of_score = i + 1 == order.size() || scores[order[i + 1]] != scores[order[i]];
    if (!last_of_score) continue;
    s.threshold.push_back(scores[order[i]]);
    s.tp.push_back(tp);
    s.fp.push_back(fp);
  }
  return s;
}

double share(int64_t part, int64_t whole) {
  return whole ? double(part) / double(whole) : std::numeric_limits<double>::quiet_NaN();
}

constexpr double kAbove = std::numeric_limits<double>::infinity();

}  // namespace

std::vector<RocPoint> roc_curve(const std::vector<float>& scores, const std::vector<int32_t>& labels) {
  const Steps s = steps(scores, labels, "roc_curve");
  const int64_t positives = s.tp.empty() ? 0 : s.tp.back(), negatives = s.fp.empty() ? 0 : s.fp.back();
  std::vector<RocPoint> out{{share(0, negatives), share(0, positives), kAbove}};
  for (size_t i = 0; i < s.threshold.size(); ++i)
    out.push_back({share(s.fp[i], negatives), share(s.tp[i], positives), s.threshold[i]});
  return out;
}

double area_under(const std::vector<RocPoint>& curve) {
  double area = 0;
  for (size_t i = 1; i < curve.size(); ++i)
    area += (curve[i].fpr - curve[i - 1].fpr) * (curve[i].tpr + curve[i - 1].tpr) / 2;
  return curve.size() > 1 ? area : std::numeric_limits<double>::quiet_NaN();  // NaN rates carry through
}

std::vector<PrPoint> precision_recall_curve(const std::vector<float>& scores, const std::vector<int32_t>& labels) {
  const Steps s = steps(scores, labels, "precision_recall_curve");
  const int64_t positives = s.tp.empty() ? 0 : s.tp.back();
  std::vector<PrPoint> out{{share(0, positives), 1.0, kAbove}};
  for (size_t i = 0; i < s.threshold.size(); ++i)
    out.push_back({share(s.tp[i], positives), share(s.tp[i], s.tp[i] + s.fp[i]), s.threshold[i]});
  return out;
}

double average_precision(const std::vector<PrPoint>& curve) {
  double ap = 0;
  for (size_t i = 1; i < curve.size(); ++i) ap += (curve[i].recall - curve[i - 1].recall) * curve[i].precision;
  return curve.size() > 1 ? ap : std::numeric_limits<double>::quiet_NaN();
}

ConfusionMatrix confusion_at(const std::vector<float>& scores, const std::vector<int32_t>& labels, double threshold) {
  check(scores, labels, "confusion_at");
  ConfusionMatrix m(2);
  for (size_t i = 0; i < scores.size(); ++i) m.add(labels[i], double(scores[i]) >= threshold ? 1 : 0);
  return m;
}

}  // namespace plexus::train
