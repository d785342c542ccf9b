#include "cli/command.h"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <nlohmann/json.hpp>

#include "session/run_folder.h"
#include "session/run_log.h"
#include "train/event_json.h"
#include "util/error.h"

namespace plexus::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kRunsHelp = R"(  The project's past runs (the folders of <name>.runs/ with a metrics.jsonl), newest first:
  folder, start, status, epochs, best validation accuracy (or loss) and the test figures. A
  run whose log cannot be read is listed with the reason. --json prints one JSON array.
)";

// One past run for `runs --json`: what read_run found, or why it could not.
nlohmann::json run_json(const fs::path& folder) {
  nlohmann::json j{{"folder", folder.string()}};
  session::RunRecord r;
  try {
    r = session::read_run(folder);
  } catch (const std::exception& e) {
    j["error"] = e.what();
    return j;
  }
  const auto optional = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  j["started"] = r.header.started;
  j["status"] = session::to_string(r.status);
  if (r.status == session::RunStatus::StoppedEarly) j["best_epoch"] = r.best_epoch;
  j["message"] = r.message;
  j["first_epoch"] = r.header.first_epoch;
  j["epochs_completed"] = r.epochs_completed;
  j["best_eval_accuracy"] = optional(r.best_eval_accuracy);
  j["best_eval_loss"] = optional(r.best_eval_loss);
  nlohmann::json test;
  if (r.test) {
    test = train::to_json(train::TestEnd{*r.test}, r.header.classification);
    test.erase("event");
  }
  j["test"] = test;
  j["continued_from"] = r.header.continued_from.empty() ? nlohmann::json() : nlohmann::json(r.header.continued_from);
  j["checkpoints"] = nlohmann::json::array();
  if (r.has_best) j["checkpoints"].push_back("best");
  if (r.has_final) j["checkpoints"].push_back("final");
  return j;
}

// The same as one line a person reads.
std::string run_line(const nlohmann::json& j) {
  std::string line = fs::path(j["folder"].get<std::string>()).filename().string() + "  ";
  if (j.contains("error")) return line + "unreadable: " + j["error"].get<std::string>();
  std::string status = j["status"].get<std::string>();
  if (!j["message"].get<std::string>().empty() && status != "completed" && status != "stopped")
    status += " (" + j["message"].get<std::string>() + ")";
  std::string started = j["started"].get<std::string>().substr(0, 19);  // to the second, local time
  if (started.size() > 10) started[10] = ' ';
  if (j.contains("best_epoch"))
    status += " at epoch " + std::to_string(j["epochs_completed"].get<int>()) + "; best epoch " +
              std::to_string(j["best_epoch"].get<int>());
  line += started + "  " + status;
  const int first = j["first_epoch"], last = j["epochs_completed"];
  line += last < first ? "  no epoch" : "  epochs " + std::to_string(first) + "-" + std::to_string(last);
  char buf[96];
  if (!j["best_eval_accuracy"].is_null()) {
    std::snprintf(buf, sizeof buf, "  best val. acc %.2f%%", 100 * j["best_eval_accuracy"].get<double>());
    line += buf;
  } else if (!j["best_eval_loss"].is_null()) {
    std::snprintf(buf, sizeof buf, "  best val. loss %.4g", j["best_eval_loss"].get<double>());
    line += buf;
  }
  if (const nlohmann::json& t = j["test"]; !t.is_null()) {
    if (t.contains("eval_accuracy")) std::snprintf(buf, sizeof buf, "  test acc %.2f%%", 100 * t["eval_accuracy"].get<double>());
    else std::snprintf(buf, sizeof buf, "  test loss %.4g", t["eval_loss"].get<double>());
    line += buf;
  }
  if (!j["continued_from"].is_null())
    line += "  continues " + fs::path(j["continued_from"].get<std::string>()).filename().string();
  return line;
}

int cmd_runs(const Args& args) {
  if (args.positional().empty()) throw UsageError{"runs needs a project FILE"};
  const fs::path file = args.positional()[0];
  if (!fs::is_regular_file(file)) throw IoError("project " + file.string() + " not found");
  nlohmann::json runs = nlohmann::json::array();
  for (const fs::path& folder : session::list_runs(file)) runs.push_back(run_json(folder));
  if (args.has("--json")) {
    std::printf("%s\n", runs.dump().c_str());
    return 0;
  }
  const fs::path where = session::runs_folder(file);
  if (runs.empty()) std::printf("no runs of %s in %s\n", file.c_str(), where.c_str());
  else std::printf("%zu run%s of %s in %s, newest first:\n", runs.size(), runs.size() == 1 ? "" : "s", file.c_str(), where.c_str());
  for (const nlohmann::json& j : runs) std::printf("%s\n", run_line(j).c_str());
  return 0;
}


}  // namespace

Command runs_command() {
  return {"runs", "runs FILE [--json]",
          "list a project's past runs",
          [] { return std::string(kRunsHelp); }, {{"--json"}, {}, 1}, cmd_runs};
}

}  // namespace plexus::cli
