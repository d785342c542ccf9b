#pragma once
// stb_image's BMP decoder (Debian's libstb-dev), alone in its translation unit, stb_bmp.cpp:
// the code is not ours, and GCC's flow analysis warns about it under the sanitizers' flags, so
// its warnings are silenced there and nowhere else. Callers check the file first (image_file.cpp).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace plexus::data::stb {

struct Free {
  void operator()(uint8_t* pixels) const;
};
using Pixels = std::unique_ptr<uint8_t, Free>;

// The pixels of a BMP in memory, rows top to bottom, `channels` (3 or 4) interleaved; null with
// `failure` set when stb_image cannot decode it.
Pixels load_bmp(const uint8_t* data, size_t size, int& width, int& height, int& channels, std::string& failure);

}  // namespace plexus::data::stb
