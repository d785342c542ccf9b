#include "dataset/dataset_preview.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QFontDatabase>
#include <QListView>
#include <QLocale>
#include <QPlainTextEdit>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QTabBar>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <exception>

#include "common/icons.h"
#include "common/image_thumbnail.h"
#include "common/panel_style.h"
#include "common/theme.h"
#include "dataset/dataset_class_colours.h"
#include "dataset/dataset_gallery_model.h"
#include "dataset/dataset_histogram.h"
#include "dataset/dataset_pager.h"
#include "dataset/dataset_table_model.h"
#include "dataset/dataset_tile_delegate.h"
#include "data/text_classes.h"
#include "data/text_dataset.h"

namespace plexus::widgets {
namespace {

QString number(int64_t n) { return QLocale().toString(qlonglong(n)); }

// The augmented pages' randomness: fixed, so a page shows the same variants until shuffled.
constexpr uint64_t kAugmentationSeed = 0x5eed'a06e;

// A page read faster than this just replaces the last one; a slower one shows "Loading…".
constexpr int kLoadingDelayMs = 150;

// A split given without its input shape: its first example's. A read that fails leaves it
// unknown; reading the page then says why.
Shape firstInput(const data::Dataset& dataset) {
  try {
    return dataset.get(0).input.shape();
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

std::vector<int64_t> samplesWith(const data::Dataset& dataset, const Predictions& predictions, int trueClass,
                                 int predictedClass) {
  return samplesWith(datasetLabels(dataset), predictions, trueClass, predictedClass);
}

DatasetPreview::DatasetPreview(QWidget* parent)
    : QWidget(parent),
      split_bar_(new QTabBar(this)),
      subtitle_(new QLabel(this)),
      status_(new QLabel(this)),
      augmented_(new QCheckBox(this)),
      reroll_(new QToolButton(this)),
      mode_box_(new QComboBox(this)),
      class_box_(new QComboBox(this)),
      histogram_(new ClassHistogram(this)),
      stack_(new QStackedWidget(this)),
      gallery_(new QListView(stack_)),
      table_(new QTableView(stack_)),
      text_(new QPlainTextEdit(stack_)),
      placeholder_(new QLabel(stack_)),
      loading_delay_(new QTimer(this)),
      pager_(new DatasetPager(this)),
      gallery_model_(new DatasetGalleryModel(&content_, this)),
      table_model_(new DatasetTableModel(&content_, this)),
      delegate_(new DatasetTileDelegate(this)) {
  split_bar_->setObjectName(QStringLiteral("previewSplit"));
  split_bar_->setDocumentMode(true);
  split_bar_->setExpanding(false);
  split_bar_->setToolTip(tr("Which split of the dataset to show"));
  augmented_->setObjectName(QStringLiteral("previewAugmented"));
  augmented_->setText(tr("Show augmented"));
  reroll_->setObjectName(QStringLiteral("previewReroll"));
  reroll_->setToolTip(tr("Other random variants of these images"));
  reroll_->setAutoRaise(true);
  reroll_->setIconSize(QSize(16, 16));

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

  placeholder_->setObjectName(QStringLiteral("previewPlaceholder"));
  placeholder_->setAlignment(Qt::AlignCenter);
  placeholder_->setWordWrap(true);
  placeholder_->setTextInteractionFlags(Qt::TextSelectableByMouse);  // an error's path can be copied
  loading_delay_->setSingleShot(true);
  loading_delay_->setInterval(kLoadingDelayMs);
  stack_->addWidget(gallery_);
  stack_->addWidget(table_);
  stack_->addWidget(text_);
  stack_->addWidget(placeholder_);
  text_->setObjectName(QStringLiteral("previewWindows"));
  text_->setReadOnly(true);
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));

  mode_box_->setToolTip(tr("Which samples to show"));
  class_box_->setToolTip(tr("Show only the samples of one class"));
  class_box_->setSizeAdjustPolicy(QComboBox::AdjustToContents);  // the counts grow with the split
  guardWheel(mode_box_);
  guardWheel(class_box_);

  auto* footer = new QHBoxLayout;
  footer->addWidget(pager_);
  footer->addStretch(1);
  footer->addWidget(status_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 4, 8, 8);
  layout->setSpacing(6);
  layout->addLayout(buildHeader());
  layout->addWidget(histogram_);
  layout->addWidget(stack_, 1);
  layout->addLayout(footer);

  connect(split_bar_, &QTabBar::currentChanged, this, [this](int i) {
    if (i >= 0 && i != current_) showSplit(i);
  });
  connect(augmented_, &QCheckBox::toggled, this, [this] {
    updateAugmentation();
    showPage();
  });
  connect(reroll_, &QToolButton::clicked, this, [this] {
    ++variant_;
    showPage();
  });
  connect(mode_box_, &QComboBox::activated, this, [this](int i) { setMode(Mode(mode_box_->itemData(i).toInt())); });
  connect(class_box_, &QComboBox::activated, this, [this](int i) { setClassFilter(class_box_->itemData(i).toInt()); });
  connect(histogram_, &ClassHistogram::classClicked, this,
          [this](int cls) { setClassFilter(cls == filter_ ? -1 : cls); });  // a second click clears
  connect(pager_, &DatasetPager::pageRequested, this, &DatasetPreview::setPage);
  connect(pager_, &DatasetPager::pageSizeChanged, this, [this] { setPage(0); });
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &DatasetPreview::applyTheme);
  connect(loading_delay_, &QTimer::timeout, this, [this] {
    if (loading_) showPlaceholder(tr("Loading…"));
  });

