#include "session/resume.h"

#include <cerrno>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <cstring>

#include "graph/project.h"
#include "io/safetensors.h"
#include "train/event_json.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::session {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A metadata value of `last`, or a DataError naming the key.
const std::string& value(const train::Metadata& meta, const std::string& key, const std::string& where) {
  const auto it = meta.find(key);
  if (it == meta.end()) throw DataError(where + ": metadata '" + key + "' is missing");
  return it->second;
}

int64_t whole(const train::Metadata& meta, const std::string& key, const std::string& where) {
  const std::string& text = value(meta, key, where);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || v < 0)
    throw DataError(where + ": metadata '" + key + "' is not a count: '" + text + "'");
  return int64_t(v);
}

double real(const train::Metadata& meta, const std::string& key, const std::string& where) {
  const std::string& text = value(meta, key, where);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end) throw DataError(where + ": metadata '" + key + "' is not a number: '" + text + "'");
  return v;
}

json average_json(const train::Average& a) { return json::array({a.sum(), a.count()}); }

train::Average average_from(const json& j, const std::string& where) {
  if (!j.is_array() || j.size() != 2 || !j[0].is_number() || !j[1].is_number_integer())
    throw DataError(where + ": expected [sum, count], got " + j.dump());
  return train::Average::from(j[0].get<double>(), j[1].get<int64_t>());
}

json parse(const std::string& text, const std::string& where) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw DataError(where + ": not JSON: " + e.what());
  }
}

train::Metadata last_metadata(const fs::path& file) {
  const io::SafetensorsHeader header = io::read_safetensors_header(file);
  return train::Metadata(header.metadata.begin(), header.metadata.end());
}

}  // namespace

namespace {
// JSON has no infinity: a best not yet set (±infinity) is null.
json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double number_or_infinity(const json& j, double infinity) { return j.is_null() ? infinity : j.get<double>(); }

// Hands `read` the JSON of meta[key] when it is there, with where it is for messages; a key that
// is no JSON or lacks what `read` takes is a DataError naming `where` and the key.
template <class Read>
void read_json_key(const train::Metadata& meta, const std::string& key, const std::string& where, Read read) {
  if (!meta.count(key)) return;
  const std::string key_where = where + ": metadata '" + key + "'";
  const json j = parse(meta.at(key), key_where);
  try {
    read(j, key_where);
  } catch (const json::exception& e) {
    throw DataError(key_where + ": " + e.what());
  }
}
}  // namespace

train::Metadata position_metadata(const train::RunPosition& at) {
  train::Metadata meta;
  meta["resume.epoch"] = std::to_string(at.epoch);
  meta["resume.batch"] = std::to_string(at.batch);
  json parts = json::array();
  for (const train::Average& p : at.so_far.parts) parts.push_back(average_json(p));
  meta["resume.so_far"] =
      json{{"loss", average_json(at.so_far.loss)}, {"parts", parts},         {"correct", at.so_far.correct},
           {"positions", at.so_far.positions},     {"seen", at.so_far.seen}, {"seconds", at.so_far.seconds},
           {"data_wait", at.so_far.data_wait}}
          .dump();
  meta["resume.elapsed"] = shortest_text(at.elapsed);
  meta["resume.batches_done"] = std::to_string(at.batches_done);
  if (at.generator) {
    const Generator::State& g = *at.generator;
    // The spare normal draw as its float's bits: exact whatever it is.
    uint32_t spare_bits = 0;
    std::memcpy(&spare_bits, &g.spare, sizeof spare_bits);
    meta["resume.generator"] = json{
        {"seed", g.seed},
        {"s", {g.s[0], g.s[1], g.s[2], g.s[3]}},
        {"has_spare", g.has_spare},
        {"spare_bits", spare_bits}}.dump();
  }
  if (at.stopping != train::EarlyStoppingState{})
    meta["resume.stopping"] = json{{"best", finite_or_null(at.stopping.best)},
                                   {"best_epoch", at.stopping.best_epoch},
                                   {"bad_epochs", at.stopping.bad_epochs}}
                                  .dump();
  if (at.plateau)
    meta["resume.plateau"] = json{{"best", finite_or_null(at.plateau->best)},
                                  {"bad_epochs", at.plateau->bad_epochs},
                                  {"cooldown_left", at.plateau->cooldown_left},
                                  {"last_epoch", at.plateau->last_epoch},
                                  {"lrs", at.plateau->lrs}}
                                 .dump();
  return meta;
}

