// The CPU thread pool (util/parallel.h) and the kernels it runs: every index is visited
// once, nesting and concurrent callers stay correct, and each parallel kernel (the split
// matrix product, elementwise maps, optimizer updates, convolution over images, pooling)
// gives the serial result — bit for bit where the order of the sums is unchanged.
#include "support/check.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "ops/backend.h"
#include "ops/cpu/sgemm.h"
#include "plexus.h"
#include "support/test_support.h"
#include "util/parallel.h"

using namespace plexus;
using testing::cat;

namespace {

Tensor normal(const Shape& s, uint64_t seed) {
  Generator g(seed);
  return randn(s, &g);
}

// Runs f with the given thread count and restores the previous one.
template <class F>
auto with_threads(int n, F&& f) {
  const int before = num_threads();
  set_num_threads(n);
  struct Restore {
    int n;
    ~Restore() { set_num_threads(n); }
  } restore{before};
  return f();
}

std::vector<double> naive_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const std::vector<float>& a,
                               const std::vector<float>& b) {
  return testing::reference_gemm(ta, tb, m, n, k, a.data(), ta ? m : k, b.data(), tb ? k : n);
}

double max_abs_diff(const std::vector<float>& x, const std::vector<float>& y) {
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(double(x[i]) - double(y[i])));
  return m;
}

}  // namespace

TEST(everyIndexOnce) {
  with_threads(2, [] {
    for (const int64_t n : {int64_t(0), int64_t(1), int64_t(2), int64_t(7), int64_t(1000), int64_t(100003)}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> chunks{0};
      parallel_for_chunks(n, 1, [&](int chunk, int64_t b, int64_t e) {
        VERIFY(chunk >= 0 && chunk < parallel_parts(n, 1));
        VERIFY(b <= e);
        ++chunks;
        for (int64_t i = b; i < e; ++i) ++hits[size_t(i)];
      });
      for (int64_t i = 0; i < n; ++i) COMPARE(hits[size_t(i)].load(), 1);
      if (n >= 2) COMPARE(chunks.load(), 2);  // one chunk a thread
    }
  });
}

TEST(moreChunksThanThreadsGoToWhoeverIsFree) {
  with_threads(2, [] {
    const int64_t n = 1000;
    const int parts = parallel_parts(n, 1, 4);
    COMPARE(parts, 8);
    COMPARE(parallel_parts(n, 1, 0), 2);  // at least one chunk a thread
    COMPARE(parallel_parts(5, 1, 4), 5);  // never more chunks than the grain allows
    std::vector<std::atomic<int>> runs(static_cast<size_t>(parts));
    std::atomic<int> by_worker{0};
    const std::thread::id caller = std::this_thread::get_id();
    parallel_for_chunks(
        n, 1,
        [&](int chunk, int64_t b, int64_t e) {
          COMPARE(b, chunk * n / parts);  // fixed ranges, whoever runs them
          COMPARE(e, (chunk + 1) * n / parts);
          ++runs[size_t(chunk)];
          if (std::this_thread::get_id() != caller) {
            ++by_worker;
            return;
          }
          // The caller holds its first chunk until the worker has run two: one thread per
          // chunk index would never get there (the 10 s bound turns that into a failure).
          const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while (chunk == 0 && by_worker.load() < 2 && std::chrono::steady_clock::now() < until)
            std::this_thread::yield();
        },
        4);
    for (int c = 0; c < parts; ++c) COMPARE(runs[size_t(c)].load(), 1);
    VERIFY2(by_worker.load() >= 2, std::to_string(by_worker.load()));
  });
}

