// The reverse-mode engine: gradient accumulation, graph freeing and retain_graph,
// grad_output checks, grad mode (thread-local), detach, requires_grad propagation,
// in-place modification detection, deep graphs, and flat memory over a long training run.
#include "support/check.h"

#include <pthread.h>

#include <cmath>
#include <functional>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "ops/ops.h"
#include "tensor/allocator.h"
#include "tensor/generator.h"
#include "tensor/tensor.h"
#include "util/error.h"
#include "support/test_support.h"

using namespace plexus;
using testing::cat;

namespace {

using plexus::testing::contains;
using plexus::testing::message_of;

Tensor leaf(const std::vector<float>& v, const Shape& shape) {
  Tensor t = from_vector(v, shape);
  t.requires_grad_();
  return t;
}

void compare_close(const Tensor& t, const std::vector<float>& expected, float tol = 1e-6f) {
  VERIFY(t.defined());
  const std::vector<float> got = t.to_vector();
  COMPARE(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    VERIFY2(std::fabs(got[i] - expected[i]) <= tol * std::max(1.f, std::fabs(expected[i])),
            cat("element ", i, ": got ", got[i], ", expected ", expected[i]));
}

// Runs `f` on a thread with a small stack and waits for it.
void run_with_small_stack(const std::function<void()>& f) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_t thread;
  auto trampoline = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  const int rc = pthread_create(&thread, &attr, trampoline, const_cast<std::function<void()>*>(&f));
  pthread_attr_destroy(&attr);
  COMPARE(rc, 0);
  pthread_join(thread, nullptr);
}

}  // namespace

TEST(backwardAccumulatesIntoLeafGrad) {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor w = from_vector({4, 5, 6}, {3});  // does not require grad
  VERIFY(!x.grad().defined());
  Tensor h = x * x;
  Tensor y = (h * w).sum();
  COMPARE(y.item(), 1.f * 4 + 4 * 5 + 9 * 6);
  y.backward();
  compare_close(x.grad(), {2 * 1 * 4, 2 * 2 * 5, 2 * 3 * 6});
  VERIFY(!w.grad().defined());
  VERIFY(!h.grad().defined());  // only leaves accumulate
  COMPARE(x.grad().shape(), x.shape());
  VERIFY(!x.grad().requires_grad());  // gradients carry no history
}

TEST(backwardOnSeparateGraphsAccumulates) {
  Tensor x = leaf({1, -2}, {2});
  (x * 3.f).sum().backward();
  compare_close(x.grad(), {3, 3});
  (x * x).sum().backward();
  compare_close(x.grad(), {3 + 2, 3 - 4});
  // Clearing the grad starts over.
  x.set_grad(Tensor());
  (x * 5.f).sum().backward();
  compare_close(x.grad(), {5, 5});
}

TEST(broadcastGradientsAreSummedToInputShape) {
  Tensor a = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = leaf({10, 20, 30}, {3});
  Tensor c = leaf({2}, {1});
  ((a + b) * c).sum().backward();
  compare_close(a.grad(), {2, 2, 2, 2, 2, 2});
  compare_close(b.grad(), {4, 4, 4});  // two rows, times c
  COMPARE(b.grad().shape(), Shape({3}));
  compare_close(c.grad(), {1 + 2 + 3 + 4 + 5 + 6 + 2 * (10 + 20 + 30)});
  COMPARE(c.grad().shape(), Shape({1}));
}

TEST(tensorUsedTwiceGetsSummedGradient) {
  // A leaf used twice: y = x*x + 3x -> dy/dx = 2x + 3.
  Tensor x = leaf({1, 2, -1}, {3});
  (x * x + x * 3.f).sum().backward();
  compare_close(x.grad(), {5, 7, 1});

  // Diamond through a shared non-leaf: a = 2x; y = a*a + exp(a) -> dy/dx = 2(2a + exp(a)).
  Tensor z = leaf({0.5f, -1.f}, {2});
  Tensor a = z * 2.f;
  (a * a + exp(a)).sum().backward();
  const float a0 = 1.f, a1 = -2.f;
  compare_close(z.grad(), {2 * (2 * a0 + std::exp(a0)), 2 * (2 * a1 + std::exp(a1))}, 1e-5f);

  // The same tensor as both operands of one op.
  Tensor s = leaf({3}, {1});
  mul(s, s).sum().backward();
  compare_close(s.grad(), {6});
}

