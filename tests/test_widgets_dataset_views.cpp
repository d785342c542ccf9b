// The dataset views: the preview pages through a generated 28x28 image dataset (written as real
// MNIST IDX files) and a feature-vector dataset, filters by class, counts classes, marks the
// model's mistakes and lists them most confident first, shows a given selection, RGB pictures
// in colour and large ones whole; the confusion matrix sums, hit-tests and reports clicks. Also
// writes screenshots of both, light and dark, to the temp dir for a human to look at.
#include <QAbstractItemModel>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QMouseEvent>
#include <QListView>
#include <QPainter>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QToolTip>
#include <functional>
#include <memory>
#include <numeric>

#include "common/theme.h"
#include "dashboard/confusion_matrix.h"
#include "data/mnist.h"
#include "dataset/dataset_histogram.h"
#include "dataset/dataset_pager.h"
#include "dataset/dataset_preview.h"
#include "dataset/dataset_tile_delegate.h"

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
    preview.setDataset(mnist_, digitNames(), QStringLiteral("MNIST · test split"));
    preview.resize(760, 620);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
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
    QCOMPARE(preview.gallery()->model()->rowCount(), 5);
    QCOMPARE(preview.gallery()->model()->index(0, 0).data(SampleIndexRole).toLongLong(), 240);

    preview.showSamples({}, QStringLiteral("true 1, predicted 7"));
    QVERIFY(preview.visibleSamples().empty());
    QCOMPARE(preview.currentView()->metaObject()->className(), "QLabel");
  }

  void featureVectorsShowAsATable() {
    DatasetPreview preview;
    preview.setDataset(featureDataset(kSamples), {"setosa", "versicolor", "virginica"}, QStringLiteral("iris.csv"));
    preview.setFeatureNames({"sepal length", "sepal width", "petal length", "petal width"});
    preview.resize(640, 480);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
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
    QCOMPARE(table->rowCount(), 50);
    QCOMPARE(table->headerData(0, Qt::Vertical).toLongLong(), 200);

    preview.setPredictions(featurePredictions());
    QCOMPARE(table->columnCount(), 7);
    QCOMPARE(table->index(0, 5).data(VerdictRole).toInt(), int(Verdict::Wrong));  // sample 200
    QCOMPARE(table->index(0, 6).data().toString(), QStringLiteral("60.0%"));
    QCOMPARE(table->index(0, 5).data(Qt::ForegroundRole).value<QColor>(), ThemeManager::instance().theme().error);

    // Regression: no classes, so no filter or histogram; the target is a number.
    preview.setDataset(featureDataset(10), {}, QStringLiteral("housing.csv"));
    QVERIFY(preview.histogram()->isHidden());
    QVERIFY(preview.classBox()->isHidden());
    QCOMPARE(table->rowCount(), 10);
    QCOMPARE(table->headerData(4, Qt::Horizontal).toString(), QStringLiteral("Target"));
    QCOMPARE(table->index(5, 4).data().toString(), QStringLiteral("2"));
  }

  void rgbPicturesShowInColour() {
    // Sample i is pure red, green or blue (i % 3); standardised values are stretched alike.
    auto primary = [](int i, int c, int, int) { return c == i % 3 ? 1.f : 0.f; };
    DatasetPreview preview;
    preview.setDataset(pictures(6, 3, 8, 8, primary, [](int i) { return i % 3; }), {"red", "green", "blue"}, "rgb");
    preview.resize(760, 620);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
    QVERIFY(preview.showsImages());
    const QList<QLabel*> labels = preview.findChildren<QLabel*>();
    QVERIFY(std::any_of(labels.begin(), labels.end(),
                        [](QLabel* l) { return l->text().contains(QStringLiteral("8\u00d78 RGB")); }));
    QCOMPARE(thumbnail(preview, 0).pixelColor(2, 2), QColor(255, 0, 0));
    QCOMPARE(thumbnail(preview, 1).pixelColor(2, 2), QColor(0, 255, 0));
    QCOMPARE(tilePixel(preview, 2), QColor(0, 0, 255));
    QCOMPARE(tilePixel(preview, 0), QColor(255, 0, 0));

    auto standardised = [](int i, int c, int, int) { return c == i % 3 ? 2.5f : -1.5f; };
    preview.setDataset(pictures(3, 3, 8, 8, standardised, [](int i) { return i; }), {"red", "green", "blue"}, "rgb");
    QCOMPARE(tilePixel(preview, 1), QColor(0, 255, 0));
  }

  void largePicturesFitTheirTiles() {
    // A 64x64 picture with a white frame; a wide 120x40 one.
    auto framed = [](int, int, int y, int x) { return x < 2 || y < 2 || x > 61 || y > 61 ? 1.f : 0.f; };
    DatasetPreview preview;
    preview.setDataset(pictures(4, 1, 64, 64, framed, [](int) { return 0; }), {"framed"}, "framed");
    preview.resize(760, 620);
    preview.show();
    QVERIFY(QTest::qWaitForWindowExposed(&preview));
    const auto* delegate = static_cast<DatasetTileDelegate*>(preview.gallery()->itemDelegate());
    QCOMPARE(delegate->shownPictureSize(), QSize(64, 64));
    const QRect tile = preview.gallery()->visualRect(preview.gallery()->model()->index(0, 0));
    QVERIFY(tile.contains(delegate->pictureRect(tile)));
    for (const auto& [fx, fy] : {std::pair{0.0, 0.0}, {1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}, {0.5, 0.0}, {0.0, 0.5}})
      QCOMPARE(tilePixel(preview, 0, fx, fy), QColor(Qt::white));
    QCOMPARE(tilePixel(preview, 0, 0.5, 0.5), QColor(Qt::black));

    preview.setDataset(pictures(2, 1, 40, 120, framed, [](int) { return 0; }), {"wide"}, "wide");
    QCOMPARE(delegate->shownPictureSize(), QSize(64, 21));
    const QRect wide = preview.gallery()->visualRect(preview.gallery()->model()->index(0, 0));
    QVERIFY(wide.contains(delegate->pictureRect(wide)));
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
      table.setDataset(featureDataset(kSamples), {"setosa", "versicolor", "virginica"}, QStringLiteral("iris.csv"));
      table.setFeatureNames({"sepal length", "sepal width", "petal length", "petal width"});
      table.setPredictions(featurePredictions());
      table.resize(640, 420);
      table.show();
      QVERIFY(QTest::qWaitForWindowExposed(&table));
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
