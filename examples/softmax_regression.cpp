// Softmax regression (multinomial logistic regression) with the raw tensor/autograd API,
// the second example of the Knet paper.
//
// We make 5 Gaussian blobs in 10 dimensions, 2000 points, and learn a linear classifier
// logits = X·W + b with the cross-entropy loss and minibatch SGD. Each epoch shuffles the
// data with a seeded generator and takes the minibatches with index_select.
//
// The class centres are drawn from N(0, 1) per coordinate and each point adds unit noise,
// so neighbouring classes overlap a little: a linear model cannot reach 100% (it ends near
// 92% on this draw, with a loss near 0.24).
// Pass criteria (return 1 otherwise): final training loss < 0.27 and training accuracy
// > 0.90. Without training the loss would be ln 5 = 1.61 and the accuracy about 0.2.
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "plexus.h"

using namespace plexus;

namespace {

// A random permutation of 0..n-1 (Fisher–Yates) as a float index tensor, the form
// index_select takes.
Tensor shuffled_indices(int64_t n, Generator& gen) {
  std::vector<float> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[size_t(i)] = float(i);
  for (int64_t i = n - 1; i > 0; --i) std::swap(perm[size_t(i)], perm[size_t(gen.next_u64() % uint64_t(i + 1))]);
  return from_vector(perm, {n});
}

// Fraction of rows whose largest logit is the target class.
float accuracy(const Tensor& logits, const Tensor& labels) {
  return eq(argmax(logits, 1), labels).mean().item();
}

}  // namespace

int main() {
  const int64_t n = 2000, d = 10, classes = 5;
  const int64_t batch = 100;
  const int epochs = 20;
  const float lr = 0.1f;
  const float loss_threshold = 0.27f, accuracy_threshold = 0.90f;

  // ---- data: Gaussian blobs -------------------------------------------------------------
  Generator gen(7);
  const Tensor centres = randn({classes, d}, &gen);  // one centre per class, [5, 10]
  // Labels 0..4 in turn, stored as floats (the index type of the core).
  std::vector<float> label_values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) label_values[size_t(i)] = float(i % classes);
  const Tensor labels = from_vector(label_values, {n});                  // [2000]
  const Tensor X = index_select(centres, 0, labels) + randn({n, d}, &gen);  // [2000, 10]

  // ---- parameters ----------------------------------------------------------------------
  Tensor W = zeros({d, classes});
  W.requires_grad_();
  Tensor b = zeros({classes});
  b.requires_grad_();

  // ---- training loop -------------------------------------------------------------------
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    const Tensor order = shuffled_indices(n, gen);  // a new order every epoch
    double loss_sum = 0;
    for (int64_t start = 0; start < n; start += batch) {
      // The minibatch: the next `batch` indices of the shuffled order.
      const Tensor idx = order.narrow(0, start, std::min(batch, n - start));
      const Tensor xb = index_select(X, 0, idx), yb = index_select(labels, 0, idx);

      // Forward and backward: cross_entropy takes raw logits and class indices.
      const Tensor loss = cross_entropy(matmul(xb, W) + b, yb);
      loss.backward();

      // SGD step, not recorded; then clear the accumulated gradients.
      {
        NoGradGuard no_grad;
        W.add_(W.grad(), -lr);
        b.add_(b.grad(), -lr);
        W.set_grad(Tensor());
        b.set_grad(Tensor());
      }
      loss_sum += loss.item() * double(idx.numel());
    }
    if (epoch == 1 || epoch % 5 == 0) {
      NoGradGuard no_grad;
      std::printf("epoch %2d  mean minibatch loss %.4f  training accuracy %.4f\n", epoch, loss_sum / double(n),
                  accuracy(matmul(X, W) + b, labels));
    }
  }

  // ---- check the result on the whole training set ---------------------------------------
  NoGradGuard no_grad;
  const Tensor logits = matmul(X, W) + b;
  const float final_loss = cross_entropy(logits, labels).item();
  const float final_acc = accuracy(logits, labels);
  const bool loss_ok = final_loss < loss_threshold, acc_ok = final_acc > accuracy_threshold;
  std::printf("final loss %.4f %s threshold %.2f: %s\n", final_loss, loss_ok ? "<" : ">=", loss_threshold,
              loss_ok ? "PASS" : "FAIL");
  std::printf("final accuracy %.4f %s threshold %.2f: %s\n", final_acc, acc_ok ? ">" : "<=", accuracy_threshold,
              acc_ok ? "PASS" : "FAIL");
  return loss_ok && acc_ok ? 0 : 1;
}
