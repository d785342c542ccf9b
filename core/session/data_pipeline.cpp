#include "session/data_pipeline.h"

#include <algorithm>
#include <cmath>

#include "data/augment.h"
#include "data/csv.h"
#include "data/sampling.h"
#include "data/text_classes.h"
#include "graph/dataset_info.h"
#include "graph/inputs.h"
#include "train/builtin.h"
#include "util/error.h"

namespace plexus::session {
namespace {

// Draws its own generator from the loader's (seeded per epoch and batch) and the augment seed,
// so changing the augment seed changes the draws and nothing else.
class Reseeded final : public data::Transform {
 public:
  Reseeded(data::TransformPtr inner, uint64_t seed) : inner_(std::move(inner)), seed_(seed) {}
  data::Example apply(const data::Example& batch, Generator& gen) const override {
    Generator own(data::mix_seed(gen.next_u64(), seed_, 0x617567));
    return inner_->apply(batch, own);
  }

 private:
  data::TransformPtr inner_;
  uint64_t seed_;
};

// Mean and std of each channel of pictures [C, H, W] over a seeded sample of the dataset.
InputNormalization channel_mean_std(const data::Dataset& train, int64_t sample, uint64_t seed) {
  const int64_t n = train.size();
  if (n == 0) throw ValueError("dataset: no training pictures to standardise with");
  std::vector<int64_t> picked;
  if (sample >= n) {
    picked.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) picked[size_t(i)] = i;
  } else {
    picked = data::split_indices(n, double(sample) / double(n), data::mix_seed(seed, 0x737461)).first;
  }
  std::vector<double> sum, sum_sq;
  int64_t per_channel = 0;
  constexpr size_t kChunk = 256;
  for (size_t start = 0; start < picked.size(); start += kChunk) {
    const std::vector<int64_t> idx(picked.begin() + long(start), picked.begin() + long(std::min(picked.size(), start + kChunk)));
    const Tensor x = train.get_batch(idx).input;  // [B, C, H, W]
    if (x.dim() != 4) throw ShapeError("input_normalization: pictures must be [C, H, W], got " + plexus::to_string(x.shape()));
    const int64_t c = x.size(1), hw = x.size(2) * x.size(3);
    sum.resize(size_t(c), 0.0);
    sum_sq.resize(size_t(c), 0.0);
    const std::vector<float> v = x.to_vector();
    for (int64_t b = 0; b < x.size(0); ++b)
      for (int64_t ch = 0; ch < c; ++ch) {
        const float* p = v.data() + (b * c + ch) * hw;
        double s = 0, s2 = 0;
        for (int64_t i = 0; i < hw; ++i) s += p[i], s2 += double(p[i]) * p[i];
        sum[size_t(ch)] += s;
        sum_sq[size_t(ch)] += s2;
      }
    per_channel += x.size(0) * hw;
  }
  InputNormalization out;
  for (size_t ch = 0; ch < sum.size(); ++ch) {
    const double mean = sum[ch] / double(per_channel);
    const double var = std::max(0.0, sum_sq[ch] / double(per_channel) - mean * mean);
    const double sd = std::sqrt(var);
    out.mean.push_back(float(mean));
    out.std.push_back(sd > 1e-6 ? float(sd) : 1.f);  // a blank channel maps to 0, not to infinity
  }
  return out;
}

}  // namespace

data::TransformPtr training_augmentation(const graph::DatasetBinding& b) {
  if (!graph::is_image_dataset(b.kind)) return nullptr;
  data::TransformPtr augment = data::augmentation({b.augment_shift, b.augment_flip, b.augment_rotation,
                                                   b.augment_brightness, b.augment_contrast});
  if (!augment) return nullptr;
  return std::make_shared<Reseeded>(std::move(augment), b.augment_seed);
}

InputNormalization input_normalization(const graph::Graph& graph, const graph::DatasetBinding& b,
                                       const data::Dataset& train, uint64_t seed) {
  const auto* csv = dynamic_cast<const data::CsvDataset*>(&train);
  const graph::Standardized standardized =
      graph::standardized_columns(graph, csv ? csv->feature_names() : std::vector<std::string>{});
  if (standardized.conflict) throw ValueError(standardized.conflict->second);
  if (!csv && !standardized.columns.at(0)) return {};
  if (graph::is_idx_dataset(b.kind)) {
    const train::MeanStd m = train::image_mean_std(train);
    return {{m.mean}, {m.std}};
  }
  if (b.kind == "image_folder") return channel_mean_std(train, b.stats_sample, seed);
  // Character ids name embedding rows: standardised they would not.
  if (b.kind == "text" || b.kind == "text_classes") return {};
  if (!csv) throw ValueError("input_normalization: a '" + b.kind + "' training split is not a CSV dataset");
  data::FeatureStats stats = csv->feature_stats();
  const std::vector<bool> numbers = csv->preparation().standardised();  // flags and category ids keep their units
  for (size_t i = 0; i < stats.mean.size(); ++i)
    if (!standardized.columns.at(i) || !numbers.at(i)) stats.mean[i] = 0, stats.std[i] = 1;
  return {stats.mean, stats.std};
}

std::vector<std::string> input_vocabulary(const data::Dataset& dataset) {
  const auto* texts = dynamic_cast<const data::TextClassDataset*>(&dataset);
  return texts ? texts->vocabulary().symbols() : std::vector<std::string>();
}

int64_t loader_workers(const graph::DatasetBinding& b) { return b.kind == "image_folder" ? b.loader_threads : 1; }

int64_t loader_prefetch(const graph::DatasetBinding& b, int64_t batch_size) {
  if (b.kind == "image_folder") return 2;
  return std::max<int64_t>(2, kInMemoryPrefetchRows / std::max<int64_t>(1, batch_size));
}

Tensor picture_input(const data::Image& picture, const graph::DatasetBinding& b, const Shape& chw) {
  if (b.kind != "image_folder") return data::image_to_input(picture, chw);
  return data::prepared_to_input(data::prepare_image(picture, graph::image_format(b)));
}

std::optional<data::TextEncoding> text_encoding(const TrainedModel& model) {
  if (model.project.dataset.kind != "text_classes") return std::nullopt;
  const Shape& shape = model.info.input_shape;
  if (shape.size() != 1)
    throw ShapeError("a labelled-texts model takes ids [T], but this one's input is " + plexus::to_string(shape));
  return data::TextEncoding{data::Vocabulary(model.vocabulary), shape[0], model.project.dataset.lowercase};
}

}  // namespace plexus::session
