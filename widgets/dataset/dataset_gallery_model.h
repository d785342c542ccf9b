#pragma once
// The gallery's items: the samples of the preview's current page, each with its thumbnail.
// Only the page's samples are read (one get_batch), and their pictures are cached by sample, so
// paging back and forth or a new set of predictions does not read the dataset again. Augmented
// pages are drawn from the page's batch as read, which is kept for the next variant.
#include <QAbstractListModel>
#include <QCache>
#include <QImage>
#include <vector>

#include "data/transforms.h"
#include "dataset/dataset_content.h"

namespace plexus::widgets {

class DatasetGalleryModel : public QAbstractListModel {
  Q_OBJECT

 public:
  explicit DatasetGalleryModel(const DatasetContent* content, QObject* parent = nullptr);

  // The page to show, as read; or, with `augment`, the page's batch through that transform with
  // its randomness from Generator(seed). The content's dataset must hold images (isImageShape).
  void setSamples(const std::vector<int64_t>& samples, const data::TransformPtr& augment = nullptr,
                  uint64_t seed = 0);
  const std::vector<int64_t>& samples() const { return samples_; }
  bool showsAugmented() const { return !augmented_.empty(); }
  // After the content's dataset changed: forget every picture read.
  void resetCache();
  // After the content's predictions changed: the items' prediction roles change.
  void predictionsChanged();

  int rowCount(const QModelIndex& parent = {}) const override;
  // DisplayRole: the label's name; DecorationRole: the thumbnail (QImage); ToolTipRole;
  // and the SampleRole values.
  QVariant data(const QModelIndex& index, int role) const override;

 private:
  void loadMissing(const std::vector<int64_t>& samples);
  void loadAugmented(const std::vector<int64_t>& samples, const data::Transform& augment, uint64_t seed);

  const DatasetContent* content_;
  std::vector<int64_t> samples_;
  QCache<int64_t, QImage> thumbnails_;
  std::vector<QImage> augmented_;      // by row, while the page is augmented
  std::vector<int64_t> batch_samples_;  // the samples of batch_
  data::Example batch_;                 // the augmented page as read
};

}  // namespace plexus::widgets