TEST(fusedConvolutionIsReproducible) {
  // LeNet's conv2 shape with ReLU and pooling folded in: the batch runs as more chunks than
  // threads, taken by whichever thread is free, and the weight gradient's per-chunk partials
  // are summed in chunk order, so two runs agree bit for bit however the chunks fell.
  const Tensor x0 = normal({37, 20, 12, 12}, 21), w0 = normal({50, 20, 5, 5}, 22), b0 = normal({50}, 23);
  const Tensor g = normal({37, 50, 4, 4}, 24);
  auto run = [&] {
    const Tensor x = x0.detach().requires_grad_(), w = w0.detach().requires_grad_(), b = b0.detach().requires_grad_();
    const Tensor y = conv2d_relu_max_pool2d(x, w, b, {}, true, true);
    y.backward(g);
    return std::vector<std::vector<float>>{y.to_vector(), x.grad().to_vector(), w.grad().to_vector(),
                                           b.grad().to_vector()};
  };
  const auto serial = with_threads(1, run);
  const auto first = with_threads(2, run);
  for (int i = 0; i < 5; ++i) VERIFY(with_threads(2, run) == first);
  VERIFY(serial[0] == first[0]);
  VERIFY(serial[1] == first[1]);
  VERIFY(max_abs_diff(serial[2], first[2]) < 1e-3);
  VERIFY(max_abs_diff(serial[3], first[3]) < 1e-3);
}

TEST(grainKeepsSmallLoopsSerial) {
  with_threads(2, [] {
    COMPARE(parallel_parts(100, 64), 1);
    COMPARE(parallel_parts(128, 64), 2);
    COMPARE(parallel_parts(1 << 20, 1), 2);
    const std::thread::id caller = std::this_thread::get_id();
    bool elsewhere = false;
    parallel_for(100, 64, [&](int64_t, int64_t) { elsewhere |= std::this_thread::get_id() != caller; });
    VERIFY(!elsewhere);
  });
}

TEST(nestedLoopsRunSerially) {
  with_threads(2, [] {
    std::atomic<int64_t> total{0};
    parallel_for(8, 1, [&](int64_t b, int64_t e) {
      VERIFY(in_parallel_region());
      for (int64_t i = b; i < e; ++i)
        parallel_for(1000, 1, [&](int64_t ib, int64_t ie) { total += ie - ib; });
    });
    COMPARE(total.load(), int64_t(8000));
    VERIFY(!in_parallel_region());
  });
}

TEST(anExceptionOnAWorkerReachesTheCaller) {
  // A chunk that throws on a pool worker (a scratch buffer refused memory) must not end the
  // process: the other chunks still run, the caller gets the first exception, and the pool
  // serves the next loop.
  with_threads(2, [] {
    const std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> ran{0}, by_worker{0};
    std::string caught;
    try {
      parallel_for_chunks(
          8, 1,
          [&](int chunk, int64_t, int64_t) {
            ++ran;
            if (std::this_thread::get_id() != caller) {
              ++by_worker;
              throw ValueError("chunk " + std::to_string(chunk) + " failed");
            }
            // The caller holds its first chunk until a worker has run one (or 10 s have passed,
            // which fails below): the worker's exception is the one to see.
            const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (chunk == 0 && by_worker.load() < 1 && std::chrono::steady_clock::now() < until)
              std::this_thread::yield();
          },
          4);
    } catch (const ValueError& e) {
      caught = e.what();
    }
    VERIFY2(by_worker.load() >= 1, "no worker ran a chunk");
    VERIFY2(caught.starts_with("chunk ") && caught.ends_with(" failed"), caught);
    COMPARE(ran.load(), 8);
    std::atomic<int64_t> total{0};
    parallel_for(1000, 1, [&](int64_t b, int64_t e) { total += e - b; });
    COMPARE(total.load(), int64_t(1000));
    VERIFY(!in_parallel_region());
  });
}

TEST(concurrentCallersBothFinish) {
  // A second thread finds the pool busy and runs its loop itself; both sums are whole.
  with_threads(2, [] {
    std::atomic<int64_t> a{0}, b{0};
    auto work = [](std::atomic<int64_t>& sum) {
      for (int r = 0; r < 200; ++r)
        parallel_for(10000, 1, [&](int64_t lo, int64_t hi) {
          int64_t s = 0;
          for (int64_t i = lo; i < hi; ++i) s += i;
          sum += s;
        });
    };
    std::thread other([&] { work(b); });
    work(a);
    other.join();
    const int64_t expected = 200 * (int64_t(10000) * 9999 / 2);
    COMPARE(a.load(), expected);
    COMPARE(b.load(), expected);
  });
}

