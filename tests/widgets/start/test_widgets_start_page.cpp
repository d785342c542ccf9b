// The start page as a person meets it: the recent projects with their folder and date (a
// missing one greyed, not offered, and removable), the templates and the examples as cards
// with a picture of their graph drawn by the editor's scene, their description and dataset,
// and every choice reached by mouse and by keyboard (Tab order, Enter) as a signal.
#include <QtTest/QtTest>

#include <QDir>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QTemporaryDir>

#include "common/theme.h"
#include "graph/project.h"
#include "start/start_page.h"

using namespace plexus;
using widgets::StartItem;
using widgets::StartPage;
using widgets::StartProject;

namespace {

graph::Graph example(const char* name) {
  return graph::load_project(std::string(PLEXUS_SOURCE_DIR "/examples/") + name);
}

StartProject project(const QString& key, const QString& title, const char* file, bool present) {
  const graph::Graph g = example(file);
  StartProject p;
  p.key = key;
  p.title = title;
  p.description = QString::fromStdString(g.description);
  p.graph = g;
  p.category = QStringLiteral("Convolution");
  p.dataset = QStringLiteral("MNIST, data/mnist");
  p.dataset_present = present;
  p.dataset_note = QStringLiteral("bash scripts/fetch-mnist");
  return p;
}

QStringList labelTexts(QWidget* w) {
  QStringList out;
  for (const QLabel* l : w->findChildren<QLabel*>()) out << l->text();
  return out;
}

// How many pixels of the image differ from its corner (the canvas colour).
int drawnPixels(const QImage& image) {
  const QRgb background = image.pixel(0, 0);
  int n = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) n += image.pixel(x, y) != background;
  return n;
}

}  // namespace

