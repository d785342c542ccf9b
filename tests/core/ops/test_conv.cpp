// conv2d's CPU kernels against a direct double-precision convolution: the output, the input
// gradient and the weight gradient (and the bias's), on shapes around every edge of the
// lowering: output positions around the 16-lane halves and 32-column panels, im2col depths
// around the 256-deep blocks, output channels around the 12-row register tiles, strides,
// padding, dilation, groups, batches split across threads. On an AVX-512 CPU this checks the
// implicit product of unpadded stride-1 cases (ops/cpu/sgemm.h) and the grid of the padded or
// strided ones (ops/cpu/conv_grid.h); `test_conv_openblas` runs the same cases with
// PLEXUS_GEMM=openblas, the im2col lowering every other CPU gets.
#include "support/check.h"

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "plexus.h"
#include "support/test_support.h"
#include "util/parallel.h"

using namespace plexus;
using testing::cat;

namespace {

struct Case {
  const char* name;
  Shape x, w;  // [n, c, h, w], [oc, c / groups, kh, kw]
  Conv2dOptions opt;
};

struct Result {
  std::vector<double> y, gx, gw, gb;
};

// out[n][o][y][x] = b[o] + sum over the group's channels and taps of w * x (0 outside).
Result reference(const Case& c, const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                 const std::vector<float>& gy, int64_t oh, int64_t ow) {
  const int64_t n = c.x[0], ch = c.x[1], h = c.x[2], wd = c.x[3], oc = c.w[0], cg = c.w[1], kh = c.w[2], kw = c.w[3];
  const Conv2dOptions& o = c.opt;
  const int64_t og = oc / o.groups;
  Result r{std::vector<double>(size_t(n * oc * oh * ow)), std::vector<double>(x.size()), std::vector<double>(w.size()),
           std::vector<double>(size_t(oc))};
  for (int64_t i = 0; i < n; ++i)
    for (int64_t oo = 0; oo < oc; ++oo)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          const size_t at = size_t(((i * oc + oo) * oh + y) * ow + xo);
          double s = b[size_t(oo)];
          const double g = gy[at];
          r.gb[size_t(oo)] += g;
          for (int64_t cc = 0; cc < cg; ++cc)
            for (int64_t ki = 0; ki < kh; ++ki)
              for (int64_t kj = 0; kj < kw; ++kj) {
                const int64_t iy = y * o.stride_h - o.pad_h + ki * o.dilation_h;
                const int64_t ix = xo * o.stride_w - o.pad_w + kj * o.dilation_w;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                const size_t xi = size_t(((i * ch + (oo / og) * cg + cc) * h + iy) * wd + ix);
                const size_t wi = size_t(((oo * cg + cc) * kh + ki) * kw + kj);
                s += double(w[wi]) * x[xi];
                r.gx[xi] += double(w[wi]) * g;
                r.gw[wi] += double(x[xi]) * g;
              }
          r.y[at] = s;
        }
  return r;
}

// Worst error relative to the reference's largest magnitude (sums of many terms of size 1).
double worst(const std::vector<float>& got, const std::vector<double>& want) {
  double scale = 1, err = 0;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < want.size(); ++i) {
    const double e = std::fabs(double(got[i]) - want[i]);
    if (!(e <= err)) err = e;  // NaN is the worst
  }
  return err / scale;
}

