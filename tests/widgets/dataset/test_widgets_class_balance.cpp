// The class balance chart of the editor's project page (dataset/dataset_class_balance.h): the
// counts it is given drawn as bars in proportion, in the classes' colours, with a summary of the
// imbalance; a generated CSV file's training split counted in the background as a run splits it;
// a regression table and an unreadable file hiding it.
#include <QImage>
#include <QLocale>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <fstream>

#include "common/theme.h"
#include "dataset/dataset_class_balance.h"
#include "dataset/dataset_class_colours.h"
#include "graph/dataset_info.h"
#include "session/evaluation_report.h"

using namespace plexus;
using plexus::widgets::ClassBalanceChart;

namespace {

// Pixels of exactly this colour: a bar's inside (its antialiased edge blends).
int64_t pixelsOf(const QImage& image, const QColor& colour) {
  int64_t n = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) n += image.pixelColor(x, y).rgb() == colour.rgb();
  return n;
}

}  // namespace

class TestClassBalance : public QObject {
  Q_OBJECT

 private slots:
  void drawsTheCountsInProportion() {
    ClassBalanceChart chart;
    chart.setCounts({900, 100, 0}, {QStringLiteral("cat"), QStringLiteral("dog"), QString()});
    QVERIFY(!chart.isHidden());
    QCOMPARE(chart.classes(), 3);
    QCOMPARE(chart.count(0), int64_t(900));
    QCOMPARE(chart.count(1), int64_t(100));
    QCOMPARE(chart.className(1), QStringLiteral("dog"));
    QCOMPARE(chart.className(2), QStringLiteral("2"));  // unnamed: its index
    QVERIFY2(chart.summary().contains(QLocale().toString(1000) + QStringLiteral(" training examples")), qPrintable(chart.summary()));
    QVERIFY2(chart.summary().contains(QStringLiteral("1 class without any")), qPrintable(chart.summary()));
    chart.setCounts({900, 100}, {QStringLiteral("cat"), QStringLiteral("dog")});
    QVERIFY2(chart.summary().contains(QStringLiteral("9.0 ×")), qPrintable(chart.summary()));

    chart.resize(320, chart.sizeHint().height());
    const QImage image = chart.grab().toImage();
    const bool dark = widgets::ThemeManager::instance().theme().dark;
    const int64_t cat = pixelsOf(image, widgets::classColour(0, dark)), dog = pixelsOf(image, widgets::classColour(1, dark));
    QVERIFY2(dog > 0 && double(cat) / double(dog) > 6 && double(cat) / double(dog) < 12,
             qPrintable(QStringLiteral("cat %1, dog %2 pixels").arg(cat).arg(dog)));

    chart.setCounts({}, {});
    QVERIFY(chart.isHidden());
  }

  // What a run with this seed and validation share trains on, counted off the UI thread.
  void countsTheTrainingSplitOfAFile() {
    QTemporaryDir dir;
    const std::string csv = dir.filePath(QStringLiteral("t.csv")).toStdString();
    {
      std::ofstream out(csv);
      out << "x,label\n";
      for (int i = 0; i < 500; ++i) out << i << ',' << (i % 10 == 0 ? "rare" : "common") << '\n';
    }
    const graph::DatasetBinding binding{"csv", csv, "label", "classification"};
    ClassBalanceChart chart;
    QSignalSpy shown(&chart, &ClassBalanceChart::countsShown);
    chart.showDataset(binding, 3, 0.25);
    QVERIFY(shown.wait(10000));
    const graph::DatasetSplits splits = graph::open_dataset(binding, 3, 0.25);
    std::vector<int64_t> expected(2, 0);
    for (float t : session::split_targets(*splits.train)) ++expected[size_t(t)];
    QCOMPARE(chart.classes(), 2);
    QCOMPARE(chart.count(0), expected[0]);
    QCOMPARE(chart.count(1), expected[1]);
    QCOMPARE(chart.count(0) + chart.count(1), splits.train->size());
    QCOMPARE(chart.className(1), QStringLiteral("rare"));
    QVERIFY(!chart.isHidden());

    chart.showDataset(binding, 3, 0.25);  // nothing changed: not counted again
    QVERIFY(!shown.wait(300));

    {
      std::ofstream out(csv);
      out << "x,y\n";
      for (int i = 0; i < 50; ++i) out << i << ',' << 0.5 * i << '\n';
    }
    chart.showDataset({"csv", csv, "y", "regression"}, 3, 0.25);
    QVERIFY(shown.wait(10000));
    QVERIFY(chart.isHidden());
    chart.showDataset({"csv", csv + ".missing", "label", "classification"}, 3, 0.25);
    QVERIFY(shown.wait(10000));
    QVERIFY(chart.isHidden());
  }
};

QTEST_MAIN(TestClassBalance)
#include "test_widgets_class_balance.moc"
