#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cli/command.h"
#include "cli/project_files.h"
#include "dist/launch.h"
#include "graph/project.h"
#include "graph/sweep_settings.h"
#include "io/atomic_file.h"
#include "session/run_log.h"
#include "sweep/results.h"
#include "sweep/sweep_folder.h"
#include "sweep/trials.h"
#include "util/error.h"
#include "util/threads.h"

extern char** environ;

namespace plexus::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSweepHelp = R"(  Runs the hyper-parameter sweep a project file defines (its "sweep" object,
  docs/experiments.md): every trial is an ordinary run of `plexus-cli train` on the project
  with the trial's values, in a process of its own, in a run folder of the sweep's folder
  <project folder>/<name>.runs/sweeps/<date-time>/trial-NNN/. A line is printed as each trial
  finishes; at the end the table of trials (best one marked *), also written beside them as
  results.csv and results.json. A sweep of FILE that was killed or stopped part-way is gone on
  with (the newest one with the same project): finished trials are kept, the interrupted ones
  go on from their last checkpoint. Ctrl-C (SIGINT) or SIGTERM stops the running trials
  cleanly; the sweep resumes later.
  Under mpirun (`mpirun -np 16 plexus-cli sweep FILE`) each rank runs one trial at a time,
  taking the next one left, and rank 0 prints the table when all are done.

Options:
  --sweep-dir DIR      keep the sweep in DIR (going on with the sweep there, if any)
  --resume DIR         go on with the sweep in DIR (its own project)
  --parallel N         trials at once on this machine               [the sweep's parallel]
  --threads N          CPU threads of each trial  [the sweep's threads; 0: cores / parallel]
  --json               print the table as JSON (results.json's text)
  --quiet              print only the table
)";

volatile std::sig_atomic_t g_sweep_stop = 0;
extern "C" void on_sweep_signal(int) { g_sweep_stop = 1; }

// No SA_RESTART: the wait for a trial returns, and the sweep stops its trials.
void stop_sweep_on_signals() {
  struct sigaction a {};
  a.sa_handler = on_sweep_signal;
  sigemptyset(&a.sa_mask);
  sigaction(SIGINT, &a, nullptr);
  sigaction(SIGTERM, &a, nullptr);
}

// This environment without an MPI launcher's variables: a trial trains alone rather than
// joining the sweep's job (dist::launched_by_mpi reads them).
std::vector<std::string> trial_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    if (v.starts_with("OMPI_") || v.starts_with("PMIX_") || v.starts_with("PMI_")) continue;
    env.push_back(v);
  }
  return env;
}

