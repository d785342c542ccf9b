// Modules: registration and naming, recursion, train/eval, PyTorch-style initialisation,
// layer shapes and errors.
#include "support/check.h"

#include <algorithm>
#include <cmath>

#include "nn/layers.h"
#include "plexus.h"
#include "support/test_support.h"

using namespace plexus;

TEST(namedParametersAreDottedPathsInOrder) {
  nn::Sequential net{std::make_shared<nn::Linear>(4, 3), std::make_shared<nn::ReLU>(),
                     std::make_shared<nn::Linear>(3, 2, false)};
  const auto named = net.named_parameters();
  COMPARE(named.size(), size_t(3));
  COMPARE(named[0].first, std::string("0.weight"));
  COMPARE(named[1].first, std::string("0.bias"));
  COMPARE(named[2].first, std::string("2.weight"));
  COMPARE(named[2].second.shape(), (Shape{2, 3}));
  COMPARE(net.num_parameters(), int64_t(4 * 3 + 3 + 3 * 2));
  for (const Tensor& p : net.parameters()) VERIFY(p.requires_grad() && p.is_leaf());
}

TEST(layerHandlesAreTheRegisteredTensors) {
  nn::Linear lin(3, 2);
  VERIFY(lin.named_parameters()[0].second.is_same(lin.weight));
  // An in-place update through the registry is what the layer computes with.
  {
    NoGradGuard g;
    lin.parameters()[0].fill_(0.f);
    lin.parameters()[1].fill_(1.f);
  }
  const Tensor y = lin(ones({5, 3}));
  COMPARE(y.shape(), (Shape{5, 2}));
  for (float v : y.to_vector()) COMPARE(v, 1.f);
}

TEST(duplicateAndInvalidNamesAreRejected) {
  struct Twice : nn::Module {
    Twice() {
      register_parameter("w", zeros({1}));
      register_buffer("w", zeros({1}));
    }
    Tensor forward(const Tensor& x) override { return x; }
    std::string type_name() const override { return "Twice"; }
  };
  VERIFY_THROWS(ValueError, Twice());
  nn::Sequential s;
  VERIFY_THROWS(ValueError, s.add("a.b", std::make_shared<nn::ReLU>()));
  VERIFY_THROWS(ValueError, s.add(nullptr));
}

TEST(initialisationMatchesPyTorchBounds) {
  Generator gen(3);
  nn::Linear lin(400, 300, true, &gen);
  const float bound = 1.f / std::sqrt(400.f);
  float lo = 1e9f, hi = -1e9f;
  for (float v : lin.weight.to_vector()) lo = std::min(lo, v), hi = std::max(hi, v);
  VERIFY(lo >= -bound && hi <= bound);
  VERIFY(lo < -0.95f * bound && hi > 0.95f * bound);  // fills the range
  for (float v : lin.bias.to_vector()) VERIFY(std::fabs(v) <= bound);

  nn::Conv2d conv(6, 16, 5, {}, true, &gen);  // fan_in = 6*5*5
  const float cb = 1.f / std::sqrt(150.f);
  for (float v : conv.weight.to_vector()) VERIFY(std::fabs(v) <= cb);
  COMPARE(conv.weight.shape(), (Shape{16, 6, 5, 5}));
}

TEST(seededInitialisationIsReproducible) {
  Generator a(11), b(11), c(12);
  nn::Linear la(5, 4, true, &a), lb(5, 4, true, &b), lc(5, 4, true, &c);
  COMPARE(la.weight.to_vector(), lb.weight.to_vector());
  VERIFY(la.weight.to_vector() != lc.weight.to_vector());
}

TEST(trainEvalReachesChildren) {
  auto drop = std::make_shared<nn::Dropout>(0.5f);
  auto bn = std::make_shared<nn::BatchNorm1d>(3);
  nn::Sequential net{std::make_shared<nn::Linear>(3, 3), bn, drop};
  net.eval();
  VERIFY(!drop->is_training() && !bn->is_training());
  const Tensor x = randn({8, 3});
  COMPARE(drop->forward(x).to_vector(), x.to_vector());  // eval dropout = identity
  net.train();
  VERIFY(drop->is_training() && bn->is_training());
  const std::vector<float> y = drop->forward(ones({1000})).to_vector();
  int zeros_seen = 0;
  for (float v : y) {
    VERIFY(v == 0.f || std::fabs(v - 2.f) < 1e-6f);  // survivors scaled by 1/(1-p)
    zeros_seen += v == 0.f;
  }
  VERIFY(zeros_seen > 400 && zeros_seen < 600);
}

