// libFuzzer target: the image reader (PNG and JPEG, recognised by their magic bytes). Bad input
// must be a DataError naming the file; an accepted image must be self-consistent, within the
// pixel limit, and become model inputs of both kinds (gray and RGB, shrunk and enlarged) whose
// values are pixel fractions in [0, 1].
#include "data/image_file.h"
#include "fuzz_support.h"
#include "util/error.h"

using namespace plexus;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::MemoryFile file({reinterpret_cast<const char*>(data), size});
  data::Image image;
  try {
    image = data::read_image(file.path());
  } catch (const DataError& e) {
    fuzz::require_names(e.what(), file.path());
    return 0;
  }
  fuzz::require(image.channels == 1 || image.channels == 3, "accepted an image with " +
                                                                std::to_string(image.channels) + " channels");
  fuzz::require(image.width >= 1 && image.height >= 1 && image.width * image.height <= data::kImageMaxPixels,
                "accepted an image of " + std::to_string(image.width) + " x " + std::to_string(image.height));
  fuzz::require(int64_t(image.pixels.size()) == image.width * image.height * image.channels,
                "pixel count differs from width x height x channels");
  for (const Shape& chw : {Shape{1, 28, 28}, Shape{3, 5, 70}}) {
    const Tensor input = data::image_to_input(image, chw);
    fuzz::require(input.shape() == chw, "input shape " + to_string(input.shape()) + " instead of " + to_string(chw));
    for (float v : input.to_vector()) fuzz::require(v >= 0.f && v <= 1.f, "input value " + std::to_string(v));
  }
  return 0;
}
