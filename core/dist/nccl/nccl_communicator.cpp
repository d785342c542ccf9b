// The Communicator over NCCL for gradients on CUDA devices (see nccl_communicator.h).
//
// Collectives are queued on the device's one stream, the stream every kernel and copy of the
// CUDA backend runs on (cuda/runtime.h): an all-reduce starts after the kernels that wrote its
// buffer, later kernels start after it, and the caching allocator, which reuses freed memory in
// that stream's order, cannot hand its buffer out while it is in flight. No events are needed
// for ordering; each request records one only so that the host can ask whether it is done.
// The price: on the device the sums run between backward's kernels, not alongside them as
// they would on a stream of their own; only on the host do their launches interleave.
//
// A wait polls that event and NCCL's asynchronous error state; on an error, or after
// timeout() seconds without completion, it aborts the NCCL communicator (which ends this
// rank's NCCL kernels, so the stream drains) and throws DistError. The communicator is then
// unusable.
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>

#include "cuda/cuda.h"
#include "cuda/runtime.h"
#include "dist/nccl/nccl_communicator.h"

namespace plexus::dist {
namespace {

std::string on_rank(int rank, int size) {
  return " (rank " + std::to_string(rank) + " of " + std::to_string(size) + ")";
}

// What NCCL says about a failure: the code's text and, when there is one, its detailed last error.
std::string nccl_error(ncclResult_t code, ncclComm_t comm) {
  std::string text = ncclGetErrorString(code);
  const char* last = ncclGetLastError(comm);
  if (last && *last) text += std::string(": ") + last;
  return text;
}

class NcclCommunicator;

class NcclRequest final : public Request {
 public:
  NcclRequest(NcclCommunicator& comm, std::string what);
  ~NcclRequest() override { cudaEventDestroy(done_event_); }  // returns at once even while pending
  NcclRequest(const NcclRequest&) = delete;
  NcclRequest& operator=(const NcclRequest&) = delete;

  void record(cudaStream_t stream);
  // Done: the collective has finished on the device, so its buffer holds the result for any
  // reader, the host included. (Kernels queued later on the same stream are ordered after it
  // without this; waiting is what turns a peer that never joins into a DistError.)
  bool test() override;
  void wait() override;

 private:
  NcclCommunicator& comm_;
  std::string what_;
  cudaEvent_t done_event_ = nullptr;
  bool done_ = false;
};

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(CommunicatorPtr host, int device_index) : host_(std::move(host)), device_(device_index) {
    set_timeout(host_->timeout());
    const int rank = host_->rank(), size = host_->size();
    // Every rank says whether its side of the setup worked before any rank enters
    // ncclCommInitRank, which waits for all of them: a rank without its device, or a rank 0
    // that could not make the id, fails every rank at once instead of leaving them waiting.
    // The message is '+' and, from rank 0, the id's bytes; or '-' and why.
    std::string mine = "+";
    ncclUniqueId id{};
    try {
      cuda::check_available(Device::cuda(device_));
      cuda::use_device(device_);  // ncclCommInitRank binds to the current device
      if (rank == 0) {
        const ncclResult_t r = ncclGetUniqueId(&id);
        if (r != ncclSuccess) throw DistError("ncclGetUniqueId failed: " + nccl_error(r, nullptr));
        mine.append(id.internal, sizeof id.internal);
      }
    } catch (const Error& e) {
      mine = std::string("-") + e.what();
    }
    const std::vector<std::string> all = all_gather(mine);
    for (int k = 0; k < size; ++k)
      if (all[size_t(k)].empty() || all[size_t(k)][0] != '+')
        throw DistError("setting up NCCL failed" + on_rank(k, size) + ": " + all[size_t(k)].substr(1));
    if (all[0].size() != 1 + sizeof id.internal)
      throw DistError("NCCL setup: rank 0 sent a unique id of " + std::to_string(all[0].size() - 1) +
                      " bytes, expected " + std::to_string(sizeof id.internal) +
                      " (different NCCL versions on the ranks?)");
    std::memcpy(id.internal, all[0].data() + 1, sizeof id.internal);
    const ncclResult_t r = ncclCommInitRank(&comm_, size, id, rank);
    if (r != ncclSuccess)
      throw DistError("ncclCommInitRank on cuda:" + std::to_string(device_) + " failed" + on_rank(rank, size) + ": " +
                      nccl_error(r, nullptr));
  }

  ~NcclCommunicator() override {
    if (!comm_) return;  // aborted after a failure
    // Unwinding, a collective may be in flight that its peers will never join: destroying
    // would wait for it, aborting does not.
    if (std::uncaught_exceptions() > 0) ncclCommAbort(comm_);
    else ncclCommDestroy(comm_);
  }

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  std::string backend() const override { return "nccl"; }

