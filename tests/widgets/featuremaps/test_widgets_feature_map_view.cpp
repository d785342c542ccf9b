// The Feature Maps view on tensors made up here, driven as a user drives it: a picture-shaped
// output becomes one tile per channel at its own resolution, each on its own range (its largest
// value the top of the colour map, its least the bottom); a sequence a position x feature heat map
// named by its tokens; a vector a strip whose feature a click picks; a convolution's filters tiles
// of their kernels, averaged over the inputs or in colour for three; the gallery pictures or texts.
#include <QListWidget>
#include <QPushButton>
#include <QtTest/QtTest>

#include "featuremaps/activation_gallery.h"
#include "featuremaps/colour_map.h"
#include "featuremaps/feature_map_view.h"
#include "featuremaps/heat_matrix.h"
#include "featuremaps/tile_grid.h"
#include "tensor/tensor.h"

using namespace plexus;
using widgets::FeatureMapView;

namespace {

Tensor ramp(const Shape& shape, float scale) {
  std::vector<float> v(size_t(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * float(i % 7) - 1.0f;
  return from_buffer(v.data(), shape);
}

}  // namespace

class TestWidgetsFeatureMapView : public QObject {
  Q_OBJECT

 private slots:
  void channelsSequencesVectorsAndFilters() {
    FeatureMapView view;
    view.resize(360, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.showHint("Draw a digit");
    QVERIFY(view.showsHint());
    QCOMPARE(view.hint(), QString("Draw a digit"));

    // [3, 5, 4]: three 4 x 5 tiles; channel 1 is ten times channel 0, yet looks the same.
    std::vector<float> v(60);
    for (int i = 0; i < 20; ++i) v[size_t(i)] = float(i), v[size_t(20 + i)] = 10.0f * float(i), v[size_t(40 + i)] = 5;
    view.showOutput("conv1", "Checkpoint", from_buffer(v.data(), {3, 5, 4}));
    QVERIFY(!view.showsHint());
    QCOMPARE(view.layout(), FeatureMapView::Layout::Channels);
    widgets::TileGrid* grid = view.channelGrid();
    QCOMPARE(grid->count(), 3);
    QCOMPARE(grid->tiles()[0].image.size(), QSize(4, 5));
    QCOMPARE(grid->tiles()[0].image, grid->tiles()[1].image);
    QCOMPARE(grid->tiles()[0].image.pixel(0, 0), widgets::viridis(0));
    QCOMPARE(grid->tiles()[0].image.pixel(3, 4), widgets::viridis(1));
    QCOMPARE(grid->tiles()[2].image.pixel(2, 2), widgets::viridis(0));  // a constant channel
    QCOMPARE(grid->tiles()[2].caption, QString("2"));
    QSignalSpy clicked(&view, &FeatureMapView::channelClicked);
    QTest::mouseClick(grid, Qt::LeftButton, {}, grid->tileRect(1).center());
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.front().front().toInt(), 1);
    QCOMPARE(view.selectedChannel(), 1);
    // New values of the same node and shape (live weights) keep the pick; another node drops it.
    view.showOutput("conv1", "Live", from_buffer(v.data(), {3, 5, 4}));
    QCOMPARE(view.selectedChannel(), 1);
    view.showOutput("conv2", "Live", from_buffer(v.data(), {3, 5, 4}));
    QCOMPARE(view.selectedChannel(), -1);

    // [4, 6] with tokens: a sequence heat map, its rows named.
    view.showOutput("embed", "Checkpoint", ramp({4, 6}, 0.5f), {"a", "b", "c", "·"});
    QCOMPARE(view.layout(), FeatureMapView::Layout::Sequence);
    QVERIFY(view.matrix()->isVisible());
    QVERIFY(!grid->isVisible());
    QCOMPARE(view.matrix()->rows(), 4);
    QCOMPARE(view.matrix()->columns(), 6);
    QCOMPARE(view.matrix()->rowLabels(), QStringList({"a", "b", "c", "·"}));
    QCOMPARE(view.matrix()->values(), ramp({4, 6}, 0.5f).to_vector());

    // [10]: a strip; a click on its last feature picks it.
    view.showOutput("fc1", "Checkpoint", ramp({10}, 1.0f));
    QCOMPARE(view.layout(), FeatureMapView::Layout::Vector);
    QCOMPARE(view.matrix()->rows(), 1);
    QCOMPARE(view.matrix()->columns(), 10);
    clicked.clear();
    const QPoint last(view.matrix()->width() - 3, view.matrix()->height() / 3);
    QCOMPARE(view.matrix()->columnAt(last), 9);
    QTest::mouseClick(view.matrix(), Qt::LeftButton, {}, last);
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.front().front().toInt(), 9);
    QCOMPARE(view.selectedChannel(), 9);

    // Filters [2, 2, 3, 3]: the mean over the two inputs; [2, 3, 2, 2]: in colour.
    std::vector<float> f(36, 0.0f);
    f[0] = 1, f[9] = 3;  // filter 0 at (0, 0): mean 2, its largest
    f[18 + 4] = -4;      // filter 1 at (1, 1): mean -2, its least
    view.showFilters(from_buffer(f.data(), {2, 2, 3, 3}));
    QVERIFY(view.filterGrid()->isVisible());
    QCOMPARE(view.filterGrid()->count(), 2);
    QCOMPARE(view.filterGrid()->tiles()[0].image.size(), QSize(3, 3));
    QCOMPARE(view.filterGrid()->tiles()[0].image.pixel(0, 0), widgets::viridis(1));
    QCOMPARE(view.filterGrid()->tiles()[1].image.pixel(1, 1), widgets::viridis(0));
    std::vector<float> rgb(24, 0.0f);
    rgb[0] = 1;  // filter 0, red input, (0, 0)
    view.showFilters(from_buffer(rgb.data(), {2, 3, 2, 2}));
    QCOMPARE(view.filterGrid()->tiles()[0].image.pixel(0, 0), qRgb(255, 0, 0));
    QCOMPARE(view.filterGrid()->tiles()[0].image.pixel(1, 1), qRgb(0, 0, 0));
    view.showFilters(Tensor());
    QVERIFY(!view.filterGrid()->isVisible());
  }

  void theGalleryShowsPicturesOrTextsAndTellsWhichWasClicked() {
    widgets::ActivationGallery gallery;
    gallery.resize(360, 400);
    QSignalSpy clicked(&gallery, &widgets::ActivationGallery::exampleClicked);
    QSignalSpy stop(&gallery, &widgets::ActivationGallery::stopRequested);
    gallery.show();
    QVERIFY(QTest::qWaitForWindowExposed(&gallery));
    gallery.showProgress("conv1, channel 3", 500, 2000);
    QVERIFY(gallery.busy());
    QTest::mouseClick(gallery.findChild<QPushButton*>(), Qt::LeftButton);
    QCOMPARE(stop.count(), 1);

    QImage picture(28, 28, QImage::Format_Grayscale8);
    picture.fill(128);
    gallery.showExamples("conv1, channel 3", {{picture, {}, 2.5f, {}}, {picture, {}, 1.5f, {}}});
    QVERIFY(!gallery.busy());
    QCOMPARE(gallery.pictures()->count(), 2);
    QCOMPARE(gallery.pictures()->tiles()[1].caption, QString("1.50"));
    QTest::mouseClick(gallery.pictures(), Qt::LeftButton, {}, gallery.pictures()->tileRect(1).center());
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.front().front().toInt(), 1);

    gallery.showExamples("embed, feature 2", {{{}, "hello", 0.9f, {}}, {{}, "world", 0.1f, {}}});
    QVERIFY(gallery.texts()->isVisible());
    QCOMPARE(gallery.texts()->count(), 2);
    QVERIFY(gallery.texts()->item(0)->text().endsWith("hello"));
    clicked.clear();
    QTest::mouseClick(gallery.texts()->viewport(), Qt::LeftButton, {},
                      gallery.texts()->visualItemRect(gallery.texts()->item(1)).center());
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.front().front().toInt(), 1);
  }
};

QTEST_MAIN(TestWidgetsFeatureMapView)
#include "test_widgets_feature_map_view.moc"
