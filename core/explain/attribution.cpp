#include "explain/attribution.h"

#include <algorithm>
#include <cmath>

#include "autograd/grad.h"
#include "autograd/grad_mode.h"
#include "explain/model_pass.h"
#include "explain/probe.h"
#include "explain/receptive_field.h"
#include "explain/resize.h"
#include "ops/ops.h"
#include "tensor/generator.h"

namespace plexus::explain {

namespace {

constexpr int64_t kPointsPerPass = 16;  // SmoothGrad's copies and the path's points run in batches of this many

constexpr std::pair<AttributionMethod, std::string_view> kMethodNames[] = {
    {AttributionMethod::Saliency, "saliency"},
    {AttributionMethod::GradientTimesInput, "gradient-x-input"},
    {AttributionMethod::SmoothGrad, "smoothgrad"},
    {AttributionMethod::IntegratedGradients, "integrated-gradients"},
    {AttributionMethod::GradCam, "gradcam"}};

// Records history for the scope whatever the calling thread's mode (a job thread may run without).
class GradOnScope {
 public:
  GradOnScope() : prev_(GradMode::enabled()) { GradMode::set_enabled(true); }
  ~GradOnScope() { GradMode::set_enabled(prev_); }
  GradOnScope(const GradOnScope&) = delete;
  GradOnScope& operator=(const GradOnScope&) = delete;

 private:
  bool prev_;
};

// The scores [N, K] an example's class is read from, of the model's prediction [N, ...]: a
// prediction per position (a text file's next character at each) explains its last position's.
Tensor score_rows(Tensor prediction) {
  while (prediction.dim() > 2) prediction = prediction.narrow(1, prediction.shape()[1] - 1, 1).squeeze(1);
  return prediction.dim() == 1 ? prediction.unsqueeze(1) : prediction;
}

bool takes_character_ids(const session::TrainedModel& model) {
  const std::string& kind = model.project.dataset.kind;
  return kind == "text" || kind == "text_classes";
}

// One explanation's passes through the model. The gradients are taken at a "point": the raw input
// batch, or for a model of character ids the output of its first Embedding node, which a replacer
// swaps for the point asked about (ids have no gradient).
class Explainer {
 public:
  Explainer(const session::TrainedModel& model, const Tensor& raw, const AttributionOptions& options)
      : model_(model), options_(options), x_(detail::one_example(model, raw)), scope_(model) {
    if (takes_character_ids(model)) {
      for (const auto& [name, module] : model.compiled.model->children())
        if (module->type_name() == "Embedding") {
          embedding_ = name;
          break;
        }
      if (embedding_.empty())
        throw ValueError(
            "the model takes character ids but has no Embedding node, where a text model's attributions "
            "are taken: none of the methods apply to it");
    }
    // The scores at the input: the class to explain, and the point (the Embedding's output).
    NoGradGuard no_grad;
    scope_.graph().set_observer([this](const std::string& node, const Tensor& output) {
      if (node == embedding_) point_ = output;
    });
    const Tensor rows = score_rows(scope_.graph()(detail::standardise(model.normalization, x_)));
    scope_.graph().set_observer(nullptr);
    if (embedding_.empty()) point_ = x_;
    const int64_t classes = rows.shape()[1];
    const std::vector<float> scores = rows.to_vector();
    if (options.target < -1 || options.target >= classes)
      throw ValueError("class " + std::to_string(options.target) + " is out of range: the model scores " +
                       std::to_string(classes) +
                       (classes == 1 ? " output (0)" : " outputs (0 to " + std::to_string(classes - 1) + ")"));
    target_ =
        options.target >= 0 ? options.target : int64_t(std::max_element(scores.begin(), scores.end()) - scores.begin());
    score_ = scores[size_t(target_)];
  }

  int64_t target() const { return target_; }
  float score() const { return score_; }
  const Tensor& point() const { return point_; }  // [1, ...]
  const Tensor& input() const { return x_; }      // [1, ...], raw
  bool text() const { return !embedding_.empty(); }

