// Blocks in the node editor, driven like a user would: select layers, Ctrl+G; the block is one
// card with exactly the open ports, wires to the outside end at its proxies, a double click
// opens and closes it in place; Ctrl+Shift+G, undo and redo restore the graph exactly
// (positions included), and so does a save and load; moving and deleting a block take its
// members along in one step; a wire dropped on a proxy port wires the member; a block saved
// to My blocks is inserted as a copy with fresh ids.
#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include <algorithm>

#include "common/theme.h"
#include "editor/block_actions.h"
#include "editor/block_item.h"
#include "editor/edge_item.h"
#include "editor/model/graph_document.h"
#include "editor/node_item.h"
#include "editor/node_scene.h"
#include "editor/node_view.h"
#include "editor/palette.h"
#include "editor/property_panel.h"
#include "graph/blocks.h"
#include "support/mouse_drag.h"

using namespace plexus;
using namespace plexus::widgets;

namespace {

// One editor with its block actions and palette, My blocks in a temporary folder.
struct Editor {
  QTemporaryDir library;
  GraphDocument doc;
  NodeScene scene{&doc};
  NodeView view{&scene};
  LayerPalette palette;
  BlockActions actions{&view, &palette, library.path()};

  Editor() {
    view.resize(1100, 700);
    view.show();
    view.activateWindow();
    view.setFocus();
    if (!QTest::qWaitForWindowActive(&view)) qWarning("the view did not become active: shortcuts will not work");
  }
  QWidget* viewport() { return view.viewport(); }
  QPoint at(QPointF scene_pos) const { return view.mapFromScene(scene_pos); }
  QPointF port(const std::string& node, const std::string& name, bool input) const {
    return scene.portScenePos({node, name}, input);
  }
  BlockItem* card(const QString& id) const { return scene.blockItem(id); }
  QPointF header(const BlockItem* item) const { return item->scenePos() + QPointF(60, 12); }
  bool hasEdge(const graph::Edge& e) const {
    const auto& edges = doc.graph().edges;
    return std::find(edges.begin(), edges.end(), e) != edges.end();
  }
  // Selects `ids` and presses Ctrl+G; returns the new block's id.
  QString group(const QStringList& ids) {
    scene.selectNodes(ids);
    QTest::keyClick(&view, Qt::Key_G, Qt::ControlModifier);
    const QStringList selected = scene.selectedBlockIds();
    return selected.size() == 1 ? selected[0] : QString();
  }
};

graph::Edge edge(std::string from, std::string out, std::string to, std::string in) {
  return {{std::move(from), std::move(out)}, {std::move(to), std::move(in)}};
}

using testing::dragMouse;
using testing::moveMouse;

// Input -> Flatten -> Linear(32) -> ReLU -> Linear(10) -> CrossEntropy <- Input.y, MNIST.
void buildMlp(Editor& e) {
  e.doc.setDataset({"mnist", "data/mnist", "", ""});
  e.doc.addNode("Input", {0, 0});             // input1
  e.doc.addNode("Flatten", {240, 0});         // flatten1
  e.doc.addNode("Linear", {480, 0});          // linear1
  e.doc.addNode("ReLU", {720, 0});            // relu1
  e.doc.addNode("Linear", {960, 0});          // linear2
  e.doc.addNode("CrossEntropy", {1200, 0});   // crossentropy1
  e.doc.setParam("linear1", "out_features", int64_t(32));
  e.doc.setParam("linear2", "out_features", int64_t(10));
  e.doc.connectPorts({"input1", "x"}, {"flatten1", "input"});
  e.doc.connectPorts({"flatten1", "output"}, {"linear1", "input"});
  e.doc.connectPorts({"linear1", "output"}, {"relu1", "input"});
  e.doc.connectPorts({"relu1", "output"}, {"linear2", "input"});
  e.doc.connectPorts({"linear2", "output"}, {"crossentropy1", "input"});
  e.doc.connectPorts({"input1", "y"}, {"crossentropy1", "target"});
  e.doc.undoStack()->clear();
}

std::vector<std::string> refs(const BlockItem* item, bool input) {
  std::vector<std::string> out;
  for (const PortItem* p : item->ports())
    if (p->isInput() == input) out.push_back(p->ref().node + "." + p->ref().port);
  return out;
}

QTreeWidgetItem* myBlock(LayerPalette& palette, const QString& name, const QString& note) {
  QTreeWidgetItem* group = palette.myBlocksGroup();
  for (int i = 0; i < group->childCount(); ++i)
    if (group->child(i)->text(0) == name && group->child(i)->data(0, Qt::UserRole + 3).toString() == note)
      return group->child(i);
  return nullptr;
}

}  // namespace

