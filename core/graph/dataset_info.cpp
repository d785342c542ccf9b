#include "graph/dataset_info.h"

#include "data/csv.h"
#include "data/mnist.h"
#include "util/error.h"

namespace plexus::graph {
namespace {

bool image_kind(const std::string& kind) { return kind == "mnist" || kind == "fashion-mnist"; }

data::CsvDataset read_csv(const DatasetBinding& b) {
  if (b.task != "classification" && b.task != "regression")
    throw ValueError("dataset: task must be 'classification' or 'regression' for a CSV file, got '" + b.task + "'");
  data::CsvOptions o;
  o.target = b.target;
  o.task = b.task == "classification" ? data::CsvTask::Classification : data::CsvTask::Regression;
  return data::CsvDataset(b.path, o);
}

void check_kind(const DatasetBinding& b) {
  if (!image_kind(b.kind) && b.kind != "csv")
    throw ValueError("dataset: unknown kind '" + b.kind + "' (known: mnist, fashion-mnist, csv)");
}

}  // namespace

DatasetInfo describe_dataset(const DatasetBinding& b) {
  check_kind(b);
  if (image_kind(b.kind)) return {{1, 28, 28}, {}, 10};
  const data::CsvDataset csv = read_csv(b);
  return {{int64_t(csv.feature_names().size())}, {}, csv.num_classes(), csv.size()};
}

DatasetSplits open_dataset(const DatasetBinding& b, uint64_t seed) {
  check_kind(b);
  if (image_kind(b.kind)) {
    const auto variant = b.kind == "mnist" ? data::MnistVariant::Digits : data::MnistVariant::Fashion;
    DatasetSplits splits{std::make_shared<data::MnistDataset>(b.path, data::Split::Train, variant),
                         std::make_shared<data::MnistDataset>(b.path, data::Split::Test, variant),
                         describe_dataset(b)};
    splits.info.examples = splits.train->size() + splits.test->size();
    return splits;
  }
  const data::CsvDataset csv = read_csv(b);
  auto [train, test] = csv.split(0.8, seed, /*standardize=*/true);
  DatasetInfo info{{int64_t(csv.feature_names().size())}, {}, csv.num_classes(), csv.size()};
  return {std::make_shared<data::CsvDataset>(std::move(train)), std::make_shared<data::CsvDataset>(std::move(test)), info};
}

}  // namespace plexus::graph
