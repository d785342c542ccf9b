#include "dataset/dataset_gallery_model.h"

#include "common/image_thumbnail.h"

namespace plexus::widgets {

namespace {

constexpr int kCachedPictures = 4000;  // a few pages of the largest page size

// One picture per example of a batch of images [B, ...].
std::vector<QImage> drawBatch(const Tensor& batch) {
  const Tensor inputs = batch.contiguous();
  const Shape example(inputs.shape().begin() + 1, inputs.shape().end());
  const int64_t stride = numel(example);
  std::vector<QImage> out;
  for (int64_t i = 0; i < inputs.size(0); ++i) out.push_back(thumbnailImage(inputs.data() + i * stride, example));
  return out;
}

}  // namespace

void DatasetGalleryModel::Page::read() {
  if (augment) {
    if (!batch.input.defined()) batch = dataset->get_batch(samples);
    Generator gen(seed);
    pictures = drawBatch(augment->apply(batch, gen).input);
  } else if (!missing.empty()) {
    pictures = drawBatch(dataset->get_batch(missing).input);
  }
}

DatasetGalleryModel::DatasetGalleryModel(const DatasetContent* content, QObject* parent)
    : QAbstractListModel(parent), content_(content), thumbnails_(kCachedPictures) {}

DatasetGalleryModel::Page DatasetGalleryModel::page(const std::vector<int64_t>& samples,
                                                    const data::TransformPtr& augment, uint64_t seed) const {
  Page page{samples, content_->dataset, {}, samples.empty() ? nullptr : augment, seed, {}, {}};
  if (page.augment) {
    if (samples == batch_samples_) page.batch = batch_;
  } else {
    for (const int64_t s : samples)
      if (!thumbnails_.contains(s)) page.missing.push_back(s);
  }
  return page;
}

void DatasetGalleryModel::setPage(Page page) {
  beginResetModel();
  samples_ = std::move(page.samples);
  if (page.augment) {
    augmented_ = std::move(page.pictures);
    batch_samples_ = samples_;
    batch_ = std::move(page.batch);
  } else {
    augmented_.clear();
    // The page's cached pictures become the most recent first, so that adding the new ones
    // cannot push them out.
    for (const int64_t s : samples_) thumbnails_.object(s);
    for (size_t i = 0; i < page.missing.size() && i < page.pictures.size(); ++i)
      thumbnails_.insert(page.missing[i], new QImage(std::move(page.pictures[i])));
  }
  endResetModel();
}

void DatasetGalleryModel::resetCache() {
  beginResetModel();
  samples_.clear();
  augmented_.clear();
  thumbnails_.clear();
  batch_samples_.clear();
  batch_ = {};
  endResetModel();
}

void DatasetGalleryModel::predictionsChanged() {
  if (!samples_.empty()) emit dataChanged(index(0), index(int(samples_.size()) - 1));
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
