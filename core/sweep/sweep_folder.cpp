#include "sweep/sweep_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "graph/project.h"
#include "graph/registry.h"
#include "graph/sweep_settings.h"
#include "io/atomic_file.h"
#include "session/run_folder.h"
#include "session/run_log.h"
#include "sweep/trials.h"
#include "util/error.h"

namespace plexus::sweep {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kLockFile = "sweep.lock";

json value_json(const graph::ParamValue& v) {
  return std::visit([](const auto& x) { return json(x); }, v);
}

json assignment_json(const Assignment& a) {
  json o = json::object();
  for (const Setting& s : a) o[s.target] = value_json(s.value);
  return o;
}

// The assignment of a trial or plan entry, in the sweep's order of parameters.
Assignment assignment_from(const json& o, const graph::SweepSettings& sweep, const fs::path& file) {
  if (!o.is_object()) throw DataError(file.string() + ": \"assignment\" is not an object");
  Assignment a;
  for (const graph::SweepParameter& p : sweep.parameters) {
    const auto it = o.find(p.target);
    if (it == o.end()) throw DataError(file.string() + ": the assignment has no value for '" + p.target + "'");
    graph::ParamValue v;
    if (it->is_boolean()) v = it->get<bool>();
    else if (it->is_number_integer()) v = it->get<int64_t>();
    else if (it->is_number()) v = it->get<double>();
    else if (it->is_string()) v = it->get<std::string>();
    else throw DataError(file.string() + ": the value of '" + p.target + "' is not a number, flag or word");
    a.push_back({p.target, std::move(v)});
  }
  return a;
}

json read_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw IoError(file.string() + ": cannot open: " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::exception& e) {
    throw DataError(file.string() + ": not valid JSON: " + e.what());
  }
}

fs::path attempt_file(const fs::path& trial, int attempt) {
  return trial / (attempt == 1 ? std::string(kTrialFile) : "attempt-" + std::to_string(attempt) + ".json");
}

// Whether some process holds the sweep's lock: a lock we can take exclusively, no one does.
bool lock_held(const fs::path& folder) {
  const int fd = ::open((folder / kLockFile).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // never run
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);  // lets go of the lock if we took it
  return held;
}

std::optional<double> score_of(const TrialState& t, const std::string& metric) {
  if (metric == "validation_accuracy") return t.best_validation_accuracy;
  if (metric == "validation_loss" && t.best_validation_loss) return -*t.best_validation_loss;
  if (metric == "train_loss" && t.best_train_loss) return -*t.best_train_loss;
  return std::nullopt;
}

// Whether a trial's run log has its whole header line: a trial's process creates the log and then
// writes the header, so a trial just started may have an empty log, or half a line.
bool log_begun(const fs::path& log) {
  std::ifstream in(log, std::ios::binary);
  std::string first;
  return in && std::getline(in, first) && !in.eof();
}

// The trial's figures from its run log: the best of each, and the epoch the metric's best came at.
void read_figures(TrialState& t, const std::string& metric) {
  const session::RunRecord r = session::read_run(t.folder);
  t.epochs = r.header.settings.epochs;
  t.epochs_done = r.epochs_completed;
  t.best_validation_accuracy = r.best_eval_accuracy;
  t.best_validation_loss = r.best_eval_loss;
  double best = -std::numeric_limits<double>::infinity(), seconds = 0;
  for (const train::EpochEnd& e : r.epochs) {
    seconds += e.seconds;
    if (!t.best_train_loss || e.train_loss < *t.best_train_loss) t.best_train_loss = e.train_loss;
    const double s = metric == "validation_accuracy" ? (e.has_eval ? e.eval_accuracy : -1e300)
                     : metric == "validation_loss"   ? (e.has_eval ? -e.eval_loss : -1e300)
                                                     : -e.train_loss;
    if (s > best) best = s, t.best_epoch = e.epoch;
  }
  t.seconds = r.status == session::RunStatus::Incomplete ? seconds : r.seconds;
  switch (r.status) {
    case session::RunStatus::Completed: t.status = TrialStatus::Completed; break;
    case session::RunStatus::StoppedEarly: t.status = TrialStatus::StoppedEarly; break;
    case session::RunStatus::Stopped: t.status = TrialStatus::Stopped; break;
    case session::RunStatus::Failed: t.status = TrialStatus::Failed; break;
    case session::RunStatus::Incomplete: break;
  }
  t.message = r.status == session::RunStatus::Failed ? r.message : "";
  t.score = score_of(t, metric);
}

}  // namespace

