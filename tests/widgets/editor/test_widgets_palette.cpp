// The layer palette, the themes and the icons: the palette lists exactly the registry, filters
// as the user types, adds on Enter and double click; themes switch the whole app; icons are
// sharp at high DPI. Also writes screenshots to the temp dir (palette and icon sheet, light and
// dark) for a human to look at.
#include <QApplication>
#include <QDir>
#include <QLineEdit>
#include <QMimeData>
#include <QPainter>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>
#include <QTreeWidget>
#include <memory>

#include "common/icons.h"
#include "common/theme.h"
#include "editor/palette.h"
#include "graph/registry.h"

using namespace plexus::widgets;
using plexus::graph::Registry;

namespace {

QTreeWidgetItem* findLayer(QTreeWidget* tree, const QString& type) {
  for (int i = 0; i < tree->topLevelItemCount(); ++i)
    for (int j = 0; j < tree->topLevelItem(i)->childCount(); ++j)
      if (tree->topLevelItem(i)->child(j)->data(0, Qt::UserRole).toString() == type)
        return tree->topLevelItem(i)->child(j);
  return nullptr;
}

bool shown(QTreeWidgetItem* item) { return item && !item->isHidden() && !(item->parent() && item->parent()->isHidden()); }

int visibleCategories(QTreeWidget* tree) {
  int n = 0;
  for (int i = 0; i < tree->topLevelItemCount(); ++i) n += !tree->topLevelItem(i)->isHidden();
  return n;
}

bool hasInk(const QImage& image) {
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x)
      if (qAlpha(image.pixel(x, y)) > 0) return true;
  return false;
}

const QStringList kIcons = {
    "new", "open", "save", "save-as", "undo", "redo", "cut", "copy",
    "paste", "duplicate", "delete", "zoom-in", "zoom-out", "zoom-fit", "auto-layout", "grid",
    "theme", "train", "pause", "stop", "error", "warning", "info", "search",
};

}  // namespace

class TestPalette : public QObject {
  Q_OBJECT

 private slots:
  void init() { ThemeManager::instance().setMode(ThemeMode::Light); }

  void listsEveryRegistryTypeOnceUnderItsCategory() {
    LayerPalette palette;
    QTreeWidget* tree = palette.tree();
    int layers = 0;
    QStringList categories;
    // My blocks comes first (test_widgets_blocks tests it); the registry's categories follow.
    QCOMPARE(tree->topLevelItem(0), palette.myBlocksGroup());
    for (int i = 1; i < tree->topLevelItemCount(); ++i) {
      QTreeWidgetItem* group = tree->topLevelItem(i);
      categories << group->text(0);
      QVERIFY(group->isExpanded());
      QVERIFY(!group->icon(0).isNull());
      layers += group->childCount();
    }
    QCOMPARE(layers, int(Registry::instance().types().size()));
    QStringList expected;  // categories in registry order
    for (const auto& t : Registry::instance().types()) {
      const QString category = QString::fromStdString(t.category);
      if (!expected.contains(category)) expected << category;
      QTreeWidgetItem* item = findLayer(tree, QString::fromStdString(t.name));
      QVERIFY2(item, t.name.c_str());
      QCOMPARE(item->parent()->text(0), category);
      QCOMPARE(item->text(0), QString::fromStdString(t.display_name));
      QVERIFY(item->toolTip(0).contains(QString::fromStdString(t.description).toHtmlEscaped()));
    }
    QCOMPARE(categories, expected);
  }

