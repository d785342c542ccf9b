// plexus-cli train under a memory limit its model cannot fit in: the refused allocation ends the
// run with exit status 1 and one message naming the epoch, the batch, the node and the size, not a
// crash or a signal. The limit is a real `ulimit -v` (RLIMIT_AS), set by bash before plexus-cli starts.
#include <QtTest/QtTest>

#include <chrono>
#include <filesystem>
#include <string>

#include "support/cli_support.h"
#include "support/process.h"
#include "support/sanitizers.h"
#include "support/temp_dir.h"
#include "support/wide_project.h"
#include "util/system_memory.h"

using namespace plexus;
namespace fs = std::filesystem;

class TestCliOutOfMemory : public QObject {
  Q_OBJECT

 private slots:
  void aStepAboveTheMemoryLimitFailsWithTheStepAndTheSize() {
    if (testing::kSanitizerAllocator)
      QSKIP("a sanitizer's allocator cannot run under a ulimit -v (support/sanitizers.h)");
    // The validator refuses a model whose estimate (about 8.3 GiB: the 4 GiB output and its
    // gradient) passes the machine's memory before any training starts.
    if (machine_memory() < (uint64_t(12) << 30))
      QSKIP("under 12 GiB of memory the validator refuses this model before it trains");
    // 400 points (288 for training) at batch 256 through a layer 2^22 wide: its output is 4 GiB,
    // while its weights and everything before the first step take a few hundred MiB.
    testing::TempDir dir;
    const fs::path project = testing::write_wide_project(dir.path(), int64_t(1) << 22, 256, 400);
    // 2 GiB of address space: room for plexus-cli, the dataset and the weights, not for the output.
    // One thread, and OpenBLAS's pool of one, keep its thread stacks and buffers out of the way.
    const testing::ProcessResult r = testing::run_process(
        "bash",
        {"-c", "ulimit -v 2097152 && exec \"$0\" \"$@\"", testing::cli_path().toStdString(), "train",
         project.string(), "--run-dir", (dir.path() / "run").string(), "--quiet"},
        {{"PLEXUS_NUM_THREADS", "1"}, {"OPENBLAS_NUM_THREADS", "1"}}, std::chrono::minutes(5));
    QVERIFY2(!r.timed_out && r.signal == 0, (r.describe() + ": " + r.err).c_str());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.find("plexus-cli: training failed: out of memory at epoch 1, batch 1, in the forward pass of "
                        "Linear 'wide': cannot allocate 4.0 GiB for a tensor of shape [256, 4194304] float32 (") !=
                 std::string::npos,
             r.err.c_str());
    QVERIFY2(r.err.find("this process is limited to 2.0 GiB of address space (ulimit -v)") != std::string::npos,
             r.err.c_str());
  }
};

QTEST_GUILESS_MAIN(TestCliOutOfMemory)
#include "test_cli_out_of_memory.moc"
