// bench_soak: does a long session stay healthy? The real main window (offscreen) driven through
// run after run — start, pause, edit while paused, resume, stop or finish, Try It, a comparison,
// deletions — then `plexus-cli predict`'s C++ API called again and again in the same process
// (tests/app/soak_driver.h says what one run and one call do).
//
//   QT_QPA_PLATFORM=offscreen bench_soak [--runs N] [--every K] [--calls N] [--calls-every K]
//
// Prints a table of the process's resident memory (VmRSS), open file descriptors and threads,
// with the seconds since the start, after every K-th run (default 200 runs, every 20th) and
// every K-th predict call (default 1,000 calls, every 100th), and each part's growth from its
// first row to its last. Exit status 1 when a step of the session fails, else 0: it measures;
// the ctest test_app_soak holds a short session to allowances.
#include <QApplication>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>

#include "soak_driver.h"

using plexus::testing::ProcessHealth;

namespace {

struct Options {
  int runs = 200, every = 20, calls = 1000, calls_every = 100;
};

[[noreturn]] void usage() {
  std::fprintf(stderr, "usage: bench_soak [--runs N] [--every K] [--calls N] [--calls-every K]\n");
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc) usage();
    const int value = std::atoi(argv[i + 1]);
    if (value < 1) usage();
    if (!std::strcmp(argv[i], "--runs"))
      o.runs = value;
    else if (!std::strcmp(argv[i], "--every"))
      o.every = value;
    else if (!std::strcmp(argv[i], "--calls"))
      o.calls = value;
    else if (!std::strcmp(argv[i], "--calls-every"))
      o.calls_every = value;
    else
      usage();
  }
  return o;
}

class Table {
 public:
  explicit Table(const char* what) : what_(what) {
    std::printf("\n| %s | RSS MiB | fds | threads | seconds |\n| ---: | ---: | ---: | ---: | ---: |\n", what);
  }
  void row(int n) {
    const ProcessHealth h = plexus::testing::process_health();
    if (!first_) first_ = h;
    last_ = h;
    std::printf("| %d | %.1f | %d | %d | %.1f |\n", n, h.rss_mib, h.fds, h.threads,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    std::fflush(stdout);
  }
  ~Table() {
    if (first_)
      std::printf("\n%s: RSS %+.1f MiB, fds %+d, threads %+d from the first row to the last\n", what_,
                  last_.rss_mib - first_->rss_mib, last_.fds - first_->fds, last_.threads - first_->threads);
  }

 private:
  const char* what_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::optional<ProcessHealth> first_;
  ProcessHealth last_;
};

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  const Options o = parse(argc, argv);
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  std::printf("bench_soak: %d GUI runs, then %d predict calls; OPENBLAS_CORETYPE=%s\n", o.runs, o.calls,
              coretype ? coretype : "(unset)");
  try {
    plexus::testing::SoakSession session;
    {
      Table table("run");
      for (int run = 1; run <= o.runs; ++run) {
        session.run(run);
        if (run % o.every == 0) table.row(run);
      }
    }
    Table table("predict call");
    for (int call = 1; call <= o.calls; ++call) {
      plexus::testing::predict_once(session.lastCheckpoint(), session.picture(call));
      if (call % o.calls_every == 0) table.row(call);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_soak: %s\n", e.what());
    return 1;
  }
  return 0;
}