train::RunPosition position_from_metadata(const train::Metadata& meta, const std::string& where) {
  train::RunPosition at;
  at.epoch = int(whole(meta, "resume.epoch", where));
  if (at.epoch < 1) throw DataError(where + ": metadata 'resume.epoch' must be 1 or more");
  at.batch = whole(meta, "resume.batch", where);
  at.elapsed = real(meta, "resume.elapsed", where);
  at.batches_done = whole(meta, "resume.batches_done", where);
  const std::string so_far_where = where + ": metadata 'resume.so_far'";
  {
    const json j = parse(value(meta, "resume.so_far", where), so_far_where);
    train::JsonFields f(j, so_far_where);
    at.so_far.loss = average_from(f.array("loss"), so_far_where);
    for (const json& p : f.array("parts")) at.so_far.parts.push_back(average_from(p, so_far_where));
    at.so_far.correct = f.integer("correct");
    at.so_far.positions = f.integer("positions");
    at.so_far.seen = f.integer("seen");
    at.so_far.seconds = f.number("seconds");
    at.so_far.data_wait = f.number("data_wait");
    f.finish();
  }
  read_json_key(meta, "resume.generator", where, [&](const json& j, const std::string& key_where) {
    Generator::State g;
    g.seed = j.at("seed").get<uint64_t>();
    const json& s = j.at("s");
    if (!s.is_array() || s.size() != 4) throw DataError(key_where + ": 's' must hold 4 numbers");
    for (size_t i = 0; i < 4; ++i) g.s[i] = s[i].get<uint64_t>();
    g.has_spare = j.at("has_spare").get<bool>();
    const uint32_t bits = j.at("spare_bits").get<uint32_t>();
    std::memcpy(&g.spare, &bits, sizeof bits);
    at.generator = g;
  });
  read_json_key(meta, "resume.stopping", where, [&](const json& j, const std::string&) {
    at.stopping.best = number_or_infinity(j.at("best"), -std::numeric_limits<double>::infinity());
    at.stopping.best_epoch = j.at("best_epoch").get<int>();
    at.stopping.bad_epochs = j.at("bad_epochs").get<int>();
  });
  read_json_key(meta, "resume.plateau", where, [&](const json& j, const std::string&) {
    optim::PlateauState p;
    // No best yet: ReduceLROnPlateau::restore takes an infinite best as its mode's start.
    p.best = number_or_infinity(j.at("best"), std::numeric_limits<double>::infinity());
    p.bad_epochs = j.at("bad_epochs").get<int64_t>();
    p.cooldown_left = j.at("cooldown_left").get<int64_t>();
    p.last_epoch = j.at("last_epoch").get<int64_t>();
    p.lrs = j.at("lrs").get<std::vector<double>>();
    at.plateau = std::move(p);
  });
  return at;
}

namespace {
// Where `last` in `folder` stands, for a run of `epochs` epochs whose log says `status`.
ResumePoint point_of_last(const fs::path& folder, int epochs, RunStatus status) {
  const fs::path last = folder / kLastCheckpointFile;
  const train::Metadata meta = last_metadata(last);
  const std::string where = "checkpoint " + last.string();
  const train::RunPosition at = position_from_metadata(meta, where);
  ResumePoint p;
  p.folder = folder;
  p.epoch = at.epoch;
  p.batch = at.batch;
  p.batches = whole(meta, "resume.batches", where);
  p.epochs = epochs;
  p.saved = value(meta, "resume.saved", where);
  p.status = status;
  return p;
}
}  // namespace

