#pragma once
// DatasetPreview: a look at the samples of one split. Image datasets (inputs [1, H, W],
// [3, H, W] or [H, W]) show as a gallery of thumbnails with their labels; feature vectors (CSV)
// as a table. Both are paged, and only the shown page is ever read from the dataset. Above them:
// a class filter with each class's count and a histogram of the classes (click a bar to filter).
//
// Modes: all samples; the misclassified ones (once there are predictions), the most confident
// mistakes first; or a given selection (showSamples, e.g. the samples of a clicked
// confusion-matrix cell). With predictions every sample also shows what the model said, wrong
// ones marked in red. Follows the theme.
#include <QString>
#include <QWidget>
#include <memory>
#include <vector>

#include "data/dataset.h"
#include "dataset/dataset_content.h"
#include "dataset/dataset_samples.h"

class QComboBox;
class QLabel;
class QListView;
class QStackedWidget;
class QTableView;
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

class DatasetPreview : public QWidget {
  Q_OBJECT

 public:
  enum class Mode { All, Misclassified, Selection };

  explicit DatasetPreview(QWidget* parent = nullptr);
  ~DatasetPreview() override;

  // The split to show and its class names (empty for a regression split: no filter, histogram
  // or mistakes). Forgets predictions and any selection; shows all samples from page 1.
  void setDataset(std::shared_ptr<const data::Dataset> split, std::vector<QString> classNames, const QString& title);
  // Column names of the table (feature vectors); missing ones are called x0, x1, ...
  void setFeatureNames(std::vector<QString> names);
  // By sample index of the split; may arrive repeatedly during training.
  void setPredictions(const Predictions& predictions);
  void clearPredictions();
  const Predictions& predictions() const { return content_.predictions; }
  // Shows exactly these samples (in this order) in the Selection mode, named `caption`.
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

  // The parts, for tests and for keyboard focus.
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

 private:
  QLayout* buildHeader();
  void fillClassBox();
  void fillModeBox();
  void updateSubtitle();
  void applyTheme();
  void rebuild();
  void showPage();
  void fitTableColumns();
  QString emptyText() const;

  DatasetContent content_;
  std::vector<int64_t> selection_;  // the Selection mode's samples
  QString caption_;
  std::vector<int64_t> shown_;      // the current mode's samples after the class filter
  std::vector<int64_t> counts_;     // per class
  Mode mode_ = Mode::All;
  int filter_ = -1;
  int page_ = 0;
  Shape input_;  // an example's input shape
  bool images_ = false;
  int fitted_columns_ = 0;  // the table's column count when its columns were last fitted

  QLabel* title_;
  QLabel* subtitle_;
  QLabel* status_;
  QComboBox* mode_box_;
  QComboBox* class_box_;
  ClassHistogram* histogram_;
  QStackedWidget* stack_;
  QListView* gallery_;
  QTableView* table_;
  QLabel* placeholder_;
  DatasetPager* pager_;
  DatasetGalleryModel* gallery_model_;
  DatasetTableModel* table_model_;
  DatasetTileDelegate* delegate_;
};

}  // namespace plexus::widgets