// Starts `plexus-cli ARGS` with its output in `log`. The trial dies with the sweep (kill -9 of
// the sweep leaves no trial training on) and has its own process group, so that a terminal's
// Ctrl-C reaches the sweep alone, which stops its trials in order.
pid_t start_trial(const std::vector<std::string>& args, const fs::path& log) {
  const std::string exe = fs::read_symlink("/proc/self/exe").string();
  std::vector<std::string> argv{exe};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::vector<std::string> env = trial_environment();
  std::vector<char*> cargv, cenv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  for (const std::string& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cargv.push_back(nullptr);
  cenv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw IoError(std::string("cannot start a trial: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::setpgid(0, 0);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    ::execve(exe.c_str(), cargv.data(), cenv.data());
    ::_exit(127);
  }
  return pid;
}

// The trial's project, its relative dataset path made absolute: the trial's folder is not the
// project's (relative paths are looked up next to the project file first, then here).
graph::Graph trial_project(const sweep::SweepState& s, const sweep::Assignment& a) {
  graph::Graph g = sweep::apply_assignment(s.project, a);
  g.sweep = {};
  fs::path data = g.dataset.path;
  if (!data.empty() && data.is_relative()) {
    const fs::path beside = fs::path(project_dir(s.project_file.string())) / data;
    std::error_code ec;
    g.dataset.path = fs::absolute(fs::exists(beside, ec) ? beside : data).lexically_normal().string();
  }
  return g;
}

std::vector<sweep::Scored> scored_trials(const sweep::SweepState& s) {
  std::vector<sweep::Scored> out;
  for (const sweep::TrialState& t : s.trials)
    if (sweep::finished(t.status) && t.score && t.assignment) out.push_back({*t.assignment, *t.score});
  return out;
}

// A trial process that ended without its run log's end line (it could not start, or crashed):
// the trial failed, and kTrialFailedFile says how, with the last line it printed.
void note_failure(const fs::path& trial, int status) {
  if (fs::exists(trial / session::kRunLogFile) && session::read_run(trial).status != session::RunStatus::Incomplete)
    return;
  std::string why = WIFEXITED(status)     ? "plexus-cli train exited with status " + std::to_string(WEXITSTATUS(status))
                    : WIFSIGNALED(status) ? "plexus-cli train was killed by signal " + std::to_string(WTERMSIG(status))
                                          : "plexus-cli train ended";
  std::ifstream log(trial / "output.log");
  std::string line, last;
  while (std::getline(log, line))
    if (!line.empty()) last = line;
  if (!last.empty()) why += ": " + last;
  io::write_file_atomically(trial / sweep::kTrialFailedFile, why + "\n");
}

struct Todo {
  int64_t index;
  int attempt;
};

// "trial 3/12 completed in 35.2 s: lr=0.01 batch_size=64 -> validation_accuracy 0.9712 (epoch 4)"
std::string trial_line(const sweep::SweepState& s, int64_t index) {
  const sweep::TrialState& t = s.trials[size_t(index - 1)];
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", t.seconds);
  std::string line = "trial " + std::to_string(index) + "/" + std::to_string(s.trials.size()) + " " +
                     to_string(t.status) + " in " + seconds + " s: " +
                     (t.assignment ? sweep::assignment_text(*t.assignment) : std::string("?"));
  if (t.score) {
    const bool loss = s.metric != "validation_accuracy";
    char figure[64];
    std::snprintf(figure, sizeof figure, "%.4f", loss ? -*t.score : *t.score);
    line += " -> " + s.metric + " " + figure + " (epoch " + std::to_string(t.best_epoch) + ")";
  }
  if (!t.message.empty()) line += " (" + t.message + ")";
  return line;
}

// Runs trials of the sweep in `folder`, `parallel` at once with `threads` each, until none is left
// for this process (or it is stopped). `snapshot` was read before any process of this launch
// held the lock: its interrupted trials go first. Returns false when stopped by a signal.
bool run_trials(const fs::path& folder, const sweep::SweepState& snapshot, int64_t parallel, int64_t threads,
                bool quiet) {
  std::deque<Todo> todo;
  for (const int64_t i : sweep::interrupted_trials(snapshot)) todo.push_back({i, snapshot.trials[size_t(i - 1)].attempts + 1});
  for (const sweep::TrialState& t : snapshot.trials)
    if (t.status == sweep::TrialStatus::Pending) todo.push_back({t.index, 1});
  std::map<pid_t, int64_t> running;
  while (!g_sweep_stop && (!todo.empty() || !running.empty())) {
    while (!g_sweep_stop && int64_t(running.size()) < parallel && !todo.empty()) {
      const Todo next = todo.front();
      todo.pop_front();
      const sweep::SweepState now = sweep::read_sweep(folder);
      const sweep::TrialState& t = now.trials[size_t(next.index - 1)];
      const sweep::Assignment a =
          t.assignment ? *t.assignment : sweep::propose_tpe(now.project, next.index - 1, scored_trials(now));
      if (!sweep::claim_trial(folder, next.index, next.attempt, a)) continue;  // another process took it
      const fs::path dir = sweep::trial_folder(folder, next.index);
      std::vector<std::string> args;
      std::error_code ec;
      fs::remove(dir / sweep::kStoppedBySweepFile, ec);
      fs::remove(dir / sweep::kTrialFailedFile, ec);
      if (fs::exists(dir / "last.safetensors")) {
        args = {"train", "--resume", dir.string()};
      } else {
        if (fs::exists(dir / session::kRunLogFile)) session::delete_run(dir);
        const fs::path launch = dir / session::kLaunchProjectFile;
        graph::save_project(launch, trial_project(now, a));
        args = {"train", launch.string(), "--run-dir", dir.string()};
      }
      args.insert(args.end(), {"--threads", std::to_string(threads), "--quiet"});
      running.emplace(start_trial(args, dir / "output.log"), next.index);
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) continue;  // a signal: the loop's test stops the sweep
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const int64_t index = it->second;
    running.erase(it);
    if (!g_sweep_stop) note_failure(sweep::trial_folder(folder, index), status);
    const sweep::SweepState now = sweep::read_sweep(folder);
    sweep::write_results(now);
    if (!quiet) std::printf("%s\n", trial_line(now, index).c_str());
    std::fflush(stdout);
  }
  if (!g_sweep_stop) return true;
  // Stopped: each trial saves where it is (last.safetensors) and ends; they go on when the
  // sweep resumes (the marker makes their "stopped" an interruption).
  for (const auto& [pid, index] : running) {
    std::FILE* marker = std::fopen((sweep::trial_folder(folder, index) / sweep::kStoppedBySweepFile).c_str(), "w");
    if (marker) std::fclose(marker);
    ::kill(pid, SIGTERM);
  }
  for (const auto& [pid, index] : running) ::waitpid(pid, nullptr, 0);
  sweep::write_results(sweep::read_sweep(folder));
  return false;
}

// The folder a sweep of FILE goes in: --sweep-dir, else its unfinished sweep, else a new one.
fs::path sweep_folder_for(const Args& args, const std::string& file, const graph::Graph& g, bool quiet) {
  if (args.has("--sweep-dir")) {
    const fs::path dir = args.str("--sweep-dir", "");
    if (!fs::exists(dir / sweep::kSweepFile)) {
      sweep::create_sweep(dir, g, file);
    } else {
      graph::Graph same = g;
      same.view.clear();
      if (graph::load_project(dir / session::kRunProjectFile) != same)
        throw ValueError(dir.string() + " holds a sweep of another project (or other settings): give a new --sweep-dir");
    }
    return dir;
  }
  if (const std::optional<fs::path> unfinished = sweep::unfinished_sweep(file, g)) {
    if (!quiet) std::printf("going on with the unfinished sweep in %s\n", unfinished->c_str());
    return *unfinished;
  }
  const fs::path dir = sweep::new_sweep_folder(file);
  if (dir.empty()) throw IoError(file + ": no runs folder for its sweeps");
  sweep::create_sweep(dir, g, file);
  return dir;
}

// The sweep's folder: --resume's, or FILE's (sweep_folder_for).
fs::path chosen_folder(const Args& args, bool quiet) {
  if (args.has("--resume")) {
    const fs::path folder = args.str("--resume", "");
    if (!fs::exists(folder / sweep::kSweepFile))
      throw UsageError{"--resume " + folder.string() + ": not a sweep folder (no sweep.json)"};
    return folder;
  }
  const std::string file = args.positional()[0];
  const graph::Graph g = graph::load_project(file);
  if (!g.sweep.defined()) throw ValueError(file + ": defines no sweep (add a \"sweep\" object: docs/experiments.md)");
  graph::check_sweep(g);
  return sweep_folder_for(args, file, g, quiet);
}

// Every rank waits for the folder rank 0 chose (new sweeps are created by it alone).
fs::path agree_on_folder(const dist::World& world, const fs::path& chosen) {
  if (!world.comm) return chosen;
  return world.comm->all_gather(chosen.string()).at(0);
}

int cmd_sweep(const Args& args) {
  const bool quiet = args.has("--quiet") || args.has("--json");
  if (args.has("--resume") == !args.positional().empty())
    throw UsageError{"give a project FILE with a sweep, or --resume SWEEP_DIR"};
  if (args.has("--resume") && args.has("--sweep-dir")) throw UsageError{"--resume names the sweep's folder: drop --sweep-dir"};
  dist::World world;
  if (dist::launched_by_mpi()) world = dist::join(false);
  const int rank = world.comm ? world.comm->rank() : 0;
  if (rank != 0 && !std::freopen("/dev/null", "w", stdout))
    throw IoError("rank " + std::to_string(rank) + ": cannot silence its output");

  fs::path folder;
  std::optional<sweep::SweepState> snapshot;
  std::optional<sweep::SweepLock> lock;
  // Rank 0 chooses the folder, reads the state and takes the lock before the others are let
  // go: its snapshot is the one that sees interrupted trials; theirs find the lock held. A
  // problem it meets ends the job, which would otherwise wait for it.
  try {
    if (rank == 0) {
      folder = chosen_folder(args, quiet);
      snapshot = sweep::read_sweep(folder);
      lock.emplace(folder);
    }
  } catch (const UsageError& e) {
    if (world.comm) world.comm->abort(e.message, 2);
    throw;
  } catch (const std::exception& e) {
    if (world.comm) world.comm->abort(e.what(), 1);
    throw;
  }
  folder = agree_on_folder(world, folder);
  if (rank != 0) {
    snapshot = sweep::read_sweep(folder);
    lock.emplace(folder);
  }
  const graph::SweepSettings& settings = snapshot->project.sweep;
  const int64_t parallel = world.comm ? 1 : args.integer("--parallel", settings.parallel, 1);
  const int cores = world.comm ? std::max(1, physical_cores() / world.local_size) : physical_cores();
  int64_t threads = args.integer("--threads", settings.threads, 0);
  if (threads == 0) threads = std::max<int64_t>(1, cores / parallel);
  if (!quiet)
    std::printf("sweep %s: %zu trials (%s), %lld at a time x %lld threads%s\n", folder.c_str(),
                snapshot->trials.size(), settings.method.c_str(), static_cast<long long>(parallel),
                static_cast<long long>(threads),
                world.comm ? (", " + std::to_string(world.comm->size()) + " ranks").c_str() : "");
  std::fflush(stdout);
  stop_sweep_on_signals();
  const bool done = run_trials(folder, *snapshot, parallel, threads, quiet);
  lock.reset();
  if (rank != 0) return done ? 0 : 1;
  // Rank 0 reports once no other process runs trials of the sweep.
  sweep::SweepState final_state = sweep::read_sweep(folder);
  while (done && final_state.running && !g_sweep_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    final_state = sweep::read_sweep(folder);
  }
  sweep::write_results(final_state);
  std::printf("%s", args.has("--json") ? sweep::results_json(final_state).c_str()
                                       : sweep::results_table(final_state).c_str());
  if (!done || g_sweep_stop) {
    std::fprintf(stderr, "plexus-cli: sweep stopped; go on with: plexus-cli sweep --resume %s\n", folder.c_str());
    return 1;
  }
  if (!final_state.complete()) {
    std::fprintf(stderr, "plexus-cli: the sweep is not complete (trials were interrupted): plexus-cli sweep --resume %s\n",
                 folder.c_str());
    return 1;
  }
  return sweep::best_trial(final_state) ? 0 : 1;
}

std::string sweep_help() { return kSweepHelp; }

}  // namespace

Command sweep_command() {
  return {"sweep",
          "sweep FILE [--sweep-dir DIR] [options]\nsweep --resume SWEEP_DIR [options]",
          "run a project's hyper-parameter sweep: its trials as processes (or MPI ranks), then their table",
          sweep_help,
          ArgsShape{{"--json", "--quiet"},
                    {{"--sweep-dir", Takes::Path}, {"--resume", Takes::Path}, {"--parallel"}, kThreadsOption},
                    1},
          cmd_sweep};
}

}  // namespace plexus::cli
