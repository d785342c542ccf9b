#include "session/run_log.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <system_error>
#include <utility>

#include "graph/project.h"
#include "graph/training_params.h"
#include "io/atomic_file.h"
#include "train/event_json.h"
#include "util/error.h"

namespace plexus::session {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

}  // namespace

std::string local_time_text(std::chrono::system_clock::time_point now) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t seconds = std::time_t(ms / 1000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char date[32], zone[8];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &local);
  std::strftime(zone, sizeof zone, "%z", &local);  // +0200
  char out[64];
  std::snprintf(out, sizeof out, "%s.%03d%.3s:%.2s", date, int(ms % 1000), zone, zone + 3);
  return out;
}

namespace {

json settings_json(const graph::TrainingSettings& s) {
  json out = json::object();
  for (const graph::TrainingSetting& row : graph::training_settings())
    std::visit([&](auto field) { out[row.spec.name] = s.*field; }, row.field);
  return out;
}

// The header's settings back, by the same table: each key of the right type, none unknown.
graph::TrainingSettings settings_from_json(const json& j, const std::string& where) {
  train::JsonFields f(j, where + ": settings");
  graph::TrainingSettings s;
  for (const graph::TrainingSetting& row : graph::training_settings()) {
    const std::string& key = row.spec.name;
    if (!f.has(key)) continue;  // a setting newer than the log keeps its default
    std::visit(
        [&](auto field) {
          using T = std::decay_t<decltype(s.*field)>;
          if constexpr (std::is_same_v<T, std::string>) s.*field = f.text(key);
          else if constexpr (std::is_same_v<T, bool>) s.*field = f.boolean(key);
          else if constexpr (std::is_same_v<T, double>) s.*field = f.number(key);
          else if constexpr (std::is_same_v<T, int64_t>) s.*field = f.integer(key);
          else {
            const int64_t v = f.integer(key);
            if (v < 0) f.fail(key, "a whole number >= 0");
            s.*field = uint64_t(v);
          }
        },
        row.field);
  }
  f.finish();
  return s;
}

json header_json(const RunHeader& h) {
  return {{"event", "run"},
          {"format", kRunLogFormat},
          {"started", h.started},
          {"project", h.project},
          {"device", h.device},
          {"classification", h.classification},
          {"first_epoch", h.first_epoch},
          {"train_subset", h.train_subset},
          {"settings", settings_json(h.settings)},
          {"continued_from", h.continued_from.empty() ? json() : json(h.continued_from)}};
}

json header_line(const RunHeader& h) {
  json j = header_json(h);
  if (!h.init_from.empty()) j["init_from"] = h.init_from;  // absent before it was kept, and when unused
  return j;
}

std::string before_edit_file(int n) { return "project-before-edit-" + std::to_string(n) + ".plexus"; }

RunHeader header_from_json(const json& j, const std::string& where) {
  train::JsonFields f(j, where);
  if (const std::string kind = f.text("event"); kind != "run")
    throw DataError(where + ": expected the run header ({\"event\":\"run\", ...}) first, got event '" + kind + "'");
  if (f.integer("format") != kRunLogFormat)
    f.fail("format", std::to_string(kRunLogFormat) + " (the run log format this build reads)");
  RunHeader h;
  h.started = f.text("started");
  h.project = f.text("project");
  h.device = f.text("device");
  h.classification = f.boolean("classification");
  const int64_t first = f.integer("first_epoch");
  if (first < 1 || first > 1'000'000'000) f.fail("first_epoch", "an epoch number (1 or more)");
  h.first_epoch = int(first);
  h.train_subset = f.integer("train_subset");
  h.settings = settings_from_json(f.object("settings"), where);
  h.continued_from = f.text_or_null("continued_from").value_or("");
  if (f.has("init_from")) h.init_from = f.text("init_from");
  f.finish();
  return h;
}

}  // namespace

// ---- writing ---------------------------------------------------------------------------------

RunHeader run_header(const TrainingRun& run, const fs::path& project_file, const RunOptions& options,
                     const RunRecord* continued) {
  RunHeader h;
  if (!project_file.empty()) h.project = fs::absolute(project_file).lexically_normal().string();
  h.device = device_text(parse_device(run.settings.device));
  h.classification = run.compiled.classification;
  h.first_epoch = run.trainer_options.first_epoch;
  h.train_subset = options.train_subset;
  h.settings = run.settings;
  if (continued) h.continued_from = fs::absolute(continued->folder).lexically_normal().string();
  return h;
}

RunLog::RunLog(fs::path folder, const graph::Graph& project, RunHeader header)
    : folder_(std::move(folder)), classification_(header.classification) {
  if (folder_.empty()) return;
  fs::create_directories(folder_);
  const fs::path log = folder_ / kRunLogFile;
  // "x": exclusive, so two runs never share a log.
  file_.reset(std::fopen(log.c_str(), "wx"));
  if (!file_) {
    if (errno == EEXIST) throw IoError("run folder " + folder_.string() + " already holds a run (" + kRunLogFile + ")");
    throw IoError("cannot create " + log.string() + ": " + std::strerror(errno));
  }
  graph::Graph g = project;
  g.view.clear();  // the editor's view says nothing about the run
  graph::save_project(folder_ / kRunProjectFile, g);
  header.started = local_time_text(std::chrono::system_clock::now());
  write_line(header_line(header).dump());
}

RunLog::RunLog(fs::path folder, bool classification, Appending appending)
    : folder_(std::move(folder)), classification_(classification) {
  const fs::path log = folder_ / kRunLogFile;
  std::error_code ec;
  const uintmax_t size = fs::file_size(log, ec);
  if (ec) throw IoError("cannot go on with the run log " + log.string() + ": " + ec.message());
  if (size < appending.keep_bytes)
    throw IoError("cannot go on with the run log " + log.string() + ": it has " + std::to_string(size) +
                  " bytes, its last checkpoint was saved when it had " + std::to_string(appending.keep_bytes));
  // The lines after the checkpoint (a torn one too) go: the resumed run writes them again.
  fs::resize_file(log, appending.keep_bytes, ec);
  if (ec) throw IoError("cannot cut the run log " + log.string() + " back to its last checkpoint: " + ec.message());
  file_.reset(std::fopen(log.c_str(), "a"));
  if (!file_) throw IoError("cannot open " + log.string() + " to append: " + std::strerror(errno));
  bytes_ = appending.keep_bytes;
  // The edits made before: the next keeps the project under the next free number.
  while (fs::exists(folder_ / before_edit_file(edits_ + 1), ec)) ++edits_;
}

RunLog::~RunLog() = default;

void RunLog::write_line(const std::string& line) {
  if (!file_) return;
  // One write and a flush per line: a crash loses at most the line being written.
  errno = 0;
  int error = io::take_injected_failure(io::WriteStep::Append);
  if (!error && (std::fprintf(file_.get(), "%s\n", line.c_str()) < 0 || std::fflush(file_.get()) != 0))
    error = errno ? errno : EIO;
  if (error) {
    // A part of the line may be in the file: nothing more is written after it (not even the
    // failed end line), so the log ends torn as a crash's, which readers drop and resuming cuts.
    file_.reset();
    throw IoError("cannot write " + (folder_ / kRunLogFile).string() + ": " + std::strerror(error));
  }
  bytes_ += line.size() + 1;
}

void RunLog::record(const train::Event& event) {
  if (std::holds_alternative<train::Finished>(event) || std::holds_alternative<train::Failed>(event)) return;
  write_line(train::to_json(event, classification_).dump());
}

void RunLog::edited(const graph::Graph& edited, const train::GraphEdit& edit) {
  if (folder_.empty()) return;
  const fs::path current = folder_ / kRunProjectFile, before = folder_ / before_edit_file(edits_ + 1);
  std::error_code ec;
  fs::copy_file(current, before, fs::copy_options::overwrite_existing, ec);
  if (ec) throw IoError("cannot keep " + current.string() + " as " + before.string() + ": " + ec.message());
  graph::Graph g = edited;
  g.view.clear();
  try {
    graph::save_project(current, g);  // atomic: the old one or the new one
  } catch (...) {
    fs::remove(before, ec);
    throw;
  }
  ++edits_;
  write_line(train::to_json(edit, classification_).dump());
}

void RunLog::end(const train::RunResult& r) {
  if (r.status == train::RunStatus::Failed) write_line(train::to_json(train::Failed{r.message}, classification_).dump());
  else
    write_line(train::to_json(train::Finished{r.status == train::RunStatus::Cancelled, r.epochs_completed, r.seconds,
                                              r.stopped_early, r.best_epoch},
                              classification_)
                   .dump());
}

fs::path finish_run(RunCheckpoints& checkpoints, RunLog& log, const train::RunResult& result) {
  if (result.status == train::RunStatus::Failed) {
    log.end(result);
    return {};
  }
  fs::path saved;
  try {
    saved = checkpoints.finish(result);
  } catch (const std::exception& e) {
    train::RunResult failed = result;
    failed.status = train::RunStatus::Failed;
    failed.message = std::string("the final checkpoint could not be saved: ") + e.what();
    log.end(failed);
    throw;
  }
  log.end(result);
  return saved;
}

// ---- reading ---------------------------------------------------------------------------------

std::string to_string(RunStatus s) {
  switch (s) {
    case RunStatus::Completed:
      return "completed";
    case RunStatus::Stopped:
      return "stopped";
    case RunStatus::StoppedEarly:
      return "stopped early";
    case RunStatus::Failed:
      return "failed";
    case RunStatus::Incomplete:
      break;
  }
  return "incomplete";
}

std::string status_text(const RunRecord& r) {
  if (r.status != RunStatus::StoppedEarly) return to_string(r.status);
  return "stopped early at epoch " + std::to_string(r.epochs_completed) + "; best epoch " +
         std::to_string(r.best_epoch);
}

namespace {

// Keeps every stride-th batch; when that makes too many, every other one of those.
class BatchSampler {
 public:
  void add(const train::BatchEnd& b) {
    if (seen_++ % stride_ == 0) {
      kept_.push_back(b);
      if (kept_.size() >= kRunBatchPoints) {
        for (size_t i = 1; i < (kept_.size() + 1) / 2; ++i) kept_[i] = kept_[2 * i];
        kept_.resize((kept_.size() + 1) / 2);
        stride_ *= 2;
      }
    }
    last_ = b;
  }
  std::vector<train::BatchEnd> take() {
    if (seen_ > 0 && (seen_ - 1) % stride_ != 0) kept_.push_back(last_);
    return std::move(kept_);
  }
  int64_t seen() const { return seen_; }

