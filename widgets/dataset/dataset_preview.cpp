#include "dataset/dataset_preview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListView>
#include <QLocale>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "common/panel_style.h"
#include "common/theme.h"
#include "dataset/dataset_class_colours.h"
#include "dataset/dataset_gallery_model.h"
#include "dataset/dataset_histogram.h"
#include "dataset/dataset_pager.h"
#include "dataset/dataset_table_model.h"
#include "dataset/dataset_thumbnail.h"
#include "dataset/dataset_tile_delegate.h"

namespace plexus::widgets {
namespace {

QString number(int64_t n) { return QLocale().toString(qlonglong(n)); }

}  // namespace

std::vector<int64_t> samplesWith(const data::Dataset& dataset, const Predictions& predictions, int trueClass,
                                 int predictedClass) {
  return samplesWith(datasetLabels(dataset), predictions, trueClass, predictedClass);
}

DatasetPreview::DatasetPreview(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel(this)),
      subtitle_(new QLabel(this)),
      status_(new QLabel(this)),
      mode_box_(new QComboBox(this)),
      class_box_(new QComboBox(this)),
      histogram_(new ClassHistogram(this)),
      stack_(new QStackedWidget(this)),
      gallery_(new QListView(stack_)),
      table_(new QTableView(stack_)),
      placeholder_(new QLabel(stack_)),
      pager_(new DatasetPager(this)),
      gallery_model_(new DatasetGalleryModel(&content_, this)),
      table_model_(new DatasetTableModel(&content_, this)),
      delegate_(new DatasetTileDelegate(this)) {
  QFont bold = title_->font();
  bold.setBold(true);
  title_->setFont(bold);

  // The gallery: fixed-size tiles flowing left to right, wrapping with the width.
  gallery_->setViewMode(QListView::IconMode);
  gallery_->setMovement(QListView::Static);
  gallery_->setResizeMode(QListView::Adjust);
  gallery_->setUniformItemSizes(true);
  gallery_->setSpacing(4);
  gallery_->setMouseTracking(true);
  gallery_->setSelectionMode(QAbstractItemView::SingleSelection);
  gallery_->setModel(gallery_model_);
  gallery_->setItemDelegate(delegate_);

  table_->setModel(table_model_);
  table_->setAlternatingRowColors(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->setDefaultSectionSize(QFontMetrics(font()).height() + 6);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  table_->horizontalHeader()->setStretchLastSection(true);

  placeholder_->setAlignment(Qt::AlignCenter);
  placeholder_->setWordWrap(true);
  stack_->addWidget(gallery_);
  stack_->addWidget(table_);
  stack_->addWidget(placeholder_);

  mode_box_->setToolTip(tr("Which samples to show"));
  class_box_->setToolTip(tr("Show only the samples of one class"));
  guardWheel(mode_box_);
  guardWheel(class_box_);

  auto* footer = new QHBoxLayout;
  footer->addWidget(pager_);
  footer->addStretch(1);
  footer->addWidget(status_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 8, 8, 8);
  layout->setSpacing(6);
  layout->addLayout(buildHeader());
  layout->addWidget(histogram_);
  layout->addWidget(stack_, 1);
  layout->addLayout(footer);

  connect(mode_box_, &QComboBox::activated, this, [this](int i) { setMode(Mode(mode_box_->itemData(i).toInt())); });
  connect(class_box_, &QComboBox::activated, this, [this](int i) { setClassFilter(class_box_->itemData(i).toInt()); });
  connect(histogram_, &ClassHistogram::classClicked, this,
          [this](int cls) { setClassFilter(cls == filter_ ? -1 : cls); });  // a second click clears
  connect(pager_, &DatasetPager::pageRequested, this, &DatasetPreview::setPage);
  connect(pager_, &DatasetPager::pageSizeChanged, this, [this] { setPage(0); });
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &DatasetPreview::applyTheme);

  fillModeBox();
  applyTheme();
  rebuild();
}

DatasetPreview::~DatasetPreview() {
  // The models read content_; detach them from the views before it goes.
  gallery_->setModel(nullptr);
  table_->setModel(nullptr);
}

QLayout* DatasetPreview::buildHeader() {
  auto* titles = new QVBoxLayout;
  titles->setSpacing(0);
  titles->addWidget(title_);
  titles->addWidget(subtitle_);
  auto* header = new QHBoxLayout;
  header->addLayout(titles, 1);
  header->addWidget(mode_box_);
  header->addWidget(class_box_);
  return header;
}

void DatasetPreview::setDataset(std::shared_ptr<const data::Dataset> split, std::vector<QString> classNames,
                                const QString& title) {
  content_.dataset = std::move(split);
  content_.classNames = std::move(classNames);
  content_.predictions = {};
  const int64_t n = content_.dataset ? content_.dataset->size() : 0;
  content_.labels = content_.classes() > 0 && n > 0 ? datasetLabels(*content_.dataset) : std::vector<int32_t>();
  input_ = n > 0 ? content_.dataset->get(0).input.shape() : Shape();
  images_ = isImageShape(input_);
  if (images_) delegate_->setPictureSize(imageSize(input_));
  counts_ = countPerClass(content_.labels, content_.classes());
  title_->setText(title);
  selection_.clear();
  caption_.clear();
  mode_ = Mode::All;
  filter_ = -1;
  page_ = 0;

  gallery_model_->resetCache();
  table_model_->datasetChanged();
  fitted_columns_ = 0;
  histogram_->setCounts(counts_, content_.classNames);
  histogram_->setVisible(content_.classes() > 0);
  class_box_->setVisible(content_.classes() > 0);
  fillClassBox();
  fillModeBox();
  updateSubtitle();
  rebuild();
}

void DatasetPreview::setFeatureNames(std::vector<QString> names) {
  content_.featureNames = std::move(names);
  table_model_->datasetChanged();
  fitted_columns_ = 0;
  rebuild();
}

void DatasetPreview::setPredictions(const Predictions& predictions) {
  content_.predictions = predictions;
  gallery_model_->predictionsChanged();
  table_model_->predictionsChanged();
  fitTableColumns();
  if (mode_ == Mode::Misclassified) rebuild();  // the list itself changes; the page is kept where it can be
  else status_->setText(statusText());
}

void DatasetPreview::clearPredictions() { setPredictions({}); }

void DatasetPreview::showSamples(const std::vector<int64_t>& indices, const QString& caption) {
  const int64_t n = content_.dataset ? content_.dataset->size() : 0;
  selection_.clear();
  std::copy_if(indices.begin(), indices.end(), std::back_inserter(selection_),
               [n](int64_t s) { return s >= 0 && s < n; });
  caption_ = caption;
  mode_ = Mode::Selection;
  filter_ = -1;
  page_ = 0;
  fillModeBox();
  rebuild();
}

void DatasetPreview::setMode(Mode mode) {
  if (mode == Mode::Selection && caption_.isEmpty() && selection_.empty()) mode = Mode::All;
  mode_ = mode;
  page_ = 0;
  rebuild();
}

void DatasetPreview::setClassFilter(int cls) {
  filter_ = cls >= 0 && cls < content_.classes() ? cls : -1;
  page_ = 0;
  rebuild();
}

void DatasetPreview::setPage(int page) {
  page_ = std::clamp(page, 0, pageCount() - 1);
  showPage();
}

void DatasetPreview::setPageSize(int size) {
  pager_->setPageSize(size);  // emits pageSizeChanged, which goes to page 1
}

int DatasetPreview::pageSize() const { return pager_->pageSize(); }

int DatasetPreview::pageCount() const {
  const int64_t size = pageSize();
  return std::max(1, int((int64_t(shown_.size()) + size - 1) / size));
}

std::vector<int64_t> DatasetPreview::visibleSamples() const {
  const size_t begin = std::min(shown_.size(), size_t(page_) * size_t(pageSize()));
  const size_t end = std::min(shown_.size(), begin + size_t(pageSize()));
  return {shown_.begin() + ptrdiff_t(begin), shown_.begin() + ptrdiff_t(end)};
}

int DatasetPreview::histogramCount(int cls) const { return int(histogram_->count(cls)); }

QToolButton* DatasetPreview::firstButton() const { return pager_->firstButton(); }
QToolButton* DatasetPreview::previousButton() const { return pager_->previousButton(); }
QToolButton* DatasetPreview::nextButton() const { return pager_->nextButton(); }
QToolButton* DatasetPreview::lastButton() const { return pager_->lastButton(); }

QWidget* DatasetPreview::currentView() const { return stack_->currentWidget(); }

// "All classes (250)", then each class with its swatch and count.
void DatasetPreview::fillClassBox() {
  const bool dark = ThemeManager::instance().theme().dark;
  class_box_->clear();
  class_box_->addItem(tr("All classes (%1)").arg(number(int64_t(content_.labels.size()))), -1);
  for (int c = 0; c < content_.classes(); ++c)
    class_box_->addItem(classSwatch(c, dark), tr("%1 (%2)").arg(content_.className(c), number(counts_[size_t(c)])), c);
  class_box_->setCurrentIndex(class_box_->findData(filter_));
}

// All samples, Misclassified (only with classes; it explains itself until there are
// predictions), and the selection by its caption once there is one.
void DatasetPreview::fillModeBox() {
  mode_box_->clear();
  mode_box_->addItem(tr("All samples"), int(Mode::All));
  mode_box_->addItem(tr("Misclassified"), int(Mode::Misclassified));
  if (auto* items = qobject_cast<QStandardItemModel*>(mode_box_->model()))
    items->item(1)->setEnabled(content_.classes() > 0);
  if (!caption_.isEmpty() || !selection_.empty())
    mode_box_->addItem(caption_.isEmpty() ? tr("Selection") : caption_, int(Mode::Selection));
  mode_box_->setCurrentIndex(mode_box_->findData(int(mode_)));
}

// "10,000 samples · 28×28 · 10 classes", "500 samples · 64×64 RGB · 5 classes"
void DatasetPreview::updateSubtitle() {
  QStringList parts;
  if (content_.dataset) parts << tr("%1 samples").arg(number(content_.dataset->size()));
  if (images_) {
    const QSize size = delegate_->pictureSize();
    const bool rgb = input_.size() == 3 && input_[0] == 3;
    parts << QStringLiteral("%1\u00d7%2").arg(size.width()).arg(size.height()) + (rgb ? tr(" RGB") : QString());
  } else if (table_model_->featureCount() > 0) parts << tr("%1 features").arg(table_model_->featureCount());
  if (content_.classes() > 0) parts << tr("%1 classes").arg(content_.classes());
  subtitle_->setText(parts.join(QStringLiteral(" \u00b7 ")));
}

void DatasetPreview::applyTheme() {
  const Theme& theme = ThemeManager::instance().theme();
  setColour(subtitle_, QPalette::WindowText, theme.mutedText);
  setColour(status_, QPalette::WindowText, theme.mutedText);
  setColour(placeholder_, QPalette::WindowText, theme.mutedText);
  fillClassBox();  // the swatches follow the theme
  gallery_->viewport()->update();
  table_->viewport()->update();
}

// The current mode's samples with the class filter, then the page.
void DatasetPreview::rebuild() {
  const int64_t n = content_.dataset ? content_.dataset->size() : 0;
  std::vector<int64_t> base;
  switch (mode_) {
    case Mode::All: base = allSamples(n); break;
    case Mode::Misclassified: base = misclassified(content_.labels, content_.predictions); break;
    case Mode::Selection: base = selection_; break;
  }
  shown_ = keepClass(base, content_.labels, filter_);
  mode_box_->setCurrentIndex(mode_box_->findData(int(mode_)));
  class_box_->setCurrentIndex(class_box_->findData(filter_));
  histogram_->setHighlighted(filter_);
  page_ = std::clamp(page_, 0, pageCount() - 1);
  showPage();
}

void DatasetPreview::showPage() {
  const std::vector<int64_t> page = visibleSamples();
  pager_->setState(page_, pageCount());
  status_->setText(statusText());
  if (page.empty()) {
    placeholder_->setText(emptyText());
    stack_->setCurrentWidget(placeholder_);
    gallery_model_->setSamples({});
    table_model_->setSamples({});
    return;
  }
  if (images_) {
    gallery_model_->setSamples(page);
    gallery_->scrollToTop();
    stack_->setCurrentWidget(gallery_);
  } else {
    table_model_->setSamples(page);
    fitTableColumns();
    table_->scrollToTop();
    stack_->setCurrentWidget(table_);
  }
}

// Sized to the contents once per set of columns, not on every page: the user may have
// resized them, and measuring every cell of a wide table is not free.
void DatasetPreview::fitTableColumns() {
  if (table_model_->rowCount() == 0 || table_model_->columnCount() == fitted_columns_) return;
  table_->resizeColumnsToContents();
  fitted_columns_ = table_model_->columnCount();
}

QString DatasetPreview::emptyText() const {
  if (!content_.dataset) return tr("No dataset.");
  switch (mode_) {
    case Mode::Misclassified:
      if (content_.predictions.predicted.empty()) return tr("No predictions yet: train the model to see its mistakes here.");
      return filter_ >= 0 ? tr("No mistakes on this class.") : tr("No misclassified samples.");
    case Mode::Selection: return tr("No samples in this selection.");
    case Mode::All: break;
  }
  return filter_ >= 0 ? tr("No samples of this class.") : tr("The dataset is empty.");
}

// "25 of 250 samples", "23 misclassified (9.2%)", "12 samples".
QString DatasetPreview::statusText() const {
  const int64_t n = content_.dataset ? content_.dataset->size() : 0;
  const int64_t shown = int64_t(shown_.size());
  switch (mode_) {
    case Mode::All:
      return shown == n ? tr("%1 samples").arg(number(n)) : tr("%1 of %2 samples").arg(number(shown), number(n));
    case Mode::Misclassified: {
      const int64_t judged = std::min<int64_t>(n, int64_t(content_.predictions.predicted.size()));
      if (judged == 0) return tr("no predictions");
      if (filter_ >= 0) return tr("%1 misclassified").arg(number(shown));
      return tr("%1 misclassified (%2% of %3)")
          .arg(number(shown))
          .arg(100.0 * double(shown) / double(judged), 0, 'f', 1)
          .arg(number(judged));
    }
    case Mode::Selection: return tr("%1: %2 samples").arg(caption_, number(shown));
  }
  return {};
}

}  // namespace plexus::widgets
