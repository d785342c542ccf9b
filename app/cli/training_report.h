#pragma once
// How `train` reports a run: progress lines at most once a second (the last batch of an epoch
// always), an epoch summary, health issues, JSON lines to the metrics file and the run folder's
// log, and hooks after every epoch and after the run, failed or not (saving checkpoints).
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "data/image_folder.h"
#include "dist/communicator.h"
#include "session/run_log.h"
#include "ops/precision.h"
#include "train/peak.h"
#include "train/trainer.h"

namespace plexus::cli {

struct Reporting {
  bool quiet = false;
  bool classification = true;
  bool text = false;  // a character model: losses also in bits/char and as perplexity
  std::string metrics_path;  // "" = none
  session::RunLog* log = nullptr;  // a run folder's metrics.jsonl; none without a run folder
  train::NodeInfos nodes;          // names the nodes of health issues (else their ids)
  std::function<void(const train::EpochEnd&)> after_epoch;
  std::function<void(const train::RunResult&)> after_run;
  dist::Communicator* comm = nullptr;  // data-parallel: the job to stop when this rank fails
};

// Runs the trainer, reporting as `r` says; SIGINT or SIGTERM stop it after the current batch.
// Returns the exit status: 0, or 1 when the run failed.
int run_and_report(train::Trainer& trainer, const Reporting& r);

// Measures (or finds in the cache) the peak of the device this thread will train on, and says
// what a run's "% of peak" is measured against.
train::MachinePeak machine_peak(Device device, Precision precision);

// Files an image folder left out (bad_files "skip"), from the `first`th on: counted, and the
// first 20 listed with the reason.
void print_skipped(const std::vector<data::SkippedFile>& skipped, size_t first, const char* when);

}  // namespace plexus::cli