// The cases both data-driven tests run, one row each.
const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      // LeNet's two convolutions (batch 3: images on both threads).
      {"lenet conv1 1->20 5x5 28x28", {3, 1, 28, 28}, {20, 1, 5, 5}, {}},
      {"lenet conv2 20->50 5x5 12x12", {3, 20, 12, 12}, {50, 20, 5, 5}, {}},
      // Batches of several images a chunk: a chunk's first image writes its gradients,
      // the rest add onto them.
      {"lenet conv2, batch 20", {20, 20, 12, 12}, {50, 20, 5, 5}, {}},
      {"stride 2, padding 1, groups 2, batch 37", {37, 4, 9, 9}, {6, 2, 3, 3}, {2, 2, 1, 1, 1, 1, 2}},
      // Output positions 1, 15, 16, 17, 31, 32, 33 (lane halves, panels); rows of 1 to 17 columns.
      {"1 position", {2, 2, 3, 3}, {3, 2, 3, 3}, {}},
      {"15 positions (3x5)", {2, 2, 5, 7}, {5, 2, 3, 3}, {}},
      {"16 positions (4x4)", {2, 2, 6, 6}, {13, 2, 3, 3}, {}},
      {"17 positions (1x17)", {2, 3, 3, 19}, {12, 3, 3, 3}, {}},
      {"31 positions (1x31), output rows longer than 16", {1, 2, 1, 33}, {11, 2, 1, 3}, {}},
      {"33 positions (3x11)", {2, 2, 5, 13}, {25, 2, 3, 3}, {}},
      {"output rows of 1", {2, 3, 9, 3}, {4, 3, 3, 3}, {}},
      // im2col depth around the 256-deep block: 255, 256, 257 (and 3 blocks).
      {"depth 255 (5 x 51)", {2, 5, 10, 60}, {7, 5, 1, 51}, {}},
      {"depth 256 (16 x 4 x 4)", {2, 16, 7, 7}, {14, 16, 4, 4}, {}},
      {"depth 257 (257 x 1 x 1)", {2, 257, 3, 5}, {13, 257, 1, 1}, {}},
      {"depth 600 (24 x 5 x 5), 3 blocks", {2, 24, 9, 9}, {26, 24, 5, 5}, {}},
      // Output positions past one 256-deep block of the weight gradient (17 x 17 = 289).
      {"289 positions", {2, 2, 19, 19}, {3, 2, 3, 3}, {}},
      // Padding, stride, dilation, groups, and their mixes.
      {"padding 2", {2, 3, 9, 11}, {5, 3, 5, 5}, {1, 1, 2, 2, 1, 1, 1}},
      {"padding wider than the kernel reach", {1, 2, 4, 4}, {3, 2, 3, 3}, {1, 1, 3, 3, 1, 1, 1}},
      {"stride 2", {2, 3, 13, 13}, {6, 3, 3, 3}, {2, 2, 0, 0, 1, 1, 1}},
      {"stride (2,3), padding (1,2)", {2, 3, 17, 23}, {5, 3, 3, 4}, {2, 3, 1, 2, 1, 1, 1}},
      {"dilation 2, padding 2", {2, 2, 11, 12}, {4, 2, 3, 3}, {1, 1, 2, 2, 2, 2, 1}},
      {"dilation (3,1), stride (1,2), padding (0,1)", {1, 2, 14, 21}, {3, 2, 3, 3}, {1, 2, 0, 1, 3, 1, 1}},
      {"groups 2", {2, 4, 10, 10}, {26, 2, 3, 3}, {1, 1, 1, 1, 1, 1, 2}},
      {"depthwise, stride 2, padding 1", {2, 6, 9, 9}, {6, 1, 3, 3}, {2, 2, 1, 1, 1, 1, 6}},
      // The grid (padded or strided): output channels over 16 and 32 (the weight gradient's tile
      // two registers wide, then a second panel), grid positions past one 256-deep block of the
      // weight gradient, several images a chunk, and a ResNet's downsampling with its 1x1 shortcut.
      {"padding 1, 40 channels", {2, 5, 12, 12}, {40, 5, 3, 3}, {1, 1, 1, 1, 1, 1, 1}},
      {"padding 1, 440 grid positions", {2, 4, 20, 20}, {20, 4, 3, 3}, {1, 1, 1, 1, 1, 1, 1}},
      {"padding 1, batch 20", {20, 3, 8, 8}, {17, 3, 3, 3}, {1, 1, 1, 1, 1, 1, 1}},
      {"3x3 stride 2 padding 1, 32 -> 64", {3, 32, 14, 14}, {64, 32, 3, 3}, {2, 2, 1, 1, 1, 1, 1}},
      {"1x1 stride 2, 16 -> 32", {3, 16, 14, 14}, {32, 16, 1, 1}, {2, 2, 0, 0, 1, 1, 1}},
      {"1x1", {3, 7, 6, 6}, {9, 7, 1, 1}, {}},
      {"kernel the size of the image", {2, 3, 5, 5}, {4, 3, 5, 5}, {}},
  };
  return all;
}

