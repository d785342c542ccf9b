// The node editor canvas, driven like a user would: real mouse and key events on the view's
// viewport, drops built the way the palette builds them. Every gesture must become exactly the
// document edit it stands for (one undo step), and refused gestures must change nothing and
// say why.
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QMimeData>
#include <QSignalSpy>
#include <QTextBrowser>
#include <QTest>
#include <QUrl>

#include <algorithm>
#include <map>
#include <memory>
#include <random>

#include "common/theme.h"
#include "editor/block_item.h"
#include "editor/edge_item.h"
#include "editor/freeze_actions.h"
#include "editor/layer_help.h"
#include "editor/model/graph_document.h"
#include "editor/node_item.h"
#include "editor/node_scene.h"
#include "editor/node_view.h"
#include "editor/palette.h"
#include "util/error.h"
#include "support/mouse_drag.h"

using namespace plexus;
using namespace plexus::widgets;

namespace {

// One editor: document, scene and a shown view at zoom 1 with scene (0, 0) near the top-left.
struct Editor {
  GraphDocument doc;
  NodeScene scene{&doc};
  NodeView view{&scene};

  Editor() {
    view.resize(1000, 700);
    view.show();
    view.activateWindow();
    view.setFocus();
  }
  QWidget* viewport() { return view.viewport(); }
  QPoint at(QPointF scene_pos) const { return view.mapFromScene(scene_pos); }
  QPointF port(const std::string& node, const std::string& name, bool input) const {
    return scene.portScenePos({node, name}, input);
  }
  // A point on the node's header band, where a press grabs the node.
  QPointF header(const QString& id) const { return scene.nodeItem(id)->scenePos() + QPointF(60, 12); }
  QString add(const QString& type, QPointF pos) { return doc.addNode(type, pos); }
  bool hasEdge(const graph::Edge& e) const {
    const auto& edges = doc.graph().edges;
    return std::find(edges.begin(), edges.end(), e) != edges.end();
  }
};

graph::Edge edge(std::string from, std::string out, std::string to, std::string in) {
  return {{std::move(from), std::move(out)}, {std::move(to), std::move(in)}};
}

using testing::dragMouse;
using testing::moveMouse;

void dragWire(Editor& e, QPointF from, QPointF to) { dragMouse(e.viewport(), e.at(from), e.at(to)); }

// Sends what a drag from the palette (or a file manager) sends when dropped at `pos`.
bool dropOn(QWidget* widget, QPoint pos, QMimeData* data) {
  std::unique_ptr<QMimeData> owner(data);
  QDragEnterEvent enter(pos, Qt::CopyAction, data, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(widget, &enter);
  if (!enter.isAccepted()) return false;
  QDragMoveEvent move(pos, Qt::CopyAction, data, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(widget, &move);
  QDropEvent drop(pos, Qt::CopyAction, data, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(widget, &drop);
  return drop.isAccepted();
}

// Input -> Flatten -> Linear(10) -> CrossEntropy <- Input.y, bound to MNIST.
void buildMnistMlp(Editor& e) {
  e.doc.setDataset({"mnist", "data/mnist", "", ""});
  e.add("Input", {0, 0});          // input1
  e.add("Flatten", {240, 0});      // flatten1
  e.add("Linear", {480, 0});       // linear1
  e.add("CrossEntropy", {720, 0}); // crossentropy1
  e.doc.connectPorts({"input1", "x"}, {"flatten1", "input"});
  e.doc.connectPorts({"flatten1", "output"}, {"linear1", "input"});
  e.doc.connectPorts({"linear1", "output"}, {"crossentropy1", "input"});
  e.doc.connectPorts({"input1", "y"}, {"crossentropy1", "target"});
}

}  // namespace

class TestCanvas : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { ThemeManager::instance().setMode(ThemeMode::Light); }

  void nodesAppearWhereTheDocumentPutsThem() {
    Editor e;
    const QString id = e.add("Linear", {100, 60});
    NodeItem* item = e.scene.nodeItem(id);
    QVERIFY(item);
    QCOMPARE(item->pos(), QPointF(100, 60));
    QCOMPARE(item->size(), NodeScene::nodeSize(*e.doc.node(id)));
    // Ports sit on the card's edges: inputs left, outputs right.
    QCOMPARE(e.port("linear1", "input", true).x(), 100.0);
    QCOMPARE(e.port("linear1", "output", false).x(), 100 + item->size().width());
    e.doc.moveNodes({{id, {300, 200}}});
    QCOMPARE(item->pos(), QPointF(300, 200));
    e.doc.undoStack()->undo();
    QCOMPARE(item->pos(), QPointF(100, 60));
    e.doc.undoStack()->undo();
    QVERIFY(!e.scene.nodeItem(id));
  }

  void sizeDependsOnlyOnTheTypeAndItsPorts() {
    const graph::Node a{"a", "Conv2d", "a", {}, {}};
    const graph::Node b{"b", "Conv2d", "a much longer name", {{"out_channels", int64_t(64)}}, {5, 5}};
    QCOMPARE(NodeScene::nodeSize(a), NodeScene::nodeSize(b));
    QVERIFY(NodeScene::nodeSize(graph::Node{"c", "ReLU", "", {}, {}}).height() < NodeScene::nodeSize(a).height());
    // A Split has a port per section.
    const graph::Node two{"s", "Split", "", {}, {}};
    const graph::Node four{"s", "Split", "", {{"sections", std::vector<int64_t>{1, 1, 1, 1}}}, {}};
    QVERIFY(NodeScene::nodeSize(two).height() < NodeScene::nodeSize(four).height());
  }

  // A recurrent layer's outputs and a Split's pieces: each output port drawn with its name, one
  // under the other, and wired on its own; a Split's ports follow its sections as they are edited.
  void eachOfSeveralOutputPortsIsWiredOnItsOwn() {
    Editor e;
    e.add("GRU", {0, 0});         // gru1
    e.add("Linear", {300, 0});    // linear1
    e.add("Split", {0, 240});     // split1
    e.add("ReLU", {300, 240});    // relu1
    NodeItem* gru = e.scene.nodeItem("gru1");
    PortItem *output = gru->port("output", false), *state = gru->port("state", false);
    QVERIFY(output && state);
    QVERIFY(state->pos().y() > output->pos().y());
    QVERIFY(state->toolTip().startsWith("state"));
    dragWire(e, e.port("gru1", "state", false), e.port("linear1", "input", true));
    QVERIFY(e.hasEdge(edge("gru1", "state", "linear1", "input")));
    QVERIFY(!e.hasEdge(edge("gru1", "output", "linear1", "input")));

    NodeItem* split = e.scene.nodeItem("split1");
    const QSizeF two = split->size();
    QVERIFY(split->port("output1", false) && !split->port("output2", false));
    e.doc.setParam("split1", "sections", std::vector<int64_t>{1, 2, 3, 4});
    QVERIFY(split->port("output3", false));
    QVERIFY(split->size().height() > two.height());
    QCOMPARE(split->size(), NodeScene::nodeSize(*e.doc.node("split1")));
    dragWire(e, e.port("split1", "output2", false), e.port("relu1", "input", true));
    QVERIFY(e.hasEdge(edge("split1", "output2", "relu1", "input")));
    QCOMPARE(e.doc.undoStack()->count(), 7);  // four nodes, two wires and the sections: one step each
    // Fewer sections: the wire from output2 stays, to the card's side, and the node says why.
    e.doc.setParam("split1", "sections", std::vector<int64_t>{5, 5});
    QVERIFY(!split->port("output2", false));
    QCOMPARE(split->size(), two);
    QVERIFY(e.scene.edgeItem(edge("split1", "output2", "relu1", "input")));
    QVERIFY2(split->toolTip().contains("has no output 'output2'"), qPrintable(split->toolTip()));
    e.doc.undoStack()->undo();
    QVERIFY(split->port("output2", false));
    QVERIFY(!split->toolTip().contains("has no output"));
  }

  void unknownTypeIsAGreyCardNotACrash() {
    Editor e;
    graph::Graph g;
    g.nodes.push_back({"mystery", "Quantum", "q", {}, {0, 0}});
    g.nodes.push_back({"relu", "ReLU", "relu", {}, {300, 0}});
    g.edges.push_back(edge("mystery", "output", "relu", "input"));
    e.doc.reset(g, "");
    NodeItem* item = e.scene.nodeItem("mystery");
    QVERIFY(item);
    QVERIFY(!item->layerType());
    QVERIFY(item->ports().empty());
    QVERIFY(e.scene.edgeItem(g.edges[0]));  // drawn to the side of the unknown card
    QVERIFY(!e.view.grab().isNull());
  }

  void paletteDropAddsTheNodeAtTheDropPoint() {
    Editor e;
    const QPointF target(200, 140);
    QVERIFY(dropOn(e.viewport(), e.at(target), LayerPalette::mimeDataForType("ReLU")));
    QCOMPARE(int(e.doc.graph().nodes.size()), 1);
    const graph::Node& n = e.doc.graph().nodes[0];
    QCOMPARE(n.type, std::string("ReLU"));
    QCOMPARE(QPointF(n.position.x, n.position.y), target);  // on the grid already: exactly there
    QCOMPARE(e.scene.selectedNodeIds(), QStringList{"relu1"});
    QCOMPARE(e.doc.undoStack()->count(), 1);
  }

  void droppedProjectFileIsHandedToTheApp() {
    Editor e;
    QSignalSpy spy(&e.view, &NodeView::fileDropped);
    auto* data = new QMimeData;
    data->setUrls({QUrl::fromLocalFile("/tmp/model.plexus")});
    QVERIFY(dropOn(e.viewport(), QPoint(50, 50), data));
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).toString(), QStringLiteral("/tmp/model.plexus"));
    auto* other = new QMimeData;
    other->setUrls({QUrl::fromLocalFile("/tmp/notes.txt")});
    QVERIFY(!dropOn(e.viewport(), QPoint(50, 50), other));
    QVERIFY(e.doc.graph().nodes.empty());
  }

