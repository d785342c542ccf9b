#pragma once
// DatasetPreview: a look at the samples of a dataset's splits, one split at a time (a tab per
// split, with its number of samples). Image datasets (inputs [1, H, W], [3, H, W] or [H, W])
// show as a gallery of thumbnails with their labels; feature vectors (CSV) as a table; a text
// file's windows as their text, each with its target one character on (read at once: they are
// in memory, and the vocabulary is not classes to filter or count); labelled texts as lines of
// their class and text (in memory too), with the classes to filter and count. All are
// paged, and only the shown page is ever read from the dataset, in the background (pictures
// can take a while to decode): the last page stays until the new one is read, "Loading…" shows
// when that takes a while, and a page that cannot be read says why. Above them: a class filter
// with each class's count in the shown split and a histogram of its classes (click a bar to
// filter).
//
// Modes: all samples; the misclassified ones (once there are predictions), the most confident
// mistakes first; or a given selection (showSamples, e.g. the samples of a clicked
// confusion-matrix cell). Predictions and selections belong to the split the model is evaluated
// on: with predictions every sample of it also shows what the model said, wrong ones marked in
// red; the other splits show none. The training split can be shown through the run's
// augmentation ("Show augmented"; the shuffle button draws new variants). Follows the theme.
#include <QString>
#include <QWidget>
#include <memory>
#include <vector>

#include "data/dataset.h"
#include "data/transforms.h"
#include "dataset/dataset_content.h"
#include "dataset/dataset_samples.h"
#include "tensor/shape.h"

class QAbstractItemView;
class QCheckBox;
class QComboBox;
class QLabel;
class QListView;
class QPlainTextEdit;
class QStackedWidget;
class QTabBar;
class QTableView;
class QTimer;
class QToolButton;

namespace plexus::widgets {

class ClassHistogram;
class DatasetGalleryModel;
class DatasetPager;
class DatasetTableModel;
class DatasetTileDelegate;

// The samples of class `trueClass` that were predicted as `predictedClass`: what a click on a
// confusion-matrix cell shows. Reads the dataset's labels (fast for MNIST and CSV).
std::vector<int64_t> samplesWith(const data::Dataset& dataset, const Predictions& predictions, int trueClass,
                                 int predictedClass);

// One split the preview can show.
struct PreviewSplit {
  QString name;                                  // "Training"
  std::shared_ptr<const data::Dataset> dataset;  // in raw units
  bool augmentable = false;  // the training split: it can be shown through the augmentation
  bool evaluated = false;    // the split the model's predictions are of (at most one)
  // An example's input shape; empty: the first example's, read when the split is first shown
  // (give it for datasets that read files: that read is on the UI thread).
  Shape input = {};
};

class DatasetPreview : public QWidget {
  Q_OBJECT

 public:
  enum class Mode { All, Misclassified, Selection };

  explicit DatasetPreview(QWidget* parent = nullptr);
  ~DatasetPreview() override;

  // The splits to show and their class names (empty for regression: no filter, histogram or
  // mistakes). Forgets predictions and any selection; shows all samples of the evaluated split
  // (else the first) from page 1. A split's labels are read when it is first shown.
  void setSplits(std::vector<PreviewSplit> splits, std::vector<QString> classNames);
  void showSplit(int split);  // an index into the splits
  int currentSplit() const { return current_; }
  int splitCount() const { return int(splits_.size()); }
  // How the run augments its training batches (null: not at all).
  void setAugmentation(data::TransformPtr transform);
  // Whether the gallery shows the training images through the augmentation now.
  bool showsAugmented() const;
  // Column names of the table (feature vectors); missing ones are called x0, x1, ...
  void setFeatureNames(std::vector<QString> names);
  // By sample index of the evaluated split; may arrive repeatedly during training.
  void setPredictions(const Predictions& predictions);
  void clearPredictions();
  const Predictions& predictions() const { return predictions_; }
  // Shows exactly these samples of the evaluated split (in this order; the current split where
  // none is evaluated) in the Selection mode, named `caption`.
  void showSamples(const std::vector<int64_t>& indices, const QString& caption);

  void setMode(Mode mode);
  Mode mode() const { return mode_; }
  void setClassFilter(int cls);  // -1: all classes
  int classFilter() const { return filter_; }
  void setPage(int page);        // 0-based; clamped
  void setPageSize(int size);    // one of DatasetPager::kPageSizes