 private:
  std::vector<train::BatchEnd> kept_;
  train::BatchEnd last_;
  int64_t seen_ = 0, stride_ = 1;
};

}  // namespace

RunLogReader::RunLogReader(fs::path log) : log_(std::move(log)) {}

void RunLogReader::feed(std::string_view bytes, const Sink& sink) {
  for (size_t newline; (newline = bytes.find('\n')) != std::string_view::npos;) {
    std::string_view text = bytes.substr(0, newline);
    bytes.remove_prefix(newline + 1);
    if (!waiting_.empty()) text = waiting_.append(text);  // the line began in an earlier piece
    std::optional<train::Event> event = line(text, true);
    waiting_.clear();
    if (event) sink(std::move(*event));
  }
  waiting_.append(bytes);
}

void RunLogReader::finish(const Sink& sink) {
  if (waiting_.empty()) return;
  const std::string text = std::exchange(waiting_, {});
  if (std::optional<train::Event> event = line(text, false)) sink(std::move(*event));
}

// One line; `whole`: its newline came (else it is the file's last, which may be cut short).
std::optional<train::Event> RunLogReader::line(std::string_view text, bool whole) {
  const std::string where = log_.string() + ":" + std::to_string(lines_ + 1);
  json j;
  try {
    j = train::parse_json_line(text, where);
  } catch (const DataError&) {
    if (whole) throw;
    if (!header_) throw DataError(where + ": the run header is cut short");
    cut_short_ = true;
    return std::nullopt;
  }
  ++lines_;
  if (!header_) {
    header_ = header_from_json(j, where);
    last_epoch_ = header_->first_epoch - 1;
    return std::nullopt;
  }
  if (ended_) throw DataError(where + ": a line after the end of the run");
  train::Event event = train::event_from_json(j, where);
  const int epochs = int(header_->settings.epochs);
  if (auto* b = std::get_if<train::BatchEnd>(&event)) {
    b->epochs = epochs;
  } else if (auto* e = std::get_if<train::EpochEnd>(&event)) {
    if (e->epoch <= last_epoch_)
      throw DataError(where + ": epoch " + std::to_string(e->epoch) + " after epoch " + std::to_string(last_epoch_));
    last_epoch_ = e->epoch;
    e->epochs = epochs;
  } else if (std::holds_alternative<train::Finished>(event) || std::holds_alternative<train::Failed>(event)) {
    ended_ = true;
  }
  return event;
}

RunRecord read_run(const fs::path& folder) {
  const fs::path path = folder / kRunLogFile;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("not a run folder: " + folder.string() + " has no readable " + kRunLogFile);
  RunRecord r;
  r.folder = folder;
  BatchSampler batches;
  RunLogReader reader(path);
  const auto take = [&](train::Event event) {
    if (const auto* b = std::get_if<train::BatchEnd>(&event)) {
      batches.add(*b);
    } else if (const auto* e = std::get_if<train::EpochEnd>(&event)) {
      if (e->has_eval) {
        r.best_eval_loss = std::min(r.best_eval_loss.value_or(e->eval_loss), e->eval_loss);
        if (reader.header()->classification)
          r.best_eval_accuracy = std::max(r.best_eval_accuracy.value_or(e->eval_accuracy), e->eval_accuracy);
      }
      r.epochs.push_back(*e);
    } else if (const auto* t = std::get_if<train::TestEnd>(&event)) {
      r.test = t->figures;
    } else if (const auto* n = std::get_if<train::Notice>(&event)) {
      r.notices.push_back(n->text);
    } else if (auto* s = std::get_if<train::NodeStats>(&event)) {
      r.node_stats = std::move(*s);
    } else if (const auto* edit = std::get_if<train::GraphEdit>(&event)) {
      r.edits.push_back(*edit);
    } else if (const auto* f = std::get_if<train::Finished>(&event)) {
      r.status = f->cancelled ? RunStatus::Stopped : f->stopped_early ? RunStatus::StoppedEarly : RunStatus::Completed;
      r.best_epoch = f->best_epoch;
      r.seconds = f->seconds;
    } else if (const auto* failed = std::get_if<train::Failed>(&event)) {
      r.status = RunStatus::Failed;
      r.message = failed->message;
    }
  };
  // In pieces: a long run's log need not fit in memory at once.
  std::string piece(size_t(1) << 16, '\0');
  while (in.read(piece.data(), std::streamsize(piece.size())) || in.gcount() > 0)
    reader.feed(std::string_view(piece.data(), size_t(in.gcount())), take);
  if (in.bad()) throw IoError("cannot read " + path.string());
  reader.finish(take);
  if (!reader.header()) throw DataError(path.string() + ": empty, expected the run header on line 1");
  r.header = *reader.header();
  r.epochs_completed = reader.last_epoch();
  if (reader.cut_short()) r.message = "its last line is cut short";
  else if (!reader.ended()) r.message = "it has no end line";
  r.batch_lines = batches.seen();
  r.batches = batches.take();
  std::error_code ec;
  r.has_best = fs::is_regular_file(folder / "best.safetensors", ec);
  r.has_final = fs::is_regular_file(folder / "final.safetensors", ec);
  r.has_last = fs::is_regular_file(folder / "last.safetensors", ec);
  return r;
}

RunHeader read_run_header(const fs::path& folder) {
  const fs::path path = folder / kRunLogFile;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("not a run folder: " + folder.string() + " has no readable " + kRunLogFile);
  std::string first;
  const bool whole = bool(std::getline(in, first)) && !in.eof();
  if (in.bad()) throw IoError("cannot read " + path.string());
  RunLogReader reader(path);
  reader.feed(first, {});
  if (whole) reader.feed("\n", {});
  else reader.finish({});
  if (!reader.header()) throw DataError(path.string() + ": empty, expected the run header on line 1");
  return *reader.header();
}

std::vector<fs::path> list_runs(const fs::path& project_file) {
  const fs::path parent = runs_folder(project_file);
  std::vector<fs::path> out;
  std::error_code ec;
  if (parent.empty() || !fs::is_directory(parent, ec)) return out;
  for (const fs::directory_entry& entry : fs::directory_iterator(parent, ec))
    if (entry.is_directory(ec) && fs::is_regular_file(entry.path() / kRunLogFile, ec)) out.push_back(entry.path());
  // Folder names are start times (yyyyMMdd-HHmmss-zzz), so names sort by age.
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) { return a.filename() > b.filename(); });
  return out;
}