// A row per case, tagged with its name.
struct CaseRow {
  std::string name;
  int index;
};

std::vector<CaseRow> case_rows() {
  std::vector<CaseRow> rows;
  for (int i = 0; i < int(cases().size()); ++i) rows.push_back({cases()[size_t(i)].name, i});
  return rows;
}

}  // namespace

TEST_ROWS(matchesDirectConvolution, case_rows()) {
  const Case& c = cases()[size_t(row.index)];
  Generator gen(uint64_t(100 + row.index));
  Tensor x = randn(c.x, &gen), w = randn(c.w, &gen), b = randn({c.w[0]}, &gen);
  x.requires_grad_();
  w.requires_grad_();
  b.requires_grad_();
  const Tensor y = conv2d(x, w, b, c.opt);
  const Tensor gy = randn(y.shape(), &gen);
  y.backward(gy);
  const Result want = reference(c, x.to_vector(), w.to_vector(), b.to_vector(), gy.to_vector(), y.size(2), y.size(3));
  const double tol = 1e-5;
  VERIFY2(worst(y.to_vector(), want.y) < tol, "output");
  VERIFY2(worst(x.grad().to_vector(), want.gx) < tol, "input gradient");
  VERIFY2(worst(w.grad().to_vector(), want.gw) < tol, "weight gradient");
  VERIFY2(worst(b.grad().to_vector(), want.gb) < tol, "bias gradient");
}

// A convolution's backward pass inside another parallel loop runs serially, one chunk
// over every image, and gives the same gradients as on its own (the gradient slots of the
// chunks that did not run hold whatever an earlier pass left there).
TEST(nestedInAParallelLoopMatches) {
  Generator gen(9);
  const Tensor x0 = randn({24, 3, 10, 10}, &gen), w0 = randn({8, 3, 3, 3}, &gen), b0 = randn({8}, &gen);
  const Tensor gy = randn({24, 8, 4, 4}, &gen);
  auto grads = [&] {
    Tensor x = x0.detach(), w = w0.detach(), b = b0.detach();
    x.requires_grad_();
    w.requires_grad_();
    b.requires_grad_();
    conv2d_relu_max_pool2d(x, w, b, {}, true, true).backward(gy);
    return std::vector<std::vector<float>>{x.grad().to_vector(), w.grad().to_vector(), b.grad().to_vector()};
  };
  const auto alone = grads();
  std::vector<std::vector<float>> nested;
  parallel_for(2, 1, [&](int64_t begin, int64_t) {
    if (begin == 0) nested = grads();  // chunk 0 runs on this thread, inside the loop
  });
  COMPARE(nested.size(), alone.size());
  for (size_t k = 0; k < alone.size(); ++k) {
    const std::vector<double> want(alone[k].begin(), alone[k].end());
    VERIFY2(worst(nested[k], want) < 1e-5, cat("gradient ", k));
  }
}

