// Saving when the system says no: a project and a checkpoint are saved over an existing file
// while one step of the atomic write fails as the system would make it fail (io/atomic_file.h
// fail_next_write_step) — no permission to create the temporary file (a read-only folder), a
// full disk while writing, an I/O error at fsync, a rename refused. Every time: an IoError
// that names the file, the step and the system's reason; the previous file byte for byte as
// it was; no temporary file left behind; and the next save, with the fault gone, succeeds.
// And a save killed mid-write (SIGKILL to a child process) leaves the previous file intact, and
// the next save removes the temporary the killed one left.
#include "support/check.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "graph/project.h"
#include "io/atomic_file.h"
#include "plexus.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "train/builtin.h"
#include "train/checkpoint.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

struct Fault {
  io::WriteStep step;
  int error;
  const char* step_text;  // what the message must say about the step
};

const Fault kFaults[] = {
    {io::WriteStep::Create, EACCES, "cannot create a temporary file"},
    {io::WriteStep::Create, EROFS, "cannot create a temporary file"},
    {io::WriteStep::Write, ENOSPC, "writing the temporary file failed"},
    {io::WriteStep::Write, EDQUOT, "writing the temporary file failed"},
    {io::WriteStep::Fsync, EIO, "fsync of the temporary file failed"},
    {io::WriteStep::Rename, EXDEV, "cannot rename the temporary file"},
};

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Saves over `target` (which must exist) under every fault, then once without one.
template <class Save>
void check_every_fault(const fs::path& target, Save&& save) {
  const std::string before = testing::read_all(target);
  const std::vector<std::string> listing = entries(target.parent_path());
  for (const Fault& f : kFaults) {
    const std::string what = std::string(f.step_text) + " (" + std::to_string(f.error) + ")";
    io::fail_next_write_step(f.step, f.error);
    const std::string message = testing::message_of<IoError>(save);
    VERIFY2(testing::contains(message, target.string()), what + ": " + message);
    VERIFY2(testing::contains(message, f.step_text), what + ": " + message);
    const std::string reason = std::generic_category().message(f.error);
    VERIFY2(testing::contains(message, reason), what + ": " + message);
    VERIFY2(testing::read_all(target) == before, what + ": the previous file changed");
    VERIFY2(entries(target.parent_path()) == listing, what + ": a temporary file was left behind");
  }
  save();  // the fault is spent: this one goes through
  VERIFY(testing::read_all(target) != before || before.empty());
}

// The suite's folder, where each test saves its files.
const testing::TempDir& dir() {
  static const testing::TempDir d;
  return d;
}

}  // namespace

TEST(projectSaveKeepsThePreviousFile) {
  const fs::path target = dir().file("project.plexus");
  graph::Graph g = graph::load_project(fs::path(PLEXUS_SOURCE_DIR) / "examples" / "mnist_mlp.plexus");
  graph::save_project(target, g);
  // A changed graph, so that a save that got through would show.
  VERIFY(!g.nodes.empty());
  g.nodes[0].name = "changed";
  check_every_fault(target, [&] { graph::save_project(target, g); });
  COMPARE(graph::load_project(target).nodes[0].name, std::string("changed"));
}

TEST(checkpointSaveKeepsThePreviousFile) {
  const fs::path target = dir().file("run.safetensors");
  Generator gen(3);
  auto model = train::make_builtin_model("mlp", &gen);
  optim::SGD sgd(model->parameters(), {.lr = 0.1, .momentum = 0.9});
  train::save_checkpoint(target, *model, &sgd, {{"epoch", "1"}});
  check_every_fault(target, [&] { train::save_checkpoint(target, *model, &sgd, {{"epoch", "2"}}); });
  auto reloaded = train::make_builtin_model("mlp", &gen);
  COMPARE(train::load_checkpoint(target, *reloaded).at("epoch"), std::string("2"));
}

TEST(killedMidSaveKeepsThePreviousFile) {
  // A child process starts replacing the file, writes a megabyte, tells us, and is killed
  // with SIGKILL (no handler, no cleanup) before it can finish: the previous file stands.
  const fs::path target = dir().file("killed.bin");
  io::write_file_atomically(target, std::string_view("previous content"));
  int ready[2];
  COMPARE(::pipe(ready), 0);
  const pid_t child = ::fork();
  VERIFY(child >= 0);
  if (child == 0) {
    ::close(ready[0]);
    io::write_file_atomically(target, [&](std::ostream& os) {
      const std::string chunk(size_t(1) << 20, 'x');
      os.write(chunk.data(), std::streamsize(chunk.size()));
      os.flush();
      const char byte = 1;
      if (::write(ready[1], &byte, 1) != 1) ::_exit(2);
      for (;;) ::pause();
    });
    ::_exit(1);  // not reached
  }
  ::close(ready[1]);
  char byte = 0;
  const ssize_t got = ::read(ready[0], &byte, 1);
  ::close(ready[0]);
  COMPARE(::kill(child, SIGKILL), 0);
  int status = 0;
  COMPARE(::waitpid(child, &status, 0), child);
  COMPARE(got, ssize_t(1));  // the child was mid-write when it died
  VERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  COMPARE(testing::read_all(target), std::string("previous content"));
  // What the kill leaves is the hidden, partly written temporary next to it; the next save
  // is not disturbed by it and removes it (its process is gone). A live process's temporary
  // (here: our own pid, as if another thread were saving) and other files stay.
  const auto temporaries = [&] {
    int n = 0;
    for (const std::string& name : entries(target.parent_path())) n += name.rfind(".killed.bin.tmp-", 0) == 0;
    return n;
  };
  COMPARE(temporaries(), 1);
  const fs::path live = target.parent_path() / (".killed.bin.tmp-" + std::to_string(::getpid()) + "-0-live");
  const fs::path other = target.parent_path() / ".other.bin.tmp-999999999-0-x";
  io::write_file_atomically(live, std::string_view("being written"));
  io::write_file_atomically(other, std::string_view("not ours"));
  COMPARE(temporaries(), 2);
  io::write_file_atomically(target, std::string_view("new content"));
  COMPARE(testing::read_all(target), std::string("new content"));
  COMPARE(temporaries(), 1);
  VERIFY(fs::exists(live));
  VERIFY(fs::exists(other));
}