  // The target's score at each of `points` [n, point shape...] and its gradient there, [n, ...].
  struct Gradients {
    std::vector<float> scores;
    Tensor grads;
  };
  Gradients at(const Tensor& points) {
    Gradients out;
    std::vector<Tensor> parts;
    const int64_t n = points.shape()[0];
    for (int64_t start = 0; start < n; start += kPointsPerPass) {
      check_cancelled();
      const Tensor chunk = points.narrow(0, start, std::min(kPointsPerPass, n - start));
      const Tensor z = chunk.detach().clone().requires_grad_();
      Tensor scores, total;
      {
        GradOnScope grad_on;
        scores = target_scores(z);
        total = scores.sum();
      }
      for (float s : scores.to_vector()) out.scores.push_back(s);
      Tensor g = autograd::grad({total}, {z}, {}, false, true).at(0);
      parts.push_back(g.defined() ? g.detach() : zeros(z.shape()));  // an input the score does not read
    }
    out.grads = parts.size() == 1 ? parts[0] : concat(parts, 0);
    return out;
  }

  // Grad-CAM's feature maps [1, K, h, w] of `node` and the target score's gradient at them.
  std::pair<Tensor, Tensor> maps_and_gradient(const std::string& node) {
    check_cancelled();
    Tensor maps;
    std::vector<std::string> seen;
    scope_.graph().set_replacer([&](const std::string& id, const Tensor& output) {
      if (id == node) maps = output;
      seen.push_back(id);
      return Tensor();
    });
    Tensor score;
    {
      GradOnScope grad_on;
      // An input that requires grad records the maps' history even where no weight before them does (frozen).
      const Tensor x = x_.detach().clone().requires_grad_();
      score = score_rows(scope_.graph()(detail::standardise(model_.normalization, x))).narrow(1, target_, 1).sum();
    }
    scope_.graph().set_replacer(nullptr);
    if (!maps.defined()) detail::unknown_node(node, seen);
    if (maps.dim() != 4)
      throw ValueError("Grad-CAM needs a node whose output is picture-shaped [K, h, w]; node '" + node + "' gives " +
                       plexus::to_string(Shape(maps.shape().begin() + 1, maps.shape().end())));
    Tensor g = autograd::grad({score}, {maps}, {}, false, true).at(0);
    return {maps.detach(), g.defined() ? g.detach() : zeros(maps.shape())};
  }

  void check_cancelled() const {
    if (options_.cancelled && options_.cancelled->load()) throw Cancelled("the attribution was cancelled");
  }

 private:
  // The target's score [n] with the point z [n, ...] in the pass (history recorded: GradOnScope).
  Tensor target_scores(const Tensor& z) {
    Tensor input = z;
    if (text()) {
      input = x_.expand(Shape{z.shape()[0], x_.shape()[1]}).contiguous();
      scope_.graph().set_replacer(
          [this, &z](const std::string& node, const Tensor&) { return node == embedding_ ? z : Tensor(); });
    }
    const Tensor rows = score_rows(scope_.graph()(detail::standardise(model_.normalization, input)));
    scope_.graph().set_replacer(nullptr);
    return rows.narrow(1, target_, 1).squeeze(1);
  }

