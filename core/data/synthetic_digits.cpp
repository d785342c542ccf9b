#include "data/synthetic_digits.h"

#include <algorithm>
#include <random>

#include "data/idx.h"

namespace plexus::data {

SyntheticDigits make_synthetic_digits(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> noise(0, 80), bright(180, 255), shift(-2, 2);
  SyntheticDigits d;
  d.images.resize(static_cast<size_t>(n * 28 * 28));
  d.labels.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int c = int((i * 7 + 3) % 10);
    d.labels[size_t(i)] = c;
    uint8_t* img = d.images.data() + i * 28 * 28;
    for (int p = 0; p < 28 * 28; ++p) img[p] = uint8_t(noise(gen));
    const int top = 2 + (c / 5) * 14 + shift(gen), left = 2 + (c % 5) * 5 + shift(gen) / 2;
    for (int r = std::max(top, 0); r < std::min(top + 6, 28); ++r)
      for (int col = std::max(left, 0); col < std::min(left + 6, 28); ++col) img[r * 28 + col] = uint8_t(bright(gen));
  }
  return d;
}

std::vector<int32_t> write_synthetic_digits_split(const std::filesystem::path& dir, const std::string& prefix,
                                                  int64_t n, uint32_t seed) {
  SyntheticDigits d = make_synthetic_digits(n, seed);
  const std::vector<uint8_t> label_bytes(d.labels.begin(), d.labels.end());
  write_idx((dir / (prefix + "-images-idx3-ubyte")).string(), IdxType::UInt8, {n, 28, 28}, d.images);
  write_idx((dir / (prefix + "-labels-idx1-ubyte")).string(), IdxType::UInt8, {n}, label_bytes);
  return std::move(d.labels);
}

void write_synthetic_digits(const std::filesystem::path& dir, int64_t train, int64_t test) {
  std::filesystem::create_directories(dir);
  write_synthetic_digits_split(dir, "train", train, 1);
  write_synthetic_digits_split(dir, "t10k", test, 2);
}

}  // namespace plexus::data