TEST(replacedPoolRunsNoFinishedJob) {
  // Changing the thread count retires the pool. A worker that slept through the last job
  // (the caller ran its chunk) and wakes as the pool stops must not take that job's chunk:
  // its loop body and captures are gone. Here each job stays readable after it returns and
  // counts any chunk run once it is over.
  struct Job {
    std::atomic<bool> over{false};
    std::atomic<int> late{0};
  };
  std::vector<Job> jobs(300);
  const int before = num_threads();
  for (size_t r = 0; r < jobs.size(); ++r) {
    Job& job = jobs[r];
    // The workers fall asleep, so the caller has taken every chunk before one wakes ...
    std::this_thread::sleep_for(std::chrono::microseconds(400));
    parallel_for(2, 1, [&job](int64_t, int64_t) {
      if (job.over.load()) ++job.late;
    });
    job.over.store(true);
    // ... and the pool is retired while they wake.
    set_num_threads(2 + int(r % 2));
    parallel_for(2, 1, [](int64_t, int64_t) {});
  }
  set_num_threads(before);
  for (const Job& job : jobs) COMPARE(job.late.load(), 0);
}

TEST(threadCountChanges) {
  for (const int n : {1, 3, 2}) {
    with_threads(n, [n] {
      COMPARE(num_threads(), n);
      std::atomic<int> chunks{0};
      parallel_for_chunks(1000, 1, [&](int, int64_t, int64_t) { ++chunks; });
      COMPARE(chunks.load(), n);
    });
  }
  VERIFY_THROWS(ValueError, set_num_threads(0));
}

TEST(physicalCoresIsSane) {
  const int cores = physical_cores();
  VERIFY(cores >= 1);
  VERIFY(cores <= int(std::max(1u, std::thread::hardware_concurrency())));
}

// ---- kernels --------------------------------------------------------------------------
namespace {

struct ProductRow {
  std::string name;
  bool ta, tb;
  int m, n, k;
};

std::vector<ProductRow> product_rows() {
  // Shapes above the split threshold, with sizes that are not multiples of the 16-wide
  // blocks, splitting by columns (n >= m) and by rows (m > n), in all four layouts.
  std::vector<ProductRow> rows;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      const std::string t = std::string(ta ? "T" : "N") + (tb ? "T" : "N");
      rows.push_back({t + " 100x128x784", ta, tb, 100, 128, 784});
      rows.push_back({t + " 333x37x101", ta, tb, 333, 37, 101});
      rows.push_back({t + " 17x501x129", ta, tb, 17, 501, 129});
      rows.push_back({t + " 128x784x100", ta, tb, 128, 784, 100});
    }
  return rows;
}

}  // namespace

TEST_ROWS(splitProductMatchesReference, product_rows()) {
  const bool ta = row.ta, tb = row.tb;
  const int m = row.m, n = row.n, k = row.k;
  const std::vector<float> a = normal({int64_t(m) * k}, 1).to_vector(), b = normal({int64_t(k) * n}, 2).to_vector();
  const std::vector<double> ref = naive_gemm(ta, tb, m, n, k, a, b);
  for (const int threads : {1, 2}) {
    std::vector<float> c(size_t(m) * size_t(n), 7.f);  // beta = 0 must overwrite it
    with_threads(threads, [&] {
      cpu_backend().gemm(ta, tb, m, n, k, 1.f, a.data(), ta ? m : k, b.data(), tb ? k : n, 0.f, c.data(), n);
    });
    double worst = 0;
    for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::fabs(double(c[i]) - ref[i]));
    VERIFY2(worst < 1e-3 * std::sqrt(double(k)), cat("threads ", threads, ": max error ", worst));
  }
  // beta = 1 accumulates onto C in every block.
  std::vector<float> c(size_t(m) * size_t(n), 1.f);
  with_threads(2, [&] {
    cpu_backend().gemm(ta, tb, m, n, k, 0.5f, a.data(), ta ? m : k, b.data(), tb ? k : n, 1.f, c.data(), n);
  });
  for (size_t i = 0; i < c.size(); ++i)
    VERIFY(std::fabs(double(c[i]) - (1.0 + 0.5 * ref[i])) < 1e-3 * std::sqrt(double(k)));
}

