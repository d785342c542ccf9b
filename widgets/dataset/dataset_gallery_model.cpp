#include "dataset/dataset_gallery_model.h"

#include "dataset/dataset_thumbnail.h"

namespace plexus::widgets {

namespace {
constexpr int kCachedPictures = 4000;  // a few pages of the largest page size
}

DatasetGalleryModel::DatasetGalleryModel(const DatasetContent* content, QObject* parent)
    : QAbstractListModel(parent), content_(content), thumbnails_(kCachedPictures) {}

void DatasetGalleryModel::setSamples(const std::vector<int64_t>& samples) {
  beginResetModel();
  samples_ = samples;
  loadMissing(samples_);
  endResetModel();
}

void DatasetGalleryModel::resetCache() { thumbnails_.clear(); }

void DatasetGalleryModel::predictionsChanged() {
  if (!samples_.empty()) emit dataChanged(index(0), index(int(samples_.size()) - 1));
}

void DatasetGalleryModel::loadMissing(const std::vector<int64_t>& samples) {
  std::vector<int64_t> missing;
  for (const int64_t s : samples)
    if (!thumbnails_.object(s)) missing.push_back(s);  // object() also marks the page's pictures as recent
  if (missing.empty()) return;
  const Tensor inputs = content_->dataset->get_batch(missing).input.contiguous();
  const Shape example(inputs.shape().begin() + 1, inputs.shape().end());
  const int64_t stride = numel(example);
  for (size_t i = 0; i < missing.size(); ++i)
    thumbnails_.insert(missing[i], new QImage(thumbnailImage(inputs.data() + int64_t(i) * stride, example)));
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
      const QImage* picture = thumbnails_.object(sample);
      return picture ? QVariant(*picture) : QVariant();
    }
    default: return content_->sampleData(sample, role);
  }
}

}  // namespace plexus::widgets
