// The dataset views: the preview pages through a generated 28x28 image dataset (written as real
// MNIST IDX files), a feature-vector dataset and labelled texts (lines of class and text), filters by class, counts classes, marks the
// model's mistakes and lists them most confident first, shows a given selection; it switches
// between splits (each with its counts and histogram, predictions staying with the evaluated
// one), shows the training images augmented, RGB pictures in colour and large ones whole. The
// confusion matrix sums, hit-tests and reports clicks. Also writes screenshots of both, light and
// dark, to the temp dir for a human to look at. Pages are read in the background: a slow dataset
// leaves the widget responsive and a page that cannot be read says why.
#include <QAbstractItemModel>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFutureWatcher>
#include <QFile>
#include <QLabel>
#include <QMouseEvent>
#include <QListView>
#include <QPainter>
#include <QPlainTextEdit>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTabBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QToolTip>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>

#include "common/theme.h"
#include "dashboard/confusion_matrix.h"
#include "data/mnist.h"
#include "data/text_classes.h"
#include "data/transforms.h"
#include "dataset/dataset_histogram.h"
#include "dataset/dataset_pager.h"
#include "dataset/dataset_preview.h"
#include "dataset/dataset_tile_delegate.h"
#include "ops/ops.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::widgets;

namespace {

constexpr int kSamples = 250;
constexpr int kClasses = 10;
constexpr int kSide = 28;

// Uneven class sizes, so a count that is off shows.
int labelOf(int i) { return (i * 7 + i / 13) % kClasses; }

// Every ninth sample is mistaken for a neighbouring class; confidences vary per sample.
Predictions makePredictions() {
  Predictions p;
  for (int i = 0; i < kSamples; ++i) {
    p.predicted.push_back(i % 9 == 0 ? (labelOf(i) + 1 + i % 3) % kClasses : labelOf(i));
    p.confidence.push_back(0.35f + float((i * 37) % 64) / 100.f);
  }
  return p;
}

// The sample's class drawn as a digit, shifted and tilted a little, so screenshots look real.
std::vector<uint8_t> digitPixels(int i) {
  QImage image(kSide, kSide, QImage::Format_Grayscale8);
  image.fill(0);
  QPainter painter(&image);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setRenderHint(QPainter::TextAntialiasing);
  QFont font = painter.font();
  font.setPixelSize(22);
  font.setBold(true);
  painter.setFont(font);
  painter.setPen(Qt::white);
  painter.translate(14 + (i % 5) - 2, 14 + (i / 5) % 5 - 2);
  painter.rotate((i % 7 - 3) * 4.0);
  painter.drawText(QRect(-14, -14, 28, 28), Qt::AlignCenter, QString::number(labelOf(i)));
  painter.end();
  std::vector<uint8_t> pixels;
  for (int y = 0; y < kSide; ++y) pixels.insert(pixels.end(), image.constScanLine(y), image.constScanLine(y) + kSide);
  return pixels;
}

QByteArray idx(uint8_t dims, const std::vector<uint32_t>& shape, const std::vector<uint8_t>& payload) {
  QByteArray bytes;
  bytes.append(char(0)).append(char(0)).append(char(0x08)).append(char(dims));
  for (const uint32_t d : shape)
    for (int s = 24; s >= 0; s -= 8) bytes.append(char(uint8_t(d >> s)));
  bytes.append(reinterpret_cast<const char*>(payload.data()), qsizetype(payload.size()));
  return bytes;
}

bool writeFile(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

// A tiny MNIST test split in `dir`, read back by the real MnistDataset.
std::shared_ptr<data::MnistDataset> writeMnist(const QTemporaryDir& dir) {
  std::vector<uint8_t> images, labels;
  for (int i = 0; i < kSamples; ++i) {
    const std::vector<uint8_t> pixels = digitPixels(i);
    images.insert(images.end(), pixels.begin(), pixels.end());
    labels.push_back(uint8_t(labelOf(i)));
  }
  if (!writeFile(dir.filePath("t10k-images-idx3-ubyte"), idx(3, {kSamples, kSide, kSide}, images)) ||
      !writeFile(dir.filePath("t10k-labels-idx1-ubyte"), idx(1, {kSamples}, labels)))
    return nullptr;
  return std::make_shared<data::MnistDataset>(dir.path().toStdString(), data::Split::Test);
}

// A dataset class the preview knows nothing about: labels come through get_batch.
class Wrapped : public data::Dataset {
 public:
  explicit Wrapped(std::shared_ptr<const data::Dataset> inner) : inner_(std::move(inner)) {}
  int64_t size() const override { return inner_->size(); }
  data::Example get(int64_t index) const override { return inner_->get(index); }

 private:
  std::shared_ptr<const data::Dataset> inner_;
};

// Counts the batches read, to see which pages are read again.
class Counting : public data::Dataset {
 public:
  explicit Counting(std::shared_ptr<const data::Dataset> inner) : inner_(std::move(inner)) {}
  int64_t size() const override { return inner_->size(); }
  data::Example get(int64_t index) const override { return inner_->get(index); }
  data::Example get_batch(const std::vector<int64_t>& indices) const override {
    ++batches;
    return inner_->get_batch(indices);
  }
  mutable int batches = 0;

 private:
  std::shared_ptr<const data::Dataset> inner_;
};

// A slow dataset, as a page of large photos is, whose slowness the test controls: a batch read
// off the thread that made it waits until open() (one read there would block the widget: it
// is counted instead, and not held).
class Gated : public data::Dataset {
 public:
  explicit Gated(std::shared_ptr<const data::Dataset> inner) : inner_(std::move(inner)) {}
  int64_t size() const override { return inner_->size(); }
  data::Example get(int64_t index) const override { return inner_->get(index); }
  data::Example get_batch(const std::vector<int64_t>& indices) const override {
    if (std::this_thread::get_id() == owner_) {
      ++read_here;
    } else {
      std::unique_lock lock(mu_);
      opened_.wait(lock, [this] { return open_; });
    }
    return inner_->get_batch(indices);
  }
  Tensor target_batch(const std::vector<int64_t>& indices) const override { return inner_->target_batch(indices); }
  void open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    opened_.notify_all();
  }

  mutable std::atomic<int> read_here{0};  // batches read on the owner's (the UI) thread

 private:
  std::shared_ptr<const data::Dataset> inner_;
  const std::thread::id owner_ = std::this_thread::get_id();
  mutable std::mutex mu_;
  mutable std::condition_variable opened_;
  bool open_ = false;
};

// Samples from `bad` on cannot be read, as a picture that will not decode in strict mode.
class Broken : public data::Dataset {
 public:
  Broken(std::shared_ptr<const data::Dataset> inner, int64_t bad) : inner_(std::move(inner)), bad_(bad) {}
  int64_t size() const override { return inner_->size(); }
  data::Example get(int64_t index) const override {
    check(index);
    return inner_->get(index);
  }
  data::Example get_batch(const std::vector<int64_t>& indices) const override {
    for (const int64_t i : indices) check(i);
    return inner_->get_batch(indices);
  }
  Tensor target_batch(const std::vector<int64_t>& indices) const override { return inner_->target_batch(indices); }

