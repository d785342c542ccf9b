#pragma once
// A data-parallel job's side of this process (`mpirun -np N plexus-cli train ...`,
// docs/distributed.md): joined when an MPI launcher started it.
#include "cli/args.h"
#include "dist/launch.h"
#include "graph/graph.h"
#include "session/run.h"

namespace plexus::cli {

struct Distributed {
  dist::World world;
  // Also for `mpirun -np 1`: one rank runs the job's path (its all-reduces, NCCL on a GPU).
  bool on() const { return world.comm != nullptr; }
  int rank() const { return world.comm ? world.comm->rank() : 0; }
  int size() const { return world.comm ? world.comm->size() : 1; }
};

// Joins the job mpirun started (nothing when run alone): a GPU run takes its local rank's GPU,
// and without --threads the ranks on a machine share its cores. Ranks other than 0 print
// nothing but errors.
Distributed join_job(const Args& args, graph::Graph& g);

// Stops the job unless every rank has the same build, project and dataset (dist::RankMismatch),
// then hands the job to the run's trainer.
void check_ranks_agree(const Distributed& d, const graph::Graph& g, session::TrainingRun& run);

}  // namespace plexus::cli
