// Long sessions, short: the real window (offscreen) through 20 runs of start, pause, edit while
// paused, resume, stop or finish, Try It, a comparison and deletions (tests/app/soak_driver.h),
// and 200 calls of `plexus-cli predict`'s C++ API in one process; the process's resident memory,
// open file descriptors and threads must stay within the allowances below once warmed up.
// bench/bench_soak runs the same for 200 runs and 1,000 calls and prints the table.
#include <QTest>
#include <algorithm>
#include <chrono>
#include <vector>

#include "soak_driver.h"
#include "support/app_fixture.h"

using namespace plexus;
using testing::ProcessHealth;
using testing::SoakSession;

namespace {

// The first runs bring the process to its working size: the dashboard's plots and run list,
// Qt's and OpenBLAS's threads, the allocator's arenas, caches of fonts and icons. Growth is
// measured from there.
constexpr int kWarmUpRuns = 5;
constexpr int kRuns = 20;
constexpr int kEvery = 5;  // runs between samples
// What the resident memory may grow from the end of the warm-up to any later sample. The
// session's work stays the same size (the dashboard keeps SoakSession::kKeptRuns runs); what
// still grows is the undo history (an edit per run, about 3 KiB each), and the allocator's reuse
// of freed memory moves it up and down: 1.5 to 4.7 MiB from run 5 to 20 here (docs/performance.md,
// "Long sessions"). Each run's model kept by mistake (its first layer 784 x 256 or 784 x 192
// floats) made it 10.3 MiB by run 15 and 12-13 MiB by run 20, tried on purpose: over the allowance.
constexpr double kRssAllowanceMiB = 8;
// Descriptors: a run closes the files it opened (checkpoints, log, data). Threads: the
// training thread ends with its run; thread pools' idle threads expire on their own clock, so
// a sample may find one or two more than the warm-up did.
constexpr int kFdAllowance = 2;
constexpr int kThreadAllowance = 3;

constexpr int kWarmUpCalls = 50;
constexpr int kCalls = 200;
constexpr int kCallsEvery = 25;
// predict loads the model afresh each call; nothing of a call outlives it. A model kept by
// mistake (0.77 MiB) leaks 115 MiB over the 150 calls.
constexpr double kPredictRssAllowanceMiB = 4;

void print(const char* what, int n, const ProcessHealth& h, double seconds) {
  qInfo("%s %4d: RSS %7.1f MiB, %3d fds, %3d threads, %6.1f s", what, n, h.rss_mib, h.fds, h.threads, seconds);
}

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

class TestAppSoak : public QObject {
  Q_OBJECT

 private slots:
  void twentyGuiRunsStayWithinTheAllowances() {
    std::vector<ProcessHealth> samples;  // after the warm-up, then every kEvery runs
    const auto start = std::chrono::steady_clock::now();
    {
      SoakSession session;
      for (int run = 1; run <= kRuns; ++run) {
        try {
          session.run(run);
        } catch (const std::exception& e) {
          QFAIL(e.what());
        }
        if (run >= kWarmUpRuns && run % kEvery == 0) {
          samples.push_back(testing::process_health());
          print("run", run, samples.back(), since(start));
        }
      }
    }
    const ProcessHealth& base = samples.front();
    for (size_t i = 1; i < samples.size(); ++i) {
      const ProcessHealth& h = samples[i];
      const int run = kWarmUpRuns + int(i) * kEvery;
      QVERIFY2(h.rss_mib - base.rss_mib <= kRssAllowanceMiB,
               qPrintable(QString("resident memory grew %1 MiB from run %2 to run %3, over the allowance of %4 MiB")
                              .arg(h.rss_mib - base.rss_mib, 0, 'f', 1)
                              .arg(kWarmUpRuns)
                              .arg(run)
                              .arg(kRssAllowanceMiB)));
      QVERIFY2(h.fds <= base.fds + kFdAllowance, qPrintable(QString("%1 open file descriptors at run %2, %3 at run %4")
                                                                .arg(h.fds)
                                                                .arg(run)
                                                                .arg(base.fds)
                                                                .arg(kWarmUpRuns)));
      QVERIFY2(h.threads <= base.threads + kThreadAllowance, qPrintable(QString("%1 threads at run %2, %3 at run %4")
                                                                            .arg(h.threads)
                                                                            .arg(run)
                                                                            .arg(base.threads)
                                                                            .arg(kWarmUpRuns)));
    }
  }

  void twoHundredPredictCallsStayWithinTheAllowance() {
    SoakSession session;
    try {
      session.run(1);  // a run's final checkpoint to predict with
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    std::vector<ProcessHealth> samples;
    const auto start = std::chrono::steady_clock::now();
    for (int call = 1; call <= kCalls; ++call) {
      testing::predict_once(session.lastCheckpoint(), session.picture(call));
      if (call >= kWarmUpCalls && call % kCallsEvery == 0) {
        samples.push_back(testing::process_health());
        print("call", call, samples.back(), since(start));
      }
    }
    for (const ProcessHealth& h : samples) {
      QVERIFY2(h.rss_mib - samples.front().rss_mib <= kPredictRssAllowanceMiB,
               qPrintable(QString("resident memory grew %1 MiB after call %2, over the allowance of %3 MiB")
                              .arg(h.rss_mib - samples.front().rss_mib, 0, 'f', 1)
                              .arg(kWarmUpCalls)
                              .arg(kPredictRssAllowanceMiB)));
      QVERIFY(h.fds <= samples.front().fds);
      QVERIFY(h.threads <= samples.front().threads);  // the window's idle pool threads may expire meanwhile
    }
  }
};

QTEST_MAIN(TestAppSoak)
#include "test_app_soak.moc"
