// The Loss family. A loss node's `input` is the prediction and its `target` the dataset's
// labels (Input's y); it ends the model, and an exported model ends at its prediction.
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "ops/ops.h"

namespace plexus::layers {
namespace {

template <class P = NoParams>
Layer<P> loss_type(std::string name, std::string display, std::string description) {
  Layer<P> t = named<P>(std::move(name), "Loss", std::move(display), std::move(description));
  t.inputs = {{"input", "the prediction"}, {"target", "the labels: connect the Input's y"}};
  return t;
}

// Regression-style losses compare prediction and target element by element.
std::vector<Shape> elementwise_loss_rule(const graph::ShapeContext& c, const NoParams&) {
  const Shape &pred = c.inputs.at(0), &target = c.inputs.at(1);
  if (numel(pred) != numel(target))
    fail("input", c.node.label() + " compares the prediction " + batched(pred) + from(c, 0) + " with targets " +
                      batched(target) + from(c, 1) + ": they need the same number of values per example");
  return {};
}

// Prediction [N, 1] against targets [N] (a regression column) compares value by value.
Tensor match_target(const Tensor& pred, const Tensor& target) {
  return pred.shape() == target.shape() ? pred : pred.reshape(target.shape());
}

struct CrossEntropyParams {
  double label_smoothing;
};

}  // namespace

void add_loss_layers(Registrar& r) {
  {
    using P = CrossEntropyParams;
    auto t = loss_type<P>("CrossEntropy", "Cross-entropy loss",
                          "Classification: softmax over class scores against class labels.");
    t.params = {graph::param("label_smoothing", "Label smoothing", &P::label_smoothing, 0, 0, 1,
                             "The share of the target spread evenly over all classes.")};
    t.shape = [](const graph::ShapeContext& c, const P&) -> std::vector<Shape> {
      // Class scores last: [N, classes] against [N], or per position [N, T, classes] against [N, T].
      const Shape &pred = c.inputs.at(0), &target = c.inputs.at(1);
      if (pred.empty())
        fail("input", c.node.label() + " expects class scores [N, classes] (or [N, T, classes] per position) but "
                          "receives " + batched(pred) + from(c, 0));
      const Shape lead(pred.begin(), pred.end() - 1);
      if (target != lead)
        fail("target", c.node.label() + " scores " + batched(pred) + from(c, 0) + " against targets " + batched(target) +
                           from(c, 1) + ": it needs one class index per " +
                           (lead.empty() ? "example, targets [N]" : "position, targets " + batched(lead)));
      if (c.dataset && c.dataset->classes == 0)
        fail("target", c.node.label() + " needs class labels, but the dataset is a regression task (use MSE)");
      if (c.dataset && pred.back() != c.dataset->classes)
        fail("input", c.node.label() + " receives " + std::to_string(pred.back()) + " class scores" + from(c, 0) +
                          " but the dataset has " + std::to_string(c.dataset->classes) + " classes");
      return {};
    };
    t.classification = true;
    t.loss = [](const P& p) -> LossFunction {
      return [smoothing = float(p.label_smoothing)](const Tensor& pred, const Tensor& target) {
        return cross_entropy(pred, target, smoothing);
      };
    };
    r.add(std::move(t));
  }
  {
    auto t = loss_type("MSE", "Mean squared error", "Regression: mean of (prediction - target)².");
    t.shape = elementwise_loss_rule;
    t.loss = [](const NoParams&) -> LossFunction {
      return [](const Tensor& pred, const Tensor& target) { return mse_loss(match_target(pred, target), target); };
    };
    r.add(std::move(t));
  }
  {
    auto t = loss_type("BCEWithLogits", "Binary cross-entropy (logits)",
                       "Yes/no targets in [0, 1] against raw scores (a sigmoid is built in).");
    t.shape = elementwise_loss_rule;
    t.loss = [](const NoParams&) -> LossFunction {
      return [](const Tensor& pred, const Tensor& target) {
        return binary_cross_entropy_with_logits(match_target(pred, target), target);
      };
    };
    r.add(std::move(t));
  }
}

}  // namespace plexus::layers
