// make_image_folder: writes a folder of digit pictures in the layout data/image_folder.h reads,
// for tests, the examples and benchmarks (folders of 20 000 or 100 000 pictures).
//
//   make_image_folder OUT_DIR --per-class N [--format png|jpeg|bmp]
//                     [--source mnist:DATA_DIR | --source synthetic] [--splits [--test-per-class M]]
//
// Writes N 28x28 gray pictures of each digit as OUT_DIR/<digit>/NNNNN.<ext> (classes "0" to
// "9"); with --splits, OUT_DIR/train/<digit>/... and M more of each (default N / 6, at least 1)
// as OUT_DIR/test/<digit>/... Sources: MNIST's IDX files in DATA_DIR (train for train, t10k for
// test; a digit with fewer than N pictures there is repeated from its first), or the synthetic
// digits of data/synthetic_digits.h (the default). Pictures are encoded on every core and
// written plainly: a fresh folder needs no atomic replacement, and write_png's fsync per file
// would make 100 000 files take minutes.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "data/image_file.h"
#include "data/mnist.h"
#include "data/synthetic_digits.h"
#include "util/error.h"

namespace {

namespace fs = std::filesystem;
using namespace plexus;

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "make_image_folder: %s\n"
               "usage: make_image_folder OUT_DIR --per-class N [--format png|jpeg|bmp]\n"
               "                         [--source mnist:DATA_DIR | --source synthetic] [--splits [--test-per-class M]]\n",
               problem.c_str());
  std::exit(2);
}

int64_t count_arg(const std::string& flag, const char* value) {
  char* end = nullptr;
  const long long n = std::strtoll(value, &end, 10);
  if (!*value || *end || n < 1) usage(flag + " takes a whole number of at least 1, not '" + value + "'");
  return n;
}

// 28x28 gray digits and their classes, image after image.
struct Digits {
  std::vector<uint8_t> pixels;
  std::vector<int32_t> labels;
};

Digits from_mnist(const std::string& folder, data::Split split) {
  const data::MnistDataset mnist(folder, split);
  if (mnist.images().size(2) != 28 || mnist.images().size(3) != 28)
    throw DataError(mnist.images_path() + ": pictures of " + std::to_string(mnist.images().size(2)) + " x " +
                    std::to_string(mnist.images().size(3)) + "; expected MNIST's 28 x 28");
  Digits d;
  // The reader's floats are byte / 255 exactly enough that rounding gives the bytes back.
  for (float v : mnist.images().to_vector()) d.pixels.push_back(uint8_t(v * 255.f + 0.5f));
  for (float v : mnist.labels().to_vector()) d.labels.push_back(int32_t(v));
  return d;
}

Digits synthetic(int64_t per_class, uint32_t seed) {
  data::SyntheticDigits s = data::make_synthetic_digits(per_class * 10, seed);  // classes in turn: n / 10 each
  return {std::move(s.images), std::move(s.labels)};
}

struct Job {
  const uint8_t* pixels;
  fs::path file;
};

// The pictures to write into `dir`: the first `per_class` of each digit, repeated when short.
std::vector<Job> plan(const Digits& digits, int64_t per_class, const fs::path& dir, const std::string& ext) {
  std::vector<std::vector<int64_t>> of_class(10);
  for (size_t i = 0; i < digits.labels.size(); ++i)
    if (digits.labels[i] >= 0 && digits.labels[i] < 10) of_class[size_t(digits.labels[i])].push_back(int64_t(i));
  std::vector<Job> jobs;
  for (int c = 0; c < 10; ++c) {
    const auto& indices = of_class[size_t(c)];
    if (indices.empty()) throw DataError("the source has no picture of digit " + std::to_string(c));
    const fs::path class_dir = dir / std::to_string(c);
    fs::create_directories(class_dir);
    for (int64_t k = 0; k < per_class; ++k) {
      char name[32];
      std::snprintf(name, sizeof name, "%05lld.%s", static_cast<long long>(k), ext.c_str());
      jobs.push_back({digits.pixels.data() + indices[size_t(k) % indices.size()] * 28 * 28, class_dir / name});
    }
  }
  return jobs;
}

void write_all(const std::vector<Job>& jobs, const std::string& format) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::string failure;
  auto work = [&] {
    data::Image image;
    image.width = image.height = 28;
    image.channels = 1;
    try {
      for (size_t i; !failed && (i = next++) < jobs.size();) {
        image.pixels.assign(jobs[i].pixels, jobs[i].pixels + 28 * 28);
        const std::string bytes = format == "png"    ? data::encode_png(image)
                                  : format == "jpeg" ? data::encode_jpeg(image)
                                                     : data::encode_bmp(image);
        std::ofstream out(jobs[i].file, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), std::streamsize(bytes.size()));
        out.close();
        if (!out) throw IoError(jobs[i].file.string() + ": cannot write");
      }
    } catch (const std::exception& e) {
      if (!failed.exchange(true)) failure = e.what();
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t) threads.emplace_back(work);
  for (std::thread& t : threads) t.join();
  if (failed) throw IoError(failure);
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir, format = "png", source = "synthetic";
  int64_t per_class = 0, test_per_class = 0;
  bool splits = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--per-class") per_class = count_arg(arg, value());
    else if (arg == "--test-per-class") test_per_class = count_arg(arg, value());
    else if (arg == "--format") format = value();
    else if (arg == "--source") source = value();
    else if (arg == "--splits") splits = true;
    else if (arg.starts_with("-") || !out_dir.empty()) usage("unexpected argument '" + arg + "'");
    else out_dir = arg;
  }
  if (out_dir.empty()) usage("no OUT_DIR");
  if (per_class == 0) usage("--per-class N is required");
  if (format != "png" && format != "jpeg" && format != "bmp") usage("--format is png, jpeg or bmp, not '" + format + "'");
  if (source != "synthetic" && !source.starts_with("mnist:")) usage("--source is mnist:DATA_DIR or synthetic");
  if (test_per_class && !splits) usage("--test-per-class needs --splits");
  if (!test_per_class) test_per_class = std::max<int64_t>(1, per_class / 6);

  try {
    const auto start = std::chrono::steady_clock::now();
    const std::string ext = format == "jpeg" ? "jpg" : format;
    const bool mnist = source.starts_with("mnist:");
    const std::string mnist_dir = mnist ? source.substr(6) : "";
    const fs::path root(out_dir);
    const Digits train = mnist ? from_mnist(mnist_dir, data::Split::Train) : synthetic(per_class, 1);
    std::vector<Job> jobs = plan(train, per_class, splits ? root / "train" : root, ext);
    Digits test;  // outlives the jobs that point into it
    if (splits) {
      test = mnist ? from_mnist(mnist_dir, data::Split::Test) : synthetic(test_per_class, 2);
      const std::vector<Job> more = plan(test, test_per_class, root / "test", ext);
      jobs.insert(jobs.end(), more.begin(), more.end());
    }
    write_all(jobs, format);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("make_image_folder: wrote %zu %s pictures of 10 classes to %s in %.1f s\n", jobs.size(), format.c_str(),
                out_dir.c_str(), seconds);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_image_folder: %s\n", e.what());
    return 1;
  }
}
