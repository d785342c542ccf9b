#pragma once
// Shapes and strides are plain vectors of int64 (element counts, not bytes).
#include <cstdint>
#include <string>
#include <vector>

namespace plexus {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

int64_t numel(const Shape& shape);
Strides contiguous_strides(const Shape& shape);
std::string to_string(const Shape& shape);  // "[2, 3]"

// NumPy broadcasting of two shapes; `op` names the operation in the error message.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Maps a possibly negative dim into [0, ndim); throws IndexError naming `op` otherwise.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

// Sorted, de-duplicated, wrapped reduction dims; empty `dims` means every dim.
std::vector<int64_t> reduction_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op);

}  // namespace plexus