  void draggingFromOutputToInputConnects() {
    Editor e;
    e.add("Input", {0, 0});
    e.add("Linear", {300, 0});
    dragWire(e, e.port("input1", "x", false), e.port("linear1", "input", true));
    QVERIFY(e.hasEdge(edge("input1", "x", "linear1", "input")));
    QCOMPARE(e.doc.undoStack()->count(), 3);
    QVERIFY(!e.scene.isDrawingWire());
  }

  void draggingFromInputToOutputConnectsToo() {
    Editor e;
    e.add("Input", {0, 0});
    e.add("Linear", {300, 0});
    dragWire(e, e.port("linear1", "input", true), e.port("input1", "x", false));
    QVERIFY(e.hasEdge(edge("input1", "x", "linear1", "input")));
  }

  void whileDraggingPortsThatCannotTakeTheWireAreDimmed() {
    Editor e;
    e.add("Linear", {0, 0});
    e.add("Linear", {300, 0});
    e.doc.connectPorts({"linear1", "output"}, {"linear2", "input"});
    QTest::mousePress(e.viewport(), Qt::LeftButton, {}, e.at(e.port("linear2", "output", false)));
    moveMouse(e.viewport(), e.at(e.port("linear1", "input", true)));
    QVERIFY(e.scene.isDrawingWire());
    const auto state = [&](const char* node, const char* port, bool input) {
      return e.scene.nodeItem(node)->port(port, input)->wireState();
    };
    QCOMPARE(state("linear1", "output", false), PortItem::WireState::Refuses);  // same direction
    QCOMPARE(state("linear1", "input", true), PortItem::WireState::Refuses);    // would close a cycle
    QCOMPARE(state("linear2", "input", true), PortItem::WireState::Refuses);    // its own input
    // Escape gives up: nothing changed, everything back to normal.
    QTest::keyClick(e.viewport(), Qt::Key_Escape);
    QVERIFY(!e.scene.isDrawingWire());
    QCOMPARE(state("linear1", "input", true), PortItem::WireState::Idle);
    QTest::mouseRelease(e.viewport(), Qt::LeftButton, {}, e.at(e.port("linear1", "input", true)));
    QCOMPARE(int(e.doc.graph().edges.size()), 1);
  }

