#include "cli/training_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <set>
#include <utility>

#include "train/event_json.h"
#include "train/peak.h"
#include "train/readable_figures.h"
#include "util/error.h"

namespace plexus::cli {
namespace {

std::string clock_text(double seconds) {
  const int64_t s = int64_t(std::llround(std::max(0.0, seconds)));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld", (long long)(s / 60), (long long)(s % 60));
  return buf;
}

// "41200 samples/s, 98.4 GFLOP/s, 43% of peak": the speed figures that are known (a model's
// FLOPs are counted for project files, the peak where it could be measured).
std::string speed_text(double samples_per_second, double gflops, double peak_gflops) {
  char buf[96];
  int n = std::snprintf(buf, sizeof buf, "%.0f samples/s", samples_per_second);
  if (gflops > 0) n += std::snprintf(buf + n, sizeof buf - size_t(n), ", %.*f GFLOP/s", gflops < 100 ? 1 : 0, gflops);
  if (const double share = train::share_of_peak(gflops, peak_gflops); share > 0)
    std::snprintf(buf + n, sizeof buf - size_t(n), ", %.*f%% of peak", train::percent_decimals(100 * share), 100 * share);
  return buf;
}

// "loss 1.9210", for a character model "loss 1.9210 nats (2.771 bits/char, perplexity 6.83)";
// then the accuracy of a classification (a character model's: of the next character).
void print_loss(const char* what, double loss, double accuracy, const Reporting& r) {
  std::printf("%s loss %.4f", what, loss);
  if (r.text) std::printf(" nats (%.3f bits/char, perplexity %.2f)", train::nats_to_bits(loss), train::perplexity(loss));
  if (r.classification) std::printf(r.text ? " next-char acc %.2f%%" : " acc %.2f%%", 100 * accuracy);
}

// Top-5 accuracy where it says something: an image or table classifier of more than 5 classes
// (with 5 or fewer every target is among the top 5).
void print_top5(const train::EpochEnd& e, const Reporting& r) {
  if (r.classification && !r.text && e.classes > 5) std::printf(" top-5 %.2f%%", 100 * e.eval_top5);
}

// An epoch's summary; its evaluation is of the validation split.
void print_epoch(const train::EpochEnd& e, const Reporting& r) {
  std::printf("epoch %d/%d: ", e.epoch, e.epochs);
  print_loss("train", e.train_loss, e.train_accuracy, r);
  std::printf("%s", train::parts_text(e.train_losses).c_str());
  if (e.has_eval) {
    print_loss(" | val", e.eval_loss, e.eval_accuracy, r);
    std::printf("%s", train::parts_text(e.eval_losses).c_str());
    print_top5(e, r);
  }
  std::printf(" | lr %.4g | %.1f s, %s", e.lr, e.seconds, speed_text(e.samples_per_second, e.gflops, e.peak_gflops).c_str());
  // The share of the training loop's time spent waiting on data, when it is worth a look.
  const double waited = e.train_seconds > 0 ? e.data_wait_seconds / e.train_seconds : 0.0;
  if (waited >= 0.01) std::printf(", waited on data %.0f%%", 100 * waited);
  std::printf("\n");
  // A text project's samples, one a line; a sample that spans lines stays indented.
  for (const std::string& sample : e.samples) {
    std::string shown;
    for (char c : sample) shown += c == '\n' ? std::string("\n    ") : std::string(1, c);
    std::printf("  > %s\n", shown.c_str());
  }
  std::fflush(stdout);
}

std::ofstream open_metrics(const std::string& path) {
  std::ofstream metrics;
  if (!path.empty()) {
    metrics.open(path, std::ios::app);
    if (!metrics) throw IoError("cannot open metrics file " + path);
  }
  return metrics;
}

// SIGINT (Ctrl-C) or SIGTERM (mpirun passes Ctrl-C on as it): the run stops after the
// current batch; the handler is reset, so a second Ctrl-C ends the process at once.
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int) { g_stop_signal = 1; }

void stop_on_signals() {
  struct sigaction a {};
  a.sa_handler = on_stop_signal;
  a.sa_flags = SA_RESETHAND;
  sigemptyset(&a.sa_mask);
  sigaction(SIGINT, &a, nullptr);
  sigaction(SIGTERM, &a, nullptr);
}

}  // namespace

