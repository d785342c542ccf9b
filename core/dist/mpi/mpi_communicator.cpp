// The Communicator over Open MPI (any MPI-3 library): non-blocking collectives on
// MPI_COMM_WORLD, each waited for by polling with the communicator's timeout, so a rank that
// stops answering ends the wait with a DistError instead of hanging the job. CUDA tensors go
// through host copies (NCCL, dist/nccl/, avoids them).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "dist/launch.h"
#ifdef PLEXUS_HAVE_NCCL
#include "cuda/cuda.h"
#include "dist/nccl/nccl_communicator.h"
#endif

namespace plexus::dist {
namespace {

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, size_t(length));
}

void check(int code, const std::string& what) {
  if (code != MPI_SUCCESS) throw DistError("MPI " + what + " failed: " + mpi_error(code));
}

int mpi_count(int64_t n, const char* what) {
  if (n > int64_t(INT32_MAX)) throw DistError(std::string(what) + ": more than 2^31 elements in one collective");
  return int(n);
}

// Until `request` completes; polling rather than MPI_Wait so that a silent rank ends the wait.
// Spins briefly (the usual wait is microseconds), then yields the core between polls.
void wait_for(MPI_Request& request, const Communicator& comm, const char* what) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (int polls = 0;; ++polls) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
    if (done) return;
    if (polls < 256) continue;
    if (std::chrono::duration<double>(Clock::now() - start).count() > comm.timeout()) {
      char text[256];
      std::snprintf(text, sizeof text,
                    "%s: no answer from every rank within %.0f s (rank %d of %d waiting); a rank has stopped or is stuck",
                    what, comm.timeout(), comm.rank(), comm.size());
      throw DistError(text);
    }
    std::this_thread::yield();
  }
}

// A float32 tensor's values on the host: the tensor itself on the CPU, else a copy.
Tensor host_values(const Tensor& t) {
  if (!t.is_contiguous()) throw ValueError("MPI collectives need contiguous tensors");
  return t.device().is_cpu() ? t : t.to(Device::cpu());
}

// An MPI collective in flight. For a tensor on a device, `host` is its copy that MPI sums and
// `target` takes the result; figures are summed in the request's own copy and handed back to
// `target_values` when done.
class MpiRequest final : public Request {
 public:
  MpiRequest(const Communicator& comm, const char* what, Tensor target, Tensor host)
      : comm_(comm), what_(what), target_(std::move(target)), host_(std::move(host)) {}
  MpiRequest(const Communicator& comm, const char* what, std::vector<double>& values)
      : comm_(comm), what_(what), target_values_(&values), values_(std::make_unique<std::vector<double>>(values)) {}
  ~MpiRequest() override {
    // Abandoned in flight (an exception unwinding; the job is about to stop): MPI may still
    // write into the buffer, and a collective cannot be cancelled, so the buffer is left alive.
    if (!done_ && host_.defined()) (void)new Tensor(host_);
    if (!done_) (void)values_.release();
  }
  double* values() { return values_->data(); }
  MPI_Request* handle() { return &request_; }
  bool test() override {
    if (done_) return true;
    int flag = 0;
    check(MPI_Test(&request_, &flag, MPI_STATUS_IGNORE), what_);
    if (flag) complete();
    return done_;
  }
  void wait() override {
    if (done_) return;
    wait_for(request_, comm_, what_);
    complete();
  }

