#include "cli/evaluation_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <utility>

namespace plexus::cli {
namespace {

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// A figure in a table column: "-" where it is undefined (a class neither in the data nor predicted).
std::string cell(double v) { return std::isnan(v) ? "     -" : format("%6.4f", v); }

std::string table_row(const std::string& label, size_t width, const train::ClassFigures& f) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%-*s %9s %9s %9s %9lld\n", int(width), label.c_str(), cell(f.precision).c_str(),
                cell(f.recall).c_str(), cell(f.f1).c_str(), (long long)f.support);
  return buf;
}

std::string class_text(const session::ClassificationReport& c, const std::vector<std::string>& names,
                       const std::string& split) {
  size_t width = std::string("weighted avg").size();
  for (const std::string& n : names) width = std::max(width, n.size());
  char head[160];
  std::snprintf(head, sizeof head, "%-*s %9s %9s %9s %9s\n", int(width), "class", "precision", "recall", "f1",
                "support");
  std::string s = head;
  for (size_t k = 0; k < c.model.classes.size(); ++k) s += table_row(names[k], width, c.model.classes[k]);
  s += table_row("macro avg", width, c.model.macro);
  s += table_row("weighted avg", width, c.model.weighted);
  s += "baseline (always '" + names[size_t(c.baseline_class)] + "', the " + split +
       " split's most frequent class): accuracy " + format("%.2f%%", 100 * c.baseline.accuracy) + ", macro F1 " +
       format("%.4f", c.baseline.macro.f1) + " (the model: " + format("%.2f%%", 100 * c.model.accuracy) + ", " +
       format("%.4f", c.model.macro.f1) + ")\n";
  if (const auto& b = c.binary)
    s += "class '" + names[1] + "' positive: ROC AUC " + format("%.4f", b->roc_auc) + " (baseline " +
         format("%.4f", b->baseline_roc_auc) + "), average precision " + format("%.4f", b->average_precision) +
         " (baseline " + format("%.4f", b->baseline_average_precision) + ")\n";
  return s;
}

std::string regression_text(const session::RegressionReport& g, const std::string& split) {
  auto figures = [](const train::RegressionFigures& f) {
    return "MAE " + format("%.6g", f.mae) + ", RMSE " + format("%.6g", f.rmse) + ", R² " + format("%.4f", f.r2);
  };
  std::string mean;
  for (double m : g.baseline_mean) mean += (mean.empty() ? "" : ", ") + format("%.6g", m);
  return figures(g.model) + "\nbaseline (the " + split + " split's mean target, " + mean + "): " +
         figures(g.baseline) + "\n";
}

nlohmann::json class_json(const train::ClassFigures& f) {
  return {{"precision", json_number(f.precision)}, {"recall", json_number(f.recall)}, {"f1", json_number(f.f1)},
          {"support", f.support}};
}

// A curve as one array per field: {"fpr": [...], "tpr": [...], ...}.
template <class Point>
nlohmann::json columns(const std::vector<Point>& points,
                       std::initializer_list<std::pair<const char*, double Point::*>> fields) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, member] : fields) {
    nlohmann::json column = nlohmann::json::array();
    for (const Point& p : points) column.push_back(json_number(p.*member));
    j[name] = std::move(column);
  }
  return j;
}

}  // namespace

std::string evaluation_text(const session::EvaluationReport& report, const std::vector<std::string>& class_names) {
  if (report.classification) return class_text(*report.classification, class_names, report.baseline_split);
  if (report.regression) return regression_text(*report.regression, report.baseline_split);
  return "";
}

nlohmann::json evaluation_json(const session::EvaluationReport& report, const std::vector<std::string>& class_names) {
  nlohmann::json j = nlohmann::json::object();
  if (const auto& c = report.classification) {
    nlohmann::json rows = nlohmann::json::array();
    for (size_t k = 0; k < c->model.classes.size(); ++k) {
      nlohmann::json row = class_json(c->model.classes[k]);
      row["name"] = class_names[k];
      rows.push_back(std::move(row));
    }
    j["class_report"] = {{"classes", rows}, {"macro_avg", class_json(c->model.macro)},
                         {"weighted_avg", class_json(c->model.weighted)}, {"accuracy", c->model.accuracy}};
    j["baseline"] = {{"split", report.baseline_split}, {"class", c->baseline_class},
                     {"class_name", class_names[size_t(c->baseline_class)]}, {"accuracy", c->baseline.accuracy},
                     {"macro_f1", json_number(c->baseline.macro.f1)}};
    if (const auto& b = c->binary) {
      j["positive_class"] = class_names[1];
      j["roc_auc"] = json_number(b->roc_auc);
      j["average_precision"] = json_number(b->average_precision);
      using train::PrPoint, train::RocPoint;
      j["roc"] = columns(b->roc, {{"fpr", &RocPoint::fpr}, {"tpr", &RocPoint::tpr}, {"thresholds", &RocPoint::threshold}});
      j["precision_recall"] = columns(
          b->pr, {{"precision", &PrPoint::precision}, {"recall", &PrPoint::recall}, {"thresholds", &PrPoint::threshold}});
      j["baseline"]["roc_auc"] = json_number(b->baseline_roc_auc);
      j["baseline"]["average_precision"] = json_number(b->baseline_average_precision);
    }
  }
  if (const auto& g = report.regression) {
    j["mae"] = json_number(g->model.mae);
    j["rmse"] = json_number(g->model.rmse);
    j["r2"] = json_number(g->model.r2);
    j["baseline"] = {{"split", report.baseline_split}, {"mean", g->baseline_mean}, {"mae", json_number(g->baseline.mae)},
                     {"rmse", json_number(g->baseline.rmse)}, {"r2", json_number(g->baseline.r2)}};
  }
  return j;
}

nlohmann::json json_number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace plexus::cli
