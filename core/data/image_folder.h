#pragma once
// A dataset of one's own pictures: a folder with one sub-folder per class.
//
//   DIR/<class>/<picture>            one set of examples (the "train" split)
//   DIR/train/<class>/<picture>      or split already: train, and optionally val (or
//   DIR/val/<class>/<picture>        validation) and test, each a tree of the same kind
//   DIR/test/<class>/<picture>
//
// Pictures are PNG, JPEG or BMP files (.png, .jpg, .jpeg, .bmp, in any letter case), read by
// their content (data/image_file.h) and prepared to one ImageFormat (channels, size, fit), so
// gray and color pictures of any size can be mixed.
//
// Scanning rules (deterministic, whatever order the file system lists things in):
//  - Class names are the class folders' names sorted bytewise; a class's index is its position.
//    With splits, the classes are the union over the splits; every class needs a train folder,
//    while val and test may lack some classes. A folder "train" means splits: a "val",
//    "validation" or "test" folder without one is an error, so is having both val and validation.
//  - Within a class, files in bytewise order of their path; a split's examples are class after
//    class (labels ascending).
//  - Ignored without a word: names starting with '.', files directly in DIR or in a split folder.
//    Listed in `skipped` but never an error: files with other extensions ("notes.txt"), folders
//    inside a class folder (not searched), and, with splits, other folders beside the splits.
//  - Each picture is looked at cheaply (no decoding): it must open, be a regular non-empty file,
//    and start as a PNG, JPEG or BMP whose header declares at most kImageMaxPixels pixels.
//
// Bad pictures (BadFiles): Strict, the default, refuses the folder with a DataError
// "PATH: what is wrong"; Skip leaves such files out and lists them in `skipped` with the reason.
// A picture that passes the scan but fails to decode while training (cut off, corrupt) is, in
// Strict, a DataError thrown from get/get_batch; in Skip, it is listed once in skipped() and
// replaced, wherever it is asked for, by the next decodable picture of its class in the same
// split (in file order, wrapping around), so which picture stands in is always the same.
//
// Class folders without usable pictures: in Strict, an error naming the folder. In Skip, a class
// with no usable picture in train is left out altogether (its folders listed in `skipped`, the
// other classes renumbered), one without usable pictures in val or test is kept (that folder
// listed). Either way a dataset needs at least 2 classes: "needs at least 2 classes, found 1".
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/image_cache.h"
#include "data/image_file.h"

namespace plexus::data {

enum class BadFiles { Strict, Skip };

struct ImageFolderOptions {
  ImageFormat format;                   // what every picture is prepared to
  BadFiles bad_files = BadFiles::Strict;
  int64_t cache_bytes = 0;              // decoded pictures kept; 0: a quarter of physical memory
};

struct SkippedFile {
  std::string path;    // a file, or a folder
  std::string reason;  // "not an image file (extension)", "empty file (0 bytes)", ...
};

// What a folder holds, from the scan alone (cheap: no picture is decoded).
struct ImageFolderScan {
  struct Split {
    std::vector<std::string> files;  // paths, class after class
    std::vector<int32_t> labels;     // each file's class index, ascending
  };

  std::filesystem::path dir;
  std::vector<std::string> class_names;
  Split train, validation, test;  // without split folders, everything is train
  bool has_splits = false;        // DIR/train/... rather than DIR/<class>/...
  bool has_validation = false, has_test = false;
  std::vector<SkippedFile> skipped;

  // The number of pictures of each class in `split` (one of the three above).
  std::vector<int64_t> class_counts(const Split& split) const;
};

// Throws DataError naming the folder or file: DIR missing or not a folder, no class folders,
// fewer than 2 classes, and (Strict) any bad picture or class folder without pictures.
ImageFolderScan scan_image_folder(const std::filesystem::path& dir, const ImageFolderOptions& options);

// The class names the folder names promise, without opening a file (cheap enough for an editor
// describing the dataset as it is edited): the scan's layout rules and errors, and at least 2
// classes. The scan may still leave a class out (Skip, no usable pictures).
std::vector<std::string> image_folder_classes(const std::filesystem::path& dir);

// One split of a scanned folder. Examples: input [C, H, W] in raw units (pixel / 255, as the
// MNIST reader gives; no normalisation), target [] the class index. Pictures are decoded on the
// thread that asks (the DataLoader's workers, several at once) and kept in a DecodedImageCache,
// which several datasets may share; no lock is held while decoding.
class ImageFolderDataset : public Dataset {
 public:
  // `split` is one of scan's; `cache` null: a cache of its own of options.cache_bytes.
  // ValueError for a bad options.format.
  ImageFolderDataset(const ImageFolderScan& scan, const ImageFolderScan::Split& split,
                     const ImageFolderOptions& options, std::shared_ptr<DecodedImageCache> cache = nullptr);

  int64_t size() const override { return int64_t(files_.size()); }
  Example get(int64_t index) const override;
  Example get_batch(const std::vector<int64_t>& indices) const override;
  Tensor target_batch(const std::vector<int64_t>& indices) const override;  // never decodes
  std::vector<std::string> class_names() const override { return class_names_; }

  const std::vector<std::string>& files() const { return files_; }
  const std::vector<int32_t>& labels() const { return labels_; }
  const ImageFormat& format() const { return format_; }
  const std::shared_ptr<DecodedImageCache>& cache() const { return cache_; }
  // The scan's skipped files and folders, then the files of this split that failed to decode
  // since (Skip only), each once.
  std::vector<SkippedFile> skipped() const;

 private:
  // The prepared picture of example `index`, from the cache or decoded; in Skip, a stand-in
  // for one that cannot be decoded.
  std::shared_ptr<const Image> picture(int64_t index) const;
  // Decodes and caches file `index`; null (the failure recorded) when it cannot be decoded in
  // Skip mode. `error` receives the failure's message.
  std::shared_ptr<const Image> load(int64_t index, std::string& error) const;

  std::vector<std::string> class_names_, files_;
  std::vector<int32_t> labels_;
  std::vector<int64_t> class_begin_;  // examples of class c: [class_begin_[c], class_begin_[c + 1])
  ImageFormat format_;
  BadFiles bad_files_;
  std::shared_ptr<DecodedImageCache> cache_;
  uint64_t owner_;  // this dataset's part of the cache keys
  std::unique_ptr<std::atomic<bool>[]> undecodable_;  // per file, set once it failed (Skip)
  std::vector<SkippedFile> scan_skipped_;
  mutable std::mutex skipped_mutex_;
  mutable std::vector<SkippedFile> decode_skipped_;
};

// A folder's splits over one shared cache: the scan, then a dataset per split it has.
struct ImageFolder {
  ImageFolderScan scan;
  std::shared_ptr<DecodedImageCache> cache;
  std::shared_ptr<ImageFolderDataset> train, validation, test;  // validation, test: null when absent
};
ImageFolder open_image_folder(const std::filesystem::path& dir, const ImageFolderOptions& options);

}  // namespace plexus::data