  int pageCount() const;
  int currentPage() const { return page_; }  // 0-based
  int pageSize() const;
  // The samples on the current page, in order.
  std::vector<int64_t> visibleSamples() const;
  // The samples of the current mode and filter, over all pages.
  const std::vector<int64_t>& shownSamples() const { return shown_; }
  int histogramCount(int cls) const;
  bool showsImages() const { return images_; }
  QString statusText() const;
  // Whether the current page is still being read (the previous one, or "Loading…", shows).
  bool isLoading() const { return loading_; }
  // What shows instead of a page ("Loading…", why it cannot be read, why it is empty); "" while a
  // page shows.
  QString placeholderText() const;

  // The parts, for tests and for keyboard focus.
  QTabBar* splitBar() const { return split_bar_; }
  QCheckBox* augmentedBox() const { return augmented_; }
  QToolButton* rerollButton() const { return reroll_; }
  QComboBox* modeBox() const { return mode_box_; }
  QComboBox* classBox() const { return class_box_; }
  ClassHistogram* histogram() const { return histogram_; }
  DatasetPager* pager() const { return pager_; }
  QToolButton* firstButton() const;
  QToolButton* previousButton() const;
  QToolButton* nextButton() const;
  QToolButton* lastButton() const;
  QListView* gallery() const { return gallery_; }
  QTableView* table() const { return table_; }
  // The view showing the page now (gallery or table), or the placeholder when it is empty.
  QWidget* currentView() const;

 signals:
  void pageShown();  // the current page is read and shown, or the reason it cannot be

 private:
  // A split with its labels, read the first time it is shown.
  struct Split {
    PreviewSplit split;
    bool labelled = false;
    std::vector<int32_t> labels;
    std::vector<int64_t> counts;  // per class
  };

  QLayout* buildHeader();
  void fillSplitBar();
  void fillClassBox();
  void fillModeBox();
  bool modeAvailable(Mode mode) const;
  bool canAugment() const;  // the shown split's images through the augmentation
  void updateSubtitle();
  void updateAugmentation();
  void applyTheme();
  void rebuild();
  void showPage();
  template <class Model>
  void readPage(Model* model, typename Model::Page page, QAbstractItemView* view);
  template <class Model>
  void showRead(Model* model, typename Model::Page page, QAbstractItemView* view);
  void showPlaceholder(const QString& text);
  void showTexts(const std::vector<int64_t>& page);  // of a text dataset or labelled texts
  void fitTableColumns();
  QString emptyText() const;

  DatasetContent content_;         // the shown split's
  std::vector<Split> splits_;
  int current_ = -1;
  int evaluated_ = -1;             // the split of predictions_ (-1: none)
  Predictions predictions_;
  std::vector<int64_t> selection_;  // the Selection mode's samples, of split selected_
  int selected_ = -1;
  QString caption_;
  std::vector<int64_t> shown_;      // the current mode's samples after the class filter
  data::TransformPtr augmentation_;
  uint64_t variant_ = 0;            // counts the shuffles: part of the augmentation's seed
  Mode mode_ = Mode::All;
  int filter_ = -1;
  int page_ = 0;
  bool images_ = false;
  int fitted_columns_ = 0;  // the table's column count when its columns were last fitted
  uint64_t generation_ = 0;  // counts the pages asked for: a read of a page left since is dropped
  bool loading_ = false;

  QTabBar* split_bar_;
  QLabel* subtitle_;
  QLabel* status_;
  QCheckBox* augmented_;
  QToolButton* reroll_;
  QComboBox* mode_box_;
  QComboBox* class_box_;
  ClassHistogram* histogram_;
  QStackedWidget* stack_;
  QListView* gallery_;
  QTableView* table_;
  QPlainTextEdit* text_;  // a text dataset's windows, labelled texts' examples
  QLabel* placeholder_;
  QTimer* loading_delay_;  // "Loading…" only for a read that takes a while: no flicker
  DatasetPager* pager_;
  DatasetGalleryModel* gallery_model_;
  DatasetTableModel* table_model_;
  DatasetTileDelegate* delegate_;
};

}  // namespace plexus::widgets
