// The gradient reducer (dist/reducer.h) against a recording communicator standing for two
// ranks with the same gradients: the sums reach every parameter's .grad, buckets start in order
// from the last parameter back, the first starts while backward is still running (the overlap),
// and a rank that ran no backward still takes part and receives the sum.
#include "support/check.h"

#include "dist/reducer.h"
#include "nn/layers.h"
#include "ops/ops.h"
#include "tensor/generator.h"

using namespace plexus;

namespace {

// Two ranks holding the same values: a sum doubles them. Records each all-reduce as it starts,
// with whether the model's first parameter had its gradient yet.
class Doubling final : public dist::Communicator {
 public:
  struct Started {
    int64_t numel;
    bool first_grad_ready;
  };
  std::vector<Started> started;
  Tensor first;  // the parameter whose gradient comes last in backward

  class Pending final : public dist::Request {
   public:
    explicit Pending(Tensor t) : t_(std::move(t)) {}
    bool test() override { return done_; }
    void wait() override {
      if (!done_ && t_.defined()) t_.mul_(2.f);
      done_ = true;
    }

   private:
    Tensor t_;
    bool done_ = false;
  };

  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::string backend() const override { return "test"; }
  std::unique_ptr<dist::Request> all_reduce_sum(Tensor& t) override {
    started.push_back({t.numel(), first.grad().defined()});
    return std::make_unique<Pending>(t);
  }
  std::unique_ptr<dist::Request> all_reduce_sum(std::vector<double>& v) override {
    for (double& x : v) x *= 2;
    return std::make_unique<Pending>(Tensor());
  }
  void broadcast(Tensor&, int) override {}
  std::vector<std::string> all_gather(const std::string& s) override { return {s, s}; }
  void barrier() override {}
  [[noreturn]] void abort(const std::string& message, int) override { throw dist::DistError(message); }
};

std::shared_ptr<nn::Sequential> mlp() {
  manual_seed(3);
  auto m = std::make_shared<nn::Sequential>();
  m->add(std::make_shared<nn::Linear>(20, 64));
  m->add(std::make_shared<nn::ReLU>());
  m->add(std::make_shared<nn::Linear>(64, 64));
  m->add(std::make_shared<nn::ReLU>());
  m->add(std::make_shared<nn::Linear>(64, 5));
  return m;
}

Tensor loss_of(nn::Module& m) {
  manual_seed(4);
  const Tensor y = m(randn({8, 20}));
  return sum(y * y);
}

}  // namespace

TEST(sumsReachEveryGradientAndOverlapBackward) {
  auto plain = mlp();
  loss_of(*plain).backward();
  auto model = mlp();
  const std::vector<Tensor> params = model->parameters();
  Doubling comm;
  comm.first = params.front();
  // Buckets of 4 KiB: the 64×64 weight (16 KiB) alone, the rest grouped from the back.
  dist::GradientReducer reducer(comm, params, 4096);
  VERIFY(reducer.bucket_count() >= 3);
  reducer.begin();
  loss_of(*model).backward();
  reducer.finish();

  COMPARE(comm.started.size(), reducer.bucket_count());
  // The first bucket (the last layer's) started before backward reached the first layer.
  VERIFY(!comm.started.front().first_grad_ready);
  // From the last parameter back, up to 1024 floats: the head's bias and weight and the middle
  // layer's bias; the middle weight (4096) takes a bucket of its own.
  COMPARE(comm.started.front().numel, params[5].numel() + params[4].numel() + params[3].numel());
  COMPARE(comm.started[1].numel, params[2].numel());
  const std::vector<Tensor> expected = plain->parameters();
  for (size_t k = 0; k < params.size(); ++k) {
    const std::vector<float> got = params[k].grad().to_vector(), want = expected[k].grad().to_vector();
    COMPARE(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) COMPARE(got[i], 2 * want[i]);
  }
}

// A rank whose part of a batch was empty runs no backward: its zeros join the sum, and its
// parameters receive it.
TEST(aRankWithoutBackwardTakesPart) {
  auto model = mlp();
  const std::vector<Tensor> params = model->parameters();
  Doubling comm;
  comm.first = params.front();
  dist::GradientReducer reducer(comm, params);
  reducer.begin();
  reducer.finish();
  COMPARE(comm.started.size(), reducer.bucket_count());
  for (const Tensor& p : params) {
    VERIFY(p.grad().defined());
    COMPARE(p.grad().shape(), p.shape());
    for (float v : p.grad().to_vector()) COMPARE(v, 0.f);
  }
}

// The same reducer serves step after step: the second step's sums are its own.
TEST(stepsAfterStepsStartAfresh) {
  auto model = mlp();
  const std::vector<Tensor> params = model->parameters();
  Doubling comm;
  comm.first = params.front();
  dist::GradientReducer reducer(comm, params, 4096);
  for (int step = 0; step < 2; ++step) {
    for (const Tensor& p : params) p.set_grad(Tensor());
    reducer.begin();
    loss_of(*model).backward();
    reducer.finish();
  }
  auto plain = mlp();
  loss_of(*plain).backward();
  COMPARE(comm.started.size(), 2 * reducer.bucket_count());
  COMPARE(params.back().grad().to_vector()[0], 2 * plain->parameters().back().grad().to_vector()[0]);
}

