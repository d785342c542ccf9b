#pragma once
// Long sessions: the real main window (offscreen) driven through run after run as a person
// would use it, and the C++ API of `plexus-cli predict` called again and again in one process,
// with the process's resident memory, open file descriptors and threads read as they go. Shared
// by the ctest test_app_soak (short, with allowances) and the benchmark bench/bench_soak (long,
// a table). A step that does not happen as it should throws std::runtime_error naming the run
// and the step.
//
// One GUI run (SoakSession::run): Train, and Pause at once; the first hidden layer widened or
// narrowed while paused; Resume, which applies the edit (or, when the run had trained to its end
// before Pause reached it, says it came too late); then every second run is stopped, the others
// finish. Then the two newest runs compared and the comparison closed, and the oldest runs
// deleted (confirmed) so that the dashboard keeps kKeptRuns: a session whose work stays the same
// size, so its memory should too. Then Try It: a picture opened and predicted with the run's
// last weights, and every second run the run's final checkpoint loaded and predicted with.
#include <QString>
#include <QTemporaryDir>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace plexus::testing {

struct TestWindow;

// What the process holds now, from /proc/self.
struct ProcessHealth {
  double rss_mib = 0;  // VmRSS
  int fds = 0;         // entries of /proc/self/fd
  int threads = 0;     // Threads
};
ProcessHealth process_health();

class SoakSession {
 public:
  static constexpr int kKeptRuns = 3;  // runs left on the dashboard after each run's deletions

  // Writes a tiny project (an MLP on generated digits) and its data into a temporary folder,
  // keeps the app's settings, autosaves and runs apart (isolate_app), and opens the project in a
  // new main window, shown.
  SoakSession();
  ~SoakSession();

  // One run of the cycle above; `index` counts from 1 (it picks the edit, stop or finish).
  void run(int index);

  // The final checkpoint of the newest run (for predict_once).
  const std::filesystem::path& lastCheckpoint() const { return last_checkpoint_; }
  // A picture of a digit that the project's model takes.
  const std::filesystem::path& picture(int i) const { return pictures_[i % 2]; }

 private:
  void expect(bool ok, int run, const char* step) const;
  void startPaused(int index);
  void tryIt(int index, bool checkpoint_fits);
  void compareAndDelete(int index);

  QTemporaryDir dir_;
  QString project_;
  std::filesystem::path pictures_[2];
  std::filesystem::path last_checkpoint_;
  std::unique_ptr<TestWindow> window_;
};

// What `plexus-cli predict CKPT PICTURE` does, in this process: the project read from the
// checkpoint, the model loaded, the picture read and prepared as in training, one forward pass
// and softmax. Returns the most likely class.
int predict_once(const std::filesystem::path& checkpoint, const std::filesystem::path& picture);

}  // namespace plexus::testing