TEST(backwardThroughFreedGraphThrows) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = (x * x).sum();
  y.backward();
  compare_close(x.grad(), {2, 4});
  const std::string msg = message_of<AutogradError>([&] { y.backward(); });
  VERIFY2(contains(msg, "retain_graph"), msg.c_str());
  compare_close(x.grad(), {2, 4});  // the failed call changed nothing

  // A second graph sharing the freed part also refuses.
  Tensor x2 = leaf({1, 2}, {2});
  Tensor h = exp(x2);
  Tensor y1 = h.sum(), y2 = (h * 2.f).sum();
  y1.backward();
  VERIFY_THROWS(AutogradError, y2.backward());
}

TEST(retainGraphAllowsSecondBackward) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = (x * x).sum();
  y.backward(Tensor(), true);
  compare_close(x.grad(), {2, 4});
  y.backward(Tensor(), true);
  compare_close(x.grad(), {4, 8});
  y.backward();  // the last one frees
  compare_close(x.grad(), {6, 12});
  VERIFY_THROWS(AutogradError, y.backward());
}

TEST(nonScalarBackwardNeedsGradOutput) {
  Tensor x = leaf({1, 2, 3, 4}, {2, 2});
  Tensor y = x * x;
  const std::string msg = message_of<AutogradError>([&] { y.backward(); });
  VERIFY2(contains(msg, "[2, 2]"), msg.c_str());
  const std::string shape_msg = message_of<ShapeError>([&] { y.backward(ones({4})); });
  VERIFY2(contains(shape_msg, "[4]") && contains(shape_msg, "[2, 2]"), shape_msg.c_str());
  VERIFY(!x.grad().defined());  // the refused calls ran nothing
  y.backward(ones({2, 2}) * 3.f);
  compare_close(x.grad(), {6, 12, 18, 24});
  // A non-uniform grad_output weights each element.
  Tensor v = leaf({1, 2, 3}, {3});
  exp(v).backward(from_vector({1, 0, -1}, {3}));
  compare_close(v.grad(), {std::exp(1.f), 0.f, -std::exp(3.f)}, 1e-6f);
}

TEST(backwardOfLeafOrUntrackedTensor) {
  Tensor x = leaf({1, 2}, {2});
  x.backward(from_vector({3, 4}, {2}));
  compare_close(x.grad(), {3, 4});
  const Tensor plain = ones({1});
  VERIFY_THROWS(AutogradError, plain.backward());
  VERIFY_THROWS(AutogradError, (plain * 2.f).sum().backward());
}

TEST(noGradGuard) {
  Tensor x = leaf({1, 2}, {2});
  VERIFY(GradMode::enabled());
  {
    NoGradGuard g;
    VERIFY(!GradMode::enabled());
    Tensor y = exp(x * 2.f).sum();
    VERIFY(!y.requires_grad());
    VERIFY(y.is_leaf());
    VERIFY(!y.grad_fn());
    VERIFY(!x.reshape({2, 1}).requires_grad());
    {
      NoGradGuard inner;
      VERIFY(!GradMode::enabled());
    }
    VERIFY(!GradMode::enabled());  // the inner guard restores "off", not "on"
    VERIFY_THROWS(AutogradError, y.backward());
  }
  VERIFY(GradMode::enabled());
  VERIFY((x * 2.f).requires_grad());

  // The guard restores whatever was set before, even "off".
  GradMode::set_enabled(false);
  {
    NoGradGuard g;
  }
  VERIFY(!GradMode::enabled());
  GradMode::set_enabled(true);

  // An exception inside the guarded scope still restores the mode.
  try {
    NoGradGuard g;
    throw ValueError("boom");
  } catch (const ValueError&) {
  }
  VERIFY(GradMode::enabled());
}

