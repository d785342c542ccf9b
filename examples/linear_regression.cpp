// Linear regression with the raw tensor/autograd API (the first example of the Knet paper).
//
// We make a synthetic "housing-like" data set, 1000 samples with 13 features, from a known
// linear model plus Gaussian noise, then fit W and b by full-batch gradient descent on the
// mean squared error. No nn modules: the parameters are plain leaf tensors that require
// grad, and the update is written out by hand.
//
// Pass criteria (return 1 otherwise):
//   - final training loss < 0.012. The noise has standard deviation 0.1, so the best
//     achievable loss is about 0.1^2 = 0.01;
//   - every learned weight, and the bias, within 0.02 of the true value.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "plexus.h"

using namespace plexus;

int main() {
  const int64_t n = 1000, d = 13;      // samples, features
  const float noise_std = 0.1f;
  const int epochs = 100;
  const float lr = 0.1f;
  const float loss_threshold = 0.012f, weight_tolerance = 0.02f;

  // ---- data: y = X·w_true + b_true + noise -------------------------------------------------
  Generator gen(42);                             // seeded, so every run is the same
  const Tensor X = randn({n, d}, &gen);          // [1000, 13] features
  const Tensor w_true = randn({d, 1}, &gen);     // [13, 1] the weights to recover
  const float b_true = 0.5f;
  const Tensor y = matmul(X, w_true) + b_true + noise_std * randn({n, 1}, &gen);  // [1000, 1]

  // ---- parameters: leaves that collect gradients -----------------------------------------
  Tensor W = zeros({d, 1});
  W.requires_grad_();
  Tensor b = zeros({1});
  b.requires_grad_();

  // ---- training loop -------------------------------------------------------------------
  float final_loss = 0.f;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    // Forward: the prediction and the mean squared error. Autograd records the graph.
    const Tensor pred = matmul(X, W) + b;  // [1000, 1]; b broadcasts over the rows
    const Tensor loss = mse_loss(pred, y);

    // Backward: fills W.grad() and b.grad() (and frees the graph).
    loss.backward();

    // SGD step. The update itself must not be recorded, hence NoGradGuard. Gradients
    // accumulate across backward calls, so we clear them after using them.
    {
      NoGradGuard no_grad;
      W.add_(W.grad(), -lr);
      b.add_(b.grad(), -lr);
      W.set_grad(Tensor());
      b.set_grad(Tensor());
    }

    final_loss = loss.item();
    if (epoch == 1 || epoch % 10 == 0) std::printf("epoch %3d  loss %.5f\n", epoch, final_loss);
  }
  // `final_loss` is the loss just before the last update; report the loss after it too.
  {
    NoGradGuard no_grad;
    final_loss = mse_loss(matmul(X, W) + b, y).item();
  }

  // ---- check the result ----------------------------------------------------------------
  float max_w_err = 0.f;
  for (int64_t i = 0; i < d; ++i) max_w_err = std::max(max_w_err, std::fabs(W.at({i, 0}) - w_true.at({i, 0})));
  const float b_err = std::fabs(b.at({0}) - b_true);
  std::printf("learned b %.4f (true %.4f)\n", b.at({0}), b_true);
  std::printf("max |W - w_true| %.4f, |b - b_true| %.4f (tolerance %.2f)\n", max_w_err, b_err, weight_tolerance);

  const bool loss_ok = final_loss < loss_threshold;
  const bool weights_ok = max_w_err < weight_tolerance && b_err < weight_tolerance;
  std::printf("final loss %.5f %s threshold %.3f: %s\n", final_loss, loss_ok ? "<" : ">=", loss_threshold,
              loss_ok ? "PASS" : "FAIL");
  std::printf("weights within %.2f of the true ones: %s\n", weight_tolerance, weights_ok ? "PASS" : "FAIL");
  return loss_ok && weights_ok ? 0 : 1;
}
