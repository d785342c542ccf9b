#pragma once
// The gallery's items: the samples of the preview's current page, each with its thumbnail.
// Only the page's samples are read (one get_batch), and their pictures are cached by sample, so
// paging back and forth or a new set of predictions does not read the dataset again. Augmented
// pages are drawn from the page's batch as read, which is kept for the next variant.
//
// Reading is split from showing so that it can happen off the UI thread: page() says what a page
// takes (on the UI thread), Page::read() reads and draws it (on any thread), setPage() shows it.
#include <QAbstractListModel>
#include <QCache>
#include <QImage>
#include <memory>
#include <vector>

#include "data/transforms.h"
#include "dataset/dataset_content.h"

namespace plexus::widgets {

class DatasetGalleryModel : public QAbstractListModel {
  Q_OBJECT

 public:
  // A page and what showing it takes. read() touches nothing of the model.
  struct Page {
    std::vector<int64_t> samples;
    std::shared_ptr<const data::Dataset> dataset;
    std::vector<int64_t> missing;  // the samples whose thumbnails are not cached
    data::TransformPtr augment;    // null: the pictures as read
    uint64_t seed = 0;             // augment's randomness: Generator(seed)
    data::Example batch;           // augmented: the page as read; empty until read
    std::vector<QImage> pictures;  // read: the missing samples' thumbnails, or the augmented page's

    bool needsReading() const { return !missing.empty() || augment; }
    // Reads and draws what is missing; throws what the dataset throws (a picture that will not
    // decode, a file gone).
    void read();
  };

  explicit DatasetGalleryModel(const DatasetContent* content, QObject* parent = nullptr);

  // What showing `samples` takes: or, with `augment`, the page's batch through that transform
  // with its randomness from Generator(seed). The content's dataset must hold images
  // (isImageShape). A new variant of the page shown last reuses its batch.
  Page page(const std::vector<int64_t>& samples, const data::TransformPtr& augment = nullptr, uint64_t seed = 0) const;
  // Shows a page once read (or one that needs no reading).
  void setPage(Page page);
  const std::vector<int64_t>& samples() const { return samples_; }
  bool showsAugmented() const { return !augmented_.empty(); }
  // After the content's dataset changed: forget every picture read, and the page shown.
  void resetCache();
  // After the content's predictions changed: the items' prediction roles change.
  void predictionsChanged();

  int rowCount(const QModelIndex& parent = {}) const override;
  // DisplayRole: the label's name; DecorationRole: the thumbnail (QImage); ToolTipRole;
  // and the SampleRole values.
  QVariant data(const QModelIndex& index, int role) const override;

 private:
  const DatasetContent* content_;
  std::vector<int64_t> samples_;
  QCache<int64_t, QImage> thumbnails_;
  std::vector<QImage> augmented_;      // by row, while the page is augmented
  std::vector<int64_t> batch_samples_;  // the samples of batch_
  data::Example batch_;                 // the last augmented page as read
};

}  // namespace plexus::widgets
