// Modules: registration and naming, recursion, train/eval, PyTorch-style initialisation,
// layer shapes and errors.
#include <QtTest>

#include <cmath>

#include "nn/layers.h"
#include "plexus.h"

using namespace plexus;

class TestNn : public QObject {
  Q_OBJECT

 private slots:
  void namedParametersAreDottedPathsInOrder() {
    nn::Sequential net{std::make_shared<nn::Linear>(4, 3), std::make_shared<nn::ReLU>(),
                       std::make_shared<nn::Linear>(3, 2, false)};
    const auto named = net.named_parameters();
    QCOMPARE(named.size(), size_t(3));
    QCOMPARE(QString::fromStdString(named[0].first), QString("0.weight"));
    QCOMPARE(QString::fromStdString(named[1].first), QString("0.bias"));
    QCOMPARE(QString::fromStdString(named[2].first), QString("2.weight"));
    QCOMPARE(named[2].second.shape(), (Shape{2, 3}));
    QCOMPARE(net.num_parameters(), int64_t(4 * 3 + 3 + 3 * 2));
    for (const Tensor& p : net.parameters()) QVERIFY(p.requires_grad() && p.is_leaf());
  }

  void layerHandlesAreTheRegisteredTensors() {
    nn::Linear lin(3, 2);
    QVERIFY(lin.named_parameters()[0].second.is_same(lin.weight));
    // An in-place update through the registry is what the layer computes with.
    {
      NoGradGuard g;
      lin.parameters()[0].fill_(0.f);
      lin.parameters()[1].fill_(1.f);
    }
    const Tensor y = lin(ones({5, 3}));
    QCOMPARE(y.shape(), (Shape{5, 2}));
    for (float v : y.to_vector()) QCOMPARE(v, 1.f);
  }

  void duplicateAndInvalidNamesAreRejected() {
    struct Twice : nn::Module {
      Twice() {
        register_parameter("w", zeros({1}));
        register_buffer("w", zeros({1}));
      }
      Tensor forward(const Tensor& x) override { return x; }
      std::string type_name() const override { return "Twice"; }
    };
    QVERIFY_THROWS_EXCEPTION(ValueError, Twice());
    nn::Sequential s;
    QVERIFY_THROWS_EXCEPTION(ValueError, s.add("a.b", std::make_shared<nn::ReLU>()));
    QVERIFY_THROWS_EXCEPTION(ValueError, s.add(nullptr));
  }

  void initialisationMatchesPyTorchBounds() {
    Generator gen(3);
    nn::Linear lin(400, 300, true, &gen);
    const float bound = 1.f / std::sqrt(400.f);
    float lo = 1e9f, hi = -1e9f;
    for (float v : lin.weight.to_vector()) lo = std::min(lo, v), hi = std::max(hi, v);
    QVERIFY(lo >= -bound && hi <= bound);
    QVERIFY(lo < -0.95f * bound && hi > 0.95f * bound);  // fills the range
    for (float v : lin.bias.to_vector()) QVERIFY(std::fabs(v) <= bound);

    nn::Conv2d conv(6, 16, 5, {}, true, &gen);  // fan_in = 6*5*5
    const float cb = 1.f / std::sqrt(150.f);
    for (float v : conv.weight.to_vector()) QVERIFY(std::fabs(v) <= cb);
    QCOMPARE(conv.weight.shape(), (Shape{16, 6, 5, 5}));
  }

  void seededInitialisationIsReproducible() {
    Generator a(11), b(11), c(12);
    nn::Linear la(5, 4, true, &a), lb(5, 4, true, &b), lc(5, 4, true, &c);
    QCOMPARE(la.weight.to_vector(), lb.weight.to_vector());
    QVERIFY(la.weight.to_vector() != lc.weight.to_vector());
  }

  void trainEvalReachesChildren() {
    auto drop = std::make_shared<nn::Dropout>(0.5f);
    auto bn = std::make_shared<nn::BatchNorm1d>(3);
    nn::Sequential net{std::make_shared<nn::Linear>(3, 3), bn, drop};
    net.eval();
    QVERIFY(!drop->is_training() && !bn->is_training());
    const Tensor x = randn({8, 3});
    QCOMPARE(drop->forward(x).to_vector(), x.to_vector());  // eval dropout = identity
    net.train();
    QVERIFY(drop->is_training() && bn->is_training());
    const std::vector<float> y = drop->forward(ones({1000})).to_vector();
    int zeros_seen = 0;
    for (float v : y) {
      QVERIFY(v == 0.f || std::fabs(v - 2.f) < 1e-6f);  // survivors scaled by 1/(1-p)
      zeros_seen += v == 0.f;
    }
    QVERIFY(zeros_seen > 400 && zeros_seen < 600);
  }

