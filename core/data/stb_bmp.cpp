#include "data/stb_bmp.h"

// stb_image's code, inlined into the two functions below: not ours to change (GCC's warning;
// clang has no such group).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// Only its BMP decoder, its functions static to this file, reading from memory; its failure
// reason is thread-local.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_BMP
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_FAILURE_USERMSG
#include <stb/stb_image.h>

namespace plexus::data::stb {

void Free::operator()(uint8_t* pixels) const { stbi_image_free(pixels); }

Pixels load_bmp(const uint8_t* data, size_t size, int& width, int& height, int& channels, std::string& failure) {
  Pixels pixels(stbi_load_from_memory(data, int(size), &width, &height, &channels, 0));
  if (!pixels) failure = stbi_failure_reason();
  return pixels;
}

}  // namespace plexus::data::stb