  fillModeBox();
  updateAugmentation();
  applyTheme();
  rebuild();
}

DatasetPreview::~DatasetPreview() {
  // The models read content_; detach them from the views before it goes.
  gallery_->setModel(nullptr);
  table_->setModel(nullptr);
}

// The splits with the augmentation's buttons beside them (they are about the split), then what
// the split holds and which of its samples to show.
QLayout* DatasetPreview::buildHeader() {
  auto* splits = new QHBoxLayout;
  splits->addWidget(split_bar_, 1);
  splits->addWidget(augmented_);
  splits->addWidget(reroll_);
  auto* samples = new QHBoxLayout;
  samples->addWidget(subtitle_, 1);
  samples->addWidget(mode_box_);
  samples->addWidget(class_box_);
  auto* header = new QVBoxLayout;
  header->setSpacing(4);
  header->addLayout(splits);
  header->addLayout(samples);
  return header;
}

void DatasetPreview::setSplits(std::vector<PreviewSplit> splits, std::vector<QString> classNames) {
  splits_.clear();
  for (PreviewSplit& split : splits) splits_.push_back({std::move(split), false, {}, {}});
  const auto evaluated = std::find_if(splits_.begin(), splits_.end(), [](const Split& s) { return s.split.evaluated; });
  evaluated_ = evaluated == splits_.end() ? -1 : int(evaluated - splits_.begin());
  // A text's vocabulary names no classes of examples: nothing to filter or count.
  const bool text = !splits_.empty() && dynamic_cast<const data::TextDataset*>(splits_.front().split.dataset.get());
  content_.classNames = text ? std::vector<QString>() : std::move(classNames);
  predictions_ = {};
  selection_.clear();
  selected_ = -1;
  caption_.clear();
  mode_ = Mode::All;
  filter_ = -1;
  current_ = -1;
  fillSplitBar();
  showSplit(std::max(evaluated_, 0));
}

// The class filter stays: the same class can be looked at in every split.
void DatasetPreview::showSplit(int split) {
  current_ = splits_.empty() ? -1 : std::clamp(split, 0, int(splits_.size()) - 1);
  Split* shown = current_ >= 0 ? &splits_[size_t(current_)] : nullptr;
  content_.dataset = shown ? shown->split.dataset : nullptr;
  const int64_t n = content_.dataset ? content_.dataset->size() : 0;
  if (shown && !shown->labelled) {
    shown->labels = content_.classes() > 0 && n > 0 ? datasetLabels(*content_.dataset) : std::vector<int32_t>();
    shown->counts = countPerClass(shown->labels, content_.classes());
    if (shown->split.input.empty() && n > 0) shown->split.input = firstInput(*content_.dataset);
    shown->labelled = true;
  }
  content_.labels = shown ? shown->labels : std::vector<int32_t>();
  content_.predictions = current_ >= 0 && current_ == evaluated_ ? predictions_ : Predictions();
  content_.input = shown ? shown->split.input : Shape();
  images_ = isImageShape(content_.input);
  if (images_) delegate_->setPictureSize(imageSize(content_.input));
  if (!modeAvailable(mode_)) mode_ = Mode::All;
  page_ = 0;

  split_bar_->setCurrentIndex(current_);
  gallery_model_->resetCache();
  table_model_->datasetChanged();
  fitted_columns_ = 0;
  histogram_->setCounts(shown ? shown->counts : std::vector<int64_t>(), content_.classNames);
  histogram_->setVisible(content_.classes() > 0);
  class_box_->setVisible(content_.classes() > 0);
  fillClassBox();
  fillModeBox();
  updateSubtitle();
  updateAugmentation();
  rebuild();
}

// A page shown as read stays: reading it again would only repeat the read in flight.
void DatasetPreview::setAugmentation(data::TransformPtr transform) {
  const bool augmented = showsAugmented();
  augmentation_ = std::move(transform);
  updateAugmentation();
  if (augmented || showsAugmented()) showPage();
}

bool DatasetPreview::showsAugmented() const { return canAugment() && augmented_->isChecked(); }

bool DatasetPreview::canAugment() const {
  return images_ && augmentation_ && current_ >= 0 && splits_[size_t(current_)].split.augmentable;
}

// The toggle stays as the user left it; it only applies to images of the augmentable split, and
// is left out where no split is.
void DatasetPreview::updateAugmentation() {
  const bool augmentable = current_ >= 0 && splits_[size_t(current_)].split.augmentable;
  const bool any = std::any_of(splits_.begin(), splits_.end(), [](const Split& s) { return s.split.augmentable; });
  augmented_->setVisible(images_ && any);
  reroll_->setVisible(images_ && any);
  augmented_->setEnabled(canAugment());
  reroll_->setEnabled(showsAugmented());
  augmented_->setToolTip(!augmentable    ? tr("Only the training images are augmented")
                         : !augmentation_ ? tr("The training images are not augmented: see the dataset's settings")
                                          : tr("Show the training images as the run's augmentation changes them"));
}

void DatasetPreview::setFeatureNames(std::vector<QString> names) {
  content_.featureNames = std::move(names);
  table_model_->featureNamesChanged();
  fitted_columns_ = 0;
  fitTableColumns();
}

void DatasetPreview::setPredictions(const Predictions& predictions) {
  predictions_ = predictions;
  if (current_ < 0 || current_ != evaluated_) return;  // shown with their split
  content_.predictions = predictions;
  gallery_model_->predictionsChanged();
  table_model_->predictionsChanged();
  fitTableColumns();
  if (mode_ == Mode::Misclassified) rebuild();  // the list itself changes; the page is kept where it can be
  else if (stack_->currentWidget() == text_) showPage();  // labelled texts write their mistakes out
  else status_->setText(statusText());
}

void DatasetPreview::clearPredictions() { setPredictions({}); }

void DatasetPreview::showSamples(const std::vector<int64_t>& indices, const QString& caption) {
  if (evaluated_ >= 0 && current_ != evaluated_) showSplit(evaluated_);
  selected_ = current_;
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
  mode_ = modeAvailable(mode) ? mode : Mode::All;
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

QString DatasetPreview::placeholderText() const {
  return stack_->currentWidget() == placeholder_ ? placeholder_->text() : QString();
}

// A tab per split: "Training (54,000)".
void DatasetPreview::fillSplitBar() {
  const QSignalBlocker quiet(split_bar_);
  while (split_bar_->count() > 0) split_bar_->removeTab(0);
  for (const Split& s : splits_)
    split_bar_->addTab(tr("%1 (%2)").arg(s.split.name, number(s.split.dataset ? s.split.dataset->size() : 0)));
  split_bar_->setVisible(!splits_.empty());
}

// "All classes (250)", then each class with its swatch and count.
void DatasetPreview::fillClassBox() {
  const bool dark = ThemeManager::instance().theme().dark;
  class_box_->clear();
  class_box_->addItem(tr("All classes (%1)").arg(number(int64_t(content_.labels.size()))), -1);
  for (int c = 0; c < content_.classes(); ++c)
    class_box_->addItem(classSwatch(c, dark),
                        tr("%1 (%2)").arg(content_.className(c), number(histogram_->count(c))), c);
  class_box_->setCurrentIndex(class_box_->findData(filter_));
}

// All samples, Misclassified (only with classes, on the evaluated split; it explains itself
// until there are predictions), and the selection by its caption on the split it was made on.
void DatasetPreview::fillModeBox() {
  mode_box_->clear();
  mode_box_->addItem(tr("All samples"), int(Mode::All));
  mode_box_->addItem(tr("Misclassified"), int(Mode::Misclassified));
  if (auto* items = qobject_cast<QStandardItemModel*>(mode_box_->model()))
    items->item(1)->setEnabled(modeAvailable(Mode::Misclassified));
  if (modeAvailable(Mode::Selection))
    mode_box_->addItem(caption_.isEmpty() ? tr("Selection") : caption_, int(Mode::Selection));
  mode_box_->setCurrentIndex(mode_box_->findData(int(mode_)));
}

bool DatasetPreview::modeAvailable(Mode mode) const {
  switch (mode) {
    case Mode::All: return true;
    case Mode::Misclassified: return content_.classes() > 0 && current_ >= 0 && current_ == evaluated_;
    case Mode::Selection: return current_ == selected_ && (!caption_.isEmpty() || !selection_.empty());
  }
  return false;
}

// "28×28 · 10 classes", "64×64 RGB · 5 classes", "4 features" (the split's size is on its tab).
void DatasetPreview::updateSubtitle() {
  QStringList parts;
  if (images_) {
    const QSize size = delegate_->pictureSize();
    const bool rgb = content_.input.size() == 3 && content_.input[0] == 3;
    parts << QStringLiteral("%1\u00d7%2").arg(size.width()).arg(size.height()) + (rgb ? tr(" RGB") : QString());
  } else if (const auto* text = dynamic_cast<const data::TextDataset*>(content_.dataset.get())) {
    parts << tr("%1 characters per window, %2 distinct").arg(text->seq_len()).arg(text->vocabulary().size());
  } else if (const auto* texts = dynamic_cast<const data::TextClassDataset*>(content_.dataset.get())) {
    parts << tr("up to %1 characters, %2 distinct").arg(texts->max_length()).arg(texts->vocabulary().size());
  } else if (table_model_->featureCount() > 0) parts << tr("%1 features").arg(table_model_->featureCount());
  if (content_.classes() > 0) parts << tr("%1 classes").arg(content_.classes());
  subtitle_->setText(parts.join(QStringLiteral(" \u00b7 ")));
}

void DatasetPreview::applyTheme() {
  const Theme& theme = ThemeManager::instance().theme();
  setColour(subtitle_, QPalette::WindowText, theme.mutedText);
  setColour(status_, QPalette::WindowText, theme.mutedText);
  setColour(placeholder_, QPalette::WindowText, theme.mutedText);
  reroll_->setIcon(icon(QStringLiteral("shuffle")));
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
    ++generation_;  // a page still being read is not wanted any more
    loading_ = false;
    loading_delay_->stop();
    gallery_model_->setPage({});
    table_model_->setPage({});
    showPlaceholder(emptyText());
    emit pageShown();
  } else if (dynamic_cast<const data::TextDataset*>(content_.dataset.get()) ||
             dynamic_cast<const data::TextClassDataset*>(content_.dataset.get())) {
    showTexts(page);
  } else if (images_) {
    readPage(gallery_model_,
             gallery_model_->page(page, showsAugmented() ? augmentation_ : nullptr,
                                  data::transform_seed(kAugmentationSeed, int64_t(variant_), page_)),
             gallery_);
  } else {
    readPage(table_model_, table_model_->page(page), table_);
  }
}

// The page is read on the thread pool, never here: decoding a page of large pictures takes
// seconds, and a picture that will not decode throws. Only the latest page asked for is shown.
template <class Model>
void DatasetPreview::readPage(Model* model, typename Model::Page page, QAbstractItemView* view) {
  const uint64_t generation = ++generation_;
  loading_delay_->stop();
  loading_ = page.needsReading();
  if (!loading_) return showRead(model, std::move(page), view);
  // With no page on screen to keep meanwhile, say so at once.
  if (stack_->currentWidget() == placeholder_) showPlaceholder(tr("Loading…"));
  else loading_delay_->start();
  auto read = std::make_shared<typename Model::Page>(std::move(page));
  auto* watcher = new QFutureWatcher<QString>(this);
  connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher, generation, model, read, view] {
    watcher->deleteLater();
    if (generation != generation_) return;  // the user has moved on
    loading_ = false;
    loading_delay_->stop();
    if (const QString error = watcher->result(); !error.isEmpty()) {
      model->setPage({});
      showPlaceholder(tr("Cannot show this page: %1").arg(error));
      emit pageShown();
      return;
    }
    showRead(model, std::move(*read), view);
  });
  watcher->setFuture(QtConcurrent::run([read]() -> QString {
    try {
      read->read();
      return {};
    } catch (const std::exception& e) {
      return QString::fromStdString(e.what());
    }
  }));
}