std::string to_string(TrialStatus status) {
  switch (status) {
    case TrialStatus::Pending: return "pending";
    case TrialStatus::Running: return "running";
    case TrialStatus::Interrupted: return "interrupted";
    case TrialStatus::Completed: return "completed";
    case TrialStatus::StoppedEarly: return "stopped early";
    case TrialStatus::Stopped: return "stopped";
    case TrialStatus::Failed: return "failed";
  }
  return "?";
}

bool finished(TrialStatus status) {
  return status == TrialStatus::Completed || status == TrialStatus::StoppedEarly || status == TrialStatus::Stopped ||
         status == TrialStatus::Failed;
}

bool SweepState::complete() const {
  return std::all_of(trials.begin(), trials.end(), [](const TrialState& t) { return finished(t.status); });
}

fs::path sweeps_folder(const fs::path& project_file) {
  const fs::path runs = session::runs_folder(project_file);
  return runs.empty() ? fs::path() : runs / "sweeps";
}

fs::path new_sweep_folder(const fs::path& project_file, std::chrono::system_clock::time_point when) {
  return sweeps_folder(project_file) / session::new_run_folder(project_file, "unsaved", when).filename();
}

fs::path trial_folder(const fs::path& folder, int64_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "trial-%03lld", static_cast<long long>(index));
  return folder / name;
}

std::string resolved_metric(const graph::Graph& project) {
  if (project.sweep.metric != "auto") return project.sweep.metric;
  for (const graph::Node& n : project.nodes)
    if (const graph::LayerType* t = graph::Registry::instance().find(n.type); t && t->is_loss() && t->classification)
      return "validation_accuracy";
  return "validation_loss";
}

void create_sweep(const fs::path& folder, const graph::Graph& project, const fs::path& project_file) {
  if (!project.sweep.defined()) throw ValueError("the project defines no sweep (its \"sweep\" object)");
  graph::check_sweep(project);
  if (fs::exists(folder / kSweepFile)) throw IoError((folder / kSweepFile).string() + ": a sweep is there already");
  fs::create_directories(folder);
  graph::Graph g = project;
  g.view.clear();
  json planned = json::array();
  const int64_t n = trial_count(project.sweep);
  for (int64_t i = 0; i < n; ++i)
    if (const std::optional<Assignment> a = planned_trial(project, i))
      planned.push_back({{"index", i + 1}, {"assignment", assignment_json(*a)}});
  const json doc = {{"format", kSweepFormat},
                    {"project", project_file.empty() ? "" : fs::absolute(project_file).lexically_normal().string()},
                    {"created", session::local_time_text(std::chrono::system_clock::now())},
                    {"trials", n},
                    {"planned", planned}};
  // The project first: a folder with a sweep.json always has its project.
  graph::save_project(folder / session::kRunProjectFile, g);
  io::write_file_atomically(folder / kSweepFile, doc.dump(1) + "\n");
}

bool claim_trial(const fs::path& folder, int64_t index, int attempt, const Assignment& assignment) {
  const fs::path trial = trial_folder(folder, index);
  fs::create_directories(trial);
  const fs::path file = attempt_file(trial, attempt);
  if (fs::exists(file)) return false;
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  const json doc = {{"index", index},
                    {"attempt", attempt},
                    {"by", std::string(host) + ":" + std::to_string(::getpid())},
                    {"assignment", assignment_json(assignment)}};
  const fs::path aside = trial / (".claim-" + std::to_string(::getpid()) + "-" + std::to_string(attempt));
  io::write_file_atomically(aside, doc.dump() + "\n");
  const int linked = ::link(aside.c_str(), file.c_str());  // fails with EEXIST when another was first
  const int error = errno;
  fs::remove(aside);
  if (linked == 0) return true;
  if (error == EEXIST) return false;
  throw IoError(file.string() + ": cannot create: " + std::strerror(error));
}

