#pragma once
// Communicator: the processes of one data-parallel run, as the trainer sees them. Plexus runs
// on an existing distributed engine instead of one of its own: Open MPI (dist/mpi/, for the
// host and as the launcher: `mpirun -np N plexus-cli train FILE`) and NCCL (dist/nccl/, for
// gradients that live on CUDA devices). This header has no MPI or NCCL in it, so plexus_core
// (the trainer, the gradient reducer) builds without either; plexus_dist implements it.
//
// Collectives are issued by every rank in the same order, from one thread (the training
// thread). A wait that sees no progress for timeout() seconds throws DistError naming the
// collective, so a rank that hangs cannot hang the others forever; a rank that dies is
// reported by the launcher (mpirun stops the job and names the rank).
#include <memory>
#include <string>
#include <vector>

#include "tensor/tensor.h"
#include "util/error.h"

namespace plexus::dist {

class DistError : public Error {  // a collective failed, timed out, or the ranks disagree
 public:
  using Error::Error;
};

// The ranks disagree (dist/replicas.h): every rank finds it alike and stops, none waits.
class RankMismatch : public DistError {
 public:
  using DistError::DistError;
};

// An all-reduce in flight.
class Request {
 public:
  virtual ~Request() = default;
  virtual bool test() = 0;  // done? (also drives the transfer forward)
  virtual void wait() = 0;  // until done; DistError after the communicator's timeout
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "mpi" or "nccl": what moves the gradients, for the log.
  virtual std::string backend() const = 0;

  // Starts summing `t` (contiguous float32, on the CPU or, for NCCL, the rank's GPU) in place
  // over all ranks; returns at once. `t` must stay alive and untouched until the request is done.
  virtual std::unique_ptr<Request> all_reduce_sum(Tensor& t) = 0;

  // On the host: starts the element-wise sums of `values` over all ranks, which take them when
  // the request is done; returns at once. `values` must stay alive until then.
  virtual std::unique_ptr<Request> all_reduce_sum(std::vector<double>& values) = 0;
  // Blocking: `t` (contiguous float32, any device) takes rank `root`'s values.
  virtual void broadcast(Tensor& t, int root) = 0;
  // Blocking: every rank's `bytes`, indexed by rank.
  virtual std::vector<std::string> all_gather(const std::string& bytes) = 0;
  virtual void barrier() = 0;

  // Ends every rank of the job at once, after printing `message` (a failure of this rank the
  // others cannot otherwise learn of).
  [[noreturn]] virtual void abort(const std::string& message, int exit_code) = 0;

  // Seconds a collective may wait without progress before DistError (default 120).
  double timeout() const { return timeout_; }
  void set_timeout(double seconds) { timeout_ = seconds; }

 private:
  double timeout_ = 120;
};

using CommunicatorPtr = std::shared_ptr<Communicator>;

}  // namespace plexus::dist