std::optional<ResumePoint> find_resume_point(const fs::path& folder) {
  const RunRecord record = read_run(folder);
  // A run stopped early is finished, as a completed one.
  if (record.status == RunStatus::Completed || record.status == RunStatus::StoppedEarly || !record.has_last)
    return std::nullopt;
  ResumePoint p = point_of_last(folder, int(record.header.settings.epochs), record.status);
  if (record.status == RunStatus::Failed) p.message = record.message;
  return p;
}

ResumePoint read_resume_point(const fs::path& folder) {
  if (std::optional<ResumePoint> p = find_resume_point(folder)) return *p;
  std::error_code ec;
  if (!fs::is_regular_file(folder / kLastCheckpointFile, ec))
    throw ValueError("the run in " + folder.string() + " has no " + kLastCheckpointFile +
                     " to resume from (a run of an older Plexus, or one stopped before its first save)");
  throw ValueError("the run in " + folder.string() +
                   " has completed: nothing to resume (to train it further, continue it: --continue)");
}

std::string resume_point_text(const ResumePoint& p) {
  const char* how = p.status == RunStatus::Stopped  ? "stopped"
                    : p.status == RunStatus::Failed ? "failed"
                                                    : "interrupted";
  return std::string(how) + " at epoch " + std::to_string(p.epoch) + ", batch " + std::to_string(p.batch) + " of " +
         std::to_string(p.batches);
}

ResumedRun make_resumed_run(const fs::path& folder, RunOptions options) {
  ResumedRun r;
  r.header = read_run_header(folder);
  // Data-parallel ranks but 0 leave the log alone: rank 0 checks it, then cuts it back and
  // appends to it while they may still be starting.
  r.point = options.shard == 0 ? read_resume_point(folder)
                               : point_of_last(folder, int(r.header.settings.epochs), RunStatus::Incomplete);
  const fs::path last = folder / kLastCheckpointFile;
  const std::string where = "checkpoint " + last.string();
  const train::Metadata meta = last_metadata(last);
  // The project of the model in `last` (after an edit made while paused, the edited one), with
  // the settings the run trained with (command-line overrides included).
  r.project = graph::parse_project(value(meta, "project", where), where + " (its project)");
  r.project.training = r.header.settings;
  if (!r.header.project.empty()) options.project_dir = fs::path(r.header.project).parent_path();
  options.train_subset = r.header.train_subset;
  r.run = make_training_run(r.project, options);

  nn::NamedTensors carried;
  const train::Metadata loaded = train::load_checkpoint(last, *r.run.compiled.model, r.run.optimizer.get(), &carried);
  train::RunPosition at = position_from_metadata(loaded, where);
  at.carried = std::move(carried);
  if (at.epoch > int(r.header.settings.epochs) || at.epoch < r.header.first_epoch)
    throw DataError(where + ": epoch " + std::to_string(at.epoch) + " is outside the run's epochs " +
                    std::to_string(r.header.first_epoch) + " to " + std::to_string(r.header.settings.epochs));
  if (r.run.scheduler) r.run.scheduler->set_epoch(at.epoch - 1);  // the schedule at the epoch in progress
  r.run.trainer_options.first_epoch = at.epoch;
  r.run.trainer_options.resume_at = std::move(at);
  r.best_score = real(loaded, "resume.best_score", where);
  r.log_bytes = uint64_t(whole(loaded, "resume.log_bytes", where));
  return r;
}

void keep_last_checkpoint(TrainingRun& run, RunCheckpoints& checkpoints, const RunLog& log) {
  run.trainer_options.at_boundary = [&checkpoints, &log](const train::RunPosition& at, train::Boundary kind) {
    checkpoints.boundary(at, kind, log.bytes());
  };
}

void reopen_run_folder(ResumedRun& resumed, std::optional<RunLog>& log, std::optional<RunCheckpoints>& checkpoints) {
  log.emplace(resumed.point.folder, resumed.header.classification, RunLog::Appending{resumed.log_bytes});
  checkpoints.emplace(resumed.point.folder, resumed.project, resumed.run);
  checkpoints->resume(resumed.best_score);
  keep_last_checkpoint(resumed.run, *checkpoints, *log);
}

}  // namespace plexus::session
