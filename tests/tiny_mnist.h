#pragma once
// A tiny MNIST-format dataset the GUI tests write for themselves: class c lights a 6x6 block at
// its own place (two rows of five), shifted by up to two pixels, over background noise. Easy
// for a small MLP, not trivially separable pixel by pixel.
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "data/idx.h"

namespace plexus::testing {

// Writes <dir>/<prefix>-images-idx3-ubyte and -labels-idx1-ubyte with `n` examples; returns
// their labels.
inline std::vector<int32_t> write_tiny_mnist_split(const std::filesystem::path& dir, const std::string& prefix,
                                                   int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> noise(0, 80), bright(180, 255), shift(-2, 2);
  std::vector<uint8_t> images(static_cast<size_t>(n * 28 * 28)), label_bytes(static_cast<size_t>(n));
  std::vector<int32_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int c = int((i * 7 + 3) % 10);  // all classes, not in label order
    labels[size_t(i)] = c;
    label_bytes[size_t(i)] = uint8_t(c);
    uint8_t* img = images.data() + i * 28 * 28;
    for (int p = 0; p < 28 * 28; ++p) img[p] = uint8_t(noise(gen));
    const int top = 2 + (c / 5) * 14 + shift(gen), left = 2 + (c % 5) * 5 + shift(gen) / 2;
    for (int r = top; r < top + 6; ++r)
      for (int col = left; col < left + 6; ++col)
        if (r >= 0 && r < 28 && col >= 0 && col < 28) img[r * 28 + col] = uint8_t(bright(gen));
  }
  data::write_idx((dir / (prefix + "-images-idx3-ubyte")).string(), data::IdxType::UInt8, {n, 28, 28}, images);
  data::write_idx((dir / (prefix + "-labels-idx1-ubyte")).string(), data::IdxType::UInt8, {n}, label_bytes);
  return labels;
}

// The train (600) and t10k (200) splits in `dir`.
inline void write_tiny_mnist(const std::filesystem::path& dir, int64_t train = 600, int64_t test = 200) {
  std::filesystem::create_directories(dir);
  write_tiny_mnist_split(dir, "train", train, 1);
  write_tiny_mnist_split(dir, "t10k", test, 2);
}

}  // namespace plexus::testing