train::MachinePeak machine_peak(Device device, Precision precision) {
  const train::MachinePeak peak = train::machine_peak(device, train::default_peak_cache(), precision);
  if (peak.gflops > 0) std::printf("this machine's peak: %s\n", train::describe(peak).c_str());
  return peak;
}

int run_and_report(train::Trainer& trainer, const Reporting& r) {
  std::ofstream metrics = open_metrics(r.metrics_path);
  auto last_print = std::chrono::steady_clock::now();
  std::set<std::pair<std::string, train::HealthKind>> standing;  // health issues already printed
  stop_on_signals();
  trainer.set_callback([&](const train::Event& event) {
    if (g_stop_signal && !trainer.is_cancelled()) {
      trainer.cancel();
      std::fprintf(stderr, "plexus-cli: stopping after this batch\n");
    }
    if (metrics.is_open()) metrics << train::to_json(event, r.classification).dump() << '\n' << std::flush;
    if (r.log) r.log->record(event);
    if (const auto* b = std::get_if<train::BatchEnd>(&event)) {
      const auto now = std::chrono::steady_clock::now();
      if (r.quiet || (now - last_print < std::chrono::seconds(1) && b->batch != b->batches)) return;
      last_print = now;
      std::printf("epoch %d/%d  batch %lld/%lld  loss %.4f", b->epoch, b->epochs, (long long)b->batch,
                  (long long)b->batches, b->running_loss);
      if (r.classification) std::printf("  acc %.2f%%", 100 * b->running_accuracy);
      std::printf("  %s  ETA %s\n", speed_text(b->samples_per_second, b->gflops, b->peak_gflops).c_str(),
                  clock_text(b->eta_seconds).c_str());
      std::fflush(stdout);
    } else if (const auto* e = std::get_if<train::EpochEnd>(&event)) {
      print_epoch(*e, r);
      if (r.after_epoch) r.after_epoch(*e);
    } else if (const auto* t = std::get_if<train::TestEnd>(&event)) {
      print_loss("test (final model):", t->figures.eval_loss, t->figures.eval_accuracy, r);
      std::printf("%s", train::parts_text(t->figures.eval_losses).c_str());
      print_top5(t->figures, r);
      std::printf("\n");
      std::fflush(stdout);
    } else if (const auto* n = std::get_if<train::Notice>(&event)) {
      std::printf("note: %s\n", n->text.c_str());
      std::fflush(stdout);
    } else if (const auto* s = std::get_if<train::NodeStats>(&event)) {
      // A line when an issue appears; it is printed again only after it has cleared.
      std::set<std::pair<std::string, train::HealthKind>> now;
      for (const train::HealthIssue& h : s->health) {
        now.insert({h.node, h.kind});
        if (!standing.count({h.node, h.kind}))
          std::printf("health: %s: %s\n", train::node_label(r.nodes, h.node).c_str(), h.reason.c_str());
      }
      standing = std::move(now);
      std::fflush(stdout);
    }
  });
  const train::RunResult result = trainer.run();
  const bool failed = result.status == train::RunStatus::Failed;
  if (failed) std::fprintf(stderr, "plexus-cli: training failed: %s\n", result.message.c_str());
  else std::printf("finished %zu epochs in %.1f s\n", result.history.size(), result.seconds);
  if (r.after_run) r.after_run(result);
  // A failure of this rank alone leaves the others waiting in a collective: stop them all.
  if (failed && r.comm && !result.every_rank) r.comm->abort("training failed: " + result.message, 1);
  return failed ? 1 : 0;
}

void print_skipped(const std::vector<data::SkippedFile>& skipped, size_t first, const char* when) {
  if (skipped.size() <= first) return;
  const size_t n = skipped.size() - first, shown = std::min<size_t>(n, 20);
  std::printf("%s %zu file%s of the image folder (bad_files: skip):\n", when, n, n == 1 ? "" : "s");
  for (size_t i = first; i < first + shown; ++i) std::printf("  %s: %s\n", skipped[i].path.c_str(), skipped[i].reason.c_str());
  if (n > shown) std::printf("  ... and %zu more\n", n - shown);
}


}  // namespace plexus::cli
