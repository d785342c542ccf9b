#include "data/mnist.h"

#include <filesystem>

#include "data/idx.h"
#include "util/error.h"
#include "util/parallel.h"

namespace plexus::data {
namespace {

namespace fs = std::filesystem;

const char* variant_name(MnistVariant v) { return v == MnistVariant::Fashion ? "Fashion-MNIST" : "MNIST"; }

// The first of `base` and `base.gz` that exists in `folder`.
std::string find_file(const std::string& folder, const std::string& base, MnistVariant v, const char* what) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw DataError(folder + ": " + variant_name(v) + " folder not found (expected a directory holding " + base +
                    " or " + base + ".gz)");
  const fs::path plain = fs::path(folder) / base;
  const fs::path gz = fs::path(folder) / (base + ".gz");
  if (fs::exists(plain, ec)) return plain.string();
  if (fs::exists(gz, ec)) return gz.string();
  throw DataError(folder + ": no " + variant_name(v) + " " + what + " file: tried " + plain.string() + " and " +
                  gz.string());
}

}  // namespace

const std::vector<std::string>& MnistDataset::class_names(MnistVariant variant) {
  static const std::vector<std::string> digits = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  static const std::vector<std::string> fashion = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                   "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return variant == MnistVariant::Fashion ? fashion : digits;
}


MnistDataset::MnistDataset(const std::string& folder, Split split, MnistVariant variant) : variant_(variant) {
  const std::string prefix = split == Split::Train ? "train" : "t10k";
  const char* split_name = split == Split::Train ? "training" : "test";
  images_path_ = find_file(folder, prefix + "-images-idx3-ubyte", variant, (std::string(split_name) + " images").c_str());
  labels_path_ = find_file(folder, prefix + "-labels-idx1-ubyte", variant, (std::string(split_name) + " labels").c_str());

  IdxArray images = map_idx(images_path_);
  if (images.type != IdxType::UInt8)
    throw DataError(images.where(2) + ": " + variant_name(variant) + " images must be unsigned bytes (type 0x08), got " +
                    idx_type_name(images.type));
  if (images.dims.size() != 3)
    throw DataError(images.where(3) + ": " + variant_name(variant) + " images must have 3 dimensions [N, H, W], got " +
                    std::to_string(images.dims.size()));

  const IdxArray labels = read_idx(labels_path_);
  if (labels.type != IdxType::UInt8)
    throw DataError(labels.where(2) + ": " + variant_name(variant) + " labels must be unsigned bytes (type 0x08), got " +
                    idx_type_name(labels.type));
  if (labels.dims.size() != 1)
    throw DataError(labels.where(3) + ": " + variant_name(variant) + " labels must have 1 dimension [N], got " +
                    std::to_string(labels.dims.size()));
  if (labels.dims[0] != images.dims[0])
    throw DataError(labels.where(4) + ": " + std::to_string(labels.dims[0]) + " labels, but " + images.where(4) +
                    " declares " + std::to_string(images.dims[0]) + " images; the counts must match");

  const int64_t n = labels.dims[0];
  const int64_t num_classes = int64_t(class_names(variant).size());
  for (int64_t i = 0; i < n; ++i)
    if (labels.bytes[size_t(i)] >= num_classes)
      throw DataError(labels.where(labels.data_offset + i) + ": label " + std::to_string(labels.bytes[size_t(i)]) +
                      " of example " + std::to_string(i) + " is out of range [0, " + std::to_string(num_classes - 1) +
                      "]");

  pixels_ = std::move(images);
  labels_ = labels.to_tensor();
}

const Tensor& MnistDataset::images() const {
  std::call_once(images_once_, [&] {
    images_ = pixels_.to_tensor(kPixelScale).reshape({size(), 1, height(), width()});
  });
  return images_;
}

std::array<int64_t, 256> MnistDataset::pixel_counts(const std::vector<int64_t>& indices) const {
  for (int64_t i : indices) check_index(i, "MnistDataset::pixel_counts");
  // Per chunk of images on the thread pool, four tables each (neighbouring equal bytes, runs of
  // 0, would otherwise wait on each other's increment); whole counts, so any order sums alike.
  constexpr int64_t kGrain = 512;
  const int64_t n = height() * width(), rows = int64_t(indices.size());
  std::vector<std::array<std::array<int64_t, 256>, 4>> part(size_t(parallel_parts(rows, kGrain)));
  parallel_for_chunks(rows, kGrain, [&](int chunk, int64_t begin, int64_t end) {
    auto& t = part[size_t(chunk)];
    for (int64_t r = begin; r < end; ++r) {
      const uint8_t* p = pixels_.payload() + indices[size_t(r)] * n;
      int64_t k = 0;
      for (; k + 4 <= n; k += 4) ++t[0][p[k]], ++t[1][p[k + 1]], ++t[2][p[k + 2]], ++t[3][p[k + 3]];
      for (; k < n; ++k) ++t[0][p[k]];
    }
  });
  std::array<int64_t, 256> counts{};
  for (const auto& tables : part)
    for (const auto& t : tables)
      for (size_t v = 0; v < 256; ++v) counts[v] += t[v];
  return counts;
}

Example MnistDataset::get(int64_t index) const {
  check_index(index, "MnistDataset::get");
  Example e = get_batch({index});
  return {e.input.reshape({1, height(), width()}), e.target.reshape({})};
}

Tensor MnistDataset::target_batch(const std::vector<int64_t>& indices) const {
  for (int64_t i : indices) check_index(i, "MnistDataset::target_batch");
  return gather_rows(labels_, indices);
}

Example MnistDataset::get_batch(const std::vector<int64_t>& indices) const {
  for (int64_t i : indices) check_index(i, "MnistDataset::get_batch");
  const int64_t n = height() * width();
  Tensor x = empty({int64_t(indices.size()), 1, height(), width()});
  float* out = x.data();
  for (int64_t i : indices) {
    const uint8_t* p = pixels_.payload() + i * n;
    for (int64_t k = 0; k < n; ++k) out[k] = float(p[k]) * kPixelScale;  // as IdxArray::to_tensor converts
    out += n;
  }
  return {x, gather_rows(labels_, indices)};
}

}  // namespace plexus::data