class TestBlocks : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { ThemeManager::instance().setMode(ThemeMode::Light); }

  void ctrlGGroupsIntoACollapsedCardWithTheOpenPorts() {
    Editor e;
    buildMlp(e);
    const graph::Graph before = e.doc.graph();
    const QString id = e.group({"linear1", "relu1"});
    QCOMPARE(id, QStringLiteral("block1"));
    QCOMPARE(e.doc.undoStack()->count(), 1);
    const graph::Block& b = e.doc.graph().blocks.at(0);
    QCOMPARE(b.members, (std::vector<std::string>{"linear1", "relu1"}));
    QCOMPARE(b.position, (graph::Position{480, 0}));
    QVERIFY(b.collapsed);
    // What trains is untouched.
    QVERIFY(e.doc.graph().nodes == before.nodes && e.doc.graph().edges == before.edges);

    BlockItem* card = e.card(id);
    QVERIFY(card && card->isCollapsed() && card->isVisible());
    QCOMPARE(card->pos(), QPointF(480, 0));
    QCOMPARE(refs(card, true), std::vector<std::string>{"linear1.input"});
    QCOMPARE(refs(card, false), std::vector<std::string>{"relu1.output"});
    QVERIFY(!e.scene.nodeItem("linear1")->isVisible() && !e.scene.nodeItem("relu1")->isVisible());
    // Outside wires end at the proxies, with their shapes; the wire inside is hidden.
    EdgeItem* in = e.scene.edgeItem(edge("flatten1", "output", "linear1", "input"));
    QCOMPARE(in->toProxy(), card);
    QCOMPARE(in->path().currentPosition(), card->port({"linear1", "input"}, true)->scenePos());
    QCOMPARE(in->label(), QStringLiteral("N×784"));
    EdgeItem* out = e.scene.edgeItem(edge("relu1", "output", "linear2", "input"));
    QCOMPARE(out->fromProxy(), card);
    QCOMPARE(out->label(), QStringLiteral("N×32"));
    QVERIFY(!e.scene.edgeItem(edge("linear1", "output", "relu1", "input"))->isVisible());
    // Wiring to a hidden member's port goes through its proxy.
    QCOMPARE(e.port("linear1", "input", true), card->port({"linear1", "input"}, true)->scenePos());

    e.doc.undoStack()->undo();
    QVERIFY(e.doc.graph() == before);
    QVERIFY(!e.card(id) && e.scene.nodeItem("linear1")->isVisible());
    QVERIFY(e.scene.edgeItem(edge("linear1", "output", "relu1", "input"))->isVisible());
  }

  void doubleClickOpensInPlaceAndCloses() {
    Editor e;
    buildMlp(e);
    const QString id = e.group({"linear1", "relu1"});
    const int steps = e.doc.undoStack()->count();
    QTest::mouseDClick(e.viewport(), Qt::LeftButton, {}, e.at(e.header(e.card(id))));
    QVERIFY(!e.doc.block(id)->collapsed);
    BlockItem* frame = e.card(id);
    QVERIFY(frame && !frame->isCollapsed());
    QVERIFY(e.scene.nodeItem("linear1")->isVisible() && e.scene.nodeItem("relu1")->isVisible());
    QCOMPARE(e.scene.nodeItem("linear1")->pos(), QPointF(480, 0));  // members at their own places
    QVERIFY(frame->sceneCardRect().contains(e.scene.nodeItem("relu1")->sceneCardRect()));
    QVERIFY(e.scene.edgeItem(edge("linear1", "output", "relu1", "input"))->isVisible());
    QVERIFY(!e.scene.edgeItem(edge("flatten1", "output", "linear1", "input"))->toProxy());
    // View state, not an edit.
    QCOMPARE(e.doc.undoStack()->count(), steps);

    QTest::mouseDClick(e.viewport(), Qt::LeftButton, {}, e.at(frame->sceneTitleRect().center()));
    QVERIFY(e.doc.block(id)->collapsed);
    QVERIFY(e.card(id)->isCollapsed());
    QVERIFY(!e.scene.nodeItem("linear1")->isVisible());
  }

  void ungroupRestoresTheGraphExactly() {
    Editor e;
    buildMlp(e);
    const graph::Graph before = e.doc.graph();
    const QString id = e.group({"flatten1", "linear1", "relu1"});
    e.scene.selectNodes({id});
    QTest::keyClick(&e.view, Qt::Key_G, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(e.doc.graph() == before);
    QCOMPARE(e.scene.selectedNodeIds(), (QStringList{"flatten1", "linear1", "relu1"}));
    QVERIFY(!e.card(id));
    e.doc.undoStack()->undo();  // the block again, exactly
    QCOMPARE(e.doc.graph().blocks.size(), size_t(1));
    QVERIFY(e.card(id)->isCollapsed());
    e.doc.undoStack()->undo();
    QVERIFY(e.doc.graph() == before);
  }

  void nestedBlocksAndGroupingInsideAnOpenBlock() {
    Editor e;
    buildMlp(e);
    const graph::Graph before = e.doc.graph();
    const QString inner = e.group({"linear1", "relu1"});
    const QString outer = e.group({inner, "linear2"});
    QCOMPARE(e.doc.block(outer)->members, (std::vector<std::string>{"linear2", "block1"}));
    QVERIFY(!e.card(inner));  // hidden inside the collapsed outer block
    QCOMPARE(refs(e.card(outer), true), std::vector<std::string>{"linear1.input"});
    QCOMPARE(refs(e.card(outer), false), std::vector<std::string>{"linear2.output"});

    e.scene.toggleBlock(outer);  // open: the inner block shows as a card inside the frame
    QVERIFY(e.card(inner)->isCollapsed());
    QVERIFY(e.card(outer)->sceneCardRect().contains(e.card(inner)->sceneCardRect()));
    QVERIFY(e.scene.nodeItem("linear2")->isVisible() && !e.scene.nodeItem("linear1")->isVisible());
    EdgeItem* wire = e.scene.edgeItem(edge("relu1", "output", "linear2", "input"));
    QCOMPARE(wire->fromProxy(), e.card(inner));

    // Selecting within the open block and grouping nests the new block there.
    const QString third = e.group({"linear2"});
    QCOMPARE(e.doc.block(outer)->members, (std::vector<std::string>{"block1", third.toStdString()}));
    // Members of different blocks cannot be grouped together.
    e.scene.toggleBlock(third);
    e.scene.selectNodes({"linear2", "crossentropy1"});
    QCOMPARE(e.scene.groupSelection(), QString());

    // Ungrouping all three gives back the graph.
    for (const QString& id : {third, inner, outer}) e.doc.ungroup(id);
    QVERIFY(e.doc.graph() == before);
  }

  void saveAndLoadKeepBlocks() {
    Editor e;
    buildMlp(e);
    const QString inner = e.group({"linear1", "relu1"});
    e.group({inner, "linear2"});
    e.scene.toggleBlock(QStringLiteral("block2"));
    QTemporaryDir dir;
    const QString path = dir.filePath("grouped.plexus");
    e.doc.save(path);
    Editor other;
    other.doc.load(path);
    QVERIFY(other.doc.graph() == e.doc.graph());
    QVERIFY(!other.card("block2")->isCollapsed());
    QCOMPARE(refs(other.card("block1"), true), std::vector<std::string>{"linear1.input"});
  }

  void moveAndDeleteTakeTheMembersAlongAndUndoExactly() {
    Editor e;
    buildMlp(e);
    const graph::Graph flat = e.doc.graph();
    const QString id = e.group({"linear1", "relu1"});
    const graph::Graph grouped = e.doc.graph();

    // Dragging the card moves the block and its hidden members by the same amount: one step.
    BlockItem* card = e.card(id);
    dragMouse(e.viewport(), e.at(e.header(card)), e.at(e.header(card) + QPointF(100, 200)));
    QCOMPARE(e.doc.block(id)->position, (graph::Position{580, 200}));
    QCOMPARE(e.doc.node("linear1")->position, (graph::Position{580, 200}));
    QCOMPARE(e.doc.node("relu1")->position, (graph::Position{820, 200}));
    QCOMPARE(e.doc.node("flatten1")->position, (graph::Position{240, 0}));
    QCOMPARE(e.doc.undoStack()->count(), 2);
    QCOMPARE(e.scene.edgeItem(edge("flatten1", "output", "linear1", "input"))->path().currentPosition(),
             e.card(id)->port({"linear1", "input"}, true)->scenePos());
    const graph::Graph moved = e.doc.graph();

    // Delete takes the block's layers and their wires: one step.
    e.scene.selectNodes({id});
    QTest::keyClick(e.viewport(), Qt::Key_Delete);
    QVERIFY(e.doc.graph().blocks.empty());
    QVERIFY(!e.doc.node("linear1") && !e.doc.node("relu1"));
    QCOMPARE(e.doc.graph().edges.size(), size_t(3));
    QCOMPARE(e.doc.undoStack()->count(), 3);

    QUndoStack* undo = e.doc.undoStack();
    undo->undo();
    QVERIFY(e.doc.graph() == moved);
    QVERIFY(e.card(id)->isCollapsed());
    undo->undo();
    QVERIFY(e.doc.graph() == grouped);
    QCOMPARE(e.card(id)->pos(), QPointF(480, 0));
    undo->undo();
    QVERIFY(e.doc.graph() == flat);
    undo->redo();
    QVERIFY(e.doc.graph() == grouped);
    undo->redo();
    QVERIFY(e.doc.graph() == moved);
    undo->redo();
    QVERIFY(e.doc.graph().blocks.empty() && !e.doc.node("relu1"));
  }

  // Deleting the last layer of a block deletes the block: no empty block is left behind.
  void deletingEveryMemberDeletesTheBlock() {
    Editor e;
    buildMlp(e);
    const QString id = e.group({"linear1", "relu1"});
    e.scene.toggleBlock(id);
    e.doc.remove({"linear1"}, {});
    QCOMPARE(e.doc.block(id)->members, std::vector<std::string>{"relu1"});
    e.doc.remove({"relu1"}, {});
    QVERIFY(e.doc.graph().blocks.empty());
  }

  void wireDroppedOnAProxyPortWiresTheMember() {
    Editor e;
    buildMlp(e);
    e.doc.disconnect(edge("flatten1", "output", "linear1", "input"));
    const QString id = e.group({"linear1", "relu1"});
    PortItem* proxy = e.card(id)->port({"linear1", "input"}, true);
    QVERIFY(proxy);
    dragMouse(e.viewport(), e.at(e.port("flatten1", "output", false)), e.at(proxy->scenePos()));
    QVERIFY(e.hasEdge(edge("flatten1", "output", "linear1", "input")));
    QCOMPARE(e.scene.edgeItem(edge("flatten1", "output", "linear1", "input"))->toProxy(), e.card(id));
    // And lifting it off the proxy and dropping it on the canvas disconnects it again.
    dragMouse(e.viewport(), e.at(e.card(id)->port({"linear1", "input"}, true)->scenePos()), e.at(QPointF(300, 400)));
    QVERIFY(!e.hasEdge(edge("flatten1", "output", "linear1", "input")));
  }

  void problemsOfHiddenLayersShowOnTheCard() {
    Editor e;
    buildMlp(e);
    e.doc.disconnect(edge("flatten1", "output", "linear1", "input"));
    const QString id = e.group({"linear1", "relu1"});
    QCOMPARE(e.card(id)->problemSeverity(), std::optional(graph::Severity::Error));
    QVERIFY(e.card(id)->toolTip().contains("linear1"));
    // The problems panel's "go to" lands on the card that hides the layer.
    e.view.centerOnNode("linear1");
    QCOMPARE(e.scene.selectedBlockIds(), QStringList{id});
    e.doc.connectPorts({"flatten1", "output"}, {"linear1", "input"});
    QVERIFY(!e.card(id)->problemSeverity());
  }

  void myBlocksInsertCopiesWithFreshIds() {
    Editor e;
    buildMlp(e);
    const QString id = e.group({"linear1", "relu1"});
    e.doc.renameBlock(id, "hidden");
    e.scene.selectNodes({id});
    e.actions.saveAction()->trigger();
    QCOMPARE(e.actions.library().entries().size(), size_t(1));
    QCOMPARE(e.actions.library().entries()[0].name, QStringLiteral("hidden"));
    QTRY_VERIFY(myBlock(e.palette, "hidden", "this project"));
    QTreeWidgetItem* saved = myBlock(e.palette, "hidden", "saved");
    QVERIFY(saved);

    const int steps = e.doc.undoStack()->count();
    emit e.palette.tree()->itemDoubleClicked(saved, 0);
    QCOMPARE(e.doc.undoStack()->count(), steps + 1);
    QCOMPARE(e.doc.graph().blocks.size(), size_t(2));
    const graph::Block& copy = e.doc.graph().blocks[1];
    QCOMPARE(copy.id, std::string("block2"));
    QCOMPARE(copy.members, (std::vector<std::string>{"linear3", "relu2"}));
    QVERIFY(copy.collapsed);
    QCOMPARE(e.scene.selectedBlockIds(), QStringList{"block2"});
    QVERIFY(e.hasEdge(edge("linear3", "output", "relu2", "input")));
    // A copy, not a shared definition: changing it leaves the original alone.
    e.doc.setParam("linear3", "out_features", int64_t(64));
    QCOMPARE(std::get<int64_t>(e.doc.node("linear1")->params.at("out_features")), int64_t(32));
    e.doc.undoStack()->undo();
    e.doc.undoStack()->undo();
    QCOMPARE(e.doc.graph().blocks.size(), size_t(1));
    QVERIFY(!e.doc.node("linear3"));
  }

  void autoLayoutLaysOutClosedBlocksAsCards() {
    Editor e;
    e.doc.load(QStringLiteral(PLEXUS_SOURCE_DIR "/tests/graphs/lenet_blocks.plexus"));
    // One block opened: its layers are laid out as nodes, the other two as cards.
    e.doc.setBlockCollapsed("conv_block1", false);
    const graph::Graph before = e.doc.graph();
    e.scene.autoLayout();
    QCOMPARE(e.doc.undoStack()->undoText(), QStringLiteral("Auto layout"));
    const graph::Graph& g = e.doc.graph();
    // Inside a closed card nothing moved relative to the card.
    for (const char* id : {"conv_block2", "classifier"}) {
      const graph::Block *now = g.find_block(id), *was = before.find_block(id);
      for (const std::string& member : now->members) {
        const graph::Node *n = g.find(member), *m = before.find(member);
        QCOMPARE(n->position.x - now->position.x, m->position.x - was->position.x);
        QCOMPARE(n->position.y - now->position.y, m->position.y - was->position.y);
      }
    }
    // Every wire the canvas shows runs left to right, from card or node to card or node.
    const auto box = [&](const std::string& id) {
      if (const graph::Block* hiding = graph::hiding_block(g, id)) return e.card(QString::fromStdString(hiding->id))->sceneBoundingRect();
      return e.scene.nodeItem(QString::fromStdString(id))->sceneBoundingRect();
    };
    int shown = 0;
    for (const graph::Edge& w : g.edges) {
      const QRectF from = box(w.from.node), to = box(w.to.node);
      if (from == to) continue;  // inside one card
      QVERIFY2(from.right() < to.left(), (w.from.node + " -> " + w.to.node).c_str());
      ++shown;
    }
    QVERIFY(shown >= 7);
    e.doc.undoStack()->undo();
    QVERIFY(e.doc.graph() == before);
  }

  void propertyPanelRenamesASelectedBlock() {
    Editor e;
    buildMlp(e);
    PropertyPanel panel(&e.doc);
    const QString id = e.group({"linear1", "relu1"});
    panel.showNodes({id});
    auto* name = panel.findChild<QLineEdit*>("blockName");
    QVERIFY(name && name->isVisibleTo(&panel));
    QCOMPARE(name->text(), id);
    name->setText("hidden layer");
    emit name->editingFinished();
    QCOMPARE(e.doc.block(id)->name, std::string("hidden layer"));
    auto* members = panel.findChild<QLabel*>("blockMembers");
    QVERIFY(members->text().contains("Linear 'linear1'"));
    e.doc.undoStack()->undo();
    QCOMPARE(e.doc.block(id)->name, id.toStdString());
    QCOMPARE(name->text(), id);
  }
};

QTEST_MAIN(TestBlocks)
#include "test_widgets_blocks.moc"