 private:
  void check(int64_t i) const {
    if (i >= bad_) throw DataError("/photos/seven/img_" + std::to_string(i) + ".png: truncated PNG");
  }

  std::shared_ptr<const data::Dataset> inner_;
  int64_t bad_;
};

// Waits until the preview shows the page asked for last: pages are read in the background.
bool pageRead(const DatasetPreview& preview) {
  return QTest::qWaitFor([&] { return !preview.isLoading(); }, 10000);
}

// n pictures [channels, height, width] with the given pixels and labels, in memory.
using PixelFn = std::function<float(int sample, int channel, int y, int x)>;
std::shared_ptr<data::TensorDataset> pictures(int n, int channels, int height, int width, const PixelFn& pixel,
                                              const std::function<int(int)>& label) {
  std::vector<float> x, y;
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < channels; ++c)
      for (int r = 0; r < height; ++r)
        for (int col = 0; col < width; ++col) x.push_back(pixel(i, c, r, col));
    y.push_back(float(label(i)));
  }
  return std::make_shared<data::TensorDataset>(from_vector(x, {n, channels, height, width}), from_vector(y, {n}));
}

// Three splits of 8x8 greyscale pictures, each split a shade of its own (the training pictures
// a dark-to-light gradient), with known classes: training 45 (15 per class), validation 12
// (8 of class 0, 4 of class 2), test 20 (all class 1).
std::vector<PreviewSplit> threeSplits() {
  auto gradient = [](int, int, int, int x) { return float(x) / 7.f; };
  return {{QStringLiteral("Training"), pictures(45, 1, 8, 8, gradient, [](int i) { return i % 3; }), true, false},
          {QStringLiteral("Validation"), pictures(12, 1, 8, 8, [](int, int, int, int) { return 0.5f; },
                                                  [](int i) { return i < 8 ? 0 : 2; }),
           false, true},
          {QStringLiteral("Test"), pictures(20, 1, 8, 8, [](int, int, int, int) { return 0.9f; }, [](int) { return 1; }),
           false, false}};
}

std::vector<QString> abc() { return {"a", "b", "c"}; }

// Inverts every pixel: 1 - x.
data::TransformPtr invert() {
  return std::make_shared<data::LambdaTransform>([](const data::Example& batch, Generator&) {
    return data::Example{1.f - batch.input, batch.target};
  });
}

// Paints every picture of the batch one random grey.
data::TransformPtr randomGrey() {
  return std::make_shared<data::LambdaTransform>([](const data::Example& batch, Generator& gen) {
    return data::Example{full(batch.input.shape(), gen.uniform()), batch.target};
  });
}

// The colour the gallery draws at (fx, fy) of the picture of its item `row` (fractions of the
// picture's width and height).
QColor tilePixel(const DatasetPreview& preview, int row, double fx = 0.5, double fy = 0.5) {
  const auto* delegate = static_cast<DatasetTileDelegate*>(preview.gallery()->itemDelegate());
  const QRect picture = delegate->pictureRect(preview.gallery()->visualRect(preview.gallery()->model()->index(row, 0)));
  const QImage shot = preview.gallery()->viewport()->grab().toImage();
  return shot.pixelColor(picture.left() + int(fx * (picture.width() - 1)), picture.top() + int(fy * (picture.height() - 1)));
}

QImage thumbnail(const DatasetPreview& preview, int row) {
  return preview.gallery()->model()->index(row, 0).data(Qt::DecorationRole).value<QImage>();
}

// One split, the one evaluated.
std::vector<PreviewSplit> only(std::shared_ptr<const data::Dataset> dataset) {
  return {{QStringLiteral("Test"), std::move(dataset), false, true}};
}

// Feature vectors: 4 features, 3 classes.
std::shared_ptr<data::TensorDataset> featureDataset(int n) {
  std::vector<float> x, y;
  for (int i = 0; i < n; ++i) {
    for (int f = 0; f < 4; ++f) x.push_back(float(i) + 0.25f * float(f));
    y.push_back(float(i % 3));
  }
  return std::make_shared<data::TensorDataset>(from_vector(x, {n, 4}), from_vector(y, {n}));
}

// Every fifth row is mistaken for the next class.
Predictions featurePredictions() {
  Predictions p;
  for (int i = 0; i < kSamples; ++i) {
    p.predicted.push_back(i % 5 == 0 ? (i + 1) % 3 : i % 3);
    p.confidence.push_back(0.6f + float(i % 40) / 100.f);
  }
  return p;
}

std::vector<QString> digitNames() {
  std::vector<QString> names;
  for (int c = 0; c < kClasses; ++c) names.push_back(QString::number(c));
  return names;
}

std::vector<int64_t> truePerClass() {
  std::vector<int64_t> counts(kClasses, 0);
  for (int i = 0; i < kSamples; ++i) ++counts[size_t(labelOf(i))];
  return counts;
}

std::vector<int64_t> range(int64_t from, int64_t to) {
  std::vector<int64_t> r(size_t(to - from));
  std::iota(r.begin(), r.end(), from);
  return r;
}

QModelIndex itemOf(QAbstractItemModel* model, int64_t sample) {
  for (int row = 0; row < model->rowCount(); ++row)
    if (model->index(row, 0).data(SampleIndexRole).toLongLong() == sample) return model->index(row, 0);
  return {};
}

