// The Loss family. A loss node's `input` is the prediction and its `target` the dataset's
// labels (Input's y) or, for a model that reconstructs its input (an autoencoder), the
// examples (Input's x). A graph may have several; it trains on their weighted sum, and an
// exported model ends at their predictions.
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "ops/ops.h"

namespace plexus::layers {
namespace {

template <class P = NoParams>
Layer<P> loss_type(std::string name, std::string display, std::string description) {
  Layer<P> t = named<P>(std::move(name), "Loss", std::move(display), std::move(description));
  t.inputs = {{"input", "the prediction"},
              {"target", "the labels (the Input's y), or the examples themselves (its x) for a reconstruction"}};
  return t;
}

// Regression-style losses compare prediction and target element by element.
void check_elementwise_loss(const graph::ShapeContext& c) {
  const Shape &pred = c.inputs.at(0), &target = c.inputs.at(1);
  if (numel(pred) != numel(target))
    fail("input", c.node.label() + " compares the prediction " + batched(pred) + from(c, 0) + " with targets " +
                      batched(target) + from(c, 1) + ": they need the same number of values per example");
}
template <class P>
std::vector<Shape> elementwise_loss_rule(const graph::ShapeContext& c, const P&) {
  check_elementwise_loss(c);
  return {};
}

// Classification losses take one row of `scores` per example (class scores last: [N, classes]
// against [N], or per position [N, T, classes] against [N, T]) and `weight`, one per class or none.
std::vector<Shape> class_scores_rule(const graph::ShapeContext& c, const std::string& scores,
                                     const std::vector<double>& weight) {
  const Shape &pred = c.inputs.at(0), &target = c.inputs.at(1);
  if (pred.empty())
    fail("input", c.node.label() + " expects " + scores + " [N, classes] (or [N, T, classes] per position) but receives " +
                      batched(pred) + from(c, 0));
  const Shape lead(pred.begin(), pred.end() - 1);
  if (target != lead)
    fail("target", c.node.label() + " scores " + batched(pred) + from(c, 0) + " against targets " + batched(target) +
                       from(c, 1) + ": it needs one class index per " +
                       (lead.empty() ? "example, targets [N]" : "position, targets " + batched(lead)));
  if (c.dataset && c.dataset->classes == 0)
    fail("target", c.node.label() + " needs class labels, but the dataset is a regression task (use MSE)");
  if (c.dataset && pred.back() != c.dataset->classes)
    fail("input", c.node.label() + " receives " + std::to_string(pred.back()) + " " + scores + from(c, 0) +
                      " but the dataset has " + std::to_string(c.dataset->classes) + " classes");
  if (!weight.empty() && int64_t(weight.size()) != pred.back())
    fail("", c.node.label() + " has " + std::to_string(weight.size()) + " class weights but receives " +
                 std::to_string(pred.back()) + " " + scores + from(c, 0) + ": it needs one weight per class, " +
                 std::to_string(pred.back()));
  return {};
}

// Prediction [N, 1] against targets [N] (a regression column) compares value by value.
Tensor match_target(const Tensor& pred, const Tensor& target) {
  return pred.shape() == target.shape() ? pred : pred.reshape(target.shape());
}

// The class weights as a tensor (undefined when none), moved to the prediction's device per use.
Tensor class_weight_tensor(const std::vector<double>& weight) {
  if (weight.empty()) return Tensor();
  return from_vector(std::vector<float>(weight.begin(), weight.end()), {int64_t(weight.size())});
}
Tensor on_device_of(const Tensor& weight, const Tensor& pred) {
  return weight.defined() && weight.device() != pred.device() ? weight.to(pred.device()) : weight;
}

struct CrossEntropyParams {
  double label_smoothing;
  std::vector<double> weight;
  int64_t ignore_index;
};
struct NllParams {
  std::vector<double> weight;
  int64_t ignore_index;
};
struct SmoothL1Params {
  double beta;
};
struct HuberParams {
  double delta;
};
struct KlDivParams {
  bool log_target;
};
struct BceWithLogitsParams {
  double pos_weight;
};

// The class-weight and ignore_index parameters CrossEntropy and NLL share, as PyTorch names them.
template <class P>
std::vector<graph::ParamField<P>> class_target_params() {
  return {graph::param("weight", "Class weights", &P::weight, {}, 0, graph::kBig,
                       "One weight per class scaling the loss of the examples of that class (empty = all 1); the "
                       "mean divides by the total weight of the targets counted, as PyTorch."),
          graph::param("ignore_index", "Ignored target", &P::ignore_index, -100, -graph::kBig, graph::kBig,
                       "Targets equal to this count for nothing, not even in the mean (padding of a sequence).")};
}

}  // namespace

const graph::ParamSpec& loss_weight_param() {
  static const graph::ParamSpec spec{"loss_weight", "Weight in the total", graph::ParamType::Float, 1.0, 0,
                                     graph::kBig, {},
                                     "What this loss counts for when the graph has several: training minimises the "
                                     "sum of every loss node's loss times its weight. 0 only reports it.", {}};
  return spec;
}

double loss_weight(const graph::Node& loss) {
  const graph::ParamValue& v = graph::param_value(loss, loss_weight_param());
  if (const int64_t* whole = std::get_if<int64_t>(&v)) return double(*whole);
  return std::get<double>(v);
}

void add_loss_layers(Registrar& r) {
  {
    using P = CrossEntropyParams;
    auto t = loss_type<P>("CrossEntropy", "Cross-entropy loss",
                          "Classification: softmax over class scores against class labels.");
    t.params = {graph::param("label_smoothing", "Label smoothing", &P::label_smoothing, 0, 0, 1,
                             "The share of the target spread evenly over all classes.")};
    for (auto& f : class_target_params<P>()) t.params.push_back(std::move(f));
    t.shape = [](const graph::ShapeContext& c, const P& p) { return class_scores_rule(c, "class scores", p.weight); };
    t.classification = true;
    t.loss = [](const P& p) -> LossFunction {
      return [smoothing = float(p.label_smoothing), weight = class_weight_tensor(p.weight),
              ignore = p.ignore_index](const Tensor& pred, const Tensor& target) {
        return cross_entropy(pred, target, smoothing, Reduction::Mean, on_device_of(weight, pred), ignore);
      };
    };
    r.add(std::move(t));
  }
  {
    using P = NllParams;
    auto t = loss_type<P>("NLL", "Negative log-likelihood loss",
                          "Classification: log-probabilities (after LogSoftmax) against class labels; minus the "
                          "log-probability of each target class.");
    t.params = class_target_params<P>();
    t.shape = [](const graph::ShapeContext& c, const P& p) { return class_scores_rule(c, "log-probabilities", p.weight); };
    t.classification = true;
    t.loss = [](const P& p) -> LossFunction {
      return [weight = class_weight_tensor(p.weight), ignore = p.ignore_index](const Tensor& pred, const Tensor& target) {
        return nll_loss(pred, target, Reduction::Mean, on_device_of(weight, pred), ignore);
      };
    };
    r.add(std::move(t));
  }
  {
    auto t = loss_type("MSE", "Mean squared error", "Regression: mean of (prediction - target)².");
    t.shape = elementwise_loss_rule<NoParams>;
    t.loss = [](const NoParams&) -> LossFunction {
      return [](const Tensor& pred, const Tensor& target) { return mse_loss(match_target(pred, target), target); };
    };
    r.add(std::move(t));
  }
  {
    auto t = loss_type("L1", "Mean absolute error", "Regression: mean of |prediction - target|.");
    t.shape = elementwise_loss_rule<NoParams>;
    t.loss = [](const NoParams&) -> LossFunction {
      return [](const Tensor& pred, const Tensor& target) { return l1_loss(match_target(pred, target), target); };
    };
    r.add(std::move(t));
  }
  {
    using P = SmoothL1Params;
    auto t = loss_type<P>("SmoothL1", "Smooth L1 loss",
                          "Regression: ½·d²/beta for differences d below beta, |d| - ½·beta beyond (less "
                          "sensitive to outliers than MSE).");
    t.params = {graph::param("beta", "Beta", &P::beta, 1, 0, graph::kBig,
                             "Where the loss turns from quadratic to linear; 0 is the L1 loss.")};
    t.shape = elementwise_loss_rule<P>;
    t.loss = [](const P& p) -> LossFunction {
      return [beta = float(p.beta)](const Tensor& pred, const Tensor& target) {
        return smooth_l1_loss(match_target(pred, target), target, Reduction::Mean, beta);
      };
    };
    r.add(std::move(t));
  }
  {
    using P = HuberParams;
    auto t = loss_type<P>("Huber", "Huber loss",
                          "Regression: ½·d² for differences d below delta, delta·(|d| - ½·delta) beyond.");
    t.params = {graph::param("delta", "Delta", &P::delta, 1, 1e-6, graph::kBig,
                             "Where the loss turns from quadratic to linear.")};
    t.shape = elementwise_loss_rule<P>;
    t.loss = [](const P& p) -> LossFunction {
      return [delta = float(p.delta)](const Tensor& pred, const Tensor& target) {
        return huber_loss(match_target(pred, target), target, Reduction::Mean, delta);
      };
    };
    r.add(std::move(t));
  }
  {
    using P = KlDivParams;
    auto t = loss_type<P>("KLDiv", "Kullback-Leibler divergence",
                          "Distributions: log-probabilities against a target distribution of the same shape, "
                          "Σ target·(log target - input) per example, averaged over the batch (PyTorch's "
                          "KLDivLoss with reduction 'batchmean'). Its targets come from a regression dataset, or are the "
                          "examples x themselves.");
    t.params = {graph::param("log_target", "Log target", &P::log_target, false,
                             "The targets are log-probabilities too.")};
    t.shape = [](const graph::ShapeContext& c, const P&) -> std::vector<Shape> {
      // The labels of a classification dataset are class indices, not distributions (its examples,
      // a reconstruction's target, may be).
      if (c.dataset && c.dataset->classes > 0 && c.inputs.at(1) == c.dataset->label_shape)
        fail("target", c.node.label() + " needs a target distribution per example, but the dataset's labels are "
                                        "class indices (a classification task): use NLL after LogSoftmax");
      check_elementwise_loss(c);
      return {};
    };
    t.loss = [](const P& p) -> LossFunction {
      return [log_target = p.log_target](const Tensor& pred, const Tensor& target) {
        const float batch = float(target.dim() > 0 ? target.shape()[0] : 1);
        return kl_div(match_target(pred, target), target, Reduction::Sum, log_target) / batch;
      };
    };
    r.add(std::move(t));
  }
  {
    using P = BceWithLogitsParams;
    auto t = loss_type<P>("BCEWithLogits", "Binary cross-entropy (logits)",
                          "Yes/no targets in [0, 1] against raw scores (a sigmoid is built in).");
    t.params = {graph::param("pos_weight", "Positive weight", &P::pos_weight, 1, 0, graph::kBig,
                             "Scales the loss of the positive targets (more than 1 favours recall), one number for "
                             "every output.")};
    t.shape = elementwise_loss_rule<P>;
    t.loss = [](const P& p) -> LossFunction {
      return [pos_weight = float(p.pos_weight)](const Tensor& pred, const Tensor& target) {
        return binary_cross_entropy_with_logits(match_target(pred, target), target, Reduction::Mean, pos_weight);
      };
    };
    r.add(std::move(t));
  }
}

}  // namespace plexus::layers
