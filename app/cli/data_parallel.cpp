#include "cli/data_parallel.h"

#include <algorithm>
#include <cstdio>
#include <fcntl.h>
#include <numeric>
#include <string>
#include <unistd.h>
#include <vector>

#include "cuda/cuda.h"
#include "dist/replicas.h"
#include "graph/project.h"
#include "util/error.h"
#include "util/threads.h"

namespace plexus::cli {
namespace {

// What the ranks' datasets must agree on: where, how big, and the first examples' values.
std::string dataset_fact(const session::TrainingRun& run) {
  std::string fact = run.dataset.kind + "\n" + run.dataset.path + "\n" + std::to_string(run.data.train->size()) + " " +
                     std::to_string(run.data.validation ? run.data.validation->size() : 0) + " " +
                     std::to_string(run.data.test ? run.data.test->size() : 0) + "\n";
  std::vector<int64_t> first(size_t(std::min<int64_t>(16, run.data.train->size())));
  std::iota(first.begin(), first.end(), int64_t(0));
  if (!first.empty()) {
    const data::Example e = run.data.train->get_batch(first);
    for (const Tensor& t : {e.input, e.target}) {
      const std::vector<float> v = t.to_vector();
      fact += dist::fingerprint(v.data(), v.size() * sizeof(float));
    }
  }
  return fact;
}

}  // namespace

Distributed join_job(const Args& args, graph::Graph& g) {
  Distributed d;
  if (!dist::launched_by_mpi()) return d;
  if (args.has("--rank-timeout") && args.number("--rank-timeout", 120) <= 0)
    throw UsageError{"--rank-timeout must be a positive number of seconds"};
  const Device device = parse_device(g.training.device);
  d.world = dist::join(device.is_cuda());
  if (args.has("--rank-timeout")) d.world.comm->set_timeout(args.number("--rank-timeout", 120));
  // One GPU per local rank; where the scheduler shows each rank only its own
  // (CUDA_VISIBLE_DEVICES), that one is cuda:0.
  if (device.is_cuda())
    g.training.device = "cuda:" + std::to_string(d.world.local_rank % std::max(1, cuda::device_count()));
  if (!args.has("--threads")) set_num_threads(std::max(1, physical_cores() / d.world.local_size));
  if (d.rank() != 0 && !std::freopen("/dev/null", "w", stdout))
    throw IoError("rank " + std::to_string(d.rank()) + ": cannot silence its output");
  // mpirun forwards the ranks' output, but stops reading it while it ends the job (Ctrl-C):
  // a rank must never block on a full pipe then, so a line it cannot write at once is dropped.
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return d;
}

void check_ranks_agree(const Distributed& d, const graph::Graph& g, session::TrainingRun& run) {
  graph::Graph same = g;
  same.training.device = parse_device(g.training.device).is_cuda() ? "cuda" : "cpu";  // each rank its own GPU
  same.dataset.path.clear();  // the dataset's own fact says whether the data agree
  dist::check_same(*d.world.comm,
                   {{"build", std::string("plexus-cli ") + PLEXUS_VERSION + " built " + __DATE__ + " " + __TIME__},
                    {"project", graph::serialize_project(same)},
                    {"dataset", dataset_fact(run)}});
  run.trainer_options.comm = d.world.comm;
}

}  // namespace plexus::cli