template <class Model>
void DatasetPreview::showRead(Model* model, typename Model::Page page, QAbstractItemView* view) {
  model->setPage(std::move(page));
  if (view == table_) fitTableColumns();
  view->scrollToTop();
  stack_->setCurrentWidget(view);
  emit pageShown();
}

// A text's windows, each above its target; labelled texts each with its class, and what the
// model said of it where that was wrong.
void DatasetPreview::showTexts(const std::vector<int64_t>& page) {
  ++generation_;  // a table page still being read is not wanted any more
  loading_ = false;
  loading_delay_->stop();
  // Line breaks and tabs of the text shown as symbols, so each example stays on its line.
  const auto visible = [](const std::string& s) {
    return QString::fromStdString(s).replace(QLatin1Char('\n'), QChar(0x23CE)).replace(QLatin1Char('\t'), QChar(0x21E5));
  };
  QStringList lines;
  if (const auto* text = dynamic_cast<const data::TextDataset*>(content_.dataset.get())) {
    for (const int64_t w : page) {
      const auto [x, y] = text->window_text(w);
      lines << tr("#%1  x  %2").arg(w).arg(visible(x)) << tr("%1  y  %2").arg(QString(QString::number(w).size() + 1, QLatin1Char(' ')), visible(y));
    }
  } else {
    const auto& texts = dynamic_cast<const data::TextClassDataset&>(*content_.dataset);
    int width = 0;
    for (int c = 0; c < content_.classes(); ++c) width = std::max(width, int(content_.className(c).size()));
    for (const int64_t s : page) {
      QString line = tr("#%1  %2  %3").arg(s).arg(content_.className(content_.label(s)), -width).arg(visible(texts.text(s)));
      if (content_.verdict(s) == Verdict::Wrong)
        line += tr("   (predicted %1, %2%)")
                    .arg(content_.className(content_.predicted(s)))
                    .arg(100.0 * content_.predictions.confidenceOf(s), 0, 'f', 1);
      lines << line;
    }
  }
  text_->setPlainText(lines.join(QLatin1Char('\n')));
  stack_->setCurrentWidget(text_);
  emit pageShown();
}

void DatasetPreview::showPlaceholder(const QString& text) {
  placeholder_->setText(text);
  stack_->setCurrentWidget(placeholder_);
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