  const session::TrainedModel& model_;
  const AttributionOptions& options_;
  Tensor x_;
  detail::ModelScope scope_;
  std::string embedding_;  // a text model's first Embedding node
  Tensor point_;
  int64_t target_ = 0;
  float score_ = 0;
};

// `points` copies of the point [1, ...] stacked: [n, ...].
Tensor repeated(const Tensor& point, int64_t n) {
  Shape shape = point.shape();
  shape[0] = n;
  return point.expand(shape).contiguous();
}

}  // namespace

std::string_view method_name(AttributionMethod method) {
  for (const auto& [m, name] : kMethodNames)
    if (m == method) return name;
  return "";
}

std::optional<AttributionMethod> parse_method(std::string_view name) {
  for (const auto& [m, n] : kMethodNames)
    if (n == name) return m;
  return std::nullopt;
}

Attribution attribute(const session::TrainedModel& model, const Tensor& raw, const AttributionOptions& options) {
  Explainer e(model, raw, options);
  Attribution a;
  a.method = options.method;
  a.target = e.target();
  a.score = e.score();
  NoGradGuard no_grad;  // the arithmetic on gradients below records nothing
  // A gradient-like tensor [1, ...] at the point as one value per input value: a text model's
  // summed over each position's embedding features.
  auto per_input = [&e](const Tensor& t) { return e.text() ? t.sum({2}).squeeze(0) : t.squeeze(0); };
  const Tensor& point = e.point();
  switch (options.method) {
    case AttributionMethod::Saliency:
      a.values = per_input(e.at(point).grads);
      break;
    case AttributionMethod::GradientTimesInput:
      a.values = per_input(e.at(point).grads * point);
      break;
    case AttributionMethod::SmoothGrad: {
      if (options.samples < 1)
        throw ValueError("SmoothGrad needs at least 1 sample, got " + std::to_string(options.samples));
      const std::vector<float> v = point.to_vector();
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      const float sigma = float(options.noise) * (*hi - *lo);
      Generator gen(options.seed);
      const Tensor copies = repeated(point, options.samples);
      const Tensor noisy = copies + randn(copies.shape(), &gen) * sigma;
      a.values = per_input(e.at(noisy).grads.mean({0}, true));
      break;
    }
    case AttributionMethod::IntegratedGradients: {
      if (options.steps < 2)
        throw ValueError("integrated gradients need at least 2 steps, got " + std::to_string(options.steps));
      // alpha_i = i / (m - 1) from the baseline (zeros) to the point; the trapezoid rule's weights.
      const int64_t m = options.steps;
      std::vector<float> alphas, weights;
      for (int64_t i = 0; i < m; ++i) {
        alphas.push_back(float(i) / float(m - 1));
        weights.push_back((i == 0 || i == m - 1 ? 0.5f : 1.f) / float(m - 1));
      }
      Shape per_point(size_t(point.dim()), 1);
      per_point[0] = m;
      const Explainer::Gradients path = e.at(repeated(point, m) * from_vector(alphas, per_point));
      const Tensor mean_gradient = (path.grads * from_vector(weights, per_point)).sum({0}, true);
      a.values = per_input(mean_gradient * point);
      a.baseline_score = path.scores.front();
      break;
    }
    case AttributionMethod::GradCam: {
      if (e.input().dim() != 4)
        throw ValueError("Grad-CAM needs a picture input [C, H, W]; the model takes " +
                         plexus::to_string(model.info.input_shape));
      a.node = options.node;
      if (a.node.empty()) {
        const std::vector<std::string> candidates = picture_nodes(model);
        if (candidates.empty())
          throw ValueError(
              "Grad-CAM needs a node whose output is picture-shaped [K, h, w]; "
              "the model has none");
        a.node = candidates.back();
      }
      const auto [maps, gradient] = e.maps_and_gradient(a.node);
      const Tensor alpha = gradient.mean({2, 3}, true);     // [1, K, 1, 1]
      a.values = relu((alpha * maps).sum({1})).squeeze(0);  // [h, w]
      const Shape& in = model.info.input_shape;
      const int64_t h = a.values.shape()[0], w = a.values.shape()[1];
      const std::optional<Placement> placed = cell_placement(model.project, a.node);
      a.stretched = !placed;
      a.heat = place_bilinear(a.values, in[1], in[2],
                              placed.value_or(Placement{stretched(h, in[1]), stretched(w, in[2])}));
      return a;
    }
  }
  if (e.text())
    a.heat = abs(a.values);
  else
    a.heat = a.values.dim() == 3 ? abs(a.values).sum({0}) : abs(a.values);
  return a;
}

}  // namespace plexus::explain
