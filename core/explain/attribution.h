#pragma once
// Attributions: which parts of one input made a trained model give a class its score. Each
// method differentiates the class's score (the logit before any softmax; a regression's output
// value) with autograd::grad, in raw input units (session/trained_model.h: the gradient through
// the model's standardisation), as Captum and Selvaraju et al. define them:
// - saliency: d score / d input (Simonyan et al. 2014), signed;
// - gradient × input: d score / d input · input;
// - SmoothGrad: the saliency averaged over `samples` copies of the input with Gaussian noise of
//   std `noise` × (max - min of the input) (Smilkov et al. 2017);
// - integrated gradients: (input - baseline) · the mean gradient along the straight path from the
//   baseline (all zeros in raw units: a black picture) to the input, `steps` points on the
//   trapezoid rule (Sundararajan et al. 2017); their sum is score(input) - score(baseline) up to
//   the quadrature error;
// - Grad-CAM: ReLU(Σ_k α_k A_k) over the feature maps A [K, h, w] of a node with a picture-shaped
//   output, α_k the spatial mean of d score / d A_k (Selvaraju et al. 2017); its heat puts each
//   cell on the centre of the cell's receptive field (explain/receptive_field.h), or stretches the
//   map over the picture where the path to the node cannot be placed.
// For a model of character ids (a labelled-text classifier) the gradients are taken at the output
// of the model's first Embedding node instead of the ids, and each position's attribution is the
// sum over the embedding's features (integrated gradients interpolate that output from zeros).
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "session/trained_model.h"
#include "tensor/tensor.h"
#include "util/error.h"

namespace plexus::explain {

// A computation stopped by its `cancelled` flag.
class Cancelled : public Error {
 public:
  using Error::Error;
};

enum class AttributionMethod { Saliency, GradientTimesInput, SmoothGrad, IntegratedGradients, GradCam };

// "saliency", "gradient-x-input", "smoothgrad", "integrated-gradients", "gradcam": the CLI's
// --method values and the words the GUI shows next to them.
std::string_view method_name(AttributionMethod method);
std::optional<AttributionMethod> parse_method(std::string_view name);

struct AttributionOptions {
  AttributionMethod method = AttributionMethod::Saliency;
  int64_t target = -1;   // class (or regression output) whose score is explained; -1: the top-scoring one
  std::string node{};    // Grad-CAM's node; empty: the last node before the head whose output is [K, h, w]
  int64_t samples = 50;  // SmoothGrad's noisy copies
  double noise = 0.15;   // SmoothGrad's noise std, a fraction of the input's range
  int64_t steps = 64;    // integrated gradients' path points
  uint64_t seed = 0;     // SmoothGrad's noise
  const std::atomic<bool>* cancelled = nullptr;  // checked between passes (explain::Cancelled)
};

struct Attribution {
  AttributionMethod method = AttributionMethod::Saliency;
  int64_t target = 0;  // the class explained (the top one when options.target was -1)
  float score = 0;     // the model's score of it at the input
  // Signed, one per input value: the raw input's shape ([C, H, W]; [T] for character ids). Grad-CAM:
  // the node's [h, w] map before upsampling.
  Tensor values;
  // What a heat map shows, ≥ 0: [H, W] over a picture (|values| summed over channels; Grad-CAM's
  // map sampled bilinearly where its cells look, or stretched: see `stretched`), or [T] per
  // character. Not normalised.
  Tensor heat;
  // Grad-CAM: the map stretched over the whole picture, as F.interpolate does, because a node on
  // the path to it (adaptive pooling, upsampling, a reshape, differently placed merged inputs)
  // leaves its cells' receptive fields unknown.
  bool stretched = false;
  float baseline_score = 0;  // integrated gradients: the score at the baseline
  std::string node;          // Grad-CAM: the node used
};

// One raw example (the input shape, no batch dimension) explained with `model` (its weights are
// not changed; it runs in eval mode). ValueError for a target out of range, a Grad-CAM node
// that is unknown or not picture-shaped (naming it and its output shape), or a model none of the
// methods apply to; ShapeError for an input of the wrong shape (expected vs got); Cancelled once
// options.cancelled is set.
Attribution attribute(const session::TrainedModel& model, const Tensor& raw, const AttributionOptions& options);

}  // namespace plexus::explain
