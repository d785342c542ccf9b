// plexus-cli train under a memory limit its model cannot fit in: the refused allocation ends the
// run with exit status 1 and one message naming the epoch, the batch, the node and the size, not a
// crash or a signal. The limit is a real `ulimit -v` (RLIMIT_AS), set by bash before plexus-cli starts.
#include <QtTest/QtTest>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/cli_support.h"
#include "support/process.h"
#include "support/sanitizers.h"
#include "support/temp_dir.h"
#include "util/system_memory.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

// 400 points of four features in three classes, and a model whose first layer is 2^22 wide: at
// batch 256 its output is 4 GiB, while its weights and everything before the first step take a
// few hundred MiB.
void write_wide_project(const fs::path& dir) {
  std::ofstream csv(dir / "points.csv");
  csv << "a,b,c,d,kind\n";
  const char* kinds[] = {"red", "green", "blue"};
  for (int i = 0; i < 400; ++i)
    csv << i % 3 << ',' << (i % 5) * 0.2 << ',' << (i % 7) * 0.1 << ',' << (i % 11) * 0.3 << ',' << kinds[i % 3]
        << '\n';
  std::ofstream(dir / "wide.plexus") << R"({
  "format": 1,
  "nodes": [
    {"id": "in", "type": "Input", "name": "in", "params": {}, "position": [0, 0]},
    {"id": "fc1", "type": "Linear", "name": "wide", "params": {"out_features": 4194304}, "position": [200, 0]},
    {"id": "fc2", "type": "Linear", "name": "out", "params": {"out_features": 3}, "position": [400, 0]},
    {"id": "loss", "type": "CrossEntropy", "name": "loss", "params": {}, "position": [600, 0]}
  ],
  "edges": [
    {"from": ["in", "x"], "to": ["fc1", "input"]},
    {"from": ["fc1", "output"], "to": ["fc2", "input"]},
    {"from": ["fc2", "output"], "to": ["loss", "input"]},
    {"from": ["in", "y"], "to": ["loss", "target"]}
  ],
  "dataset": {"kind": "csv", "path": "points.csv", "target": "kind", "task": "classification"},
  "training": {"epochs": 1, "batch_size": 256, "optimizer": "sgd", "lr": 0.01}
})";
}

}  // namespace

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
    testing::TempDir dir;
    write_wide_project(dir.path());
    // 2 GiB of address space: room for plexus-cli, the dataset and the weights, not for the output.
    // One thread, and OpenBLAS's pool of one, keep its thread stacks and buffers out of the way.
    const testing::ProcessResult r = testing::run_process(
        "bash",
        {"-c", "ulimit -v 2097152 && exec \"$0\" \"$@\"", testing::cli_path().toStdString(), "train",
         (dir.path() / "wide.plexus").string(), "--run-dir", (dir.path() / "run").string(), "--quiet"},
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