TEST(batchNormUpdatesRunningStatsOnlyInTraining) {
  nn::BatchNorm2d bn(2);
  const Tensor x = randn({4, 2, 3, 3}) * 3.f + 5.f;
  bn(x);
  COMPARE(bn.num_batches_tracked.item(), 1.f);
  const std::vector<float> mean_after = bn.running_mean.to_vector();
  const std::vector<float> batch_mean = mean(x, {0, 2, 3}).to_vector();
  for (int c = 0; c < 2; ++c) VERIFY(std::fabs(mean_after[c] - 0.1f * batch_mean[c]) < 1e-5f);
  COMPARE(bn.named_buffers().size(), size_t(3));
  bn.eval();
  bn(x);
  COMPARE(bn.running_mean.to_vector(), mean_after);
  COMPARE(bn.num_batches_tracked.item(), 1.f);
  VERIFY_THROWS(ShapeError, bn(randn({4, 3, 3, 3})));
}

// PyTorch's flags: no weight and bias without affine; without track_running_stats no buffers,
// and the batch's statistics normalise in eval too.
TEST(batchNormWithoutAffineOrRunningStats) {
  nn::BatchNorm1d bn(3, 1e-5f, 0.1f, /*affine=*/false, /*track_running_stats=*/false);
  VERIFY(bn.named_parameters().empty());
  VERIFY(bn.named_buffers().empty());
  const Tensor x = randn({6, 3}) * 2.f + 1.f;
  const std::vector<float> trained = bn(x).to_vector();
  bn.eval();
  COMPARE(bn(x).to_vector(), trained);
  COMPARE(bn(x).to_vector(), batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true).to_vector());
}

// The normalisation modules under PyTorch's names and defaults; InstanceNorm2d keeps running
// statistics only when asked, and then uses them in eval.
TEST(groupInstanceAndRmsNormModules) {
  nn::GroupNorm gn(2, 4);
  COMPARE(gn.named_parameters().size(), size_t(2));
  const Tensor x = randn({3, 4, 2, 5}) * 2.f + 1.f;
  COMPARE(gn(x).to_vector(), group_norm(x, 2, Tensor(), Tensor()).to_vector());  // weight ones, bias zeros
  VERIFY_THROWS(ShapeError, gn(randn({3, 6, 2})));
  VERIFY_THROWS(ValueError, nn::GroupNorm(3, 4));

  nn::InstanceNorm2d plain(4);
  VERIFY(plain.named_parameters().empty() && plain.named_buffers().empty());
  plain.eval();  // without running statistics eval uses the instance's own
  COMPARE(plain(x).to_vector(), group_norm(x, 4, Tensor(), Tensor()).to_vector());

  nn::InstanceNorm2d tracked(4, 1e-5f, 0.1f, /*affine=*/true, /*track_running_stats=*/true);
  COMPARE(tracked.named_parameters().size(), size_t(2));
  COMPARE(tracked.named_buffers().size(), size_t(3));  // running_mean, running_var, num_batches_tracked
  tracked(x);
  const std::vector<float> m = tracked.running_mean.to_vector(), instance = mean(mean(x, {2, 3}), {0}).to_vector();
  for (size_t c = 0; c < 4; ++c) VERIFY(std::fabs(m[c] - 0.1f * instance[c]) < 1e-5f);
  tracked.eval();
  COMPARE(tracked(x).to_vector(),
          batch_norm(x, tracked.running_mean, tracked.running_var, Tensor(), Tensor(), false).to_vector());
  VERIFY_THROWS(ShapeError, tracked(randn({3, 4, 5})));

  nn::RMSNorm rms(5);
  COMPARE(rms.named_parameters().size(), size_t(1));
  const Tensor r = rms(x).view({24, 5});
  for (int64_t row = 0; row < 24; ++row) {  // each row's mean square is 1 (up to eps)
    const float ms = mean(r.narrow(0, row, 1) * r.narrow(0, row, 1)).item();
    VERIFY(std::fabs(ms - 1.f) < 1e-5f);
  }
  VERIFY(nn::RMSNorm(5, 1e-6f, false).named_parameters().empty());
}

