#include "dataset/dataset_gallery_model.h"

#include "dataset/dataset_thumbnail.h"

namespace plexus::widgets {

namespace {

constexpr int kCachedPictures = 4000;  // a few pages of the largest page size

// One picture per example of a batch of images [B, ...].
std::vector<QImage> pictures(const Tensor& batch) {
  const Tensor inputs = batch.contiguous();
  const Shape example(inputs.shape().begin() + 1, inputs.shape().end());
  const int64_t stride = numel(example);
  std::vector<QImage> out;
  for (int64_t i = 0; i < inputs.size(0); ++i) out.push_back(thumbnailImage(inputs.data() + i * stride, example));
  return out;
}

}  // namespace

DatasetGalleryModel::DatasetGalleryModel(const DatasetContent* content, QObject* parent)
    : QAbstractListModel(parent), content_(content), thumbnails_(kCachedPictures) {}

void DatasetGalleryModel::setSamples(const std::vector<int64_t>& samples, const data::TransformPtr& augment,
                                     uint64_t seed) {
  beginResetModel();
  samples_ = samples;
  augmented_.clear();
  if (augment && !samples_.empty()) {
    loadAugmented(samples_, *augment, seed);
  } else {
    batch_samples_.clear();
    batch_ = {};
    loadMissing(samples_);
  }
  endResetModel();
}

void DatasetGalleryModel::resetCache() {
  thumbnails_.clear();
  batch_samples_.clear();
  batch_ = {};
}

void DatasetGalleryModel::predictionsChanged() {
  if (!samples_.empty()) emit dataChanged(index(0), index(int(samples_.size()) - 1));
}

void DatasetGalleryModel::loadMissing(const std::vector<int64_t>& samples) {
  std::vector<int64_t> missing;
  for (const int64_t s : samples)
    if (!thumbnails_.object(s)) missing.push_back(s);  // object() also marks the page's pictures as recent
  if (missing.empty()) return;
  std::vector<QImage> read = pictures(content_->dataset->get_batch(missing).input);
  for (size_t i = 0; i < missing.size(); ++i) thumbnails_.insert(missing[i], new QImage(std::move(read[i])));
}

// A new variant of the same page transforms the batch already read.
void DatasetGalleryModel::loadAugmented(const std::vector<int64_t>& samples, const data::Transform& augment,
                                        uint64_t seed) {
  if (samples != batch_samples_) {
    batch_ = content_->dataset->get_batch(samples);
    batch_samples_ = samples;
  }
  Generator gen(seed);
  augmented_ = pictures(augment.apply(batch_, gen).input);
}

int DatasetGalleryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(samples_.size());
}

QVariant DatasetGalleryModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= int(samples_.size())) return {};
  const int64_t sample = samples_[size_t(index.row())];
  switch (role) {
    case Qt::DisplayRole: return content_->classes() > 0 ? content_->className(content_->label(sample)) : QString();
    case Qt::DecorationRole: {
      if (!augmented_.empty()) return size_t(index.row()) < augmented_.size() ? QVariant(augmented_[size_t(index.row())]) : QVariant();
      const QImage* picture = thumbnails_.object(sample);
      return picture ? QVariant(*picture) : QVariant();
    }
    default: return content_->sampleData(sample, role);
  }
}

}  // namespace plexus::widgets