  void typingFiltersAndEscapeClears() {
    LayerPalette palette;
    palette.show();
    QVERIFY(QTest::qWaitForWindowExposed(&palette));
    QTreeWidget* tree = palette.tree();
    const int all = tree->topLevelItemCount();
    QTest::keyClicks(palette.searchBox(), "CONV");
    QVERIFY(shown(findLayer(tree, "Conv2d")));
    QVERIFY(!shown(findLayer(tree, "Linear")));
    QCOMPARE(palette.currentType(), QStringLiteral("Conv2d"));  // the first match, ready for Enter

    palette.searchBox()->clear();
    QTest::keyClicks(palette.searchBox(), "activation");  // a category name shows the whole category
    QVERIFY(shown(findLayer(tree, "ReLU")));
    QVERIFY(!shown(findLayer(tree, "Conv2d")));

    palette.searchBox()->clear();
    QTest::keyClicks(palette.searchBox(), "zzz no such layer");
    QCOMPARE(visibleCategories(tree), 0);
    QTest::keyClick(palette.searchBox(), Qt::Key_Escape);
    QVERIFY(palette.searchBox()->text().isEmpty());
    QCOMPARE(visibleCategories(tree), all);
    QVERIFY(shown(findLayer(tree, "Linear")));
  }

  void doubleClickAndEnterAdd() {
    LayerPalette palette;
    palette.resize(320, 600);
    palette.show();
    QVERIFY(QTest::qWaitForWindowExposed(&palette));
    QSignalSpy spy(&palette, &LayerPalette::addRequested);
    QTreeWidget* tree = palette.tree();

    QTreeWidgetItem* linear = findLayer(tree, "Linear");
    const QPoint centre = tree->visualItemRect(linear).center();
    // What a real double click sends: press, release, double click, release. (For a widget,
    // mouseDClick alone sends only the double-click event, which item views ignore unless the
    // same item was pressed first.)
    QTest::mouseClick(tree->viewport(), Qt::LeftButton, Qt::NoModifier, centre);
    QTest::mouseDClick(tree->viewport(), Qt::LeftButton, Qt::NoModifier, centre);
    QTest::mouseRelease(tree->viewport(), Qt::LeftButton, Qt::NoModifier, centre);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.takeFirst().at(0).toString(), QStringLiteral("Linear"));