TEST(embeddingPicksRows) {
  nn::Embedding emb(10, 4);
  const Tensor idx = from_vector({1, 7, 1, 0, 9, 3}, {2, 3});
  const Tensor y = emb(idx);
  COMPARE(y.shape(), (Shape{2, 3, 4}));
  for (int j = 0; j < 4; ++j) COMPARE(y.at({0, 1, j}), emb.weight.at({7, j}));
  VERIFY_THROWS(IndexError, emb(from_vector({10}, {1})));
  // Gradients accumulate per row, twice for the repeated index 1.
  y.sum().backward();
  COMPARE(emb.weight.grad().at({1, 0}), 2.f);
  COMPARE(emb.weight.grad().at({2, 0}), 0.f);
}

TEST(lenetShapesAndParameterCount) {
  nn::Sequential lenet{std::make_shared<nn::Conv2d>(1, 20, 5), std::make_shared<nn::ReLU>(),
                       std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Conv2d>(20, 50, 5),
                       std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2),
                       std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(800, 500),
                       std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(500, 10)};
  COMPARE(lenet(zeros({2, 1, 28, 28})).shape(), (Shape{2, 10}));
  COMPARE(lenet.num_parameters(), int64_t(520 + 25050 + 400500 + 5010));
  const std::string repr = lenet.str();
  VERIFY2(testing::contains(repr, "(0): Conv2d(in=1, out=20, kernel=5x5"), repr);
  VERIFY2(testing::contains(repr, "(9): Linear(in=500, out=10, bias=true)"), repr);
}

TEST(zeroGradClearsEveryParameter) {
  nn::Sequential net{std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::Tanh>(),
                     std::make_shared<nn::Linear>(4, 1)};
  net(randn({5, 3})).sum().backward();
  for (const Tensor& p : net.parameters()) VERIFY(p.grad().defined());
  net.zero_grad();
  for (const Tensor& p : net.parameters()) VERIFY(!p.grad().defined());
}

TEST(functionalLinearChecksShapes) {
  const Tensor w = randn({3, 4});
  VERIFY_THROWS(ShapeError, F::linear(randn({2, 5}), w));
  COMPARE(F::linear(randn({6, 2, 4}), w, zeros({3})).shape(), (Shape{6, 2, 3}));
}

TEST(moduleGradientsMatchNumerical) {
  Generator gen(5);
  nn::Linear lin(4, 3, true, &gen);
  nn::Conv2d conv(2, 3, 3, {.pad_h = 1, .pad_w = 1}, true, &gen);
  const Tensor x = randn({2, 4}, &gen), img = randn({1, 2, 4, 4}, &gen);
  VERIFY(gradcheck([&](const std::vector<Tensor>&) { return tanh(lin(x)); }, {lin.weight, lin.bias}).ok);
  VERIFY(gradcheck([&](const std::vector<Tensor>&) { return conv(img); }, {conv.weight, conv.bias}).ok);
}