  void acceptingPortUnderTheMouseIsHighlighted() {
    Editor e;
    e.add("Input", {0, 0});
    e.add("Linear", {300, 0});
    QTest::mousePress(e.viewport(), Qt::LeftButton, {}, e.at(e.port("input1", "x", false)));
    moveMouse(e.viewport(), e.at(e.port("linear1", "input", true)));
    QCOMPARE(e.scene.nodeItem("linear1")->port("input", true)->wireState(), PortItem::WireState::Target);
    QTest::mouseRelease(e.viewport(), Qt::LeftButton, {}, e.at(e.port("linear1", "input", true)));
  }

  void outputToOutputIsRefusedWithAReason() {
    Editor e;
    e.add("Linear", {0, 0});
    e.add("Linear", {300, 0});
    QSignalSpy status(&e.scene, &NodeScene::statusMessage);
    dragWire(e, e.port("linear1", "output", false), e.port("linear2", "output", false));
    QVERIFY(e.doc.graph().edges.empty());
    QCOMPARE(e.doc.undoStack()->count(), 2);
    QCOMPARE(status.count(), 1);
    QVERIFY2(status.at(0).at(0).toString().contains("outputs"), qPrintable(status.at(0).at(0).toString()));
  }

  void cycleIsRefusedWithAReason() {
    Editor e;
    e.add("Linear", {0, 0});
    e.add("Linear", {300, 0});
    e.doc.connectPorts({"linear1", "output"}, {"linear2", "input"});
    QSignalSpy status(&e.scene, &NodeScene::statusMessage);
    dragWire(e, e.port("linear2", "output", false), e.port("linear1", "input", true));
    QCOMPARE(int(e.doc.graph().edges.size()), 1);
    QCOMPARE(status.count(), 1);
    QVERIFY2(status.at(0).at(0).toString().contains("cycle"), qPrintable(status.at(0).at(0).toString()));
  }

  void droppingOnEmptyCanvasDoesNothing() {
    Editor e;
    e.add("Linear", {0, 0});
    dragWire(e, e.port("linear1", "output", false), QPointF(500, 400));
    QVERIFY(e.doc.graph().edges.empty());
    QCOMPARE(e.doc.undoStack()->count(), 1);
  }

  void droppingOnAnOccupiedInputReplacesTheWire() {
    Editor e;
    e.add("Linear", {0, 0});
    e.add("Linear", {0, 200});
    e.add("ReLU", {300, 100});
    e.doc.connectPorts({"linear1", "output"}, {"relu1", "input"});
    const int steps = e.doc.undoStack()->count();
    dragWire(e, e.port("linear2", "output", false), e.port("relu1", "input", true));
    QVERIFY(e.hasEdge(edge("linear2", "output", "relu1", "input")));
    QVERIFY(!e.hasEdge(edge("linear1", "output", "relu1", "input")));
    QCOMPARE(e.doc.undoStack()->count(), steps + 1);
  }

  void liftingAWireOffItsInputAndDroppingItOnTheCanvasDisconnects() {
    Editor e;
    e.add("Linear", {0, 0});
    e.add("ReLU", {300, 0});
    e.doc.connectPorts({"linear1", "output"}, {"relu1", "input"});
    const int steps = e.doc.undoStack()->count();
    dragWire(e, e.port("relu1", "input", true), QPointF(200, 300));
    QVERIFY(e.doc.graph().edges.empty());
    QCOMPARE(e.doc.undoStack()->count(), steps + 1);
    e.doc.undoStack()->undo();
    QVERIFY(e.hasEdge(edge("linear1", "output", "relu1", "input")));
    QVERIFY(e.scene.edgeItem(edge("linear1", "output", "relu1", "input"))->isVisible());
  }

  void liftingAWireOntoAnotherInputMovesItInOneStep() {
    Editor e;
    e.add("Linear", {0, 0});
    e.add("ReLU", {300, 0});
    e.add("ReLU", {300, 200});
    e.doc.connectPorts({"linear1", "output"}, {"relu1", "input"});
    const int steps = e.doc.undoStack()->count();
    dragWire(e, e.port("relu1", "input", true), e.port("relu2", "input", true));
    QCOMPARE(int(e.doc.graph().edges.size()), 1);
    QVERIFY(e.hasEdge(edge("linear1", "output", "relu2", "input")));
    QCOMPARE(e.doc.undoStack()->count(), steps + 1);
    e.doc.undoStack()->undo();
    QCOMPARE(int(e.doc.graph().edges.size()), 1);
    QVERIFY(e.hasEdge(edge("linear1", "output", "relu1", "input")));
    // Lifted and put back: nothing happens.
    dragWire(e, e.port("relu1", "input", true), e.port("relu1", "input", true));
    QCOMPARE(e.doc.undoStack()->index(), steps);
    QVERIFY(e.hasEdge(edge("linear1", "output", "relu1", "input")));
  }

  void wireLabelsShowThePerExampleShape() {
    Editor e;
    buildMnistMlp(e);
    QCOMPARE(e.scene.edgeItem(edge("input1", "x", "flatten1", "input"))->label(), QString("N×1×28×28"));
    QCOMPARE(e.scene.edgeItem(edge("flatten1", "output", "linear1", "input"))->label(), QString("N×784"));
    QCOMPARE(e.scene.edgeItem(edge("linear1", "output", "crossentropy1", "input"))->label(), QString("N×10"));
    QCOMPARE(e.scene.edgeItem(edge("input1", "y", "crossentropy1", "target"))->label(), QString("N"));
    e.doc.setParam("linear1", "out_features", int64_t(128));
    QCOMPARE(e.scene.edgeItem(edge("linear1", "output", "crossentropy1", "input"))->label(), QString("N×128"));
    QCOMPARE(shapeLabel(std::nullopt), QString("?"));
  }

