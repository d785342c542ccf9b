#include "nn/resample.h"

namespace plexus::nn {

std::string Upsample::extra_repr() const {
  return "scale_factor=" + std::to_string(scale_h_) + "x" + std::to_string(scale_w_) +
         (mode_ == Mode::Nearest ? ", mode=nearest" : std::string(", mode=bilinear") +
                                                          (align_corners_ ? ", align_corners=true" : ""));
}

std::string ZeroPad2d::extra_repr() const {
  return "padding=[" + std::to_string(left_) + ", " + std::to_string(right_) + ", " + std::to_string(top_) + ", " +
         std::to_string(bottom_) + "]";
}

}  // namespace plexus::nn