class TestWidgetsStartPage : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

 private slots:
  void recentProjectsShowNameFolderAndDateAndOpenOnClick() {
    const QString kept = dir_.filePath("kept.plexus"), gone = dir_.filePath("gone.plexus");
    QFile file(kept);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("{}");
    file.close();
    StartPage page;
    page.resize(1280, 800);
    page.setRecentFiles({kept, gone});
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QSignalSpy opened(&page, &StartPage::openRequested);
    QSignalSpy forget(&page, &StartPage::forgetMissingRequested);

    const QList<StartItem*> items = page.recentItems();
    QCOMPARE(items.size(), 2);
    const QStringList first = labelTexts(items[0]);
    QVERIFY2(first.contains("kept"), qPrintable(first.join('|')));
    const QDateTime modified = QFileInfo(kept).lastModified();
    QVERIFY2(first.contains(QLocale().toString(modified.date(), QLocale::ShortFormat) + "  " +
                            QLocale().toString(modified.time(), "HH:mm")),
             qPrintable(first.join('|')));
    QCOMPARE(items[0]->toolTip(), QDir::toNativeSeparators(kept));
    QTest::mouseClick(items[0], Qt::LeftButton);
    QCOMPARE(opened.count(), 1);
    QCOMPARE(opened[0][0].toString(), kept);

    // A project that is gone: greyed, said so, and not offered.
    QVERIFY(!items[1]->isEnabled());
    QVERIFY(labelTexts(items[1]).contains("Not found"));
    QVERIFY(items[1]->toolTip().contains("no longer there"));
    QTest::mouseClick(items[1], Qt::LeftButton);
    QCOMPARE(opened.count(), 1);
    auto* remove = page.findChild<QPushButton*>("startForgetMissing");
    QVERIFY(remove && remove->isVisible());
    QTest::mouseClick(remove, Qt::LeftButton);
    QCOMPARE(forget.count(), 1);

    page.setRecentFiles({kept});  // what the window does then
    QCOMPARE(page.recentItems().size(), 1);
    QVERIFY(!page.findChild<QPushButton*>("startForgetMissing"));
  }

  void examplesAreCardsWithAPictureTheirDescriptionAndTheirData() {
    StartPage page;
    page.resize(1280, 800);
    page.setExamples({project("/x/mnist_mlp.plexus", "mnist_mlp", "mnist_mlp.plexus", true),
                      project("/x/residual_mlp.plexus", "residual_mlp", "residual_mlp.plexus", false)});
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QSignalSpy opened(&page, &StartPage::openRequested);
    const QList<StartItem*> cards = page.exampleItems();
    QCOMPARE(cards.size(), 2);
    const std::string description = example("residual_mlp.plexus").description;
    QVERIFY(!description.empty());
    const QStringList texts = labelTexts(cards[1]);
    QVERIFY(texts.contains("residual_mlp"));
    QVERIFY(texts.contains(QString::fromStdString(description)));
    // The dataset; missing data said so, with where it comes from; present data said so.
    QCOMPARE(cards[1]->findChild<QWidget*>("startDataset")->toolTip(), QString("Dataset: MNIST, data/mnist"));
    QVERIFY(texts.contains(QString::fromUtf8("⚠ Its data is not on this machine")));
    QVERIFY(texts.contains("bash scripts/fetch-mnist"));
    QVERIFY(labelTexts(cards[0]).contains(QString::fromUtf8("✔ Its data is on this machine")));
    QVERIFY(!labelTexts(cards[0]).contains("bash scripts/fetch-mnist"));
    QVERIFY(cards[0]->toolTip().contains("bash scripts/fetch-mnist"));
    auto* status = cards[1]->findChild<QLabel*>("startDataStatus");
    QCOMPARE(status->palette().color(status->foregroundRole()), widgets::ThemeManager::instance().theme().warning);

    // The picture is the graph drawn: most of a card's width, and not an empty canvas.
    for (StartItem* card : cards) {
      QVERIFY(card->preview());
      const QImage image = card->preview()->image();
      QVERIFY(!image.isNull());
      QVERIFY2(image.width() >= card->width() * 3 / 4, qPrintable(QString::number(image.width())));
      QVERIFY2(drawnPixels(image) > image.width() * image.height() / 50, "the picture is (nearly) empty");
    }
    // Cards flow: both in one row at this width, each at least as wide as the grid's minimum.
    QCOMPARE(cards[0]->y(), cards[1]->y());
    QVERIFY(cards[1]->x() > cards[0]->x() + cards[0]->width());
    page.resize(400, 800);  // a narrow window: one column, the page scrolls
    QTRY_VERIFY(cards[1]->y() > cards[0]->y() + cards[0]->height() - 1);

    QTest::mouseClick(cards[1], Qt::LeftButton);
    QCOMPARE(opened.count(), 1);
    QCOMPARE(opened[0][0].toString(), QString("/x/residual_mlp.plexus"));
  }

  void theThemeRedrawsThePictures() {
    auto& themes = widgets::ThemeManager::instance();
    themes.setMode(widgets::ThemeMode::Light);
    StartPage page;
    page.resize(1000, 700);
    page.setExamples({project("/x/mnist_mlp.plexus", "mnist_mlp", "mnist_mlp.plexus", true)});
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    const QRgb light = page.exampleItems()[0]->preview()->image().pixel(0, 0);
    themes.setMode(widgets::ThemeMode::Dark);
    const QRgb dark = page.exampleItems()[0]->preview()->image().pixel(0, 0);
    themes.setMode(widgets::ThemeMode::Light);
    QCOMPARE(QColor(light), widgets::Theme::lightTheme().canvas);
    QCOMPARE(QColor(dark), widgets::Theme::darkTheme().canvas);
  }

  // Tab walks the page in reading order; Enter (and Space) opens what has focus.
  void theKeyboardReachesAndOpensEverything() {
    StartPage page;
    page.resize(1280, 800);
    const QString kept = dir_.filePath("keys.plexus");
    QFile file(kept);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.close();
    page.setTemplates({project("image", "Image classifier", "mnist_lenet.plexus", true),
                       project("text", "Text", "names_lstm.plexus", false)});
    page.setRecentFiles({kept});
    page.setExamples({project("/x/mnist_mlp.plexus", "mnist_mlp", "mnist_mlp.plexus", true)});
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QSignalSpy templates(&page, &StartPage::templateRequested);
    QSignalSpy opened(&page, &StartPage::openRequested);
    QSignalSpy blank(&page, &StartPage::blankRequested);
    QSignalSpy dialog(&page, &StartPage::openDialogRequested);

    // Shown, the page puts focus on the likeliest choice: the last project.
    QTRY_COMPARE(page.focusWidget(), page.recentItems()[0]);
    page.templateItems()[0]->setFocus();
    const QList<QWidget*> expected{page.templateItems()[1], page.blankButton(), page.openButton(),
                                   page.recentItems()[0], page.exampleItems()[0]};
    for (QWidget* next : expected) {
      QTest::keyClick(page.focusWidget(), Qt::Key_Tab);
      QCOMPARE(page.focusWidget(), next);
    }
    QTest::keyClick(page.exampleItems()[0], Qt::Key_Return);
    QCOMPARE(opened.count(), 1);
    QTest::keyClick(page.templateItems()[1], Qt::Key_Enter);
    QTest::keyClick(page.templateItems()[0], Qt::Key_Space);
    QCOMPARE(templates.count(), 2);
    QCOMPARE(templates[0][0].toString(), QString("text"));
    QCOMPARE(templates[1][0].toString(), QString("image"));
    QTest::keyClick(page.blankButton(), Qt::Key_Return);
    QCOMPARE(blank.count(), 1);
    QTest::keyClick(page.openButton(), Qt::Key_Space);
    QCOMPARE(dialog.count(), 1);
  }
};

QTEST_MAIN(TestWidgetsStartPage)
#include "test_widgets_start_page.moc"