  void wiresFromOnePortShowTheirShapeOnce() {
    Editor e;
    e.add("Linear", {0, 0});
    e.add("ReLU", {300, 0});
    e.add("ReLU", {300, 40});
    e.add("Linear", {600, 0});
    e.doc.connectPorts({"linear1", "output"}, {"relu1", "input"});
    e.doc.connectPorts({"linear1", "output"}, {"relu2", "input"});
    e.doc.connectPorts({"relu1", "output"}, {"linear2", "input"});
    EdgeItem* first = e.scene.edgeItem(edge("linear1", "output", "relu1", "input"));
    EdgeItem* second = e.scene.edgeItem(edge("linear1", "output", "relu2", "input"));
    EdgeItem* other = e.scene.edgeItem(edge("relu1", "output", "linear2", "input"));
    QVERIFY(first->labelShown());
    QVERIFY(!second->labelShown());
    QVERIFY(other->labelShown());  // another port: its own label
    QCOMPARE(second->label(), first->label());
    QVERIFY(second->toolTip().endsWith(second->label()));  // hovering still names the shape
    // The labelled wire goes: its sibling takes the label; back again, the first keeps its own.
    e.doc.disconnect(first->edge());
    second = e.scene.edgeItem(edge("linear1", "output", "relu2", "input"));
    QVERIFY(second->labelShown());
    e.doc.undoStack()->undo();
    QVERIFY(e.scene.edgeItem(edge("linear1", "output", "relu2", "input"))->labelShown());
    QVERIFY(!e.scene.edgeItem(edge("linear1", "output", "relu1", "input"))->labelShown());
  }

  void shapeErrorPutsARedOutlineAndTheMessageOnTheNode() {
    Editor e;
    buildMnistMlp(e);
    NodeItem* linear = e.scene.nodeItem("linear1");
    QVERIFY(!linear->problemSeverity());
    QVERIFY(linear->toolTip().contains(QString::fromStdString(linear->layerType()->description)));
    e.doc.setParam("linear1", "in_features", int64_t(100));
    QCOMPARE(linear->problemSeverity(), std::optional(graph::Severity::Error));
    const auto problems = e.doc.problemsFor("linear1");
    QVERIFY(!problems.empty());
    QVERIFY2(linear->toolTip().contains(QString::fromStdString(problems[0].message)), qPrintable(linear->toolTip()));
    QVERIFY(linear->toolTip().contains("784"));
    e.doc.undoStack()->undo();
    QVERIFY(!linear->problemSeverity());
  }

  // A node that trains otherwise than the project says shows it on its card and in its tooltip.
  void aNodesOwnTrainingSettingsShowOnItsCard() {
    Editor e;
    buildMnistMlp(e);
    NodeItem* linear = e.scene.nodeItem("linear1");
    QVERIFY(!linear->toolTip().contains("Trains:"));
    e.doc.setNodeSetting("linear1", "lr_mult", 0.1);
    QVERIFY2(linear->toolTip().contains(QStringLiteral("Trains: lr ×0.1")), qPrintable(linear->toolTip()));
    e.doc.setNodeSetting("linear1", "weight_decay_mult", 0.0);
    QVERIFY2(linear->toolTip().contains(QStringLiteral("Trains: lr ×0.1 · wd ×0")), qPrintable(linear->toolTip()));
    e.doc.setNodeSetting("linear1", "lr_mult", 0.0);
    QVERIFY2(linear->toolTip().contains(QStringLiteral("Trains: lr ×0 · wd ×0")), qPrintable(linear->toolTip()));
    QVERIFY(!linear->showsLock());  // lr_mult 0 is no freeze: the optimizer still steps it
    e.doc.setNodeSetting("linear1", "frozen", true);
    QVERIFY2(linear->toolTip().contains(QStringLiteral("Trains: frozen")), qPrintable(linear->toolTip()));
    QVERIFY(linear->showsLock());
    e.doc.undoStack()->undo();
    QVERIFY(!linear->showsLock());
    e.doc.undoStack()->undo();
    e.doc.undoStack()->undo();
    e.doc.undoStack()->undo();
    QVERIFY(!linear->toolTip().contains("Trains:"));
    QVERIFY_THROWS_EXCEPTION(ValueError, e.doc.setNodeSetting("linear1", "lr_mult", -2.0));
    QCOMPARE(e.doc.node("linear1")->lr_mult, 1.0);
  }

  // The context menu's Freeze / Unfreeze act on the selection's learning nodes, Freeze Up to
  // Here on a node and everything before it; each is one undo step and shows as a lock.
  void nodesFreezeFromTheirMenu() {
    Editor e;
    FreezeActions actions(&e.view);
    QVERIFY(e.view.actions().contains(actions.freezeUpToHereAction()));  // in the context menu
    buildMnistMlp(e);
    e.add("ReLU", {960, 0});    // relu1
    e.add("Linear", {1200, 0});  // linear2
    e.doc.connectPorts({"linear1", "output"}, {"relu1", "input"});
    e.doc.connectPorts({"relu1", "output"}, {"linear2", "input"});
    e.doc.connectPorts({"linear2", "output"}, {"crossentropy1", "input"});
    const int steps = e.doc.undoStack()->count();

    e.scene.selectNodes({"linear2"});
    QVERIFY(actions.freezeAction()->isEnabled());
    QVERIFY(!actions.unfreezeAction()->isEnabled());
    actions.freezeUpToHereAction()->trigger();
    QVERIFY(e.doc.node("linear1")->frozen && e.doc.node("linear2")->frozen);
    QVERIFY(!e.doc.node("flatten1")->frozen);  // learns nothing: left as it is
    QVERIFY(e.scene.nodeItem("linear1")->showsLock());
    QCOMPARE(e.doc.undoStack()->count(), steps + 1);
    QCOMPARE(e.doc.undoStack()->undoText(), QStringLiteral("Freeze 2 nodes"));
    QVERIFY(actions.unfreezeAction()->isEnabled());
    QVERIFY(!actions.freezeAction()->isEnabled());

    e.scene.selectNodes({"linear1", "relu1"});
    actions.unfreezeAction()->trigger();
    QVERIFY(!e.doc.node("linear1")->frozen && e.doc.node("linear2")->frozen);
    QCOMPARE(e.doc.undoStack()->undoText(), QStringLiteral("Unfreeze Linear 'linear1'"));
    e.doc.undoStack()->undo();
    e.doc.undoStack()->undo();
    QVERIFY(!e.doc.node("linear1")->frozen && !e.doc.node("linear2")->frozen);
    QVERIFY(!e.scene.nodeItem("linear2")->showsLock());
  }

