#include "layers/shape_rules.h"

namespace plexus::layers {

void fail(const std::string& port, const std::string& message) { throw graph::ShapeProblem{port, message}; }

std::string from(const graph::ShapeContext& c, size_t i) { return " from " + c.input_sources.at(i); }

void require_rank(const graph::ShapeContext& c, size_t rank, const char* layout) {
  const Shape& s = one_input(c);
  if (s.size() != rank)
    fail("input", c.node.label() + " expects input " + layout + " but receives " + batched(s) + from(c, 0));
}

// Refused before dividing: integer division truncates toward zero, so the formula alone would
// give one output row for, e.g., a kernel of 5 over 4 rows with stride 2.
int64_t window_out(const graph::ShapeContext& c, int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dilation,
                   const char* axis, const std::string& kernel_text) {
  const int64_t span = dilation * (k - 1) + 1;  // parameters are range-checked: no overflow
  if (in + 2 * pad < span) {
    const std::string kernel =
        kernel_text +
        (dilation > 1 ? " with dilation " + std::to_string(dilation) + " (spanning " + std::to_string(span) + ")" : "");
    const std::string size = std::to_string(in) + (pad ? " + 2x" + std::to_string(pad) + " padding" : "");
    fail("input", c.node.label() + ": its " + kernel + " is larger than the " + axis + " (" + size + ") of input " +
                      batched(one_input(c)) + from(c, 0) + " (use a smaller kernel" + (pad ? "" : " or add padding") +
                      ")");
  }
  return (in + 2 * pad - span) / stride + 1;
}

}  // namespace plexus::layers
