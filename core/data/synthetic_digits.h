#pragma once
// Synthetic "digits", in memory or in MNIST's IDX format, for tests, benchmarks and demos that
// must not depend on a download: class c lights a 6x6 block at its own place (two rows of
// five), shifted by up to two pixels, over background noise. Easy for a small MLP, not trivially
// separable pixel by pixel. Deterministic for a given seed.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace plexus::data {

// `n` 28x28 examples in memory (every class, not in label order): the pixels image after image,
// row by row, and each image's class.
struct SyntheticDigits {
  std::vector<uint8_t> images;  // n * 28 * 28
  std::vector<int32_t> labels;  // n, 0..9
};
SyntheticDigits make_synthetic_digits(int64_t n, uint32_t seed);

// Writes <dir>/<prefix>-images-idx3-ubyte and <prefix>-labels-idx1-ubyte with `n` 28x28
// examples (every class, not in label order); returns their labels.
std::vector<int32_t> write_synthetic_digits_split(const std::filesystem::path& dir, const std::string& prefix,
                                                  int64_t n, uint32_t seed);

// The "train" and "t10k" splits in `dir` (created when missing): a folder a "mnist" dataset
// binding can point at.
void write_synthetic_digits(const std::filesystem::path& dir, int64_t train, int64_t test);

}  // namespace plexus::data
