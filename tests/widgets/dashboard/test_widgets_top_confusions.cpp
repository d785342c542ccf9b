// The top-confusions list: a character model's symbols read as signs where they would print as
// nothing, the rows as the core ranks them, and a click on a row asks for its samples as a
// confusion-matrix cell does.
#include <QSignalSpy>
#include <QTest>
#include <QTreeWidget>

#include "dashboard/top_confusions.h"

using namespace plexus::widgets;

class TestWidgetsTopConfusions : public QObject {
  Q_OBJECT

 private slots:
  void symbolsThatPrintAsNothingReadAsSigns() {
    QCOMPARE(TopConfusionsView::readable(" "), QString("␣"));
    QCOMPARE(TopConfusionsView::readable("\n"), QString("↵"));
    QCOMPARE(TopConfusionsView::readable("\t"), QString("⇥"));
    QCOMPARE(TopConfusionsView::readable(QString(QChar(0x1b))), QString(QChar(0x241b)));  // escape: ␛
    QCOMPARE(TopConfusionsView::readable("a"), QString("a"));
    QCOMPARE(TopConfusionsView::readable("new york"), QString("new york"));  // a class name keeps its spaces
  }

  void rowsAreTheMostFrequentMistakesAndAClickAsksForThem() {
    TopConfusionsView view;
    view.resize(500, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    // Rows are true classes: ' ' is taken for '\n' 6 times, 'e' for 'a' 3 times.
    view.setMatrix({5, 0, 0, 0,  //
                    6, 4, 0, 0,  //
                    0, 0, 9, 0,  //
                    0, 0, 3, 7},
                   4, {"\n", " ", "a", "e"});
    QCOMPARE(view.rows(), 2);
    QCOMPARE(view.rowText(0), (QStringList{"␣", "↵", "6", "60.0 %"}));
    QCOMPARE(view.rowText(1), (QStringList{"e", "a", "3", "30.0 %"}));
    QCOMPARE(view.title(), QString("Top confusions of 4 classes (34 examples, 73.5 % right)"));

    QSignalSpy clicked(&view, &TopConfusionsView::cellClicked);
    auto* list = view.findChild<QTreeWidget*>(QStringLiteral("topConfusions"));
    const QRect row = list->visualItemRect(list->topLevelItem(1));
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, row.center());
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.at(0).at(0).toInt(), 3);
    QCOMPARE(clicked.at(0).at(1).toInt(), 2);

    view.setMatrix({5, 0, 0, 5}, 2, {});
    QCOMPARE(view.rows(), 0);
    QCOMPARE(view.title(), QString("No mistakes among 10 examples"));
  }
};

QTEST_MAIN(TestWidgetsTopConfusions)
#include "test_widgets_top_confusions.moc"