// No images: the weight and bias gradients are zero, not whatever their memory held.
TEST(emptyBatchGivesZeroGradients) {
  Generator gen(3);
  for (int round = 0; round < 2; ++round) {  // the second reuses the first's freed blocks
    Tensor x = randn({round == 0 ? 4 : 0, 3, 8, 8}, &gen), w = randn({5, 3, 3, 3}, &gen), b = randn({5}, &gen);
    x.requires_grad_();
    w.requires_grad_();
    b.requires_grad_();
    const Tensor y = conv2d(x, w, b);
    y.backward(randn(y.shape(), &gen));
    if (round == 0) continue;
    COMPARE(x.grad().numel(), int64_t(0));
    for (const float v : w.grad().to_vector()) COMPARE(v, 0.f);
    for (const float v : b.grad().to_vector()) COMPARE(v, 0.f);
  }
}

// A NaN in the image makes NaN conv outputs; the ReLU keeps them (as relu does) and pooling
// lets a NaN win its window (as max_pool2d does).
TEST(fusedPoolingPassesNaNLikeComposed) {
  Generator gen(5);
  std::vector<float> xv = randn({2, 3, 14, 13}, &gen).to_vector();
  xv[size_t(3 * 14 * 13 + 5 * 13 + 6)] = std::nanf("");
  const Tensor x = from_vector(xv, {2, 3, 14, 13}), w = randn({4, 3, 3, 3}, &gen), b = randn({4}, &gen);
  for (const bool relu : {false, true}) {
    const std::vector<float> fused = conv2d_relu_max_pool2d(x, w, b, {}, relu, true).to_vector();
    Tensor y = conv2d(x, w, b);
    if (relu) y = plexus::relu(y);
    const std::vector<float> composed = max_pool2d(y, {2, 2}).to_vector();
    COMPARE(fused.size(), composed.size());
    int nans = 0;
    for (size_t i = 0; i < fused.size(); ++i) {
      nans += std::isnan(composed[i]);
      VERIFY2(std::isnan(fused[i]) == std::isnan(composed[i]) && (std::isnan(fused[i]) || fused[i] == composed[i]),
              cat("cell ", i, " (relu ", relu, "): ", fused[i], " vs ", composed[i]));
    }
    VERIFY(nans > 0);
  }
}

// conv2d_relu_max_pool2d against the three ops it fuses, on the same cases (planes too
// small to pool take the composed path, so they match trivially).
TEST_ROWS(fusedMatchesComposed, case_rows()) {
  const Case& c = cases()[size_t(row.index)];
  for (const auto& fusion : {std::pair{true, true}, {true, false}, {false, true}}) {
    const bool relu = fusion.first, pool = fusion.second;
    Generator gen(uint64_t(200 + row.index));
    const Tensor x0 = randn(c.x, &gen), w0 = randn(c.w, &gen), b0 = randn({c.w[0]}, &gen);
    auto run = [&](bool fused) {
      Tensor x = x0.detach(), w = w0.detach(), b = b0.detach();
      x.requires_grad_();
      w.requires_grad_();
      b.requires_grad_();
      Tensor y;
      if (fused) {
        y = conv2d_relu_max_pool2d(x, w, b, c.opt, relu, pool);
      } else {
        y = conv2d(x, w, b, c.opt);
        if (relu) y = plexus::relu(y);
        if (pool) y = max_pool2d(y, {2, 2});
      }
      Generator g2(7);
      y.backward(randn(y.shape(), &g2));
      return std::vector<std::vector<float>>{y.to_vector(), x.grad().to_vector(), w.grad().to_vector(),
                                             b.grad().to_vector()};
    };
    if (pool && (conv2d(x0, w0, Tensor(), c.opt).size(2) < 2 || conv2d(x0, w0, Tensor(), c.opt).size(3) < 2)) continue;
    const auto fused = run(true), composed = run(false);
    const char* what[] = {"output", "input gradient", "weight gradient", "bias gradient"};
    for (size_t k = 0; k < fused.size(); ++k) {
      const std::vector<double> want(composed[k].begin(), composed[k].end());
      VERIFY2(fused[k].size() == want.size() && worst(fused[k], want) < 1e-6,
              cat(what[k], " (relu ", relu, ", pool ", pool, ")"));
    }
  }
}

