// libFuzzer target: the image reader (PNG, JPEG and BMP, recognised by their magic bytes). Bad
// input must be a DataError naming the file; an accepted image must be self-consistent, within
// the pixel limit, pass the cheap header check an image folder's scan makes (which must never
// refuse what decodes), and become model inputs of both kinds (gray and RGB, shrunk and
// enlarged) whose values are pixel fractions in [0, 1], and prepared images of every fit at a
// size taken from the input's last bytes, agreeing with image_to_input where they should.
#include <algorithm>
#include <cmath>

#include "data/image_file.h"
#include "fuzz_support.h"
#include "util/error.h"

using namespace plexus;

namespace {

void check_inputs(const std::vector<float>& values) {
  for (float v : values) fuzz::require(v >= 0.f && v <= 1.f, "input value " + std::to_string(v));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::MemoryFile file({reinterpret_cast<const char*>(data), size});
  data::Image image;
  try {
    image = data::read_image(file.path());
  } catch (const DataError& e) {
    fuzz::require_names(e.what(), file.path());
    fuzz::rejected(e.what());
    return 0;
  }
  fuzz::accepted();
  fuzz::require(image.channels == 1 || image.channels == 3, "accepted an image with " +
                                                                std::to_string(image.channels) + " channels");
  fuzz::require(image.width >= 1 && image.height >= 1 && image.width * image.height <= data::kImageMaxPixels,
                "accepted an image of " + std::to_string(image.width) + " x " + std::to_string(image.height));
  fuzz::require(int64_t(image.pixels.size()) == image.width * image.height * image.channels,
                "pixel count differs from width x height x channels");
  try {
    data::check_image_header(data, std::min(size, data::kImageHeaderBytes), "header");
  } catch (const DataError& e) {
    fuzz::fail(std::string("the header check refuses an image that decodes: ") + e.what());
  }
  for (const Shape& chw : {Shape{1, 28, 28}, Shape{3, 5, 70}}) {
    const Tensor input = data::image_to_input(image, chw);
    fuzz::require(input.shape() == chw, "input shape " + to_string(input.shape()) + " instead of " + to_string(chw));
    check_inputs(input.to_vector());
  }
  // A model size from the last two bytes: 1 to 64 pixels a side.
  const int64_t height = 1 + (size >= 1 ? data[size - 1] % 64 : 0), width = 1 + (size >= 2 ? data[size - 2] % 64 : 0);
  for (int64_t channels : {1, 3})
    for (data::ImageFit fit : {data::ImageFit::Stretch, data::ImageFit::Crop, data::ImageFit::Pad}) {
      const data::ImageFormat format{channels, height, width, fit};
      const data::Image prepared = data::prepare_image(image, format);
      fuzz::require(prepared.channels == channels && prepared.height == height && prepared.width == width &&
                        int64_t(prepared.pixels.size()) == channels * height * width,
                    std::string("prepared image of the wrong size for fit ") + data::image_fit_name(fit));
      const std::vector<float> input = data::prepared_to_input(prepared).to_vector();
      check_inputs(input);
      if (fit != data::ImageFit::Stretch) continue;
      // Stretch is image_to_input rounded to whole levels.
      const std::vector<float> direct = data::image_to_input(image, {channels, height, width}).to_vector();
      for (size_t i = 0; i < input.size(); ++i)
        fuzz::require(std::abs(input[i] - direct[i]) <= 0.5f / 255.f + 1e-6f,
                      "prepare_image (stretch) differs from image_to_input by " + std::to_string(input[i] - direct[i]));
    }
  return 0;
}
