#pragma once
// A sweep's table of trials, as `plexus-cli sweep` prints it and writes it beside the trials
// (results.csv, results.json): one row per trial, in index order, with its status, each swept
// parameter's value, the best validation figures and the epoch they came at, the epochs done and
// the seconds taken; the best trial marked.
//
// CSV columns: trial,status,<each target>,score,best_epoch,validation_accuracy,validation_loss,
// train_loss,epochs,seconds,folder (empty cells for what is not known yet).
// JSON: {"sweep":"<folder>","metric":"validation_accuracy","best":3 (or null),"trials":[{"trial":1,
// "status":"completed","assignment":{"lr":0.01,...},"score":0.97,"best_epoch":4,
// "validation_accuracy":0.97,"validation_loss":0.1,"train_loss":0.08,"epochs_done":5,"epochs":5,
// "seconds":12.5,"folder":"trial-001"},...]}.
#include <string>

#include "sweep/sweep_folder.h"

namespace plexus::sweep {

// Aligned columns for a terminal, the best trial marked with '*'.
std::string results_table(const SweepState& state);
std::string results_csv(const SweepState& state);
std::string results_json(const SweepState& state);
// results.csv and results.json in the sweep's folder, each replaced atomically.
void write_results(const SweepState& state);

}  // namespace plexus::sweep