// padding="same": the output keeps the input's size; an odd total of zeros (an even kernel, or
// dilation) puts the extra one at the end, so the output is the symmetric padding's one larger
// output without its first row and column, as PyTorch's. Gradients reach the input through it.
TEST(samePaddingKeepsTheSizeWithTheOddZeroAtTheEnd) {
  const auto near = [](const Tensor& a, const Tensor& b) {
    const std::vector<float> u = a.to_vector(), v = b.contiguous().to_vector();
    if (u.size() != v.size()) return false;
    for (size_t i = 0; i < u.size(); ++i)
      if (std::abs(u[i] - v[i]) > 1e-5f * std::max(1.f, std::abs(v[i]))) return false;
    return true;
  };
  Generator gen(7);
  // kernel 4 (3 zeros: 1 on top, 2 at the bottom); kernel 2 with dilation 3 (1 left, 2 right)
  nn::Conv2d conv(2, 3, 4, 2, {.dilation_w = 3}, true, &gen, nn::Padding::Same);
  nn::Conv2d symmetric(2, 3, 4, 2, {.pad_h = 2, .pad_w = 2, .dilation_w = 3}, true, &gen);
  {
    NoGradGuard no_grad;
    symmetric.weight.copy_(conv.weight);
    symmetric.bias.copy_(conv.bias);
  }
  const Tensor x = randn({2, 2, 5, 6}, &gen).requires_grad_();
  const Tensor y = conv(x);
  COMPARE(y.shape(), (Shape{2, 3, 5, 6}));
  const Tensor want = narrow(narrow(symmetric(x), 2, 1, 5), 3, 1, 6);
  VERIFY(near(y, want));
  VERIFY(gradcheck([&](const std::vector<Tensor>&) { return tanh(conv(x)); }, {x, conv.weight, conv.bias}).ok);
  VERIFY2(testing::contains(conv.extra_repr(), "padding=1x1+1x1"), conv.extra_repr());

  nn::Conv1d line(2, 2, 4, {}, false, &gen, nn::Padding::Same);
  nn::Conv1d line_symmetric(2, 2, 4, {.pad = 2}, false, &gen);
  {
    NoGradGuard no_grad;
    line_symmetric.weight.copy_(line.weight);
  }
  const Tensor s = randn({1, 2, 7}, &gen).requires_grad_();
  COMPARE(line(s).shape(), (Shape{1, 2, 7}));
  VERIFY(near(line(s), narrow(line_symmetric(s), 2, 1, 7)));
  VERIFY(gradcheck([&](const std::vector<Tensor>&) { return tanh(line(s)); }, {s, line.weight}).ok);

  // Odd spans pad evenly, with no copy of the input.
  nn::Conv2d odd(2, 3, 3, 5, {}, true, &gen, nn::Padding::Same);
  COMPARE(odd.options().pad_h, int64_t(1));
  COMPARE(odd.options().pad_w, int64_t(2));
  COMPARE(odd(x).shape(), (Shape{2, 3, 5, 6}));

  // PyTorch refuses it with a stride: the output could not keep the size.
  const std::string strided =
      testing::message_of<ValueError>([&] { nn::Conv2d(2, 3, 3, 3, {.stride_h = 2}, true, &gen, nn::Padding::Same); });
  VERIFY2(testing::contains(strided, "Conv2d: padding=\"same\" needs stride 1, got stride 2"), strided);
}

// Each activation module computes its op; PReLU learns "weight" [num_parameters], 0.25 at the
// start, one slope for all or one per channel (dim 1), as PyTorch's.
TEST(activationModules) {
  Generator gen(9);
  const Tensor x = randn({2, 3, 4}, &gen);
  const std::pair<std::shared_ptr<nn::Module>, Tensor> cases[] = {
      {std::make_shared<nn::ELU>(0.5f), elu(x, 0.5f)}, {std::make_shared<nn::SELU>(), selu(x)},
      {std::make_shared<nn::SiLU>(), silu(x)},         {std::make_shared<nn::Mish>(), mish(x)},
      {std::make_shared<nn::Hardswish>(), hardswish(x)}, {std::make_shared<nn::Hardsigmoid>(), hardsigmoid(x)}};
  for (const auto& [m, want] : cases) COMPARE((*m)(x).to_vector(), want.to_vector());

  nn::PReLU shared, per_channel(3);
  COMPARE(shared.named_parameters().size(), size_t(1));
  COMPARE(shared.named_parameters()[0].first, std::string("weight"));
  COMPARE(shared.weight.to_vector(), std::vector<float>{0.25f});
  COMPARE(per_channel.weight.to_vector(), std::vector<float>(3, 0.25f));
  {
    NoGradGuard g;
    per_channel.weight.copy_(from_vector({0.5f, -1.f, 2.f}, {3}));
  }
  COMPARE(per_channel(x).to_vector(), prelu(x, from_vector({0.5f, -1.f, 2.f}, {3})).to_vector());
  VERIFY(gradcheck([&](const std::vector<Tensor>&) { return per_channel(x); }, {per_channel.weight}).ok);
  VERIFY_THROWS(ShapeError, nn::PReLU(4)(x));  // x has 3 channels
  VERIFY_THROWS(ValueError, nn::PReLU(0));
}

TEST(moveToSameDeviceKeepsHandles) {
  nn::Linear lin(2, 2);
  const Tensor w = lin.weight;
  lin.to(Device::cpu());
  VERIFY(w.is_same(lin.weight));
  VERIFY_THROWS(DeviceError, lin.to(Device::cuda()));
}