 private:
  void complete() {
    done_ = true;
    if (target_.defined() && !target_.device().is_cpu()) target_.copy_(host_);
    if (target_values_) *target_values_ = *values_;
  }
  const Communicator& comm_;
  const char* what_;
  Tensor target_, host_;
  std::vector<double>* target_values_ = nullptr;
  std::unique_ptr<std::vector<double>> values_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  bool done_ = false;
};

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "mpi"; }

  std::unique_ptr<Request> all_reduce_sum(Tensor& t) override {
    Tensor host = host_values(t);
    auto request = std::make_unique<MpiRequest>(*this, "all-reduce of gradients", t, host);
    check(MPI_Iallreduce(MPI_IN_PLACE, host.data(), mpi_count(host.numel(), "all-reduce"), MPI_FLOAT, MPI_SUM,
                         MPI_COMM_WORLD, request->handle()),
          "all-reduce");
    return request;
  }

  std::unique_ptr<Request> all_reduce_sum(std::vector<double>& values) override {
    auto request = std::make_unique<MpiRequest>(*this, "all-reduce of figures", values);
    check(MPI_Iallreduce(MPI_IN_PLACE, request->values(), mpi_count(int64_t(values.size()), "all-reduce"), MPI_DOUBLE,
                         MPI_SUM, MPI_COMM_WORLD, request->handle()),
          "all-reduce");
    return request;
  }

  void broadcast(Tensor& t, int root) override {
    Tensor host = host_values(t);
    MPI_Request r;
    check(MPI_Ibcast(host.data(), mpi_count(host.numel(), "broadcast"), MPI_FLOAT, root, MPI_COMM_WORLD, &r),
          "broadcast");
    wait_for(r, *this, "broadcast of the parameters");
    if (!t.device().is_cpu()) t.copy_(host);
  }

  std::vector<std::string> all_gather(const std::string& bytes) override {
    int length = mpi_count(int64_t(bytes.size()), "all-gather");
    std::vector<int> lengths(size_t(size_), 0);
    MPI_Request r;
    check(MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD, &r), "all-gather");
    wait_for(r, *this, "all-gather");
    std::vector<int> offsets(size_t(size_), 0);
    int64_t total = 0;
    for (int k = 0; k < size_; ++k) {
      offsets[size_t(k)] = int(total);
      total += lengths[size_t(k)];
    }
    std::string all(size_t(mpi_count(total, "all-gather")), '\0');
    check(MPI_Iallgatherv(bytes.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                          MPI_COMM_WORLD, &r),
          "all-gather");
    wait_for(r, *this, "all-gather");
    std::vector<std::string> out;
    for (int k = 0; k < size_; ++k) out.push_back(all.substr(size_t(offsets[size_t(k)]), size_t(lengths[size_t(k)])));
    return out;
  }

  void barrier() override {
    MPI_Request r;
    check(MPI_Ibarrier(MPI_COMM_WORLD, &r), "barrier");
    wait_for(r, *this, "barrier");
  }

  [[noreturn]] void abort(const std::string& message, int exit_code) override {
    std::fprintf(stderr, "plexus-cli: rank %d of %d: %s; stopping every rank\n", rank_, size_, message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);  // MPI_Abort does not return; should it, nothing else may run
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::string backends() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string library(text, size_t(length));
  library = library.substr(0, library.find(','));  // "Open MPI v4.1.4"
  std::string out = "mpi (" + library + ")";
#ifdef PLEXUS_HAVE_NCCL
  out += ", " + nccl_version();
#endif
  return out;
}

World join(bool cuda_gradients) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) throw DistError("dist::join: MPI is already initialised (join once per process)");
  // Open MPI's non-blocking all-reduce (coll/libnbc) picks a binomial tree for every in-place
  // call, which ours all are: the whole buffer reduced into rank 0 and broadcast back.
  // Rabenseifner's reduce-scatter + all-gather sends 2(N-1)/N of it per rank: LeNet's 1.7 MB
  // over 2 ranks on one machine took 300 us a step, then 140 us. A choice made for the job
  // (mpirun --mca, -x, the environment) wins; other MPI libraries ignore the variable.
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "3", 0);
  int provided = 0;
  // Collectives come from one thread at a time (the training thread; the loaders' workers never call MPI).
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "initialisation");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  // errors as codes: DistError, not a silent abort
  World w;
  auto mpi = std::make_shared<MpiCommunicator>();
  MPI_Comm local;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, mpi->rank(), MPI_INFO_NULL, &local),
        "split by machine");
  MPI_Comm_rank(local, &w.local_rank);
  MPI_Comm_size(local, &w.local_size);
  MPI_Comm_free(&local);
  w.comm = mpi;
#ifdef PLEXUS_HAVE_NCCL
  if (cuda_gradients) {
    // NCCL wants a GPU of its own per rank; ranks that share one (more ranks on this machine
    // than GPUs) and PLEXUS_NCCL=0 sum through host copies over MPI instead. Every rank of a
    // machine decides alike; machines may differ, so they agree on the strictest below.
    const int gpus = cuda::device_count();
    const char* env = std::getenv("PLEXUS_NCCL");
    const bool turned_off = env && std::string(env) == "0";
    int nccl = turned_off || (gpus > 0 && w.local_size > gpus) ? 0 : 1;
    check(MPI_Allreduce(MPI_IN_PLACE, &nccl, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "choosing NCCL");
    if (nccl) {
      w.comm = make_nccl_communicator(mpi, w.local_rank % std::max(1, gpus));
    } else if (turned_off) {
      w.note = "PLEXUS_NCCL=0: CUDA gradients are summed over MPI through host copies";
    } else {
      w.note = "more ranks than GPUs on a machine (NCCL needs a GPU per rank): CUDA gradients are summed over "
               "MPI through host copies";
    }
  }
#else
  (void)cuda_gradients;  // CUDA gradients go through host copies over MPI
#endif
  return w;
}

}  // namespace plexus::dist