TEST(wideProductIsIdenticalOnEveryThreadCount) {
  // Wide products run as column chunks taken by whichever thread is free, each thread
  // packing op(A) once for its chunks: with our kernel the result is the same bit for bit
  // on 1, 2 and 3 threads. A second product reading new values from the same A buffer must
  // not reuse what a thread packed for the first. OpenBLAS (CPUs without AVX-512) rounds a
  // block of columns differently from the whole product, so there the threads' results
  // must only agree to the products' tolerance.
  const bool exact = cpu::own_sgemm_enabled();
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      const int64_t m = 50, n = 700, k = 300;
      std::vector<float> a = normal({m * k}, 21).to_vector();
      const std::vector<float> b = normal({k * n}, 22).to_vector();
      auto product = [&] {
        std::vector<float> c(size_t(m * n));
        cpu_backend().gemm(ta, tb, m, n, k, 1.f, a.data(), ta ? m : k, b.data(), tb ? k : n, 0.f, c.data(), n);
        return c;
      };
      const std::vector<float> one = with_threads(1, product);
      for (const int threads : {2, 3}) {
        const std::vector<float> c = with_threads(threads, product);
        const std::string where = cat("ta=", ta, " tb=", tb, ", ", threads, " threads");
        if (exact) VERIFY2(c == one, where);
        for (size_t i = 0; i < c.size(); ++i) VERIFY2(std::fabs(c[i] - one[i]) < 1e-4f * std::sqrt(float(k)), where);
      }
      const std::vector<double> ref = naive_gemm(ta, tb, m, n, k, a, b);
      for (size_t i = 0; i < one.size(); ++i) VERIFY(std::fabs(one[i] - ref[i]) < 1e-3 * std::sqrt(double(k)));
      for (float& x : a) x = -2.f * x;
      const std::vector<float> doubled = with_threads(2, product);
      for (size_t i = 0; i < one.size(); ++i)
        VERIFY2(exact ? doubled[i] == -2.f * one[i] : std::fabs(doubled[i] + 2.f * one[i]) < 2e-4f * std::sqrt(float(k)),
                cat("ta=", ta, " tb=", tb, ": new A, cell ", i));
    }
}

TEST(largeLinearMatchesReference) {
  // The layer op on the split path: forward and all three gradients against double sums.
  const int64_t rows = 100, in = 300, out = 200;
  const Tensor x = normal({rows, in}, 3).requires_grad_(), w = normal({out, in}, 4).requires_grad_(),
               b = normal({out}, 5).requires_grad_(), g = normal({rows, out}, 6);
  with_threads(2, [&] {
    const Tensor y = linear(x, w, b);
    y.backward(g);
  });
  const std::vector<float> xv = x.to_vector(), wv = w.to_vector(), bv = b.to_vector(), gv = g.to_vector();
  const std::vector<double> y_ref = naive_gemm(false, true, rows, out, in, xv, wv);
  const std::vector<float> y = with_threads(2, [&] {
    NoGradGuard no_grad;
    return linear(x, w, b).to_vector();
  });
  const std::vector<double> dx = naive_gemm(false, false, rows, in, out, gv, wv);
  const std::vector<double> dw = naive_gemm(true, false, out, in, rows, gv, xv);
  const std::vector<float> gx = x.grad().to_vector(), gw = w.grad().to_vector(), gb = b.grad().to_vector();
  for (int64_t i = 0; i < rows * out; ++i)
    VERIFY(std::fabs(y[size_t(i)] - (y_ref[size_t(i)] + bv[size_t(i % out)])) < 1e-3);
  for (size_t i = 0; i < dx.size(); ++i) VERIFY(std::fabs(gx[i] - dx[i]) < 1e-3);
  for (size_t i = 0; i < dw.size(); ++i) VERIFY(std::fabs(gw[i] - dw[i]) < 1e-3);
  for (int64_t j = 0; j < out; ++j) {
    double s = 0;
    for (int64_t r = 0; r < rows; ++r) s += gv[size_t(r * out + j)];
    VERIFY(std::fabs(gb[size_t(j)] - s) < 1e-3);
  }
}