  std::unique_ptr<Request> all_reduce_sum(Tensor& t) override {
    if (!on_device(t)) return host().all_reduce_sum(t);
    return start("all-reduce of gradients (NCCL)", [&](cudaStream_t s) {
      return ncclAllReduce(t.data(), t.data(), size_t(t.numel()), ncclFloat, ncclSum, comm_, s);
    });
  }

  std::unique_ptr<Request> all_reduce_sum(std::vector<double>& values) override { return host().all_reduce_sum(values); }

  void broadcast(Tensor& t, int root) override {
    if (!on_device(t)) return host().broadcast(t, root);
    start("broadcast of the parameters (NCCL)", [&](cudaStream_t s) {
      return ncclBroadcast(t.data(), t.data(), size_t(t.numel()), ncclFloat, root, comm_, s);
    })->wait();
  }

  std::vector<std::string> all_gather(const std::string& bytes) override { return host().all_gather(bytes); }
  void barrier() override { host().barrier(); }
  [[noreturn]] void abort(const std::string& message, int exit_code) override {
    host().abort(message, exit_code);
    std::_Exit(exit_code);  // GCC does not take [[noreturn]] through a virtual call
  }

  // For NcclRequest: throws DistError if NCCL met an error in the background (a peer lost).
  void check_async(const std::string& what) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(live(what), &state);
    if (r != ncclSuccess) fail(what, "ncclCommGetAsyncError failed: " + nccl_error(r, comm_));
    if (state != ncclSuccess && state != ncclInProgress) fail(what, nccl_error(state, comm_));
  }
  // Aborts NCCL, so that this rank's collectives end and their peers see the loss, and throws.
  [[noreturn]] void fail(const std::string& what, const std::string& why) {
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
    throw DistError(what + " failed" + on_rank(rank(), size()) + ": " + why + "; NCCL was aborted");
  }

 private:
  // The host communicator, with this one's timeout (which the trainer may have changed).
  Communicator& host() {
    host_->set_timeout(timeout());
    return *host_;
  }

  bool on_device(const Tensor& t) const { return t.device() == Device::cuda(device_) && t.is_contiguous(); }

  ncclComm_t live(const std::string& what) const {
    if (!comm_) throw DistError(what + ": NCCL was aborted after an earlier failure" + on_rank(rank(), size()));
    return comm_;
  }

  template <class Enqueue>
  std::unique_ptr<Request> start(const std::string& what, Enqueue enqueue) {
    live(what);
    cuda::use_device(device_);
    const cudaStream_t s = cuda::stream(device_);
    auto request = std::make_unique<NcclRequest>(*this, what);
    const ncclResult_t r = enqueue(s);
    if (r != ncclSuccess) fail(what, nccl_error(r, comm_));
    request->record(s);
    return request;
  }

  CommunicatorPtr host_;
  int device_;
  ncclComm_t comm_ = nullptr;
};

NcclRequest::NcclRequest(NcclCommunicator& comm, std::string what) : comm_(comm), what_(std::move(what)) {
  PLEXUS_CUDA_CHECK(cudaEventCreateWithFlags(&done_event_, cudaEventDisableTiming));
}

void NcclRequest::record(cudaStream_t stream) { PLEXUS_CUDA_CHECK(cudaEventRecord(done_event_, stream)); }

bool NcclRequest::test() {
  if (done_) return true;
  const cudaError_t e = cudaEventQuery(done_event_);
  if (e == cudaSuccess) return done_ = true;
  if (e != cudaErrorNotReady) comm_.fail(what_, std::string("CUDA: ") + cudaGetErrorString(e));
  comm_.check_async(what_);
  return false;
}

void NcclRequest::wait() {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (int polls = 0; !test(); ++polls) {
    if (polls < 256) continue;  // the usual wait is short
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (waited > comm_.timeout()) {
      char why[160];
      std::snprintf(why, sizeof why, "not done within %.0f s; a rank has stopped or is stuck", comm_.timeout());
      comm_.fail(what_, why);
    }
    // The event completes only after every kernel queued before it (the rest of backward):
    // sleep rather than spin, so the loaders' threads keep the core.
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace

CommunicatorPtr make_nccl_communicator(CommunicatorPtr host, int device_index) {
  return std::make_shared<NcclCommunicator>(std::move(host), device_index);
}

std::string nccl_version() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess) return "nccl (version unknown)";
  // NCCL_VERSION(): X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z since 2.9.
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
  return "nccl " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

}  // namespace plexus::dist

// The plug-in is linked with -Bsymbolic-functions: these are its own definitions, not plexus_dist's.
extern "C" __attribute__((visibility("default"))) const plexus::dist::NcclApi* plexus_nccl_plugin() {
  static const plexus::dist::NcclApi api = {&plexus::dist::make_nccl_communicator, &plexus::dist::nccl_version};
  return &api;
}