TEST(gradModeIsThreadLocal) {
  // Main thread in a guard: a worker thread still records.
  bool worker_enabled = false, worker_records = false;
  {
    NoGradGuard g;
    std::thread t([&] {
      worker_enabled = GradMode::enabled();
      Tensor w = ones({2});
      w.requires_grad_();
      worker_records = (w * 2.f).requires_grad();
    });
    t.join();
    VERIFY(!GradMode::enabled());
  }
  VERIFY(worker_enabled);
  VERIFY(worker_records);

  // A worker in a guard: the main thread still records while the worker holds it.
  std::promise<void> entered, release;
  std::future<void> released = release.get_future();
  bool worker_off = true;
  std::thread t([&] {
    NoGradGuard g;
    worker_off = !GradMode::enabled();
    entered.set_value();
    released.wait();
  });
  entered.get_future().wait();
  const bool main_enabled = GradMode::enabled();
  Tensor x = leaf({1}, {1});
  const bool main_records = (x * 2.f).requires_grad();
  release.set_value();
  t.join();
  VERIFY(worker_off);
  VERIFY(main_enabled);
  VERIFY(main_records);
}

TEST(detachSharesStorageWithoutHistory) {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor y = x * 2.f;
  Tensor d = y.detach();
  VERIFY(d.storage() == y.storage());
  VERIFY(!d.requires_grad());
  VERIFY(d.is_leaf());
  VERIFY(!d.grad_fn());
  COMPARE(d.shape(), y.shape());
  COMPARE(d.offset(), y.offset());
  // A detached view keeps its geometry.
  Tensor v = from_vector({1, 2, 3, 4, 5, 6}, {2, 3}).t().narrow(0, 1, 2);
  Tensor dv = v.detach();
  COMPARE(dv.strides(), v.strides());
  COMPARE(dv.offset(), v.offset());
  COMPARE(dv.to_vector(), v.to_vector());
  // Gradient does not flow through the detached factor: d(x * detach(x))/dx = detach(x).
  (x * x.detach()).sum().backward();
  compare_close(x.grad(), {1, 2, 3});
}

TEST(requiresGradPropagation) {
  Tensor a = ones({2});
  Tensor b = ones({2});
  VERIFY(!(a + b).requires_grad());
  Tensor w = ones({2});
  w.requires_grad_();
  VERIFY(w.requires_grad());
  VERIFY(w.is_leaf());
  Tensor c = a * w;  // one input is enough
  VERIFY(c.requires_grad());
  VERIFY(!c.is_leaf());
  VERIFY(c.grad_fn() != nullptr);
  COMPARE(c.grad_fn()->name, "mul");
  VERIFY((c + a).requires_grad());
  VERIFY(relu(c).requires_grad());
  VERIFY(c.sum().requires_grad());
  // Views of a tracked tensor are tracked non-leaves.
  Tensor v = w.reshape({2, 1});
  VERIFY(v.requires_grad());
  VERIFY(!v.is_leaf());
  // Ops that are not differentiable return untracked tensors.
  VERIFY(!argmax(c).requires_grad());
  VERIFY(!gt(c, a).requires_grad());
  // requires_grad_(false) is for leaves only.
  VERIFY_THROWS(AutogradError, c.requires_grad_(false));
  w.requires_grad_(false);
  VERIFY(!(a * w).requires_grad());
  // An input that does not require grad gets no gradient.
  Tensor p = leaf({1, 2}, {2});
  Tensor q = from_vector({3, 4}, {2});
  (p * q).sum().backward();
  compare_close(p.grad(), {3, 4});
  VERIFY(!q.grad().defined());
}

TEST(inplaceAfterSaveIsDetected) {
  // exp saves its output; mutate it (through a detached alias) before backward.
  Tensor x = leaf({0.f, 1.f}, {2});
  Tensor xn = x * 1.f;
  Tensor y = exp(xn);
  {
    NoGradGuard g;
    y.detach().add_(ones({2}));
  }
  const std::string msg = message_of<AutogradError>([&] { y.sum().backward(); });
  VERIFY2(contains(msg, "modified in place"), msg.c_str());

  // mul saves its inputs; mutating one of them is caught the same way.
  Tensor p = leaf({1, 2}, {2});
  Tensor a = p * 2.f;
  Tensor b = a * a;
  {
    NoGradGuard g;
    a.mul_(3.f);
  }
  VERIFY_THROWS(AutogradError, b.sum().backward());

  // Control: without the mutation the same graph works.
  Tensor p2 = leaf({1, 2}, {2});
  Tensor a2 = p2 * 2.f;
  (a2 * a2).sum().backward();
  compare_close(p2.grad(), {8, 16});  // d(4p^2)/dp = 8p

  // Mutating a tensor that was not saved (add saves nothing) is fine.
  Tensor r = leaf({1, 2}, {2});
  Tensor s = r * 1.f;
  Tensor t = s + ones({2});
  {
    NoGradGuard g;
    s.detach().fill_(100.f);
  }
  t.sum().backward();
  compare_close(r.grad(), {1, 1});
}