// A mouse move without buttons. (QTest::mouseMove only moves the cursor, which the offscreen
// platform does not turn into events.)
void hover(QWidget* widget, QPoint pos) {
  QMouseEvent move(QEvent::MouseMove, pos, widget->mapToGlobal(pos), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
  QApplication::sendEvent(widget, &move);
}

// A typical MNIST evaluation after a few epochs: 10,000 samples, a few familiar confusions.
std::vector<int64_t> mnistLikeConfusion() {
  const int64_t rows[kClasses] = {980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009};
  std::vector<int64_t> m(kClasses * kClasses, 0);
  const int confusions[][3] = {{4, 9, 14}, {9, 4, 11}, {7, 2, 9}, {3, 5, 12}, {5, 3, 10}, {8, 3, 8}, {2, 7, 6},
                               {6, 0, 5},  {1, 8, 4},  {0, 6, 3}, {8, 5, 6}, {9, 7, 7}, {3, 8, 5}, {5, 8, 4},
                               {2, 8, 5},  {7, 9, 6},  {6, 5, 3}, {4, 6, 3}, {0, 5, 2}, {1, 2, 3}};
  for (const auto& [t, p, n] : confusions) m[size_t(t * kClasses + p)] = n;
  for (int t = 0; t < kClasses; ++t) {
    int64_t off = 0;
    for (int p = 0; p < kClasses; ++p) off += m[size_t(t * kClasses + p)];
    m[size_t(t * kClasses + t)] = rows[t] - off;
  }
  return m;
}

}  // namespace

