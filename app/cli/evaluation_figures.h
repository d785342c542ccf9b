#pragma once
// How `eval` shows the figures a model is judged by (session/evaluation_report.h): as lines a
// person reads, and as keys of eval's JSON object.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "session/evaluation_report.h"

namespace plexus::cli {

// The per-class table with its averages and the baseline's line; the two-class curves' areas;
// a regression's MAE, RMSE and R² beside the baseline's. Ends with a newline ("" for nothing).
std::string evaluation_text(const session::EvaluationReport& report, const std::vector<std::string>& class_names);

// Keys added to eval's object: "class_report", "baseline", for two classes "roc_auc",
// "average_precision", "positive_class", "roc" and "precision_recall" (curves as arrays), for a
// regression "mae", "rmse", "r2". NaN (an undefined figure) and an infinite threshold are null.
nlohmann::json evaluation_json(const session::EvaluationReport& report, const std::vector<std::string>& class_names);

// A number for JSON: null for NaN and infinities, which JSON has no words for.
nlohmann::json json_number(double v);

}  // namespace plexus::cli
