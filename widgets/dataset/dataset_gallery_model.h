#pragma once
// The gallery's items: the samples of the preview's current page, each with its thumbnail.
// Only the page's samples are read (one get_batch), and their pictures are cached by sample, so
// paging back and forth or a new set of predictions does not read the dataset again.
#include <QAbstractListModel>
#include <QCache>
#include <QImage>
#include <vector>

#include "dataset/dataset_content.h"

namespace plexus::widgets {

class DatasetGalleryModel : public QAbstractListModel {
  Q_OBJECT

 public:
  explicit DatasetGalleryModel(const DatasetContent* content, QObject* parent = nullptr);

  // The page to show. The content's dataset must hold images (isImageShape).
  void setSamples(const std::vector<int64_t>& samples);
  const std::vector<int64_t>& samples() const { return samples_; }
  // After the content's dataset changed: forget every cached picture.
  void resetCache();
  // After the content's predictions changed: the items' prediction roles change.
  void predictionsChanged();

  int rowCount(const QModelIndex& parent = {}) const override;
  // DisplayRole: the label's name; DecorationRole: the thumbnail (QImage); ToolTipRole;
  // and the SampleRole values.
  QVariant data(const QModelIndex& index, int role) const override;

 private:
  void loadMissing(const std::vector<int64_t>& samples);

  const DatasetContent* content_;
  std::vector<int64_t> samples_;
  QCache<int64_t, QImage> thumbnails_;
};

}  // namespace plexus::widgets