  void draggingANodeIsOneUndoStep() {
    Editor e;
    const QString a = e.add("Linear", {0, 0});
    const QString b = e.add("ReLU", {300, 0});
    e.doc.connectPorts({"linear1", "output"}, {"relu1", "input"});
    EdgeItem* wire = e.scene.edgeItem(edge("linear1", "output", "relu1", "input"));
    const QPointF wire_start = wire->path().pointAtPercent(0);
    const int steps = e.doc.undoStack()->count();
    QSignalSpy moved(&e.doc, &GraphDocument::nodeMoved);
    QSignalSpy validated(&e.doc, &GraphDocument::validated);
    dragMouse(e.viewport(), e.at(e.header(a)), e.at(e.header(a) + QPointF(100, 60)));
    QCOMPARE(validated.count(), 0);  // a move changes no meaning: nothing is validated
    QCOMPARE(e.doc.undoStack()->count(), steps + 1);
    const graph::Node* n = e.doc.node(a);
    QCOMPARE(QPointF(n->position.x, n->position.y), QPointF(100, 60));  // snapped to the grid
    QCOMPARE(e.scene.nodeItem(a)->pos(), QPointF(100, 60));
    QCOMPARE(wire->path().pointAtPercent(0), wire_start + QPointF(100, 60));  // the wire followed
    QCOMPARE(moved.count(), 1);
    e.doc.undoStack()->undo();
    QCOMPARE(e.scene.nodeItem(a)->pos(), QPointF(0, 0));
    QCOMPARE(wire->path().pointAtPercent(0), wire_start);
    QCOMPARE(e.scene.nodeItem(b)->pos(), QPointF(300, 0));
  }

  void draggingSeveralSelectedNodesIsOneUndoStep() {
    Editor e;
    const QString a = e.add("Linear", {0, 0});
    const QString b = e.add("ReLU", {300, 0});
    e.scene.selectNodes({a, b});
    const int steps = e.doc.undoStack()->count();
    dragMouse(e.viewport(), e.at(e.header(b)), e.at(e.header(b) + QPointF(40, 80)));
    QCOMPARE(e.doc.undoStack()->count(), steps + 1);
    QCOMPARE(e.doc.node(a)->position, (graph::Position{40, 80}));
    QCOMPARE(e.doc.node(b)->position, (graph::Position{340, 80}));
  }

  void withoutSnappingNodesGoWhereDropped() {
    Editor e;
    e.scene.setSnapToGrid(false);
    const QString a = e.add("Linear", {0, 0});
    dragMouse(e.viewport(), e.at(e.header(a)), e.at(e.header(a) + QPointF(33, 7)));
    QCOMPARE(e.doc.node(a)->position, (graph::Position{33, 7}));
  }

  // F1 shows the selected node's layer type: its names, description and every parameter by
  // label and key with its default; with no node selected it shows nothing.
  void f1ShowsTheSelectedLayersHelp() {
    Editor e;
    const QString conv = e.add("Conv2d", {0, 0});
    const QString relu = e.add("ReLU", {300, 0});
    QTest::keyClick(e.viewport(), Qt::Key_F1);
    QVERIFY(!e.view.findChild<LayerHelp*>());

    e.scene.selectNodes({conv});
    QTest::keyClick(e.viewport(), Qt::Key_F1);
    auto* help = e.view.findChild<LayerHelp*>();
    QVERIFY(help);
    QVERIFY(help->isVisible());
    QCOMPARE(help->typeName(), QStringLiteral("Conv2d"));
    const QString text = help->browser()->toPlainText();
    const graph::LayerType& type = *graph::Registry::instance().find("Conv2d");
    QVERIFY2(text.contains("2-D convolution"), qPrintable(text));
    QVERIFY(text.contains(QString::fromStdString(type.description)));
    for (const graph::ParamSpec& p : type.params) {
      QVERIFY2(text.contains(QString::fromStdString(p.label)), p.name.c_str());
      QVERIFY2(text.contains(QString::fromStdString(p.name)), p.name.c_str());
      QVERIFY2(text.contains(QString::fromStdString(p.doc)), p.name.c_str());
    }
    QVERIFY(text.contains("Output channels"));

    // Another node: the same window follows it.
    e.scene.selectNodes({relu});
    QTest::keyClick(e.viewport(), Qt::Key_F1);
    QCOMPARE(e.view.findChildren<LayerHelp*>().size(), 1);
    QCOMPARE(help->typeName(), QStringLiteral("ReLU"));
    QVERIFY(help->browser()->toPlainText().contains("No parameters."));
  }

  void deleteRemovesTheSelectionInOneStep() {
    Editor e;
    e.add("Linear", {0, 0});
    e.add("ReLU", {300, 0});
    e.add("Linear", {600, 0});
    e.doc.connectPorts({"linear1", "output"}, {"relu1", "input"});
    e.doc.connectPorts({"relu1", "output"}, {"linear2", "input"});
    const graph::Graph before = e.doc.graph();
    const int steps = e.doc.undoStack()->count();
    e.scene.selectNodes({"relu1"});
    e.scene.edgeItem(edge("linear1", "output", "relu1", "input"))->setSelected(true);
    QTest::keyClick(e.viewport(), Qt::Key_Delete);
    QCOMPARE(int(e.doc.graph().nodes.size()), 2);
    QVERIFY(e.doc.graph().edges.empty());
    QCOMPARE(e.doc.undoStack()->count(), steps + 1);
    e.doc.undoStack()->undo();
    QCOMPARE(e.doc.graph(), before);
    QVERIFY(e.scene.nodeItem("relu1"));
    QVERIFY(e.scene.edgeItem(edge("relu1", "output", "linear2", "input")));
  }