TEST(elementwiseIsIdenticalToSerial) {
  // Contiguous, transposed, broadcast and sliced operands well above the split size.
  const Tensor a = normal({300, 400}, 7), b = normal({400, 300}, 8).t(), row = normal({400}, 9);
  const Tensor sliced = normal({300, 800}, 10).narrow(1, 100, 400);
  auto compute = [&] {
    return std::vector<std::vector<float>>{
        (a + b).to_vector(),      relu(a).to_vector(),          (a * row).to_vector(),
        tanh(sliced).to_vector(), (sliced - b).to_vector(),     exp(b).to_vector(),
        where(gt(a, b), a, sliced).to_vector(), b.contiguous().to_vector(), sum(a, {0}).to_vector(),
        max(b, {1}).to_vector()};
  };
  const auto serial = with_threads(1, compute), parallel = with_threads(2, compute);
  COMPARE(parallel.size(), serial.size());
  for (size_t i = 0; i < serial.size(); ++i) VERIFY2(parallel[i] == serial[i], cat("result ", i));
}

// Sums over leading dims into trailing ones of at least 16 floats (a bias gradient's shape) take
// vectorised column sums (ops/cpu/column_sums.h); the other layouts the general loop. Both
// against sums in double, on one thread and on two (48,000 elements: the rows split in chunks).
TEST(columnSumsAsDoubleSums) {
  const Tensor x = normal({6, 200, 40}, 5);
  const std::vector<float> v = x.to_vector();
  // out[j] of x summed over the dims in `over`, j indexing the kept dims in order.
  auto reference = [&](std::vector<int> over) {
    std::vector<double> out;
    const int64_t shape[3] = {6, 200, 40};
    std::vector<int64_t> kept_size;
    for (int d = 0; d < 3; ++d)
      if (std::find(over.begin(), over.end(), d) == over.end()) kept_size.push_back(shape[d]);
    int64_t n = 1;
    for (const int64_t s : kept_size) n *= s;
    out.assign(size_t(n), 0.0);
    for (int64_t i = 0; i < 6; ++i)
      for (int64_t j = 0; j < 200; ++j)
        for (int64_t k = 0; k < 40; ++k) {
          const int64_t idx[3] = {i, j, k};
          int64_t o = 0;
          for (int d = 0; d < 3; ++d)
            if (std::find(over.begin(), over.end(), d) == over.end()) o = o * shape[d] + idx[d];
          out[size_t(o)] += double(v[size_t((i * 200 + j) * 40 + k)]);
        }
    return out;
  };
  for (const int threads : {1, 2})
    for (const std::vector<int>& over : std::vector<std::vector<int>>{{0}, {0, 1}, {1}, {0, 2}}) {
      const std::vector<float> got = with_threads(threads, [&] {
        return sum(x, std::vector<int64_t>(over.begin(), over.end())).to_vector();
      });
      const std::vector<double> want = reference(over);
      COMPARE(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        VERIFY2(std::fabs(got[i] - want[i]) <= 1e-6 * (1 + std::fabs(want[i])),
                cat("threads ", threads, " over dims ", over.size() == 1 ? over[0] : over[0] * 10 + over[1],
                             " element ", i, ": ", got[i], " vs ", want[i]));
    }
  // Many rows: the columns' running sums stay in double (in float 0.1 x 100000 drifts by ~1e-3).
  const std::vector<float> long_sums = sum(full({100000, 20}, 0.1f), {0}).to_vector();
  for (const float s : long_sums) VERIFY2(std::fabs(s - 10000.000149f) < 1e-3f, cat(s));
}

// util/subnormals.h: loops run through the pool flush subnormal results to zero and read
// subnormal inputs as zero, on every thread count, and leave the caller's own setting as
// it was; switched off, they keep subnormals. 1e-40 is subnormal, 1e-30 and 1e-10 are not.
TEST(poolLoopsFlushSubnormals) {
  COMPARE(std::fpclassify(1e-40f), FP_SUBNORMAL);
  const int64_t n = 1 << 20;  // far above the elementwise kernels' serial size
  const Tensor tiny = full({n}, 1e-30f), subnormal = full({n}, 1e-40f);
  const Tensor a = full({256, 256}, 1e-20f), b = full({256, 256}, 1e-21f);  // each term 1e-41
  auto results = [&] {
    return std::vector<std::vector<float>>{(tiny * 1e-10f).to_vector(), (subnormal * 1e30f).to_vector(),
                                           matmul(a, b).to_vector()};
  };
  auto all_equal = [](const std::vector<float>& v, float x) {
    return std::all_of(v.begin(), v.end(), [x](float y) { return y == x; });
  };
  VERIFY(flush_subnormals());  // the default
#if defined(__x86_64__)
  const unsigned caller = _mm_getcsr();
#endif
  for (int threads : {1, 2, 3}) {
    const auto flushed = with_threads(threads, results);
    VERIFY2(all_equal(flushed[0], 0.f), cat("a subnormal result on ", threads, " threads"));
    VERIFY2(all_equal(flushed[1], 0.f), cat("a subnormal input on ", threads, " threads"));
    VERIFY2(all_equal(flushed[2], 0.f), cat("a product on ", threads, " threads"));
  }
#if defined(__x86_64__)
  COMPARE(_mm_getcsr(), caller);
#endif
  set_flush_subnormals(false);
  const auto kept = with_threads(2, results);
  set_flush_subnormals(true);
  VERIFY(all_equal(kept[0], 1e-30f * 1e-10f));
  COMPARE(std::fpclassify(kept[0][0]), FP_SUBNORMAL);
  VERIFY(all_equal(kept[1], 1e-40f * 1e30f));
  VERIFY(kept[2][0] > 0.f && std::fpclassify(kept[2][0]) == FP_SUBNORMAL);
}

TEST(optimizerUpdatesAreIdenticalToSerial) {
  // SGD (plain and with momentum + decay) and Adam (plain, AMSGrad) over 100k parameters.
  auto train = [](int which) {
    Tensor p = normal({100000}, 11);
    std::vector<Tensor> params{p.requires_grad_()};
    std::unique_ptr<optim::Optimizer> opt;
    if (which == 0) opt = std::make_unique<optim::SGD>(params, optim::SGDOptions{.lr = 0.1});
    if (which == 1)
      opt = std::make_unique<optim::SGD>(params, optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-2});
    if (which == 2) opt = std::make_unique<optim::Adam>(params, optim::AdamOptions{.lr = 1e-2});
    if (which == 3)
      opt = std::make_unique<optim::Adam>(params, optim::AdamOptions{.lr = 1e-2, .weight_decay = 1e-3, .amsgrad = true});
    for (int step = 0; step < 3; ++step) {
      opt->zero_grad();
      sum(p * p * float(step + 1)).backward();
      opt->step();
    }
    return p.to_vector();
  };
  for (int which = 0; which < 4; ++which) {
    const auto serial = with_threads(1, [&] { return train(which); });
    const auto parallel = with_threads(2, [&] { return train(which); });
    VERIFY2(serial == parallel, cat("optimizer ", which));
  }
}

