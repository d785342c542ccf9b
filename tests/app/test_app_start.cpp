// The start page in the window: shown while no project is open, in place of the editor and its
// panels; the recent projects come from the settings and open on a click (or Enter); the
// shipped examples are its cards, with a picture and a description each; a template makes an
// untitled project with its graph and the right kind of data, Blank an empty one; Start Page
// closes the project only after the save prompt.
#include <QtTest/QtTest>

#include <QDockWidget>
#include <QLabel>
#include <QTemporaryDir>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "editor/model/graph_document.h"
#include "editor/node_view.h"
#include "graph/project.h"
#include "main_window.h"
#include "start/start_page.h"
#include "support/app_fixture.h"

using namespace plexus;
using app::MainWindow;
using widgets::StartItem;

namespace {

int visibleDocks(const MainWindow& w) {
  int n = 0;
  for (const QDockWidget* dock : w.findChildren<QDockWidget*>()) n += dock->isVisible();
  return n;
}

}  // namespace

class TestAppStart : public QObject {
  Q_OBJECT

  QTemporaryDir recovery_;
  QTemporaryDir files_;

 private slots:
  void initTestCase() { testing::isolate_app(recovery_.path()); }

  void recentProjectsFromTheSettingsOpenInTheWindow() {
    const QString project = testing::save_example_mlp(files_.filePath("recent.plexus"), "data/mnist", 1, 100);
    const QString gone = files_.filePath("gone.plexus");
    QSettings().setValue("recentFiles", QStringList{project, gone});

    testing::TestWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const int docks = visibleDocks(w);
    QVERIFY(docks > 0);
    QVERIFY(w.showStartPage());
    QVERIFY(w.isStartPageShown());
    QVERIFY(w.startPage()->isVisible());
    QVERIFY(!w.view()->isVisible());
    QCOMPARE(visibleDocks(w), 0);  // the page has the window to itself
    QCOMPARE(w.windowTitle(), QString("Plexus"));

    const QList<StartItem*> recent = w.startPage()->recentItems();
    QCOMPARE(recent.size(), 2);
    QCOMPARE(recent[0]->toolTip(), QDir::toNativeSeparators(project));
    QVERIFY(!recent[1]->isEnabled());  // gone
    QTest::mouseClick(recent[0], Qt::LeftButton);
    QCOMPARE(w.document()->filePath(), project);
    QVERIFY(!w.isStartPageShown());
    QVERIFY(w.view()->isVisible());
    QCOMPARE(visibleDocks(w), docks);  // the panels are back
    QVERIFY(w.windowTitle().startsWith("recent.plexus"));

    // Back home, and the missing one dropped from the list and the settings.
    QVERIFY(w.showStartPage());
    QVERIFY(w.document()->filePath().isEmpty());
    QVERIFY(w.document()->graph().nodes.empty());
    QTest::mouseClick(w.startPage()->findChild<QPushButton*>("startForgetMissing"), Qt::LeftButton);
    QCOMPARE(MainWindow::recentFiles(), QStringList{project});
    QCOMPARE(w.startPage()->recentItems().size(), 1);
    // The keyboard: Enter on the focused project opens it.
    StartItem* item = w.startPage()->recentItems()[0];
    item->setFocus();
    QTest::keyClick(item, Qt::Key_Return);
    QCOMPARE(w.document()->filePath(), project);
    QVERIFY(!w.isStartPageShown());
  }