  void clickingAWireSelectsItAndBackspaceDeletesIt() {
    Editor e;
    e.add("Linear", {0, 0});
    e.add("ReLU", {400, 200});
    e.doc.connectPorts({"linear1", "output"}, {"relu1", "input"});
    EdgeItem* wire = e.scene.edgeItem(edge("linear1", "output", "relu1", "input"));
    // A point on the curve a quarter of the way, off the label; the hit band is forgiving.
    const QPointF on_curve = wire->path().pointAtPercent(0.25);
    QTest::mouseClick(e.viewport(), Qt::LeftButton, {}, e.at(on_curve + QPointF(0, 3)));
    QVERIFY(wire->isSelected());
    QCOMPARE(int(e.scene.selectedEdges().size()), 1);
    QTest::keyClick(e.viewport(), Qt::Key_Backspace);
    QVERIFY(e.doc.graph().edges.empty());
    QCOMPARE(int(e.doc.graph().nodes.size()), 2);
  }

  void copyAndPasteKeepInternalWiresOnly() {
    Editor e;
    e.add("Linear", {0, 0});
    e.add("ReLU", {300, 0});
    e.add("Linear", {600, 0});
    e.doc.connectPorts({"linear1", "output"}, {"relu1", "input"});
    e.doc.connectPorts({"relu1", "output"}, {"linear2", "input"});
    e.doc.setParam("linear1", "out_features", int64_t(64));
    e.scene.selectNodes({"linear1", "relu1"});
    std::unique_ptr<QMimeData> copied(e.scene.copySelection());
    QVERIFY(copied);
    QVERIFY(copied->hasFormat(kGraphMimeType));
    QVERIFY(copied->text().contains("\"linear1\""));

    const int steps = e.doc.undoStack()->count();
    const QStringList pasted = e.scene.paste(copied.get(), QPointF(100, 400));
    QCOMPARE(pasted.size(), 2);
    QCOMPARE(e.doc.undoStack()->count(), steps + 1);
    QCOMPARE(e.scene.selectedNodeIds(), pasted);
    const graph::Node* lin = e.doc.node(pasted[0]);
    QCOMPARE(lin->type, std::string("Linear"));
    QCOMPARE(lin->position, (graph::Position{100, 400}));  // the fragment's top-left lands there
    QCOMPARE(lin->params.at("out_features"), graph::ParamValue(int64_t(64)));
    QCOMPARE(e.doc.node(pasted[1])->position, (graph::Position{400, 400}));
    QCOMPARE(int(e.doc.graph().edges.size()), 3);  // two old, one copied inside the fragment
    QVERIFY(e.hasEdge(edge(pasted[0].toStdString(), "output", pasted[1].toStdString(), "input")));
    QVERIFY(e.scene.edgeItem(edge(pasted[0].toStdString(), "output", pasted[1].toStdString(), "input")));

    // Without a position: 40 right and down of the original, and plain text works too.
    QMimeData text_only;
    text_only.setText(copied->text());
    const QStringList again = e.scene.paste(&text_only);
    QCOMPARE(again.size(), 2);
    QCOMPARE(e.doc.node(again[0])->position, (graph::Position{40, 40}));
  }

  void clipboardRoundTripGoesThroughTheSystemClipboard() {
    Editor e;
    e.add("ReLU", {0, 0});
    e.scene.selectNodes({"relu1"});
    e.scene.copyToClipboard();
    e.scene.pasteFromClipboard(QPointF(200, 200));
    QCOMPARE(int(e.doc.graph().nodes.size()), 2);
    e.scene.cutToClipboard();  // the pasted copy, selected after the paste
    QCOMPARE(int(e.doc.graph().nodes.size()), 1);
    QCOMPARE(e.doc.undoStack()->undoText(), QStringLiteral("Cut"));
  }

  void malformedClipboardTextChangesNothing() {
    Editor e;
    e.add("ReLU", {0, 0});
    const graph::Graph before = e.doc.graph();
    QSignalSpy status(&e.scene, &NodeScene::statusMessage);
    QMimeData junk;
    junk.setText("{ this is not a graph");
    QVERIFY(e.scene.paste(&junk, QPointF(0, 0)).isEmpty());
    QCOMPARE(e.doc.graph(), before);
    QCOMPARE(e.doc.undoStack()->count(), 1);
    QCOMPARE(status.count(), 1);
    QVERIFY(status.at(0).at(0).toString().startsWith("Cannot paste"));
  }

  void duplicateCopiesTheSelectionBesideIt() {
    Editor e;
    e.add("Linear", {0, 0});
    e.add("ReLU", {300, 0});
    e.doc.connectPorts({"linear1", "output"}, {"relu1", "input"});
    e.scene.selectNodes({"linear1", "relu1"});
    e.scene.duplicateSelection();
    QCOMPARE(int(e.doc.graph().nodes.size()), 4);
    QCOMPARE(int(e.doc.graph().edges.size()), 2);
    QCOMPARE(e.doc.undoStack()->undoText(), QStringLiteral("Duplicate"));
    const QStringList copies = e.scene.selectedNodeIds();
    QCOMPARE(copies.size(), 2);
    QCOMPARE(e.doc.node(copies[0])->position, (graph::Position{40, 40}));
  }

  void autoLayoutUsesTheCardSizes() {
    Editor e;
    buildMnistMlp(e);
    e.scene.autoLayout();
    QCOMPARE(e.doc.undoStack()->undoText(), QStringLiteral("Auto layout"));
    // Neighbouring columns do not overlap: each card ends before the next starts.
    const NodeItem* input = e.scene.nodeItem("input1");
    const NodeItem* flatten = e.scene.nodeItem("flatten1");
    QVERIFY(input->pos().x() + input->size().width() < flatten->pos().x());
  }

  // Every wire runs left to right: its source card ends before its target card starts.
  static QString backwardWire(const graph::Graph& g) {
    for (const graph::Edge& w : g.edges) {
      const graph::Node *from = g.find(w.from.node), *to = g.find(w.to.node);
      if (from->position.x + NodeScene::nodeSize(*from).width() >= to->position.x)
        return QString::fromStdString(w.from.node + " -> " + w.to.node);
    }
    return {};
  }

