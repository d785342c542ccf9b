#include "graph/dataset_info.h"

#include <set>

#include "data/csv.h"
#include "data/mnist.h"
#include "data/sampling.h"
#include "data/text_classes.h"
#include "data/text_dataset.h"
#include "util/text.h"
#include "util/error.h"

namespace plexus::graph {
namespace fs = std::filesystem;
namespace {

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// A CSV file's kept rows as a run splits them (indices into data::CsvSource's rows): a seeded
// 80/20 train/test draw, then the validation draw from the training part with its own stream.
struct CsvRows {
  std::vector<int64_t> fit, held, test;
};
CsvRows csv_rows(int64_t n, uint64_t seed, double validation_fraction) {
  CsvRows out;
  auto [rest, test] = data::split_indices(n, 0.8, seed);
  auto [fit, held] = data::split_indices(int64_t(rest.size()), 1.0 - validation_fraction, validation_seed(seed));
  for (int64_t i : fit) out.fit.push_back(rest[size_t(i)]);
  for (int64_t i : held) out.held.push_back(rest[size_t(i)]);
  out.test = std::move(test);
  return out;
}

DatasetInfo csv_info(const data::CsvDataset& csv, int64_t examples) {
  return {{int64_t(csv.feature_names().size())}, {}, csv.num_classes(), examples, csv.feature_names(),
          csv.left_out().text()};
}

data::TextDataset read_text(const DatasetBinding& b) { return data::read_text_dataset(b.path, {b.seq_len, b.max_vocab}); }

DatasetInfo text_info(const data::TextDataset& text) {
  return {{text.seq_len()}, {text.seq_len()}, text.vocabulary().size(), text.size()};
}

data::TextClassDataset read_labelled_texts(const DatasetBinding& b) {
  return data::read_text_class_dataset(b.path, {b.max_length, b.max_vocab, b.lowercase});
}

DatasetInfo text_classes_info(const data::TextClassDataset& texts) {
  return {{texts.max_length()}, {}, int64_t(texts.class_names().size()), texts.size()};
}

data::ImageFolderOptions folder_options(const DatasetBinding& b) {
  return {image_format(b), b.bad_files == "skip" ? data::BadFiles::Skip : data::BadFiles::Strict, b.cache_mb << 20};
}

}  // namespace

uint64_t validation_seed(uint64_t seed) { return data::mix_seed(seed, 0x76616c); }

data::ImageFormat image_format(const DatasetBinding& b) {
  return {b.color == "rgb" ? 3 : 1, b.height, b.width, data::parse_image_fit(b.fit)};
}

std::vector<data::SkippedFile> DatasetSplits::skipped() const {
  std::vector<data::SkippedFile> out;
  if (!image_folder) return out;
  std::set<std::string> seen;
  for (const auto& split : {image_folder->train, image_folder->validation, image_folder->test}) {
    if (!split) continue;
    for (data::SkippedFile& f : split->skipped())
      if (seen.insert(f.path).second) out.push_back(std::move(f));
  }
  return out;
}

DatasetLocation locate_dataset(const std::string& path, const fs::path& project_dir) {
  DatasetLocation loc;
  if (path.empty()) return {fs::path(), false, "(no path is set)"};
  const fs::path p(path);
  if (p.is_absolute() || project_dir.empty()) {
    loc.path = p;
    loc.found = path_exists(p);
    loc.looked = p.string();
    return loc;
  }
  const fs::path near_project = project_dir / p;
  if (path_exists(near_project)) return {near_project, true, near_project.string()};
  const fs::path here = fs::path(".") / p;
  loc.looked = near_project.string() + " or " + here.string();
  if (path_exists(p)) {
    loc.path = p;
    loc.found = true;
  } else {
    loc.path = near_project;
  }
  return loc;
}

std::string moved_dataset_path(const std::string& path, const fs::path& from_dir, const fs::path& to_dir) {
  if (path.empty() || fs::path(path).is_absolute() || from_dir.empty() || to_dir.empty()) return path;
  const fs::path near_project = from_dir / path;
  if (!path_exists(near_project)) return path;
  std::error_code ec;
  const fs::path dataset = fs::weakly_canonical(near_project, ec), to = fs::weakly_canonical(to_dir, ec);
  if (ec) return path;
  const fs::path relative = dataset.lexically_relative(to);
  return (relative.empty() ? dataset : relative).generic_string();
}

DatasetBinding resolve_dataset(const DatasetBinding& binding, const fs::path& project_dir, bool must_exist) {
  if (binding.path.empty()) throw ValueError("dataset: no path is set (the folder or file with the data)");
  const DatasetLocation loc = locate_dataset(binding.path, project_dir);
  if (!loc.found && must_exist)
    throw IoError("dataset '" + binding.path + "' not found (looked in " + loc.looked + ")" +
                  (binding.kind == "mnist" ? "; run scripts/fetch-mnist to download MNIST into data/mnist" : ""));
  DatasetBinding out = binding;
  out.path = loc.path.string();
  return out;
}

DatasetInfo describe_dataset(const DatasetBinding& b, uint64_t seed, double validation_fraction) {
  check_dataset_values(b);
  if (is_idx_dataset(b.kind)) return {{1, 28, 28}, {}, 10};
  if (b.kind == "image_folder") {
    const data::ImageFormat f = image_format(b);
    return {{f.channels, f.height, f.width}, {}, int64_t(data::image_folder_classes(b.path).size())};
  }
  if (b.kind == "text") return text_info(read_text(b));
  if (b.kind == "text_classes") return text_classes_info(read_labelled_texts(b));
  return open_dataset(b, seed, validation_fraction).info;
}

DatasetSplits open_dataset(const DatasetBinding& b, uint64_t seed, double validation_fraction,
                           std::shared_ptr<const data::TablePreparation> preparation) {
  check_dataset_values(b);
  const uint64_t validation_seed = graph::validation_seed(seed);
  DatasetSplits splits;
  if (is_idx_dataset(b.kind)) {
    const auto variant = b.kind == "mnist" ? data::MnistVariant::Digits : data::MnistVariant::Fashion;
    auto train = std::make_shared<data::MnistDataset>(b.path, data::Split::Train, variant);
    splits.test = std::make_shared<data::MnistDataset>(b.path, data::Split::Test, variant);
    splits.info = describe_dataset(b);
    splits.info.examples = train->size() + splits.test->size();
    auto [fit, held] = data::random_split(train, 1.0 - validation_fraction, validation_seed);
    splits.train = std::move(fit);
    if (held->size() > 0) splits.validation = std::move(held);
  } else if (b.kind == "image_folder") {
    auto folder = std::make_shared<data::ImageFolder>(data::open_image_folder(b.path, folder_options(b)));
    std::shared_ptr<const data::Dataset> rest = folder->train;
    if (folder->test) {
      splits.test = folder->test;
    } else {
      auto [fit, test] = data::random_split(folder->train, 0.8, seed);  // as for a CSV file
      rest = std::move(fit);
      splits.test = std::move(test);
    }
    if (folder->validation) {
      splits.validation = folder->validation;
      splits.train = std::move(rest);
    } else {
      auto [fit, held] = data::random_split(rest, 1.0 - validation_fraction, validation_seed);
      splits.train = std::move(fit);
      if (held->size() > 0) splits.validation = std::move(held);
    }
    const data::ImageFormat f = image_format(b);
    int64_t examples = folder->train->size();
    if (folder->validation) examples += folder->validation->size();
    if (folder->test) examples += folder->test->size();
    splits.info = {{f.channels, f.height, f.width}, {}, int64_t(folder->scan.class_names.size()), examples};
    splits.image_folder = std::move(folder);
  } else if (b.kind == "text") {
    const data::TextDataset text = read_text(b);
    auto [fit, held] = text.split(1.0 - validation_fraction);
    splits.info = text_info(text);
    splits.info.examples = fit.size() + held.size();
    splits.train = std::make_shared<data::TextDataset>(std::move(fit));
    if (held.size() > 0) splits.validation = std::make_shared<data::TextDataset>(std::move(held));
  } else if (b.kind == "text_classes") {
    const data::TextClassDataset texts = read_labelled_texts(b);
    auto [rest, test] = texts.split(0.8, seed);  // as for an image folder without test/
    auto [fit, held] = rest.split(1.0 - validation_fraction, validation_seed);
    splits.info = text_classes_info(texts);
    splits.test = std::make_shared<data::TextClassDataset>(std::move(test));
    splits.train = std::make_shared<data::TextClassDataset>(std::move(fit));
    if (held.size() > 0) splits.validation = std::make_shared<data::TextClassDataset>(std::move(held));
  } else {
    const data::CsvSource source(b.path, csv_options(b));
    const CsvRows rows = csv_rows(source.size(), seed, validation_fraction);
    if (rows.fit.empty())
      throw ValueError("dataset: a validation fraction of " + shortest_text(validation_fraction) +
                       " leaves no training examples");
    if (!preparation) preparation = std::make_shared<const data::TablePreparation>(source.fit(rows.fit));
    const data::CsvDataset all(source, std::move(preparation));
    splits.info = csv_info(all, all.size());
    splits.test = std::make_shared<data::CsvDataset>(all.subset(rows.test));
    splits.train = std::make_shared<data::CsvDataset>(all.subset(rows.fit));
    if (!rows.held.empty()) splits.validation = std::make_shared<data::CsvDataset>(all.subset(rows.held));
  }
  if (splits.train->size() == 0)
    throw ValueError("dataset: a validation fraction of " + shortest_text(validation_fraction) +
                     " leaves no training examples");
  return splits;
}

}  // namespace plexus::graph
