#pragma once
// Runs a program and waits for it, without Qt (POSIX): its standard output and error captured
// through pipes (read together, so a child filling one pipe while the test waits on the other
// cannot deadlock), standard input /dev/null, optional variables added to the environment, and
// a timeout after which the child is killed.
//
//   const ProcessResult r = run_process("node", {"run.js", "--fast"}, {{"NODE_PATH", dir}}, std::chrono::minutes(1));
//   if (!r.ok()) throw std::runtime_error(r.describe() + ": " + r.err);
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace plexus::testing {

// Variables set for the child, added to (or replacing those of) this process's environment.
using Environment = std::vector<std::pair<std::string, std::string>>;

struct ProcessResult {
  int exit_code = -1;      // the status the program exited with; -1 when a signal ended it
  int signal = 0;          // the signal that ended it (SIGKILL after a timeout), 0 when it exited
  bool timed_out = false;  // it ran past the timeout and was killed
  std::string out, err;    // everything it wrote to standard output and standard error

  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
  // "exited with 3", "killed by signal 11", "timed out": for failure messages.
  std::string describe() const {
    if (timed_out) return "timed out";
    if (signal) return "killed by signal " + std::to_string(signal);
    return "exited with " + std::to_string(exit_code);
  }
};

// The executable `name` would run as, found on PATH ("" when there is none); a name with a '/'
// is checked as it is.
inline std::string find_executable(const std::string& name) {
  auto runnable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return runnable(name) ? name : std::string();
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (size_t start = 0;;) {
    const size_t end = dirs.find(':', start);
    std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (dir.empty()) dir = ".";  // an empty entry is the working folder
    if (const std::string candidate = dir + "/" + name; runnable(candidate)) return candidate;
    if (end == std::string::npos) return {};
    start = end + 1;
  }
}

// Runs `program` (found on PATH unless it names a path) with `args` and `env` added to the
// environment, and waits until it ends or `timeout` passes (then kills it). Throws
// std::runtime_error when it cannot be started at all.
inline ProcessResult run_process(const std::string& program, const std::vector<std::string>& args,
                                 const Environment& env = {},
                                 std::chrono::milliseconds timeout = std::chrono::minutes(5)) {
  const std::string exe = find_executable(program);
  if (exe.empty()) throw std::runtime_error("cannot start " + program + ": not found on PATH");

  std::vector<std::string> arg_text{program};
  arg_text.insert(arg_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : arg_text) argv.push_back(a.data());
  argv.push_back(nullptr);

  // This environment, less the variables `env` sets, then those.
  std::vector<std::string> env_text;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const auto& [name, value] : env) replaced |= entry.starts_with(name + "=");
    if (!replaced) env_text.push_back(entry);
  }
  for (const auto& [name, value] : env) env_text.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("cannot start " + program + ": pipe failed");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw std::runtime_error("cannot start " + program + ": pipe failed");
  }
  // The child's ends become its 1 and 2 (dup2 clears close-on-exec); all four close in it on exec.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (spawned != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    throw std::runtime_error("cannot start " + exe + ": " + std::strerror(spawned));
  }

  // Both pipes read as data comes, until both are closed (the child, and whatever it started
  // that kept them, ended) or the time is up.
  ProcessResult r;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_pipes = 2;
  char buffer[65536];
  while (open_pipes > 0) {
    using std::chrono::milliseconds;
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    const int ready = ::poll(fds, 2, int(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) {
      ::kill(pid, SIGKILL);
      break;
    }
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, size_t(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;  // poll ignores it from now on
        --open_pipes;
      }
    }
  }
  for (const pollfd& f : fds)
    if (f.fd >= 0) ::close(f.fd);

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

}  // namespace plexus::testing