  // Every wire as it is drawn reads in order, as text does: left to right along a row, or on to
  // a lower row. A wire ends at its node's card or, inside a closed block, at the card of the
  // outermost closed block around it; a wire within one closed block is not drawn. With
  // `inside`, the wires among the layers of each block instead, as they read once it is open.
  static QString wireOutOfReadingOrder(const graph::Graph& g, bool inside) {
    std::map<std::string, const graph::Block*> parent;
    for (const graph::Block& b : g.blocks)
      for (const std::string& m : b.members) parent[m] = &b;
    struct Card {
      std::string id;
      graph::Position at;
      double width;
    };
    const auto card = [&](const std::string& node) {
      const graph::Block* shown = nullptr;
      for (auto it = parent.find(node); it != parent.end() && !inside; it = parent.find(it->second->id))
        if (it->second->collapsed) shown = it->second;
      if (shown) return Card{shown->id, shown->position, widgets::BlockItem::cardSize(1).width()};
      const graph::Node* n = g.find(node);
      return Card{n->id, n->position, NodeScene::nodeSize(*n).width()};
    };
    for (const graph::Edge& w : g.edges) {
      if (inside && (!parent.count(w.from.node) || parent[w.from.node] != parent[w.to.node])) continue;
      const Card from = card(w.from.node), to = card(w.to.node);
      if (from.id == to.id) continue;  // inside a closed block
      if (to.at.y <= from.at.y && from.at.x + from.width >= to.at.x)
        return QString::fromStdString(from.id + " -> " + to.id);
    }
    return {};
  }

  // The examples open readable in a small window: long models are folded into blocks and every
  // model wraps into rows, read like text; opened, a block's layers read so too.
  void examplesReadInOrder() {
    const QDir dir(QStringLiteral(PLEXUS_SOURCE_DIR "/examples"));
    const QStringList files = dir.entryList({QStringLiteral("*.plexus")}, QDir::Files);
    QVERIFY(files.size() >= 8);
    for (const QString& file : files) {
      GraphDocument doc;
      doc.load(dir.filePath(file));
      for (const bool inside : {false, true})
        QVERIFY2(wireOutOfReadingOrder(doc.graph(), inside).isEmpty(),
                 qPrintable(file + (inside ? " (in a block): " : ": ") + wireOutOfReadingOrder(doc.graph(), inside)));
    }
  }

  void autoLayoutRunsEveryWireLeftToRight() {
    // Random acyclic graphs of registry nodes (edges only from earlier to later nodes, ports
    // ignored by the layout) in scrambled order: after Auto layout no wire runs backwards.
    std::mt19937 rng(7);
    const QStringList types{QStringLiteral("Linear"), QStringLiteral("ReLU"), QStringLiteral("Conv2d"),
                            QStringLiteral("Add"), QStringLiteral("LSTM"), QStringLiteral("Dropout")};
    const auto id = [](size_t i) {
      std::string text = "n";  // appended, not "n" + ...: GCC 12 warns falsely (-Wrestrict) on that
      text += std::to_string(i);
      return text;
    };
    for (int trial = 0; trial < 20; ++trial) {
      graph::Graph g;
      const int n = 3 + int(rng() % 25);
      for (int i = 0; i < n; ++i)
        g.nodes.push_back({id(size_t(i)), types[int(rng() % types.size())].toStdString(), "", {},
                           {double(rng() % 2000), double(rng() % 2000)}});
      for (int i = 1; i < n; ++i)
        for (int k = 0; k < 1 + int(rng() % 2); ++k)
          g.edges.push_back({{id(rng() % size_t(i)), "output"}, {id(size_t(i)), "input"}});
      std::shuffle(g.nodes.begin(), g.nodes.end(), rng);
      GraphDocument doc;
      doc.reset(g, {});
      NodeScene scene(&doc);
      scene.autoLayout();
      QVERIFY2(backwardWire(doc.graph()).isEmpty(), qPrintable(backwardWire(doc.graph())));
    }
  }

  void zoomControlsChangeTheZoom() {
    Editor e;
    QSignalSpy spy(&e.view, &NodeView::zoomChanged);
    QCOMPARE(e.view.zoom(), 1.0);
    e.view.zoomIn();
    QVERIFY(e.view.zoom() > 1.0);
    e.view.zoomOut();
    e.view.zoomOut();
    QVERIFY(e.view.zoom() < 1.0);
    e.view.resetZoom();
    QCOMPARE(e.view.zoom(), 1.0);
    QCOMPARE(spy.count(), 4);
    for (int i = 0; i < 30; ++i) e.view.zoomIn();
    QCOMPARE(e.view.zoom(), NodeView::kMaxZoom);
    for (int i = 0; i < 30; ++i) e.view.zoomOut();
    QCOMPARE(e.view.zoom(), NodeView::kMinZoom);

    e.add("Linear", {0, 0});
    e.add("Linear", {3000, 1500});
    e.view.resetZoom();
    e.view.fitAll();
    QVERIFY(e.view.zoom() < 0.5);
    const QRect visible = e.viewport()->rect();
    QVERIFY(visible.contains(e.at(QPointF(0, 0))));
    QVERIFY(visible.contains(e.at(QPointF(3100, 1550))));
  }

