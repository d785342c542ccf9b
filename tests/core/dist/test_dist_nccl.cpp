// The NCCL communicator (core/dist/nccl) as one rank of an mpirun job (CTest starts it with
// `mpirun -np 1`): join(true) picks NCCL, its collectives leave one rank's values as they
// are, and the gradient reducer over it gives the gradients of a plain backward pass.
//
// Every test skips without a CUDA device, and in a build without NCCL (PLEXUS_CUDA=OFF, no
// MPI, or no nccl.h), so the suite exits 77 (ctest: Skipped) on machines that cannot run it.
#include "support/check.h"

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "cuda/cuda.h"
#include "dist/launch.h"
#include "dist/reducer.h"
#include "nn/layers.h"
#include "ops/ops.h"

using namespace plexus;

namespace {

const Device kGpu = Device::cuda(0);

std::shared_ptr<nn::Module> make_model(uint64_t seed) {
  Generator gen(seed);
  auto m = std::make_shared<nn::Sequential>();
  m->add(std::make_shared<nn::Linear>(6, 5, true, &gen))
      .add(std::make_shared<nn::Tanh>())
      .add(std::make_shared<nn::Linear>(5, 3, true, &gen));
  m->to(kGpu);
  return m;
}

// The one rank's world, joined by the first test that runs; `skip` says why the suite cannot
// run here (no CUDA device, or no NCCL in this build) and `error` what joining threw.
struct Setup {
  std::string skip;
  std::string error;
  dist::World world;
};

const Setup& setup() {
  static const Setup s = [] {
    Setup r;
    if (cuda::device_count() == 0) {
      r.skip = "skipped: no CUDA device";
      return r;
    }
    const std::string backends = dist::backends();
    if (backends.find("nccl") == std::string::npos) {
      r.skip = "skipped: this build has no NCCL (" + backends + ")";
      return r;
    }
    std::printf("INFO   : %s; %s\n", cuda::status().c_str(), backends.c_str());
    try {
      r.world = dist::join(true);
    } catch (const std::exception& e) {
      r.error = std::string("joining the job failed: ") + e.what();
    }
    return r;
  }();
  return s;
}

const dist::World& world() { return setup().world; }

}  // namespace

// At the top of every test: skips without a CUDA device or NCCL (so the whole suite does), and
// fails when joining the job threw.
#define JOIN_OR_SKIP()                               \
  do {                                               \
    if (!setup().skip.empty()) SKIP(setup().skip);   \
    if (!setup().error.empty()) FAIL(setup().error); \
  } while (false)

TEST(joinPicksNccl) {
  JOIN_OR_SKIP();
  COMPARE(world().comm->backend(), std::string("nccl"));
  COMPARE(world().comm->size(), 1);
  COMPARE(world().comm->rank(), 0);
  COMPARE(world().local_rank, 0);
}

TEST(allReduceOnOneRankKeepsTheValues) {
  JOIN_OR_SKIP();
  const std::vector<float> values{1.5f, -2.f, 0.25f, 1e6f, -3e-7f};
  Tensor t = from_vector(values, {5}).to(kGpu);
  auto request = world().comm->all_reduce_sum(t);
  request->wait();
  VERIFY(request->test());
  COMPARE(t.to_vector(), values);
}

// Tensors NCCL does not take (here one on the CPU) go through the host communicator.
TEST(cpuTensorsGoThroughTheHost) {
  JOIN_OR_SKIP();
  const std::vector<float> values{3.f, 4.f};
  Tensor t = from_vector(values, {2});
  world().comm->all_reduce_sum(t)->wait();
  COMPARE(t.to_vector(), values);
}

TEST(broadcastFromRankZero) {
  JOIN_OR_SKIP();
  const std::vector<float> values{7.f, 8.f, 9.f};
  Tensor t = from_vector(values, {3}).to(kGpu);
  world().comm->broadcast(t, 0);
  COMPARE(t.to_vector(), values);
}

TEST(hostCollectivesStillWork) {
  JOIN_OR_SKIP();
  std::vector<double> figures{1.0, 2.5};
  world().comm->all_reduce_sum(figures)->wait();
  COMPARE(figures, (std::vector<double>{1.0, 2.5}));
  COMPARE(world().comm->all_gather("x"), std::vector<std::string>{"x"});
  world().comm->barrier();
}

// Small buckets, so that several all-reduces are in flight while backward runs.
TEST(reducerGivesThePlainGradients) {
  JOIN_OR_SKIP();
  Generator data(11);
  const Tensor x = randn({4, 6}, &data).to(kGpu);
  const Tensor y = randn({4, 3}, &data).to(kGpu);
  auto plain = make_model(5), reduced = make_model(5);

  mse_loss((*plain)(x), y).backward();

  dist::GradientReducer reducer(*world().comm, reduced->parameters(), 64);
  VERIFY(reducer.bucket_count() > 1);
  reducer.begin();
  mse_loss((*reduced)(x), y).backward();
  reducer.finish();

  const auto a = plain->parameters(), b = reduced->parameters();
  COMPARE(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    VERIFY(b[k].grad().device() == kGpu);
    COMPARE(b[k].grad().to_vector(), a[k].grad().to_vector());
  }
}

