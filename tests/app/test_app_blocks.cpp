// Blocks in the editor window: the Edit menu's block actions with their shortcuts, the
// Properties panel following a selected block, a grouped project saved and opened again as
// it was, and My blocks shared between windows through the saved-blocks folder.
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include "editor/block_actions.h"
#include "editor/block_item.h"
#include "editor/model/graph_document.h"
#include "editor/node_scene.h"
#include "editor/node_view.h"
#include "editor/palette.h"
#include "editor/property_panel.h"
#include "main_window.h"
#include "support/app_fixture.h"

using namespace plexus;
using plexus::app::MainWindow;

namespace {

// Input -> Flatten -> Linear -> ReLU, all wired.
void build(MainWindow& w) {
  widgets::GraphDocument* doc = w.document();
  doc->addNode("Input", {0, 0});
  doc->addNode("Flatten", {240, 0});
  doc->addNode("Linear", {480, 0});
  doc->addNode("ReLU", {720, 0});
  doc->connectPorts({"input1", "x"}, {"flatten1", "input"});
  doc->connectPorts({"flatten1", "output"}, {"linear1", "input"});
  doc->connectPorts({"linear1", "output"}, {"relu1", "input"});
}

QStringList editMenu(MainWindow& w) {
  QStringList texts;
  for (QAction* menu : w.menuBar()->actions())
    if (menu->text() == "&Edit")
      for (QAction* a : menu->menu()->actions()) texts << a->text();
  return texts;
}

}  // namespace

class TestAppBlocks : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    testing::isolate_app(recovery_.path());
    qputenv("PLEXUS_BLOCKS_DIR", library_.path().toUtf8());
  }

  void groupRenameSaveAndReopen() {
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    QVERIFY(editMenu(w).contains("&Group into Block"));
    QVERIFY(editMenu(w).contains("&Ungroup"));
    build(w);
    w.scene()->selectNodes({"flatten1", "linear1"});
    QVERIFY(!w.blockActions()->ungroupAction()->isEnabled());
    w.view()->setFocus();
    QTest::keySequence(w.view(), QKeySequence(QStringLiteral("Ctrl+G")));
    QCOMPARE(w.document()->graph().blocks.size(), size_t(1));
    QVERIFY(w.blockActions()->ungroupAction()->isEnabled());

    // The Properties panel follows the selected block; its name field renames it.
    auto* name = w.properties()->findChild<QLineEdit*>("blockName");
    QVERIFY(name && name->isVisible());
    name->setText("features");
    emit name->editingFinished();
    QCOMPARE(w.document()->block("block1")->name, std::string("features"));

    QTemporaryDir dir;
    const QString path = dir.filePath("grouped.plexus");
    QVERIFY(w.saveAs(path));
    const graph::Graph saved = w.document()->graph();
    MainWindow other;
    QVERIFY(other.openFile(path));
    QCOMPARE(other.document()->graph().blocks, saved.blocks);
    QVERIFY(other.scene()->blockItem("block1")->isCollapsed());

    // Saved to My blocks in one window, offered by the palette of the next.
    w.scene()->selectNodes({"block1"});
    w.blockActions()->saveAction()->trigger();
    MainWindow third;
    QTreeWidgetItem* group = third.palette()->myBlocksGroup();
    QCOMPARE(group->childCount(), 1);
    QCOMPARE(group->child(0)->text(0), QStringLiteral("features"));
  }

 private:
  QTemporaryDir recovery_, library_;
};

QTEST_MAIN(TestAppBlocks)
#include "test_app_blocks.moc"