    // Search, Down into the list, Down to the second match, Enter.
    palette.searchBox()->setFocus();
    QTest::keyClicks(palette.searchBox(), "pool");
    QTest::keyClick(palette.searchBox(), Qt::Key_Down);
    QVERIFY(tree->hasFocus());
    QCOMPARE(palette.currentType(), QStringLiteral("MaxPool2d"));
    QTest::keyClick(tree, Qt::Key_Down);
    QTest::keyClick(tree, Qt::Key_Return);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.takeFirst().at(0).toString(), QStringLiteral("AvgPool2d"));

    // Enter in the search box adds the best match.
    palette.setFilter("gelu");
    QTest::keyClick(palette.searchBox(), Qt::Key_Enter);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.takeFirst().at(0).toString(), QStringLiteral("GELU"));
  }

  void mimeDataRoundTrip() {
    std::unique_ptr<QMimeData> data(LayerPalette::mimeDataForType("Conv2d"));
    QVERIFY(data->hasFormat(kLayerMimeType));
    QCOMPARE(data->text(), QStringLiteral("Conv2d"));
    QCOMPARE(LayerPalette::typeFromMimeData(data.get()), std::optional<QString>("Conv2d"));
    std::unique_ptr<QMimeData> unknown(LayerPalette::mimeDataForType("Conv9d"));
    QVERIFY(!LayerPalette::typeFromMimeData(unknown.get()));
    QMimeData text_only;
    text_only.setText("Conv2d");
    QVERIFY(!LayerPalette::typeFromMimeData(&text_only));
    QVERIFY(!LayerPalette::typeFromMimeData(nullptr));
  }

  void themeSwitchChangesTheAppPalette() {
    ThemeManager& tm = ThemeManager::instance();
    QSignalSpy spy(&tm, &ThemeManager::changed);
    tm.setMode(ThemeMode::Dark);
    QCOMPARE(spy.count(), 1);
    QVERIFY(tm.theme().dark);
    QVERIFY(qApp->palette().color(QPalette::Window).lightness() < 80);
    QVERIFY(qApp->palette().color(QPalette::Text).lightness() > 180);
    QCOMPARE(QApplication::style()->name().toLower(), QStringLiteral("fusion"));
    tm.setMode(ThemeMode::Light);
    QCOMPARE(spy.count(), 2);
    QVERIFY(!tm.theme().dark);
    QVERIFY(qApp->palette().color(QPalette::Window).lightness() > 200);

    qputenv("PLEXUS_THEME", "dark");
    QVERIFY(ThemeManager::systemPrefersDark());
    tm.setMode(ThemeMode::System);
    QVERIFY(tm.theme().dark);
    qputenv("PLEXUS_THEME", "light");
    QVERIFY(!ThemeManager::systemPrefersDark());
    qunsetenv("PLEXUS_THEME");

    QCOMPARE(themeModeFromString("dark"), std::optional(ThemeMode::Dark));
    QCOMPARE(toString(ThemeMode::System), QStringLiteral("system"));
    QVERIFY(!themeModeFromString("sepia"));
    QVERIFY(Theme::lightTheme().category("Loss") != Theme::lightTheme().category("Data"));
    QVERIFY(Theme::darkTheme().category("Loss").lightness() < Theme::lightTheme().category("Loss").lightness());
  }

  void iconsAreSharpAndFollowTheTheme() {
    const QIcon save = icon("save");
    QVERIFY(!save.isNull());
    const QPixmap pm = save.pixmap(QSize(24, 24), 2.0);
    QCOMPARE(pm.size(), QSize(48, 48));  // rendered at device pixels, not scaled up
    QCOMPARE(pm.devicePixelRatio(), 2.0);
    QVERIFY(hasInk(pm.toImage()));
    QVERIFY(hasInk(appIcon().pixmap(16).toImage()));
    QVERIFY(!categoryIcon("Convolution").isNull());

    auto darkest = [](const QIcon& i) {
      const QImage img = i.pixmap(48).toImage();
      int lightness = 255;
      for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x)
          if (qAlpha(img.pixel(x, y)) == 255) lightness = qMin(lightness, QColor(img.pixel(x, y)).lightness());
      return lightness;
    };
    QVERIFY(darkest(icon("save")) < 80);
    ThemeManager::instance().setMode(ThemeMode::Dark);
    QVERIFY(darkest(icon("save")) > 180);  // re-tinted: light strokes on the dark theme

    QTest::ignoreMessage(QtWarningMsg, "plexus: no icon named 'no-such-icon'");
    QTest::failOnWarning(QRegularExpression("no icon named"));  // once is enough
    QVERIFY(icon("no-such-icon").isNull());
    QVERIFY(icon("no-such-icon").isNull());
  }

  void screenshots() {
    for (ThemeMode mode : {ThemeMode::Light, ThemeMode::Dark}) {
      ThemeManager::instance().setMode(mode);
      const QString suffix = toString(mode);

      LayerPalette palette;
      palette.resize(300, 640);
      palette.show();
      QVERIFY(QTest::qWaitForWindowExposed(&palette));
      palette.tree()->setCurrentItem(findLayer(palette.tree(), "Conv2d"));
      QVERIFY(palette.grab().save(QDir::temp().filePath("palette-" + suffix + ".png")));

      const QStringList categories = {"Data", "Layers", "Convolution", "Normalization", "Activation", "Merge", "Recurrent", "Attention", "Loss"};
      const int cell = 64, columns = 8;
      const int count = int(kIcons.size()) + int(categories.size()) + 1;
      QPixmap sheet(columns * cell, (count + columns - 1) / columns * cell);
      sheet.fill(qApp->palette().color(QPalette::Window));
      QPainter painter(&sheet);
      int n = 0;
      auto draw = [&](const QIcon& i, QIcon::Mode m = QIcon::Normal) {
        i.paint(&painter, QRect((n % columns) * cell + 8, (n / columns) * cell + 8, 48, 48), Qt::AlignCenter, m);
        ++n;
      };
      for (const QString& name : kIcons) draw(icon(name), name == "delete" ? QIcon::Disabled : QIcon::Normal);
      for (const QString& c : categories) draw(categoryIcon(c));
      draw(appIcon());
      painter.end();
      QVERIFY(sheet.save(QDir::temp().filePath("icons-" + suffix + ".png")));
    }
  }
};

QTEST_MAIN(TestPalette)
#include "test_widgets_palette.moc"