class TestDatasetViews : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::shared_ptr<data::MnistDataset> mnist_;

  void showPreview(DatasetPreview& preview) {
    preview.setSplits(only(mnist_), digitNames());
    preview.resize(760, 620);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
    QVERIFY(pageRead(preview));
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    mnist_ = writeMnist(dir_);
    QVERIFY(mnist_);
    QCOMPARE(mnist_->size(), int64_t(kSamples));
  }

  void init() { ThemeManager::instance().setMode(ThemeMode::Light); }

  void labelsAreReadFastOrThroughBatchesAlike() {
    const std::vector<int32_t> fast = datasetLabels(*mnist_);
    const std::vector<int32_t> slow = datasetLabels(Wrapped(mnist_));
    QCOMPARE(int(fast.size()), kSamples);
    QCOMPARE(fast, slow);
    for (int i = 0; i < kSamples; ++i) QCOMPARE(fast[size_t(i)], labelOf(i));

    const Predictions p = makePredictions();
    for (const int64_t s : samplesWith(*mnist_, p, 4, 5)) {
      QCOMPARE(labelOf(int(s)), 4);
      QCOMPARE(p.predicted[size_t(s)], 5);
    }
    int64_t diagonal = 0;
    for (int c = 0; c < kClasses; ++c) diagonal += int64_t(samplesWith(*mnist_, p, c, c).size());
    QCOMPARE(diagonal, int64_t(kSamples - (kSamples + 8) / 9));
  }

  void pagesWithTheButtonsAndKeys() {
    DatasetPreview preview;
    showPreview(preview);
    QVERIFY(preview.showsImages());
    QCOMPARE(preview.currentView(), static_cast<QWidget*>(preview.gallery()));
    QCOMPARE(preview.pageSize(), 100);
    QCOMPARE(preview.pageCount(), 3);
    QCOMPARE(preview.currentPage(), 0);
    QCOMPARE(preview.visibleSamples(), range(0, 100));
    QCOMPARE(preview.gallery()->model()->rowCount(), 100);
    QVERIFY(!preview.firstButton()->isEnabled());
    QVERIFY(!preview.previousButton()->isEnabled());
    QCOMPARE(preview.pager()->pageLabel()->text(), QStringLiteral("Page 1 of 3"));

    QTest::mouseClick(preview.nextButton(), Qt::LeftButton);
    QCOMPARE(preview.currentPage(), 1);
    QCOMPARE(preview.visibleSamples(), range(100, 200));
    QCOMPARE(preview.pager()->pageLabel()->text(), QStringLiteral("Page 2 of 3"));
    QTest::mouseClick(preview.lastButton(), Qt::LeftButton);
    QCOMPARE(preview.currentPage(), 2);
    QCOMPARE(preview.visibleSamples(), range(200, 250));
    QVERIFY(!preview.nextButton()->isEnabled() && !preview.lastButton()->isEnabled());
    QTest::mouseClick(preview.previousButton(), Qt::LeftButton);
    QCOMPARE(preview.currentPage(), 1);
    QTest::mouseClick(preview.firstButton(), Qt::LeftButton);
    QCOMPARE(preview.currentPage(), 0);

    // Alt+Right / Alt+Left page from inside the gallery.
    preview.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&preview));
    preview.gallery()->setFocus();
    QTest::keyClick(preview.gallery(), Qt::Key_Right, Qt::AltModifier);
    QCOMPARE(preview.currentPage(), 1);
    QTest::keyClick(preview.gallery(), Qt::Key_Left, Qt::AltModifier);
    QCOMPARE(preview.currentPage(), 0);

    // A larger page: the keyboard on the page-size box.
    QComboBox* sizes = preview.pager()->pageSizeBox();
    sizes->setFocus();
    QTest::keyClick(sizes, Qt::Key_Down);
    QCOMPARE(preview.pageSize(), 200);
    QCOMPARE(preview.pageCount(), 2);
    QCOMPARE(preview.visibleSamples(), range(0, 200));
  }

  void classFilterAndHistogram() {
    DatasetPreview preview;
    showPreview(preview);
    const std::vector<int64_t> truth = truePerClass();
    for (int c = 0; c < kClasses; ++c) QCOMPARE(int64_t(preview.histogramCount(c)), truth[size_t(c)]);
    QCOMPARE(preview.histogram()->toolTipFor(3),
             QStringLiteral("3: %1 samples (%2%)").arg(truth[3]).arg(100.0 * truth[3] / kSamples, 0, 'f', 1));

    // Class 3 from the filter box by keyboard: "All classes", then 0, 1, 2, 3.
    QComboBox* classes = preview.classBox();
    classes->setFocus();
    for (int i = 0; i < 4; ++i) QTest::keyClick(classes, Qt::Key_Down);
    QCOMPARE(preview.classFilter(), 3);
    QCOMPARE(classes->currentText(), QStringLiteral("3 (%1)").arg(truth[3]));
    QCOMPARE(int64_t(preview.shownSamples().size()), truth[3]);
    QCOMPARE(preview.pageCount(), 1);
    for (const int64_t s : preview.visibleSamples()) QCOMPARE(labelOf(int(s)), 3);
    QCOMPARE(preview.statusText(), QStringLiteral("%1 of 250 samples").arg(truth[3]));
    QCOMPARE(preview.histogram()->highlighted(), 3);

    // A click on a bar filters by that class; a second click shows all again.
    QTest::mouseClick(preview.histogram(), Qt::LeftButton, Qt::NoModifier, preview.histogram()->barRect(7).center());
    QCOMPARE(preview.classFilter(), 7);
    QCOMPARE(classes->currentData().toInt(), 7);
    for (const int64_t s : preview.visibleSamples()) QCOMPARE(labelOf(int(s)), 7);
    QTest::mouseClick(preview.histogram(), Qt::LeftButton, Qt::NoModifier, preview.histogram()->barRect(7).center());
    QCOMPARE(preview.classFilter(), -1);
    QCOMPARE(int(preview.shownSamples().size()), kSamples);
  }

  void predictionsMarkMistakes() {
    DatasetPreview preview;
    showPreview(preview);
    QAbstractItemModel* items = preview.gallery()->model();
    QCOMPARE(itemOf(items, 9).data(VerdictRole).toInt(), int(Verdict::None));

    const Predictions p = makePredictions();
    preview.setPredictions(p);
    for (const int64_t s : preview.visibleSamples()) {
      const QModelIndex item = itemOf(items, s);
      const bool wrong = p.predicted[size_t(s)] != labelOf(int(s));
      QCOMPARE(item.data(VerdictRole).toInt(), int(wrong ? Verdict::Wrong : Verdict::Right));
      QCOMPARE(item.data(PredictedRole).toInt(), p.predicted[size_t(s)]);
      QCOMPARE(item.data(LabelRole).toInt(), labelOf(int(s)));
      QVERIFY(item.data(Qt::ToolTipRole).toString().contains(QStringLiteral("predicted %1").arg(p.predicted[size_t(s)])));
      QVERIFY(!item.data(Qt::DecorationRole).value<QImage>().isNull());
    }
    preview.clearPredictions();
    QCOMPARE(itemOf(items, 9).data(VerdictRole).toInt(), int(Verdict::None));
  }

  void misclassifiedListsTheMistakesMostConfidentFirst() {
    DatasetPreview preview;
    showPreview(preview);
    preview.setMode(DatasetPreview::Mode::Misclassified);
    QCOMPARE(preview.currentView()->metaObject()->className(), "QLabel");  // "no predictions yet"
    preview.setMode(DatasetPreview::Mode::All);

    const Predictions p = makePredictions();
    preview.setPredictions(p);
    QComboBox* modes = preview.modeBox();
    modes->setFocus();
    QTest::keyClick(modes, Qt::Key_Down);
    QCOMPARE(preview.mode(), DatasetPreview::Mode::Misclassified);

    std::vector<int64_t> wrong;
    for (int i = 0; i < kSamples; ++i)
      if (p.predicted[size_t(i)] != labelOf(i)) wrong.push_back(i);
    std::vector<int64_t> shown = preview.shownSamples();
    QCOMPARE(shown.size(), wrong.size());
    for (size_t i = 1; i < shown.size(); ++i)
      QVERIFY(p.confidence[size_t(shown[i - 1])] >= p.confidence[size_t(shown[i])]);
    std::sort(shown.begin(), shown.end());
    QCOMPARE(shown, wrong);
    QCOMPARE(preview.visibleSamples(), preview.shownSamples());  // 28 fit on one page
    QCOMPARE(preview.statusText(), QStringLiteral("28 misclassified (11.2% of 250)"));
    QVERIFY(pageRead(preview));
    for (int row = 0; row < preview.gallery()->model()->rowCount(); ++row)
      QCOMPARE(preview.gallery()->model()->index(row, 0).data(VerdictRole).toInt(), int(Verdict::Wrong));
  }

  void showSamplesShowsExactlyThose() {
    DatasetPreview preview;
    showPreview(preview);
    preview.setClassFilter(2);
    const std::vector<int64_t> picked = {240, 5, 17, 3, 121};
    preview.showSamples(picked, QStringLiteral("true 4, predicted 9"));
    QCOMPARE(preview.mode(), DatasetPreview::Mode::Selection);
    QCOMPARE(preview.classFilter(), -1);
    QCOMPARE(preview.visibleSamples(), picked);
    QCOMPARE(preview.modeBox()->currentText(), QStringLiteral("true 4, predicted 9"));
    QVERIFY(pageRead(preview));
    QCOMPARE(preview.gallery()->model()->rowCount(), 5);
    QCOMPARE(preview.gallery()->model()->index(0, 0).data(SampleIndexRole).toLongLong(), 240);

    preview.showSamples({}, QStringLiteral("true 1, predicted 7"));
    QVERIFY(preview.visibleSamples().empty());
    QCOMPARE(preview.currentView()->metaObject()->className(), "QLabel");
  }

  void featureVectorsShowAsATable() {
    DatasetPreview preview;
    preview.setSplits(only(featureDataset(kSamples)), {"setosa", "versicolor", "virginica"});
    preview.setFeatureNames({"sepal length", "sepal width", "petal length", "petal width"});
    preview.resize(640, 480);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
    QVERIFY(pageRead(preview));
    QVERIFY(!preview.showsImages());
    QCOMPARE(preview.currentView(), static_cast<QWidget*>(preview.table()));
    QAbstractItemModel* table = preview.table()->model();
    QCOMPARE(table->rowCount(), 100);
    QCOMPARE(table->columnCount(), 5);
    QCOMPARE(table->headerData(0, Qt::Horizontal).toString(), QStringLiteral("sepal length"));
    QCOMPARE(table->headerData(4, Qt::Horizontal).toString(), QStringLiteral("Label"));
    QCOMPARE(table->index(7, 1).data().toString(), QStringLiteral("7.25"));
    QCOMPARE(table->index(7, 4).data().toString(), QStringLiteral("versicolor"));
    QCOMPARE(preview.histogramCount(0), 84);

    QTest::mouseClick(preview.lastButton(), Qt::LeftButton);
    QVERIFY(pageRead(preview));
    QCOMPARE(table->rowCount(), 50);
    QCOMPARE(table->headerData(0, Qt::Vertical).toLongLong(), 200);

    preview.setPredictions(featurePredictions());
    QCOMPARE(table->columnCount(), 7);
    QCOMPARE(table->index(0, 5).data(VerdictRole).toInt(), int(Verdict::Wrong));  // sample 200
    QCOMPARE(table->index(0, 6).data().toString(), QStringLiteral("60.0%"));
    QCOMPARE(table->index(0, 5).data(Qt::ForegroundRole).value<QColor>(), ThemeManager::instance().theme().error);

    // Regression: no classes, so no filter or histogram; the target is a number.
    preview.setSplits(only(featureDataset(10)), {});
    QVERIFY(pageRead(preview));
    QVERIFY(preview.histogram()->isHidden());
    QVERIFY(preview.classBox()->isHidden());
    QCOMPARE(table->rowCount(), 10);
    QCOMPARE(table->headerData(4, Qt::Horizontal).toString(), QStringLiteral("Target"));
    QCOMPARE(table->index(5, 4).data().toString(), QStringLiteral("2"));
  }

  void eachSplitShowsItsSamplesCountsAndHistogram() {
    DatasetPreview preview;
    preview.setSplits(threeSplits(), abc());
    preview.resize(760, 620);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
    QTabBar* tabs = preview.findChild<QTabBar*>(QStringLiteral("previewSplit"));
    QCOMPARE(tabs, preview.splitBar());
    QCOMPARE(tabs->count(), 3);
    QCOMPARE(tabs->tabText(0), QStringLiteral("Training (45)"));
    QCOMPARE(tabs->tabText(1), QStringLiteral("Validation (12)"));
    QCOMPARE(tabs->tabText(2), QStringLiteral("Test (20)"));

    // The evaluated split first.
    QCOMPARE(preview.currentSplit(), 1);
    QCOMPARE(tabs->currentIndex(), 1);
    QCOMPARE(int(preview.shownSamples().size()), 12);
    QCOMPARE(preview.histogramCount(0), 8);
    QCOMPARE(preview.histogramCount(1), 0);
    QCOMPARE(preview.histogramCount(2), 4);
    QCOMPARE(preview.classBox()->itemText(0), QStringLiteral("All classes (12)"));
    QCOMPARE(preview.classBox()->itemText(3), QStringLiteral("c (4)"));
    QVERIFY(pageRead(preview));
    QCOMPARE(thumbnail(preview, 0).pixelColor(3, 3).red(), 128);

    QTest::mouseClick(tabs, Qt::LeftButton, {}, tabs->tabRect(0).center());
    QCOMPARE(preview.currentSplit(), 0);
    QCOMPARE(int(preview.shownSamples().size()), 45);
    QCOMPARE(preview.statusText(), QStringLiteral("45 samples"));
    for (int c = 0; c < 3; ++c) QCOMPARE(preview.histogramCount(c), 15);
    QCOMPARE(preview.classBox()->itemText(0), QStringLiteral("All classes (45)"));
    QVERIFY(pageRead(preview));
    QCOMPARE(thumbnail(preview, 0).pixelColor(7, 3).red(), 255);  // the gradient's light end

    // The class filter stays while the splits change.
    preview.setClassFilter(2);
    QCOMPARE(int(preview.shownSamples().size()), 15);
    QTest::mouseClick(tabs, Qt::LeftButton, {}, tabs->tabRect(2).center());
    QCOMPARE(preview.currentSplit(), 2);
    QCOMPARE(preview.classFilter(), 2);
    QVERIFY(preview.shownSamples().empty());
    QCOMPARE(preview.histogramCount(1), 20);
    preview.setClassFilter(-1);
    QCOMPARE(int(preview.shownSamples().size()), 20);
    QVERIFY(pageRead(preview));
    QCOMPARE(thumbnail(preview, 0).pixelColor(3, 3).red(), 230);
  }

  void predictionsStayWithTheEvaluatedSplit() {
    DatasetPreview preview;
    preview.setSplits(threeSplits(), abc());
    preview.resize(760, 620);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
    // Validation: samples 0-7 are class 0, 8-11 class 2; the model says class 0 for all.
    const Predictions p{std::vector<int32_t>(12, 0), std::vector<float>(12, 0.9f)};
    preview.setPredictions(p);
    QVERIFY(pageRead(preview));
    QAbstractItemModel* items = preview.gallery()->model();
    QCOMPARE(itemOf(items, 9).data(VerdictRole).toInt(), int(Verdict::Wrong));
    preview.setMode(DatasetPreview::Mode::Misclassified);
    QCOMPARE(preview.shownSamples(), range(8, 12));

    // The training split has no predictions: none shown, and no mistakes to list.
    preview.showSplit(0);
    QCOMPARE(preview.mode(), DatasetPreview::Mode::All);
    QVERIFY(pageRead(preview));
    for (int row = 0; row < items->rowCount(); ++row)
      QCOMPARE(items->index(row, 0).data(VerdictRole).toInt(), int(Verdict::None));
    auto* modes = qobject_cast<QStandardItemModel*>(preview.modeBox()->model());
    QVERIFY(!modes->item(1)->isEnabled());
    preview.setMode(DatasetPreview::Mode::Misclassified);
    QCOMPARE(preview.mode(), DatasetPreview::Mode::All);
    // Predictions arriving meanwhile are kept for their split.
    Predictions later = p;
    later.predicted[0] = 2;
    preview.setPredictions(later);
    QCOMPARE(itemOf(items, 0).data(VerdictRole).toInt(), int(Verdict::None));
    QCOMPARE(preview.predictions().predicted, later.predicted);

    preview.showSplit(1);
    QVERIFY(modes->item(1)->isEnabled());
    QVERIFY(pageRead(preview));
    QCOMPARE(itemOf(items, 0).data(VerdictRole).toInt(), int(Verdict::Wrong));
    QCOMPARE(itemOf(items, 1).data(VerdictRole).toInt(), int(Verdict::Right));

    // A selection (a confusion-matrix cell) is of the evaluated split, whichever is shown.
    preview.showSplit(2);
    preview.showSamples({8, 9}, QStringLiteral("true c, predicted a"));
    QCOMPARE(preview.currentSplit(), 1);
    QCOMPARE(preview.splitBar()->currentIndex(), 1);
    QCOMPARE(preview.mode(), DatasetPreview::Mode::Selection);
    QCOMPARE(preview.visibleSamples(), range(8, 10));
    preview.showSplit(0);
    QCOMPARE(preview.modeBox()->findData(int(DatasetPreview::Mode::Selection)), -1);
    preview.showSplit(1);
    QCOMPARE(preview.modeBox()->findText(QStringLiteral("true c, predicted a")), 2);
  }

  void showAugmentedTransformsTheTrainingPage() {
    std::vector<PreviewSplit> splits = threeSplits();
    auto counting = std::make_shared<Counting>(splits[0].dataset);
    splits[0].dataset = counting;
    DatasetPreview preview;
    preview.setSplits(splits, abc());
    preview.resize(760, 620);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
    QCheckBox* augmented = preview.findChild<QCheckBox*>(QStringLiteral("previewAugmented"));
    QToolButton* reroll = preview.findChild<QToolButton*>(QStringLiteral("previewReroll"));
    QCOMPARE(augmented, preview.augmentedBox());
    QCOMPARE(reroll, preview.rerollButton());

    // Without a transform, nothing to show; with one, only on the training split.
    preview.showSplit(0);
    QVERIFY(!augmented->isEnabled());
    preview.setAugmentation(invert());
    QVERIFY(augmented->isEnabled());
    QVERIFY(!reroll->isEnabled());
    preview.showSplit(1);
    QVERIFY(!augmented->isEnabled());
    preview.showSplit(0);
    QVERIFY(pageRead(preview));

    const QColor dark = tilePixel(preview, 0, 0.05), light = tilePixel(preview, 0, 0.95);
    QVERIFY2(dark.lightness() < 30 && light.lightness() > 225, qPrintable(dark.name() + " " + light.name()));
    const QImage plain = thumbnail(preview, 0);
    QTest::mouseClick(augmented, Qt::LeftButton);
    QVERIFY(preview.showsAugmented());
    QVERIFY(reroll->isEnabled());
    QVERIFY(pageRead(preview));
    const QImage inverted = thumbnail(preview, 0);
    for (int x = 0; x < 8; ++x) QCOMPARE(inverted.pixelColor(x, 4).red(), 255 - plain.pixelColor(x, 4).red());
    QCOMPARE(tilePixel(preview, 0, 0.05), light);
    QCOMPARE(tilePixel(preview, 0, 0.95), dark);
    // Another split is shown as it is; back on training, the toggle still holds.
    preview.showSplit(2);
    QVERIFY(!preview.showsAugmented());
    QVERIFY(pageRead(preview));
    QCOMPARE(thumbnail(preview, 0).pixelColor(3, 3).red(), 230);
    preview.showSplit(0);
    QVERIFY(preview.showsAugmented());
    QVERIFY(pageRead(preview));
    QCOMPARE(tilePixel(preview, 0, 0.05), light);
    QTest::mouseClick(augmented, Qt::LeftButton);
    QVERIFY(!preview.showsAugmented());
    QVERIFY(pageRead(preview));
    QCOMPARE(thumbnail(preview, 0), plain);
    QCOMPARE(tilePixel(preview, 0, 0.05), dark);

    // Random transforms: the same variants until shuffled, and a shuffle reads nothing again.
    preview.setAugmentation(randomGrey());
    QTest::mouseClick(augmented, Qt::LeftButton);
    QVERIFY(pageRead(preview));
    const QColor first = thumbnail(preview, 0).pixelColor(0, 0);
    preview.setClassFilter(1);
    preview.setClassFilter(-1);
    QVERIFY(pageRead(preview));
    QCOMPARE(thumbnail(preview, 0).pixelColor(0, 0), first);
    const int reads = counting->batches;
    QTest::mouseClick(reroll, Qt::LeftButton);
    QVERIFY(pageRead(preview));
    QVERIFY(thumbnail(preview, 0).pixelColor(0, 0) != first);
    QCOMPARE(counting->batches, reads);
    preview.setAugmentation(nullptr);
    QVERIFY(!augmented->isEnabled());
    QVERIFY(!preview.showsAugmented());
  }

  void rgbPicturesShowInColour() {
    // Sample i is pure red, green or blue (i % 3); standardised values are stretched alike.
    auto primary = [](int i, int c, int, int) { return c == i % 3 ? 1.f : 0.f; };
    DatasetPreview preview;
    preview.setSplits(only(pictures(6, 3, 8, 8, primary, [](int i) { return i % 3; })), {"red", "green", "blue"});
    preview.resize(760, 620);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
    QVERIFY(pageRead(preview));
    QVERIFY(preview.showsImages());
    const QList<QLabel*> labels = preview.findChildren<QLabel*>();
    QVERIFY(std::any_of(labels.begin(), labels.end(),
                        [](QLabel* l) { return l->text().contains(QStringLiteral("8\u00d78 RGB")); }));
    QCOMPARE(thumbnail(preview, 0).pixelColor(2, 2), QColor(255, 0, 0));
    QCOMPARE(thumbnail(preview, 1).pixelColor(2, 2), QColor(0, 255, 0));
    QCOMPARE(tilePixel(preview, 2), QColor(0, 0, 255));
    QCOMPARE(tilePixel(preview, 0), QColor(255, 0, 0));

    auto standardised = [](int i, int c, int, int) { return c == i % 3 ? 2.5f : -1.5f; };
    preview.setSplits(only(pictures(3, 3, 8, 8, standardised, [](int i) { return i; })), {"red", "green", "blue"});
    QVERIFY(pageRead(preview));
    QCOMPARE(tilePixel(preview, 1), QColor(0, 255, 0));
  }

  void largePicturesFitTheirTiles() {
    // A 64x64 picture with a white frame; a wide 120x40 one.
    auto framed = [](int, int, int y, int x) { return x < 2 || y < 2 || x > 61 || y > 61 ? 1.f : 0.f; };
    DatasetPreview preview;
    preview.setSplits(only(pictures(4, 1, 64, 64, framed, [](int) { return 0; })), {"framed"});
    preview.resize(760, 620);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
    QVERIFY(pageRead(preview));
    const auto* delegate = static_cast<DatasetTileDelegate*>(preview.gallery()->itemDelegate());
    QCOMPARE(delegate->shownPictureSize(), QSize(64, 64));
    const QRect tile = preview.gallery()->visualRect(preview.gallery()->model()->index(0, 0));
    QVERIFY(tile.contains(delegate->pictureRect(tile)));
    for (const auto& [fx, fy] : {std::pair{0.0, 0.0}, {1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}, {0.5, 0.0}, {0.0, 0.5}})
      QCOMPARE(tilePixel(preview, 0, fx, fy), QColor(Qt::white));
    QCOMPARE(tilePixel(preview, 0, 0.5, 0.5), QColor(Qt::black));

    preview.setSplits(only(pictures(2, 1, 40, 120, framed, [](int) { return 0; })), {"wide"});
    QVERIFY(pageRead(preview));
    QCOMPARE(delegate->shownPictureSize(), QSize(64, 21));
    const QRect wide = preview.gallery()->visualRect(preview.gallery()->model()->index(0, 0));
    QVERIFY(wide.contains(delegate->pictureRect(wide)));
  }

  void aSlowPageLeavesTheWidgetResponsive() {
    DatasetPreview preview;
    preview.resize(760, 620);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
    QSignalSpy shown(&preview, &DatasetPreview::pageShown);
    auto slow = std::make_shared<Gated>(mnist_);
    const auto release = qScopeGuard([&] { slow->open(); });  // a failed check leaves no read held
    // Pages are read in the background: none on this thread, and the reads held back by the
    // gate leave the preview loading, whatever the widget does meanwhile.
    preview.setSplits(only(slow), digitNames());
    QCOMPARE(slow->read_here.load(), 0);
    QVERIFY(preview.isLoading());
    QCOMPARE(preview.placeholderText(), QStringLiteral("Loading…"));  // no page on screen to keep
    QCOMPARE(preview.gallery()->model()->rowCount(), 0);
    // The user moves on before the first page is read: only the second one is shown.
    QTest::mouseClick(preview.nextButton(), Qt::LeftButton);
    QCOMPARE(slow->read_here.load(), 0);
    QVERIFY(preview.isLoading());
    QCOMPARE(shown.count(), 0);
    slow->open();
    QTRY_VERIFY_WITH_TIMEOUT(!preview.isLoading(), 10000);
    QCOMPARE(shown.count(), 1);
    QCOMPARE(preview.currentView(), static_cast<QWidget*>(preview.gallery()));
    QCOMPARE(preview.gallery()->model()->rowCount(), 100);
    QCOMPARE(preview.gallery()->model()->index(0, 0).data(SampleIndexRole).toLongLong(), 100);
    QVERIFY(!thumbnail(preview, 0).isNull());
    // The first page's read ends too (its watcher goes once it has handed its result over), and
    // is dropped.
    QTRY_VERIFY_WITH_TIMEOUT(preview.findChildren<QFutureWatcherBase*>().isEmpty(), 10000);
    QCOMPARE(shown.count(), 1);
    QCOMPARE(preview.gallery()->model()->index(0, 0).data(SampleIndexRole).toLongLong(), 100);
  }

  void handingOverSplitsReadsThePageOnce() {
    // As the dashboard does: the splits, then the augmentation and the column names.
    auto counting = std::make_shared<Counting>(mnist_);
    DatasetPreview preview;
    preview.setSplits(only(counting), digitNames());
    preview.setAugmentation(invert());
    preview.setFeatureNames({});
    QVERIFY(pageRead(preview));
    QCOMPARE(counting->batches, 2);  // the labels (a batch: Counting keeps no label tensor) and the page
  }

  void aPageThatCannotBeReadSaysWhy() {
    DatasetPreview preview;
    preview.setSplits(only(std::make_shared<Broken>(mnist_, 100)), digitNames());
    preview.resize(760, 620);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
    QVERIFY(pageRead(preview));
    QCOMPARE(preview.placeholderText(), QString());
    QCOMPARE(preview.gallery()->model()->rowCount(), 100);

    QTest::mouseClick(preview.nextButton(), Qt::LeftButton);
    QVERIFY(pageRead(preview));
    QCOMPARE(preview.placeholderText(),
             QStringLiteral("Cannot show this page: /photos/seven/img_100.png: truncated PNG"));
    QCOMPARE(preview.gallery()->model()->rowCount(), 0);
    QCOMPARE(preview.pager()->pageLabel()->text(), QStringLiteral("Page 2 of 3"));

    // The other pages still show.
    QTest::mouseClick(preview.previousButton(), Qt::LeftButton);
    QVERIFY(pageRead(preview));
    QCOMPARE(preview.placeholderText(), QString());
    QCOMPARE(preview.gallery()->model()->rowCount(), 100);
    QVERIFY(!thumbnail(preview, 99).isNull());

    // So does the augmented page, and its error alike.
    std::vector<PreviewSplit> splits = only(std::make_shared<Broken>(mnist_, 100));
    splits[0].augmentable = true;
    preview.setSplits(splits, digitNames());
    preview.setAugmentation(invert());
    QTest::mouseClick(preview.augmentedBox(), Qt::LeftButton);
    QVERIFY(pageRead(preview));
    QVERIFY(preview.showsAugmented());
    QCOMPARE(preview.gallery()->model()->rowCount(), 100);
    preview.setPage(2);
    QVERIFY(pageRead(preview));
    QVERIFY(preview.placeholderText().startsWith(QStringLiteral("Cannot show this page: /photos/seven/img_200.png")));
  }

  void confusionMatrixSumsAndReportsClicks() {
    ConfusionMatrixView view;
    const std::vector<int64_t> m = mnistLikeConfusion();
    view.setMatrix(m, kClasses, digitNames());
    view.resize(520, 460);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCOMPARE(view.total(), std::accumulate(m.begin(), m.end(), int64_t(0)));
    QCOMPARE(view.total(), int64_t(10000));
    QCOMPARE(view.count(4, 9), int64_t(14));
    QCOMPARE(view.count(4, 4), int64_t(982 - 14 - 3));
    QCOMPARE(view.count(10, 0), int64_t(0));
    QVERIFY(view.countsShown());
    QCOMPARE(view.cellToolTip(4, 9), QStringLiteral("true 4, predicted 9: 14 samples (1.4% of 4s)"));
    QHelpEvent help(QEvent::ToolTip, view.cellRect(4, 9).center(), view.mapToGlobal(view.cellRect(4, 9).center()));
    QApplication::sendEvent(&view, &help);
    QTRY_VERIFY(QToolTip::isVisible());
    QCOMPARE(QToolTip::text(), view.cellToolTip(4, 9));
    QToolTip::hideText();

    QSignalSpy clicked(&view, &ConfusionMatrixView::cellClicked);
    const QRect cell = view.cellRect(4, 9);
    QVERIFY(view.rect().contains(cell));
    QCOMPARE(view.cellAt(cell.center()), std::make_pair(4, 9));
    QTest::mouseClick(&view, Qt::LeftButton, Qt::NoModifier, cell.center());
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.at(0).at(0).toInt(), 4);
    QCOMPARE(clicked.at(0).at(1).toInt(), 9);
    QTest::mouseClick(&view, Qt::LeftButton, Qt::NoModifier, view.cellRect(0, 0).center());
    QCOMPARE(clicked.count(), 2);
    QCOMPARE(clicked.at(1).at(0).toInt(), 0);
    QTest::mouseClick(&view, Qt::LeftButton, Qt::NoModifier, QPoint(2, 2));  // outside the grid
    QCOMPARE(clicked.count(), 2);

    // Cells are adjacent squares; the matrix fits the widget.
    QCOMPARE(view.cellRect(4, 9).left(), view.cellRect(4, 8).right() + 1);
    QCOMPARE(view.cellRect(5, 9).top(), view.cellRect(4, 9).bottom() + 1);
    QVERIFY(view.rect().contains(view.cellRect(9, 9)));

    // Many classes in a small widget: the cells shrink and the counts are left out.
    std::vector<int64_t> big(40 * 40, 1);
    view.setMatrix(big, 40, {});
    view.resize(260, 240);
    QVERIFY(!view.countsShown());
    QVERIFY(view.rect().contains(view.cellRect(39, 39)));
    QVERIFY(view.cellRect(39, 39).width() >= 3);
    view.setMatrix({1, 2, 3}, 2, {});  // the wrong size: empty
    QCOMPARE(view.total(), int64_t(0));
    QCOMPARE(view.cellRect(0, 0), QRect());
  }

  // Labelled texts show as lines of their class and text, filtered and counted by class; a
  // mistake says what the model took it for.
  void labelledTextsShowWithTheirClass() {
    auto texts = std::make_shared<data::TextClassDataset>(
        std::vector<data::TextClass>{{"female", {U"Anna", U"Zoë", U"Eve"}, "female.txt"},
                                     {"male", {U"Bob", U"Tom\tTim"}, "male.txt"}},
        data::TextClassOptions{}, "names");
    DatasetPreview preview;
    preview.setSplits(only(texts), {"female", "male"});
    preview.resize(600, 400);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
    QVERIFY(pageRead(preview));
    QVERIFY(!preview.showsImages());
    auto* text = preview.findChild<QPlainTextEdit*>(QStringLiteral("previewWindows"));
    QCOMPARE(preview.currentView(), static_cast<QWidget*>(text));
    const QStringList lines = text->toPlainText().split(QLatin1Char('\n'));
    QCOMPARE(lines, QStringList({"#0  female  Anna", "#1  female  Zoë", "#2  female  Eve", "#3  male    Bob",
                                 QStringLiteral("#4  male    Tom\u21E5Tim")}));
    QCOMPARE(preview.statusText(), QStringLiteral("5 samples"));
    QCOMPARE(preview.histogramCount(0), 3);
    QCOMPARE(preview.histogramCount(1), 2);
    QVERIFY(preview.classBox()->isVisible());

    preview.setClassFilter(1);
    QCOMPARE(text->toPlainText(), QStringLiteral("#3  male    Bob\n#4  male    Tom\u21E5Tim"));
    preview.setClassFilter(-1);
    preview.setPredictions({{0, 1, 0, 1, 1}, {0.9f, 0.75f, 0.6f, 0.8f, 0.7f}});
    QCOMPARE(text->toPlainText().split(QLatin1Char('\n')).at(1), QStringLiteral("#1  female  Zoë   (predicted male, 75.0%)"));
    QCOMPARE(text->toPlainText().split(QLatin1Char('\n')).at(0), QStringLiteral("#0  female  Anna"));
  }

  void viewsFollowTheTheme() {
    ConfusionMatrixView view;
    view.setMatrix(mnistLikeConfusion(), kClasses, digitNames());
    view.resize(520, 460);
    DatasetPreview preview;
    showPreview(preview);
    auto pixelAt = [](QWidget* w, QPoint p) { return w->grab().toImage().pixelColor(p); };
    const QPoint empty_cell = view.cellRect(0, 9).topLeft() + QPoint(4, 4);
    QWidget* tiles = preview.gallery()->viewport();
    const QPoint tile_background = preview.gallery()->visualRect(preview.gallery()->model()->index(0, 0)).topLeft() + QPoint(5, 40);
    const QColor light_cell = pixelAt(&view, empty_cell), light_tile = pixelAt(tiles, tile_background);
    const QIcon light_swatch = preview.classBox()->itemIcon(1);

    ThemeManager::instance().setMode(ThemeMode::Dark);
    QCoreApplication::processEvents();  // widgets take the new app palette from a posted event
    QVERIFY(pixelAt(&view, empty_cell).lightness() < light_cell.lightness() - 100);
    QVERIFY(pixelAt(tiles, tile_background).lightness() < light_tile.lightness() - 100);
    QVERIFY(preview.classBox()->itemIcon(1).cacheKey() != light_swatch.cacheKey());  // swatches redrawn
  }

  void screenshots() {
    for (ThemeMode mode : {ThemeMode::Light, ThemeMode::Dark}) {
      ThemeManager::instance().setMode(mode);
      const QString suffix = toString(mode);

      DatasetPreview preview;
      showPreview(preview);
      preview.setPredictions(makePredictions());
      preview.gallery()->setCurrentIndex(preview.gallery()->model()->index(2, 0));
      QVERIFY(preview.grab().save(QDir::temp().filePath("preview-" + suffix + ".png")));

      DatasetPreview table;
      table.setSplits(only(featureDataset(kSamples)), {"setosa", "versicolor", "virginica"});
      table.setFeatureNames({"sepal length", "sepal width", "petal length", "petal width"});
      table.setPredictions(featurePredictions());
      table.resize(640, 420);
      table.show();
      QVERIFY(QTest::qWaitForWindowExposed(&table));
      QVERIFY(pageRead(table));
      QVERIFY(table.grab().save(QDir::temp().filePath("preview-table-" + suffix + ".png")));

      ConfusionMatrixView view;
      view.setMatrix(mnistLikeConfusion(), kClasses, digitNames());
      view.resize(540, 480);
      view.show();
      QVERIFY(QTest::qWaitForWindowExposed(&view));
      hover(&view, view.cellRect(4, 9).center());
      QCOMPARE(view.hoveredCell(), std::make_pair(4, 9));
      QVERIFY(view.grab().save(QDir::temp().filePath("confusion-" + suffix + ".png")));
    }
  }
};

QTEST_MAIN(TestDatasetViews)
#include "test_widgets_dataset_views.moc"