SweepState read_sweep(const fs::path& folder) {
  const fs::path file = folder / kSweepFile;
  if (!fs::exists(file)) throw IoError(folder.string() + ": not a sweep folder (no " + kSweepFile + ")");
  const json doc = read_json(file);
  SweepState s;
  s.folder = folder;
  s.project = graph::load_project(folder / session::kRunProjectFile);
  s.metric = resolved_metric(s.project);
  try {
    if (doc.at("format").get<int>() > kSweepFormat)
      throw DataError(file.string() + ": written by a newer Plexus (format " + doc.at("format").dump() + ")");
    s.project_file = doc.at("project").get<std::string>();
    s.created = doc.at("created").get<std::string>();
    const int64_t n = doc.at("trials").get<int64_t>();
    s.trials.resize(size_t(std::max<int64_t>(n, 0)));
    for (int64_t i = 1; i <= n; ++i) {
      s.trials[size_t(i - 1)].index = i;
      s.trials[size_t(i - 1)].folder = trial_folder(folder, i);
    }
    for (const json& p : doc.at("planned")) {
      const int64_t i = p.at("index").get<int64_t>();
      if (i < 1 || i > n) throw DataError(file.string() + ": planned trial " + std::to_string(i) + " is out of range");
      s.trials[size_t(i - 1)].assignment = assignment_from(p.at("assignment"), s.project.sweep, file);
    }
  } catch (const json::exception& e) {
    throw DataError(file.string() + ": " + e.what());
  }
  // The attempts first, then the lock: see interrupted_trials.
  for (TrialState& t : s.trials) {
    const fs::path first = attempt_file(t.folder, 1);
    if (!fs::exists(first)) continue;
    while (fs::exists(attempt_file(t.folder, t.attempts + 1))) ++t.attempts;
    const fs::path latest = attempt_file(t.folder, t.attempts);
    try {
      t.assignment = assignment_from(read_json(first).at("assignment"), s.project.sweep, first);
      t.claimed_by = read_json(latest).value("by", "");
    } catch (const json::exception& e) {
      throw DataError(first.string() + ": " + e.what());
    }
  }
  s.running = lock_held(folder);
  for (TrialState& t : s.trials) {
    if (t.attempts == 0) continue;
    t.status = s.running ? TrialStatus::Running : TrialStatus::Interrupted;
    if (log_begun(t.folder / session::kRunLogFile)) read_figures(t, s.metric);
    if (t.status == TrialStatus::Stopped && fs::exists(t.folder / kStoppedBySweepFile))
      t.status = s.running ? TrialStatus::Running : TrialStatus::Interrupted;
    if (!finished(t.status) && fs::exists(t.folder / kTrialFailedFile)) {
      t.status = TrialStatus::Failed;
      std::ifstream in(t.folder / kTrialFailedFile);
      std::getline(in, t.message);
    }
  }
  return s;
}

std::vector<int64_t> interrupted_trials(const SweepState& state) {
  std::vector<int64_t> out;
  for (const TrialState& t : state.trials)
    if (t.status == TrialStatus::Interrupted) out.push_back(t.index);
  return out;
}

std::optional<size_t> best_trial(const SweepState& state) {
  std::optional<size_t> best;
  for (size_t i = 0; i < state.trials.size(); ++i) {
    const TrialState& t = state.trials[i];
    if (finished(t.status) && t.score && (!best || *t.score > *state.trials[*best].score)) best = i;
  }
  return best;
}

std::optional<fs::path> unfinished_sweep(const fs::path& project_file, const graph::Graph& project) {
  const fs::path root = sweeps_folder(project_file);
  std::error_code ec;
  if (root.empty() || !fs::is_directory(root, ec)) return std::nullopt;
  std::vector<fs::path> folders;
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec))
    if (fs::exists(e.path() / kSweepFile)) folders.push_back(e.path());
  std::sort(folders.rbegin(), folders.rend());  // the names are times: newest first
  graph::Graph wanted = project;
  wanted.view.clear();
  for (const fs::path& f : folders) {
    try {
      if (graph::load_project(f / session::kRunProjectFile) != wanted) continue;
      const SweepState s = read_sweep(f);
      if (!s.complete() && !s.running) return f;
    } catch (const IoError&) {
      continue;  // a damaged sweep is not one to go on with
    }
  }
  return std::nullopt;
}

SweepLock::SweepLock(const fs::path& folder) {
  fd_ = ::open((folder / kLockFile).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0 || ::flock(fd_, LOCK_SH) != 0)
    throw IoError((folder / kLockFile).string() + ": cannot lock: " + std::strerror(errno));
}

SweepLock::~SweepLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace plexus::sweep
