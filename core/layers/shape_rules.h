#pragma once
// What the family files' shape rules share: refusing an input in the messages' one wording,
// and the output size of a sliding window (convolution, pooling).
#include <cstdint>
#include <string>
#include <vector>

#include "graph/inference.h"
#include "graph/registry.h"
#include "tensor/shape.h"

namespace plexus::layers {

using graph::batched;  // "[N, 1, 28, 28]": how messages write a shape

// Refuses the node: the problem is shown at `port` ("" = the node) with `message` as is.
[[noreturn]] void fail(const std::string& port, const std::string& message);

inline const Shape& one_input(const graph::ShapeContext& c) { return c.inputs.at(0); }

// " from 'fc1'": where input i comes from, as messages end.
std::string from(const graph::ShapeContext& c, size_t i);

// Refuses an input that has not `rank` dimensions per example, naming the expected `layout`.
void require_rank(const graph::ShapeContext& c, size_t rank, const char* layout);

// The output size of a window sliding over `in` along `axis` (convolution or pooling), k taps
// of the whole `kernel` ("5x1 kernel") along it, checked: a kernel larger than the padded input
// is refused.
int64_t window_out(const graph::ShapeContext& c, int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dilation,
                   const char* axis, const std::string& kernel);

// The rule of a layer whose output has its input's shape, whatever its parameters.
inline constexpr auto same_shape = [](const graph::ShapeContext& c, const auto&) -> std::vector<Shape> {
  return {one_input(c)};
};

}  // namespace plexus::layers
