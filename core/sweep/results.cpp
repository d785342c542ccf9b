#include "sweep/results.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "graph/graph.h"
#include "io/atomic_file.h"
#include "util/text.h"

namespace plexus::sweep {
namespace {

using nlohmann::json;

std::string number(const std::optional<double>& v, const char* format = "%.4f") {
  if (!v) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, *v);
  return buf;
}

// The trial's value of a swept target ("" for a tpe trial not chosen yet).
std::string value_text(const TrialState& t, const std::string& target) {
  if (!t.assignment) return "";
  for (const Setting& s : *t.assignment)
    if (s.target == target) {
      if (const double* d = std::get_if<double>(&s.value)) return number(*d, "%.4g");
      return graph::to_string(s.value);
    }
  return "";
}

// The table's cells, a row per trial after the header; the table and the CSV share them.
std::vector<std::vector<std::string>> cells(const SweepState& state, bool for_csv) {
  std::vector<std::string> header{"trial", "status"};
  for (const graph::SweepParameter& p : state.project.sweep.parameters) header.push_back(p.target);
  for (const char* c : {"score", "best_epoch", "validation_accuracy", "validation_loss", "train_loss", "epochs",
                        "seconds"})
    header.push_back(c);
  if (for_csv) header.push_back("folder");
  std::vector<std::vector<std::string>> rows{header};
  const std::optional<size_t> best = best_trial(state);
  for (size_t i = 0; i < state.trials.size(); ++i) {
    const TrialState& t = state.trials[i];
    std::vector<std::string> r{std::to_string(t.index) + (!for_csv && best == i ? "*" : ""), to_string(t.status)};
    for (const graph::SweepParameter& p : state.project.sweep.parameters) r.push_back(value_text(t, p.target));
    const bool begun = t.attempts > 0 && t.epochs_done > 0;
    r.push_back(number(t.score));
    r.push_back(begun && t.best_epoch ? std::to_string(t.best_epoch) : "");
    r.push_back(number(t.best_validation_accuracy));
    r.push_back(number(t.best_validation_loss));
    r.push_back(number(t.best_train_loss));
    r.push_back(t.attempts ? std::to_string(t.epochs_done) + "/" + std::to_string(t.epochs) : "");
    r.push_back(t.attempts ? number(t.seconds, "%.1f") : "");
    if (for_csv) r.push_back(t.folder.filename().string());
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

std::string results_table(const SweepState& state) {
  const auto rows = cells(state, false);
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      line += r[c] + std::string(width[c] - r[c].size(), ' ');
      if (c + 1 < r.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  const std::optional<size_t> best = best_trial(state);
  out += best ? "* best " + state.metric + ": trial " + std::to_string(state.trials[*best].index) + ", " +
                    assignment_text(*state.trials[*best].assignment) + "\n"
              : "no trial has finished with a " + state.metric + " yet\n";
  return out;
}

std::string results_csv(const SweepState& state) {
  std::string out;
  for (const auto& r : cells(state, true)) {
    for (size_t c = 0; c < r.size(); ++c) {
      if (c) out += ',';
      out += csv_cell(r[c]);
    }
    out += "\n";
  }
  return out;
}

std::string results_json(const SweepState& state) {
  json trials = json::array();
  for (const TrialState& t : state.trials) {
    json a = nullptr;
    if (t.assignment) {
      a = json::object();
      for (const Setting& s : *t.assignment) a[s.target] = std::visit([](const auto& x) { return json(x); }, s.value);
    }
    trials.push_back({{"trial", t.index},
                      {"status", to_string(t.status)},
                      {"assignment", a},
                      {"score", optional_json(t.score)},
                      {"best_epoch", t.best_epoch ? json(t.best_epoch) : json(nullptr)},
                      {"validation_accuracy", optional_json(t.best_validation_accuracy)},
                      {"validation_loss", optional_json(t.best_validation_loss)},
                      {"train_loss", optional_json(t.best_train_loss)},
                      {"epochs_done", t.epochs_done},
                      {"epochs", t.epochs},
                      {"seconds", t.seconds},
                      {"message", t.message},
                      {"folder", t.folder.filename().string()}});
  }
  const std::optional<size_t> best = best_trial(state);
  const json doc = {{"sweep", state.folder.string()},
                    {"metric", state.metric},
                    {"best", best ? json(state.trials[*best].index) : json(nullptr)},
                    {"trials", trials}};
  return doc.dump(1) + "\n";
}

void write_results(const SweepState& state) {
  io::write_file_atomically(state.folder / "results.csv", results_csv(state));
  io::write_file_atomically(state.folder / "results.json", results_json(state));
}

}  // namespace plexus::sweep