TEST(longChainDoesNotOverflowTheStack) {
  constexpr int kSteps = 20000;
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x;
  for (int i = 0; i < kSteps; ++i) y = y + x;
  Tensor loss = y.sum();
  COMPARE(loss.item(), float((kSteps + 1) * 3));
  loss.backward();
  compare_close(x.grad(), {kSteps + 1.f, kSteps + 1.f});

  // A long chain dropped without backward is freed without recursion too. It is built and
  // dropped on a thread with a 256 KiB stack, which recursive freeing of 100k nodes would
  // overflow (crashing the test) in any build type.
  bool dropped = false;
  run_with_small_stack([&] {
    Tensor z = x;
    for (int i = 0; i < 100000; ++i) z = z * 1.f;
    const bool tracked = z.requires_grad();
    z = Tensor();
    dropped = tracked;
  });
  VERIFY(dropped);
  // ... and one kept by retain_graph.
  {
    Tensor z = x;
    for (int i = 0; i < kSteps; ++i) z = z + 1.f;
    x.set_grad(Tensor());
    z.sum().backward(Tensor(), true);
    compare_close(x.grad(), {1, 1});
  }
}

TEST(memoryStaysFlatOverTraining) {
  Generator gen(2024);
  const Tensor x = randn({32, 20}, &gen);
  const Tensor target = argmax(x.narrow(1, 0, 10), 1);  // a learnable labelling
  Tensor w1 = randn({20, 32}, &gen) * 0.3f;
  Tensor b1 = zeros({32});
  Tensor w2 = randn({32, 10}, &gen) * 0.3f;
  Tensor b2 = zeros({10});
  std::vector<Tensor> params{w1, b1, w2, b2};
  for (Tensor& p : params) p.requires_grad_();
  const float lr = 0.1f;

  auto step = [&] {
    const Tensor h = relu(matmul(x, w1) + b1);
    const Tensor logits = matmul(h, w2) + b2;
    const Tensor loss = cross_entropy(logits, target);
    loss.backward();
    NoGradGuard g;
    for (Tensor& p : params) {
      p.add_(p.grad(), -lr);
      p.set_grad(Tensor());
    }
    return loss.item();
  };

  const float first_loss = step();
  MemoryStats at_100;
  float last_loss = first_loss;
  for (int i = 2; i <= 10000; ++i) {
    last_loss = step();
    if (i == 100) at_100 = memory_stats();
    if (i == 1000 || i == 5000 || i == 10000) {
      const MemoryStats now = memory_stats();
      VERIFY2(now.bytes_in_use == at_100.bytes_in_use,
              cat("step ", i, ": ", now.bytes_in_use, " bytes in use, ", at_100.bytes_in_use, " at step 100"));
      // Every step is served from the cache: no new system allocations, no new peak.
      COMPARE(now.system_allocations, at_100.system_allocations);
      COMPARE(now.peak_bytes_in_use, at_100.peak_bytes_in_use);
      COMPARE(now.bytes_cached, at_100.bytes_cached);
    }
  }
  VERIFY(at_100.bytes_in_use > 0);
  VERIFY(std::isfinite(last_loss));
  VERIFY2(last_loss < 0.1f * first_loss, cat("loss ", first_loss, " -> ", last_loss));
  // Training actually fits the labels.
  NoGradGuard g;
  const Tensor pred = argmax(matmul(relu(matmul(x, w1) + b1), w2) + b2, 1);
  COMPARE(pred.to_vector(), target.to_vector());
}