TEST(convolutionMatchesSerial) {
  // Images split across threads: the same outputs and input gradients bit for bit; the
  // weight gradient sums per-thread partials, so it matches to rounding.
  // Stride (2, 1), padding (1, 2), dilation (1, 2): the im2col edge cases on every image.
  const Tensor x0 = normal({9, 3, 13, 11}, 12), w0 = normal({6, 3, 3, 3}, 13);
  auto run = [&] {
    const Tensor x = x0.detach().requires_grad_(), w = w0.detach().requires_grad_();
    const Tensor y = conv2d(x, w, Tensor(), {2, 1, 1, 2, 1, 2, 1});
    y.backward(normal(y.shape(), 14));
    return std::vector<std::vector<float>>{y.to_vector(), x.grad().to_vector(), w.grad().to_vector()};
  };
  const auto serial = with_threads(1, run), parallel = with_threads(2, run);
  VERIFY(serial[0] == parallel[0]);
  VERIFY(serial[1] == parallel[1]);
  VERIFY(max_abs_diff(serial[2], parallel[2]) < 1e-4);
}

TEST(poolingIsIdenticalToSerial) {
  const Tensor x0 = normal({16, 8, 24, 24}, 15);
  auto run = [&] {
    const Tensor x = x0.detach().requires_grad_();
    const Tensor y = max_pool2d(x, {2, 2}) + avg_pool2d(x, {3, 3, 2, 2, 1, 1});
    sum(y * y).backward();
    return std::vector<std::vector<float>>{y.to_vector(), x.grad().to_vector()};
  };
  const auto serial = with_threads(1, run), parallel = with_threads(2, run);
  VERIFY(serial == parallel);
}