  void wheelZoomKeepsThePointUnderTheMouse() {
    Editor e;
    const QPoint mouse(300, 200);
    const QPointF under = e.view.mapToScene(mouse);
    QWheelEvent wheel(mouse, e.viewport()->mapToGlobal(mouse), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(e.viewport(), &wheel);
    QVERIFY(e.view.zoom() > 1.1);
    const QPointF after = e.view.mapToScene(mouse);
    QVERIFY2(QLineF(under, after).length() < 2, qPrintable(QString("%1,%2").arg(after.x()).arg(after.y())));
  }

  void middleDragPans() {
    Editor e;
    const QPointF before = e.view.mapToScene(QPoint(100, 100));
    QTest::mousePress(e.viewport(), Qt::MiddleButton, {}, QPoint(100, 100));
    moveMouse(e.viewport(), QPoint(160, 130), Qt::MiddleButton);
    QTest::mouseRelease(e.viewport(), Qt::MiddleButton, {}, QPoint(160, 130));
    QCOMPARE(e.view.mapToScene(QPoint(160, 130)), before);
  }

  void spaceAndLeftDragPansInsteadOfMovingANode() {
    Editor e;
    const QString id = e.add("ReLU", {0, 0});
    const QPoint from = e.at(e.header(id));
    const QPointF before = e.view.mapToScene(from);
    QTest::keyPress(e.viewport(), Qt::Key_Space);
    dragMouse(e.viewport(), from, from + QPoint(80, 40));
    QTest::keyRelease(e.viewport(), Qt::Key_Space);
    QCOMPARE(e.doc.node(id)->position, (graph::Position{0, 0}));
    QCOMPARE(e.doc.undoStack()->count(), 1);
    QCOMPARE(e.view.mapToScene(from + QPoint(80, 40)), before);
  }

  void rubberBandSelectsTheNodesInside() {
    Editor e;
    e.add("ReLU", {100, 100});
    e.add("ReLU", {300, 100});
    e.add("ReLU", {700, 100});
    dragMouse(e.viewport(), e.at(QPointF(60, 60)), e.at(QPointF(520, 260)));
    QCOMPARE(e.scene.selectedNodeIds(), (QStringList{"relu1", "relu2"}));
  }

  void centerOnNodeSelectsAndCentres() {
    Editor e;
    e.add("ReLU", {2000, 1000});
    e.view.centerOnNode("relu1");
    QCOMPARE(e.scene.selectedNodeIds(), QStringList{"relu1"});
    const QPointF centre = e.view.mapToScene(e.viewport()->rect().center());
    QVERIFY(e.scene.nodeItem("relu1")->sceneBoundingRect().contains(centre));
  }

  void viewStateRoundTrips() {
    Editor e;
    e.view.setZoom(1.7);
    e.view.centerOn(420, -130);
    const QString state = e.view.viewState();
    QVERIFY(state.startsWith("{") && state.contains("\"zoom\"") && state.contains("\"center\""));
    Editor other;
    other.view.restoreViewState(state);
    QCOMPARE(other.view.zoom(), 1.7);
    const QPointF centre = other.view.mapToScene(other.viewport()->rect().center());
    QVERIFY2(QLineF(centre, QPointF(420, -130)).length() < 1.5,
             qPrintable(state + QString(" -> %1,%2").arg(centre.x()).arg(centre.y())));
    other.view.restoreViewState("not json");
    other.view.restoreViewState("{\"zoom\": -1, \"center\": [0, 0]}");
    QCOMPARE(other.view.zoom(), 1.7);
  }

  void themeChangeRepaintsInTheNewColours() {
    Editor e;
    e.add("ReLU", {0, 0});
    e.view.centerOn(0, 0);
    ThemeManager::instance().setMode(ThemeMode::Dark);
    const QColor dark = e.view.grab().toImage().pixelColor(5, 5);
    QCOMPARE(dark, ThemeManager::instance().theme().canvas);
    ThemeManager::instance().setMode(ThemeMode::Light);
    const QColor light = e.view.grab().toImage().pixelColor(5, 5);
    QCOMPARE(light, ThemeManager::instance().theme().canvas);
  }

  // Screenshots of LeNet for a person to look at: light and dark, and zoomed out and in.
  void rendersLeNet() {
    for (const auto& [mode, file] : {std::pair{ThemeMode::Light, "/tmp/canvas-light.png"},
                                      std::pair{ThemeMode::Dark, "/tmp/canvas-dark.png"}}) {
      ThemeManager::instance().setMode(mode);
      Editor e;
      e.view.resize(1400, 500);
      e.doc.load(QStringLiteral(PLEXUS_SOURCE_DIR "/examples/mnist_lenet.plexus"));
      e.view.centerOn(700, 60);
      e.scene.selectNodes({"conv2"});
      QVERIFY(e.view.grab().save(file));
    }
    ThemeManager::instance().setMode(ThemeMode::Light);
    Editor e;
    e.view.resize(1400, 500);
    e.doc.load(QStringLiteral(PLEXUS_SOURCE_DIR "/examples/mnist_lenet.plexus"));
    e.doc.setParam("fc1", "in_features", int64_t(7));
    e.view.setZoom(0.5);
    e.view.centerOn(1100, 60);
    QVERIFY(e.view.grab().save("/tmp/canvas-50.png"));
    e.view.setZoom(2);
    e.view.centerOn(1500, 60);
    QVERIFY(e.view.grab().save("/tmp/canvas-200.png"));
    e.view.resetZoom();
    e.view.centerOn(1800, 60);
    QTest::mousePress(e.viewport(), Qt::LeftButton, {}, e.at(e.port("relu3", "output", false)));
    moveMouse(e.viewport(), e.at(e.port("fc2", "input", true) + QPointF(-30, 80)));
    QVERIFY(e.view.grab().save("/tmp/canvas-wiring.png"));
    QTest::keyClick(e.viewport(), Qt::Key_Escape);
    QTest::mouseRelease(e.viewport(), Qt::LeftButton, {}, e.at(QPointF(0, 0)));
    e.scene.autoLayout();
    e.view.fitAll();
    QVERIFY(e.view.grab().save("/tmp/canvas-autolayout.png"));
  }

  // Node states for a person to look at: unknown type, unused (warning), unwired required inputs.
  void rendersNodeStates() {
    for (const auto& [mode, file] : {std::pair{ThemeMode::Light, "/tmp/canvas-states-light.png"},
                                      std::pair{ThemeMode::Dark, "/tmp/canvas-states-dark.png"}}) {
      ThemeManager::instance().setMode(mode);
      Editor e;
      e.view.resize(900, 360);
      graph::Graph g;
      g.nodes.push_back({"mystery", "Quantum", "q", {}, {0, 0}});
      g.nodes.push_back({"in", "Input", "in", {}, {0, 160}});
      g.nodes.push_back({"fc", "Linear", "fc", {{"out_features", int64_t(128)}}, {260, 160}});
      g.nodes.push_back({"add", "Add", "sum", {}, {520, 0}});
      g.nodes.push_back({"loss", "CrossEntropy", "loss", {}, {520, 160}});
      g.edges.push_back(edge("mystery", "output", "add", "inputs"));
      g.edges.push_back(edge("in", "x", "fc", "input"));
      e.doc.reset(g, "");
      e.view.centerOn(340, 120);
      QVERIFY(e.view.grab().save(file));
    }
    ThemeManager::instance().setMode(ThemeMode::Light);
  }
};

QTEST_MAIN(TestCanvas)
#include "test_widgets_canvas.moc"