  void batchNormUpdatesRunningStatsOnlyInTraining() {
    nn::BatchNorm2d bn(2);
    const Tensor x = randn({4, 2, 3, 3}) * 3.f + 5.f;
    bn(x);
    QCOMPARE(bn.num_batches_tracked.item(), 1.f);
    const std::vector<float> mean_after = bn.running_mean.to_vector();
    const std::vector<float> batch_mean = mean(x, {0, 2, 3}).to_vector();
    for (int c = 0; c < 2; ++c) QVERIFY(std::fabs(mean_after[c] - 0.1f * batch_mean[c]) < 1e-5f);
    QCOMPARE(bn.named_buffers().size(), size_t(3));
    bn.eval();
    bn(x);
    QCOMPARE(bn.running_mean.to_vector(), mean_after);
    QCOMPARE(bn.num_batches_tracked.item(), 1.f);
    QVERIFY_THROWS_EXCEPTION(ShapeError, bn(randn({4, 3, 3, 3})));
  }

  void embeddingPicksRows() {
    nn::Embedding emb(10, 4);
    const Tensor idx = from_vector({1, 7, 1, 0, 9, 3}, {2, 3});
    const Tensor y = emb(idx);
    QCOMPARE(y.shape(), (Shape{2, 3, 4}));
    for (int j = 0; j < 4; ++j) QCOMPARE(y.at({0, 1, j}), emb.weight.at({7, j}));
    QVERIFY_THROWS_EXCEPTION(IndexError, emb(from_vector({10}, {1})));
    // Gradients accumulate per row, twice for the repeated index 1.
    y.sum().backward();
    QCOMPARE(emb.weight.grad().at({1, 0}), 2.f);
    QCOMPARE(emb.weight.grad().at({2, 0}), 0.f);
  }

  void lenetShapesAndParameterCount() {
    nn::Sequential lenet{std::make_shared<nn::Conv2d>(1, 20, 5), std::make_shared<nn::ReLU>(),
                         std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Conv2d>(20, 50, 5),
                         std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2),
                         std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(800, 500),
                         std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(500, 10)};
    QCOMPARE(lenet(zeros({2, 1, 28, 28})).shape(), (Shape{2, 10}));
    QCOMPARE(lenet.num_parameters(), int64_t(520 + 25050 + 400500 + 5010));
    const QString repr = QString::fromStdString(lenet.str());
    QVERIFY2(repr.contains("(0): Conv2d(in=1, out=20, kernel=5x5"), qPrintable(repr));
    QVERIFY2(repr.contains("(9): Linear(in=500, out=10, bias=true)"), qPrintable(repr));
  }

  void zeroGradClearsEveryParameter() {
    nn::Sequential net{std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::Tanh>(),
                       std::make_shared<nn::Linear>(4, 1)};
    net(randn({5, 3})).sum().backward();
    for (const Tensor& p : net.parameters()) QVERIFY(p.grad().defined());
    net.zero_grad();
    for (const Tensor& p : net.parameters()) QVERIFY(!p.grad().defined());
  }

  void functionalLinearChecksShapes() {
    const Tensor w = randn({3, 4});
    QVERIFY_THROWS_EXCEPTION(ShapeError, F::linear(randn({2, 5}), w));
    QCOMPARE(F::linear(randn({6, 2, 4}), w, zeros({3})).shape(), (Shape{6, 2, 3}));
  }

  void moduleGradientsMatchNumerical() {
    Generator gen(5);
    nn::Linear lin(4, 3, true, &gen);
    nn::Conv2d conv(2, 3, 3, {.pad_h = 1, .pad_w = 1}, true, &gen);
    const Tensor x = randn({2, 4}, &gen), img = randn({1, 2, 4, 4}, &gen);
    QVERIFY(gradcheck([&](const std::vector<Tensor>&) { return tanh(lin(x)); }, {lin.weight, lin.bias}).ok);
    QVERIFY(gradcheck([&](const std::vector<Tensor>&) { return conv(img); }, {conv.weight, conv.bias}).ok);
  }

  void moveToSameDeviceKeepsHandles() {
    nn::Linear lin(2, 2);
    const Tensor w = lin.weight;
    lin.to(Device::cpu());
    QVERIFY(w.is_same(lin.weight));
    QVERIFY_THROWS_EXCEPTION(DeviceError, lin.to(Device::cuda()));
  }
};

QTEST_APPLESS_MAIN(TestNn)
#include "test_nn.moc"
