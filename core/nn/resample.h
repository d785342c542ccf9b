#pragma once
// Modules that resize images [N, C, H, W] without learning anything: Upsample, ZeroPad2d.
#include "nn/module.h"
#include "ops/ops.h"

namespace plexus::nn {

// Enlarges by whole factors, nearest or bilinear (PyTorch's nn.Upsample with scale_factor).
class Upsample : public Module {
 public:
  enum class Mode { Nearest, Bilinear };
  Upsample(int64_t scale_h, int64_t scale_w, Mode mode = Mode::Nearest, bool align_corners = false)
      : scale_h_(scale_h), scale_w_(scale_w), mode_(mode), align_corners_(align_corners) {}
  Tensor forward(const Tensor& x) override {
    return mode_ == Mode::Nearest ? upsample_nearest2d(x, scale_h_, scale_w_)
                                  : upsample_bilinear2d(x, scale_h_, scale_w_, align_corners_);
  }
  std::string type_name() const override { return "Upsample"; }
  std::string extra_repr() const override;

 private:
  int64_t scale_h_, scale_w_;
  Mode mode_;
  bool align_corners_;
};

class ZeroPad2d : public Module {
 public:
  ZeroPad2d(int64_t left, int64_t right, int64_t top, int64_t bottom)
      : left_(left), right_(right), top_(top), bottom_(bottom) {}
  Tensor forward(const Tensor& x) override { return zero_pad2d(x, left_, right_, top_, bottom_); }
  std::string type_name() const override { return "ZeroPad2d"; }
  std::string extra_repr() const override;

 private:
  int64_t left_, right_, top_, bottom_;
};

}  // namespace plexus::nn