  void theExamplesAreCardsWithAPictureAndADescription() {
    testing::TestWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.showStartPage());
    const QStringList examples = MainWindow::examples();
    QVERIFY(examples.size() >= 9);
    const QList<StartItem*> cards = w.startPage()->exampleItems();
    QCOMPARE(cards.size(), examples.size());
    for (int i = 0; i < cards.size(); ++i) {
      const graph::Graph g = graph::load_project(examples[i].toStdString());
      QVERIFY2(!g.description.empty(), qPrintable(examples[i]));  // every example says what it teaches
      QStringList texts;
      for (const QLabel* l : cards[i]->findChildren<QLabel*>()) texts << l->text();
      QVERIFY2(texts.contains(QString::fromStdString(g.description)), qPrintable(examples[i]));
      QVERIFY(texts.contains(QFileInfo(examples[i]).completeBaseName()));
      const QImage picture = cards[i]->preview()->image();
      QVERIFY(!picture.isNull() && picture.width() > 100);
      int drawn = 0;
      for (int y = 0; y < picture.height(); ++y)
        for (int x = 0; x < picture.width(); ++x) drawn += picture.pixel(x, y) != picture.pixel(0, 0);
      QVERIFY2(drawn > 200, qPrintable(examples[i]));
    }
    // The housing example's CSV lies next to it in examples/data: on every machine.
    const auto housing = std::find_if(cards.begin(), cards.end(), [](StartItem* c) { return c->text() == "housing_regression"; });
    QVERIFY(housing != cards.end());
    QStringList texts;
    for (const QLabel* l : (*housing)->findChildren<QLabel*>()) texts << l->text();
    QVERIFY2(texts.contains(QString::fromUtf8("✔ Its data is on this machine")), qPrintable(texts.join('|')));
    QCOMPARE((*housing)->findChild<QWidget*>("startDataset")->toolTip(), QString("Dataset: CSV, data/housing.csv"));

    QTest::mouseClick(cards[0], Qt::LeftButton);
    QCOMPARE(w.document()->filePath(), examples[0]);
    QVERIFY(!w.isStartPageShown());
  }

  void aTemplateMakesAnUntitledProjectWithItsData() {
    testing::TestWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const std::map<QString, std::string> kinds{{"image", "mnist"}, {"tabular", "csv"}, {"text", "text"}};
    for (const auto& [name, kind] : kinds) {
      QVERIFY(w.showStartPage());
      StartItem* item = w.startPage()->findChild<StartItem*>("startTemplate_" + name);
      QVERIFY2(item, qPrintable(name));
      item->setFocus();
      QTest::keyClick(item, Qt::Key_Enter);
      QVERIFY(!w.isStartPageShown());
      QVERIFY(w.document()->filePath().isEmpty());  // untitled: Save asks where
      QVERIFY(!w.document()->isModified());
      QVERIFY(w.document()->graph().nodes.size() >= 5);
      QCOMPARE(w.document()->graph().dataset.kind, kind);
      QVERIFY(w.document()->graph().description.empty());  // the template's words are not the project's
      if (w.document()->datasetLocation().found)
        QVERIFY2(w.document()->validation().ok(), qPrintable(w.document()->datasetStatus()));
    }
    // The tabular template starts on the example CSV, which is always there: made absolute, so it
    // stays found wherever the project is saved.
    QVERIFY(w.document()->graph().dataset.kind == "text");
    QVERIFY(w.showStartPage());
    QTest::mouseClick(w.startPage()->findChild<StartItem*>("startTemplate_tabular"), Qt::LeftButton);
    const std::filesystem::path csv = w.document()->graph().dataset.path;
    QVERIFY2(csv.is_absolute(), csv.c_str());
    QVERIFY(w.document()->datasetLocation().found);
    QVERIFY2(w.document()->validation().ok(), qPrintable(w.document()->datasetStatus()));

    QVERIFY(w.showStartPage());
    QTest::mouseClick(w.startPage()->blankButton(), Qt::LeftButton);
    QVERIFY(!w.isStartPageShown());
    QVERIFY(w.document()->graph().nodes.empty());
  }

  // Unsaved work is asked about first; Cancel keeps the project and the editor.
  void theStartPageAsksBeforeClosingAnEditedProject() {
    testing::TestWindow w;
    QStringList asked;
    QMessageBox::StandardButton answer = QMessageBox::Cancel;
    w.ask = [&](const QString&, const QString& text, QMessageBox::StandardButtons) {
      asked << text;
      return answer;
    };
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.newFromTemplate("text"));
    w.document()->rename("lstm", "memory");
    QVERIFY(w.document()->isModified());
    w.findChild<QAction*>("startPageAction")->trigger();
    QCOMPARE(asked.size(), 1);
    QVERIFY(!w.isStartPageShown());
    QCOMPARE(w.document()->node("lstm")->name, std::string("memory"));
    answer = QMessageBox::Discard;
    w.findChild<QAction*>("startPageAction")->trigger();
    QCOMPARE(asked.size(), 2);
    QVERIFY(w.isStartPageShown());
    QVERIFY(w.document()->graph().nodes.empty());
    QVERIFY(!w.document()->isModified());
  }
};

QTEST_MAIN(TestAppStart)
#include "test_app_start.moc"