bool delete_run(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_regular_file(folder / kRunLogFile, ec))
    throw IoError("not a run folder: " + folder.string() + " has no " + kRunLogFile + "; nothing was deleted");
  const std::vector<std::string> names = {kRunLogFile, kRunProjectFile, kLaunchProjectFile, "best.safetensors",
                                          "final.safetensors", "last.safetensors"};
  std::vector<fs::path> doomed;
  bool others = false;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    // io::write_file_atomically's temporaries: ".<name>.tmp-<pid>-<n>-<random>".
    const bool before_edit = name.rfind("project-before-edit-", 0) == 0 && fs::path(name).extension() == ".plexus";
    const bool ours = before_edit || std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return name == n || name.rfind("." + n + ".tmp-", 0) == 0;
    });
    if (ours && !entry.is_directory(ec)) doomed.push_back(entry.path());
    else others = true;
  }
  // The log last: a folder left half-deleted by an error is still a run folder to delete again.
  std::stable_partition(doomed.begin(), doomed.end(), [](const fs::path& p) { return p.filename() != kRunLogFile; });
  for (const fs::path& p : doomed)
    if (!fs::remove(p, ec) && ec) throw IoError("cannot delete " + p.string() + ": " + ec.message());
  if (others) return false;
  if (!fs::remove(folder, ec) && ec) throw IoError("cannot delete " + folder.string() + ": " + ec.message());
  return true;
}

}  // namespace plexus::session
