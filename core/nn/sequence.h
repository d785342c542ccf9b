#pragma once
// Sequences of padded examples: how long each one really is, and pooling a sequence to one
// vector. A batch of token ids [N, T] pads its shorter examples with id 0 after their tokens
// (the labelled-texts dataset does), so an example's length is its count of non-zero ids, and
// the positions from it on hold padding that pooling must not see.
#include <string>

#include "nn/module.h"

namespace plexus::nn {

enum class SequencePoolMode { Mean, Max, Last, First };

// "mean", "max", "last", "first"; ValueError for another name.
SequencePoolMode sequence_pool_mode(const std::string& name);

namespace functional {
// The length of each example of token ids [N, T] padded with 0 at the end: [N], whole numbers.
// Not differentiable (ids are not).
Tensor sequence_lengths(const Tensor& ids);

// x [N, T, E] -> [N, E] over each example's first lengths[n] positions (all T when `lengths`
// is undefined): their mean, their largest value per feature, or the last of them; or position 0
// whatever the length (a classification token's). An example of length 0 pools to zeros (but
// for first); lengths over T count as T.
Tensor sequence_pool(const Tensor& x, const Tensor& lengths, SequencePoolMode mode);
}  // namespace functional

class SequencePool : public Module {
 public:
  explicit SequencePool(SequencePoolMode mode) : mode_(mode) {}
  Tensor forward(const Tensor& x) override { return functional::sequence_pool(x, Tensor(), mode_); }
  Tensor forward(const Tensor& x, const Tensor& lengths) { return functional::sequence_pool(x, lengths, mode_); }
  std::string type_name() const override { return "SequencePool"; }
  std::string extra_repr() const override;

 private:
  SequencePoolMode mode_;
};

}  // namespace plexus::nn
