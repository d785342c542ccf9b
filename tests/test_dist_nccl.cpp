// The NCCL communicator (core/dist/nccl) as one rank of an mpirun job (CTest starts it with
// `mpirun -np 1`): join(true) picks NCCL, its collectives leave one rank's values as they
// are, and the gradient reducer over it gives the gradients of a plain backward pass.
//
// initTestCase skips the whole suite without a CUDA device, and in a build without NCCL
// (PLEXUS_CUDA=OFF, no MPI, or no nccl.h), so it passes on machines that cannot run it.
#include <QtTest>

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

}  // namespace

class TestDistNccl : public QObject {
  Q_OBJECT

  dist::World world_;

 private slots:
  void initTestCase() {
    if (cuda::device_count() == 0) QSKIP("skipped: no CUDA device");
    const std::string backends = dist::backends();
    if (backends.find("nccl") == std::string::npos)
      QSKIP(qPrintable(QString("skipped: this build has no NCCL (%1)").arg(QString::fromStdString(backends))));
    qInfo("%s; %s", cuda::status().c_str(), backends.c_str());
    world_ = dist::join(true);
  }

  void joinPicksNccl() {
    QCOMPARE(world_.comm->backend(), std::string("nccl"));
    QCOMPARE(world_.comm->size(), 1);
    QCOMPARE(world_.comm->rank(), 0);
    QCOMPARE(world_.local_rank, 0);
  }

  void allReduceOnOneRankKeepsTheValues() {
    const std::vector<float> values{1.5f, -2.f, 0.25f, 1e6f, -3e-7f};
    Tensor t = from_vector(values, {5}).to(kGpu);
    auto request = world_.comm->all_reduce_sum(t);
    request->wait();
    QVERIFY(request->test());
    QCOMPARE(t.to_vector(), values);
  }

  // Tensors NCCL does not take (here one on the CPU) go through the host communicator.
  void cpuTensorsGoThroughTheHost() {
    const std::vector<float> values{3.f, 4.f};
    Tensor t = from_vector(values, {2});
    world_.comm->all_reduce_sum(t)->wait();
    QCOMPARE(t.to_vector(), values);
  }

  void broadcastFromRankZero() {
    const std::vector<float> values{7.f, 8.f, 9.f};
    Tensor t = from_vector(values, {3}).to(kGpu);
    world_.comm->broadcast(t, 0);
    QCOMPARE(t.to_vector(), values);
  }

  void hostCollectivesStillWork() {
    std::vector<double> figures{1.0, 2.5};
    world_.comm->all_reduce_sum(figures)->wait();
    QCOMPARE(figures, (std::vector<double>{1.0, 2.5}));
    QCOMPARE(world_.comm->all_gather("x"), std::vector<std::string>{"x"});
    world_.comm->barrier();
  }

  // Small buckets, so that several all-reduces are in flight while backward runs.
  void reducerGivesThePlainGradients() {
    Generator data(11);
    const Tensor x = randn({4, 6}, &data).to(kGpu);
    const Tensor y = randn({4, 3}, &data).to(kGpu);
    auto plain = make_model(5), reduced = make_model(5);

    mse_loss((*plain)(x), y).backward();

    dist::GradientReducer reducer(*world_.comm, reduced->parameters(), 64);
    QVERIFY(reducer.bucket_count() > 1);
    reducer.begin();
    mse_loss((*reduced)(x), y).backward();
    reducer.finish();

    const auto a = plain->parameters(), b = reduced->parameters();
    QCOMPARE(a.size(), b.size());
    for (size_t k = 0; k < a.size(); ++k) {
      QVERIFY(b[k].grad().device() == kGpu);
      QCOMPARE(b[k].grad().to_vector(), a[k].grad().to_vector());
    }
  }
};

QTEST_APPLESS_MAIN(TestDistNccl)
#include "test_dist_nccl.moc"
