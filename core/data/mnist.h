#pragma once
// MNIST (handwritten digits) and Fashion-MNIST (Zalando's clothing images): 28x28 grey
// images with 10 classes, stored as a pair of IDX files per split.
//
// File names looked up in the folder, for split Train / Test:
//   train-images-idx3-ubyte   train-labels-idx1-ubyte
//   t10k-images-idx3-ubyte    t10k-labels-idx1-ubyte
// each either uncompressed or with a ".gz" suffix (the plain name is tried first; gzip is
// detected from the content anyway). scripts/fetch-mnist puts MNIST uncompressed in
// data/mnist/; Debian's package dataset-fashion-mnist installs the gzipped files in
// /usr/share/datasets/fashion-mnist/.
//
// Validation (DataError naming the file and the byte offset): both files well-formed IDX of
// unsigned bytes, images [N, H, W], labels [N] with the same N, every label in [0, 9].
// The images stay bytes as stored: an uncompressed file mapped (map_idx), a gzipped one
// decompressed once. get_batch converts the rows it gathers to floats in [0, 1] (byte / 255), so
// start-up faults in no float copy of the whole set and a batch reads a quarter of the bytes.
#include <array>
#include <mutex>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/idx.h"

namespace plexus::data {

enum class Split { Train, Test };

enum class MnistVariant { Digits, Fashion };

class MnistDataset : public Dataset {
 public:
  MnistDataset(const std::string& folder, Split split, MnistVariant variant = MnistVariant::Digits);

  int64_t size() const override { return labels_.size(0); }
  Example get(int64_t index) const override;  // input [1, H, W], target [] (the class)
  Tensor target_batch(const std::vector<int64_t>& indices) const override;  // [B]
  Example get_batch(const std::vector<int64_t>& indices) const override;  // [B, 1, H, W], [B]

  // [N, 1, H, W] in [0, 1]: every image as floats, made on the first call (a whole float copy; the
  // loader never asks for it).
  const Tensor& images() const;
  int64_t height() const { return pixels_.dims[1]; }
  int64_t width() const { return pixels_.dims[2]; }
  const uint8_t* pixel_bytes() const { return pixels_.payload(); }  // [N, H, W], the pixel is value / 255
  // How many pixels of the images `indices` hold each byte value 0..255 (the pixel is value / 255).
  std::array<int64_t, 256> pixel_counts(const std::vector<int64_t>& indices) const;
  const Tensor& labels() const { return labels_; }  // [N], whole numbers 0..9
  std::vector<std::string> class_names() const override { return class_names(variant_); }  // 10 names
  MnistVariant variant() const { return variant_; }
  const std::string& images_path() const { return images_path_; }
  const std::string& labels_path() const { return labels_path_; }

  static const std::vector<std::string>& class_names(MnistVariant variant);
  static constexpr float kPixelScale = 1.f / 255.f;  // byte value to pixel
  // Where Debian's dataset-fashion-mnist package installs the files.
  static constexpr const char* kDebianFashionDir = "/usr/share/datasets/fashion-mnist";

 protected:
  MnistVariant variant_;
  std::string images_path_, labels_path_;
  IdxArray pixels_;  // the images as stored, [N, H, W] bytes
  Tensor labels_;

 private:
  mutable std::once_flag images_once_;
  mutable Tensor images_;
};

class FashionMnistDataset : public MnistDataset {
 public:
  FashionMnistDataset(const std::string& folder, Split split) : MnistDataset(folder, split, MnistVariant::Fashion) {}
};

}  // namespace plexus::data
