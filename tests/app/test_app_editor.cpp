// The editor window end to end, offscreen, driven like a user: palette drags onto the canvas,
// port-to-port mouse drags, shortcuts; then undo/redo, files, autosave and crash recovery.
#include <QDockWidget>
#include <QFileInfo>
#include <QGraphicsView>
#include <QLineEdit>
#include <QMimeData>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QUndoStack>
#include <QUrl>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "editor/block_item.h"
#include "editor/edge_item.h"
#include "editor/model/graph_document.h"
#include "editor/node_item.h"
#include "editor/node_scene.h"
#include "editor/node_view.h"
#include "editor/palette.h"
#include "editor/problems_panel.h"
#include "graph/project.h"
#include "main_window.h"
#include "recovery.h"
#include "support/app_fixture.h"
#include "support/mouse_drag.h"

using namespace plexus;
using plexus::app::MainWindow;

namespace {

const QString kExamples = QStringLiteral(PLEXUS_SOURCE_DIR "/examples");

graph::Graph example(const char* name) { return graph::load_project((kExamples + "/" + name).toStdString()); }

using testing::dragMouse;
using testing::moveMouse;

// What a drag from the palette delivers when dropped on the canvas at `pos`: the palette's own
// drag data for the layer item the user picked.
void dragFromPalette(MainWindow& w, const QString& type, QPoint pos) {
  QTreeWidget* tree = w.palette()->tree();
  QTreeWidgetItem* picked = nullptr;
  for (QTreeWidgetItemIterator it(tree); *it && !picked; ++it) {
    tree->setCurrentItem(*it);
    if (w.palette()->currentType() == type) picked = *it;
  }
  QVERIFY2(picked, qPrintable("the palette has no " + type));
  std::unique_ptr<QMimeData> data(widgets::LayerPalette::mimeDataForType(w.palette()->currentType()));
  QWidget* viewport = w.view()->viewport();
  QDragEnterEvent enter(pos, Qt::CopyAction, data.get(), Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(viewport, &enter);
  QVERIFY(enter.isAccepted());
  QDragMoveEvent move(pos, Qt::CopyAction, data.get(), Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(viewport, &move);
  QDropEvent drop(pos, Qt::CopyAction, data.get(), Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(viewport, &drop);
  QVERIFY(drop.isAccepted());
}

QPoint portAt(MainWindow& w, const graph::PortRef& port, bool input) {
  const QPointF scene = w.scene()->portScenePos(port, input);
  return w.view()->mapFromScene(scene);
}

void wire(MainWindow& w, const graph::PortRef& from, const graph::PortRef& to) {
  dragMouse(w.view()->viewport(), portAt(w, from, false), portAt(w, to, true));
}

// Structure of a graph, independent of node ids: node types and parameters in order, and the
// wires between those positions.
struct Structure {
  std::vector<std::pair<std::string, std::map<std::string, graph::ParamValue>>> nodes;
  std::set<std::tuple<size_t, std::string, size_t, std::string>> edges;
  bool operator==(const Structure&) const = default;
};
Structure structure(const graph::Graph& g) {
  Structure s;
  std::map<std::string, size_t> index;
  for (const graph::Node& n : g.nodes) {
    index[n.id] = s.nodes.size();
    s.nodes.emplace_back(n.type, n.params);
  }
  for (const graph::Edge& e : g.edges) s.edges.emplace(index.at(e.from.node), e.from.port, index.at(e.to.node), e.to.port);
  return s;
}

std::string text(const graph::Graph& g) { return graph::serialize_project(g); }

std::string readFile(const QString& path) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A window with its dialogs answered by the test.
struct Window : MainWindow {
  QMessageBox::StandardButton answer = QMessageBox::Discard;
  QStringList asked, errors;
  QString save_path;
  Window() {
    ask = [this](const QString&, const QString& text, QMessageBox::StandardButtons) {
      asked << text;
      return answer;
    };
    showError = [this](const QString&, const QString& text) { errors << text; };
    chooseSavePath = [this](const QString&) { return save_path; };
    chooseOpenPath = [](const QString&) { return QString(); };
    if (!QSettings().contains("geometry")) resize(1600, 1000);
  }
};

// The unsaved edits the killed child makes to the MLP example, autosaving after each when
// `autosave` is given.
bool editForRecovery(MainWindow& w, bool autosave) {
  w.document()->rename("fc2", "classifier");
  if (autosave && !w.autosaver()->saveNow()) return false;
  w.document()->rename("fc1", "hidden");
  return !autosave || w.autosaver()->saveNow();
}

// Child mode (test_app_editor --autosave-and-wait PROJECT): a real Plexus window opens the
// project, makes two unsaved edits with an autosave after each, says where it autosaved, and
// keeps running until the test kills it. Run by autosaveRecoveredAfterAKill.
int autosaveAndWait(const QString& project) {
  QStandardPaths::setTestModeEnabled(true);
  MainWindow w;
  if (!w.openFile(project)) return 2;
  if (!editForRecovery(w, /*autosave=*/true)) return 3;
  std::printf("%s\n", qPrintable(w.autosaver()->file()));
  std::fflush(stdout);
  return QApplication::exec();
}

}  // namespace

class TestEditorWindow : public QObject {
  Q_OBJECT

  QTemporaryDir recovery_;
  QTemporaryDir files_;

 private slots:
  void initTestCase() {
    testing::isolate_app(recovery_.path());
  }

  // The acceptance scenario: the MNIST MLP built with the mouse equals the shipped example.
  void buildsTheMnistMlpByDragAndDrop() {
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const graph::Graph expected = example("mnist_mlp.plexus");
    w.document()->setDataset(expected.dataset);

    std::map<std::string, std::string> id_of;  // example id -> id the editor gave
    for (size_t i = 0; i < expected.nodes.size(); ++i) {
      const graph::Node& n = expected.nodes[i];
      const size_t before = w.document()->graph().nodes.size();
      dragFromPalette(w, QString::fromStdString(n.type), QPoint(60 + int(i % 3) * 260, 80 + int(i / 3) * 260));
      QCOMPARE(w.document()->graph().nodes.size(), before + 1);
      const graph::Node& added = w.document()->graph().nodes.back();
      QCOMPARE(added.type, n.type);
      id_of[n.id] = added.id;
      for (const auto& [name, value] : n.params)
        w.document()->setParam(QString::fromStdString(added.id), QString::fromStdString(name), value);
    }
    for (const graph::Edge& e : expected.edges) {
      const size_t before = w.document()->graph().edges.size();
      wire(w, {id_of[e.from.node], e.from.port}, {id_of[e.to.node], e.to.port});
      QCOMPARE(w.document()->graph().edges.size(), before + 1);
    }
    QCOMPARE(structure(w.document()->graph()), structure(expected));
    QVERIFY(w.document()->validation().ok());
    const auto shape = w.document()->edgeShape({{id_of["fc1"], "output"}, {id_of["act"], "input"}});
    QVERIFY(shape && *shape == Shape{128});

    // An invalid connection is refused, with the reason in the status bar.
    const auto edges = w.document()->graph().edges;
    wire(w, {id_of["fc2"], "output"}, {id_of["fc1"], "input"});  // would close a cycle
    QCOMPARE(w.document()->graph().edges, edges);
    QVERIFY2(w.statusBar()->currentMessage().contains("cycle"), qPrintable(w.statusBar()->currentMessage()));
    dragMouse(w.view()->viewport(), portAt(w, {id_of["act"], "output"}, false),
              portAt(w, {id_of["fc1"], "output"}, false));  // output to output
    QCOMPARE(w.document()->graph().edges, edges);

    // Undo everything: an empty graph; redo everything: the same project text.
    const std::string built = text(w.document()->graph());
    QUndoStack* undo = w.document()->undoStack();
    while (undo->canUndo()) undo->undo();
    QVERIFY(w.document()->graph().nodes.empty());
    QVERIFY(w.document()->graph().edges.empty());
    QCOMPARE(w.scene()->items().size(), 0);
    while (undo->canRedo()) undo->redo();
    QCOMPARE(text(w.document()->graph()), built);
    QVERIFY(w.scene()->nodeItem(QString::fromStdString(id_of["fc2"])));

    // Save, then open in another window: the same graph, and the file reads back byte for byte.
    w.save_path = files_.filePath("built.plexus");
    QVERIFY(w.save());
    QVERIFY(!w.document()->isModified());
    Window other;
    QVERIFY(other.openFile(w.save_path));
    QCOMPARE(other.document()->graph(), w.document()->graph());
    other.document()->save(files_.filePath("again.plexus"));
    QCOMPARE(readFile(files_.filePath("again.plexus")), readFile(w.save_path));
  }

  void copyPasteKeepsInternalWires() {
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openFile(kExamples + "/mnist_mlp.plexus"));
    const size_t nodes = w.document()->graph().nodes.size(), edges = w.document()->graph().edges.size();
    w.scene()->selectNodes({"fc1", "act"});
    w.view()->setFocus();
    QTest::keySequence(w.view(), QKeySequence::Copy);
    QTest::keySequence(w.view(), QKeySequence::Paste);
    QCOMPARE(w.document()->graph().nodes.size(), nodes + 2);
    QCOMPARE(w.document()->graph().edges.size(), edges + 1);  // fc1 -> act only
    const QStringList pasted = w.scene()->selectedNodeIds();
    QCOMPARE(pasted.size(), 2);
    const graph::Edge& e = w.document()->graph().edges.back();
    QCOMPARE(QString::fromStdString(e.from.node), pasted[0]);
    QCOMPARE(QString::fromStdString(e.to.node), pasted[1]);
    // A second window pastes the same clipboard (the system clipboard carries project JSON).
    Window other;
    other.show();
    other.activateWindow();  // shortcuts go to the active window
    QVERIFY(QTest::qWaitForWindowActive(&other));
    other.view()->setFocus();
    QTest::keySequence(other.view(), QKeySequence::Paste);
    QCOMPARE(other.document()->graph().nodes.size(), size_t(2));
    QCOMPARE(other.document()->graph().edges.size(), size_t(1));
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    QTest::keySequence(w.view(), QKeySequence::Undo);
    QCOMPARE(w.document()->graph().nodes.size(), nodes);
  }

  void failedOpenLeavesTheProjectUntouched() {
    Window w;
    QVERIFY(w.openFile(kExamples + "/mnist_lenet.plexus"));
    w.document()->rename("conv1", "edited");
    const graph::Graph before = w.document()->graph();
    const QString bad = files_.filePath("broken.plexus");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\n  \"format\": 1,\n  \"nodes\": [ 42 ]\n}\n");
    f.close();
    w.answer = QMessageBox::Discard;  // the unsaved rename is asked about first
    QVERIFY(!w.openFile(bad));
    QCOMPARE(w.errors.size(), 1);
    QVERIFY2(w.errors[0].contains("broken.plexus") && w.errors[0].contains("line 3"), qPrintable(w.errors[0]));
    QCOMPARE(w.document()->graph(), before);
    QVERIFY(w.document()->filePath().endsWith("mnist_lenet.plexus"));
    QVERIFY(w.document()->isModified());
  }

  void titleAndClosePromptFollowUnsavedChanges() {
    Window w;
    w.show();
    QVERIFY(w.openFile(kExamples + "/mnist_mlp.plexus"));
    QVERIFY(w.windowTitle().startsWith("mnist_mlp.plexus"));
    QVERIFY(!w.isWindowModified());
    w.document()->rename("fc1", "hidden");
    QVERIFY(w.isWindowModified());
    w.answer = QMessageBox::Cancel;
    QVERIFY(!w.close());
    QCOMPARE(w.asked.size(), 1);
    QVERIFY(w.isVisible());
    w.answer = QMessageBox::Discard;
    QVERIFY(w.close());
  }

  void autosaveAndCrashRecovery() {
    const QString dir = app::Autosaver::defaultDirectory();
    QString written;
    graph::Graph unsaved;
    {
      Window w;
      QVERIFY(w.openFile(kExamples + "/mnist_mlp.plexus"));
      QVERIFY(w.autosaver()->saveNow());
      QVERIFY(!QFile::exists(w.autosaver()->file()));  // nothing unsaved, nothing written
      w.document()->rename("fc2", "classifier");
      QVERIFY(w.autosaver()->saveNow());
      written = w.autosaver()->file();
      QVERIFY(QFile::exists(written));
      QCOMPARE(graph::load_project(written.toStdString()), w.document()->graph());
      unsaved = w.document()->graph();
      // Our own file is not offered while we run.
      QVERIFY(app::Autosaver::orphans(dir).empty());
      // Simulate the crash: the file outlives a process that is gone.
      QVERIFY(QFile::copy(written, dir + "/autosave-999999-1.plexus"));
      QVERIFY(QFile::copy(written + ".json", dir + "/autosave-999999-1.plexus.json"));
      w.answer = QMessageBox::Discard;
    }
    QVERIFY(!QFile::exists(written));  // a clean close removes the window's recovery file
    const auto orphans = app::Autosaver::orphans(dir);
    QCOMPARE(orphans.size(), size_t(1));
    QVERIFY(orphans[0].original.endsWith("mnist_mlp.plexus"));

    Window after;
    after.answer = QMessageBox::Yes;
    QCOMPARE(after.offerRecovery(), 1);
    QCOMPARE(after.asked.size(), 1);
    QVERIFY2(after.asked[0].contains("mnist_mlp.plexus"), qPrintable(after.asked[0]));
    QCOMPARE(after.document()->graph(), unsaved);
    QVERIFY(after.document()->isModified());
    QVERIFY(after.document()->filePath().endsWith("mnist_mlp.plexus"));
    QVERIFY(app::Autosaver::orphans(dir).empty());
    after.answer = QMessageBox::Discard;
  }

  // A real crash: another Plexus process autosaves unsaved work twice and is killed with SIGKILL
  // (no handler, no cleanup). Its recovery file is not offered while it runs; once it is dead,
  // the next window offers it and restores exactly the graph of the last autosave.
  void autosaveRecoveredAfterAKill() {
    const QString dir = app::Autosaver::defaultDirectory();
    QProcess child;
    child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    child.start(QCoreApplication::applicationFilePath(), {"--autosave-and-wait", kExamples + "/mnist_mlp.plexus"});
    QVERIFY(child.waitForStarted());
    while (!child.canReadLine() && child.state() == QProcess::Running) child.waitForReadyRead(1000);
    const QString written = QString::fromLocal8Bit(child.readLine()).trimmed();
    QVERIFY2(child.state() == QProcess::Running, qPrintable("the child exited with " + QString::number(child.exitCode())));
    QVERIFY2(written.startsWith(dir) && QFile::exists(written), qPrintable(written));
    QVERIFY(app::Autosaver::orphans(dir).empty());  // its writer still runs

    child.kill();  // SIGKILL
    QVERIFY(child.waitForFinished());
    QCOMPARE(child.exitStatus(), QProcess::CrashExit);
    QVERIFY(QFile::exists(written));
    const auto orphans = app::Autosaver::orphans(dir);
    QCOMPARE(orphans.size(), size_t(1));
    QCOMPARE(orphans[0].file, written);

    graph::Graph expected;
    {
      Window w;
      QVERIFY(w.openFile(kExamples + "/mnist_mlp.plexus"));
      editForRecovery(w, /*autosave=*/false);
      expected = w.document()->graph();  // both edits: the last autosave is what comes back
      w.answer = QMessageBox::Discard;
    }
    Window after;
    after.answer = QMessageBox::Yes;
    QCOMPARE(after.offerRecovery(), 1);
    QCOMPARE(after.document()->graph(), expected);
    QVERIFY(after.document()->isModified());
    QVERIFY(after.document()->filePath().endsWith("mnist_mlp.plexus"));
    QVERIFY(!QFile::exists(written));
    QVERIFY(app::Autosaver::orphans(dir).empty());
    after.answer = QMessageBox::Discard;
  }

  void declinedRecoveryIsDeleted() {
    const QString dir = app::Autosaver::defaultDirectory();
    QDir().mkpath(dir);
    QVERIFY(QFile::copy(kExamples + "/mnist_lenet.plexus", dir + "/autosave-999998-1.plexus"));
    Window w;
    w.answer = QMessageBox::No;
    QCOMPARE(w.offerRecovery(), 0);
    QVERIFY(app::Autosaver::orphans(dir).empty());
    QVERIFY(w.document()->graph().nodes.empty());
  }

  void aBrokenRecoveryFileIsReportedAndKept() {
    const QString dir = app::Autosaver::defaultDirectory();
    QDir().mkpath(dir);
    QFile project(dir + "/autosave-999997-1.plexus");
    QVERIFY(project.open(QIODevice::WriteOnly));
    project.write("{ \"format\": 1, \"nodes\": [");  // cut off mid-write
    project.close();
    QFile sidecar(dir + "/autosave-999997-1.plexus.json");
    QVERIFY(sidecar.open(QIODevice::WriteOnly));
    sidecar.write("not json");
    sidecar.close();
    const auto orphans = app::Autosaver::orphans(dir);
    QCOMPARE(orphans.size(), size_t(1));
    QVERIFY(orphans[0].original.isEmpty());  // an unreadable sidecar names no project
    Window w;
    w.answer = QMessageBox::Yes;
    QCOMPARE(w.offerRecovery(), 0);
    QVERIFY2(w.asked.size() == 1 && w.asked[0].contains("untitled"), qPrintable(w.asked.join("|")));
    QCOMPARE(w.errors.size(), 1);
    QVERIFY2(w.errors[0].contains("autosave-999997-1.plexus"), qPrintable(w.errors[0]));
    QVERIFY(w.document()->graph().nodes.empty());
    QVERIFY(QFile::exists(project.fileName()));  // kept: a later version may read it
    app::Autosaver::remove(project.fileName());
  }

  void droppingAProjectFileOnTheWindowOpensIt() {
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QMimeData data;
    data.setUrls({QUrl::fromLocalFile(kExamples + "/mnist_lenet.plexus")});
    const QPoint pos = w.view()->viewport()->rect().center();
    QDragEnterEvent enter(pos, Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(w.view()->viewport(), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(pos, Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(w.view()->viewport(), &drop);
    QVERIFY(w.document()->filePath().endsWith("mnist_lenet.plexus"));
    QCOMPARE(w.document()->graph(), example("mnist_lenet.plexus"));
    QVERIFY(MainWindow::recentFiles().contains(w.document()->filePath()));
  }

  void examplesAreListed() {
    const QStringList examples = MainWindow::examples();
    QVERIFY(std::any_of(examples.begin(), examples.end(), [](const QString& p) { return p.endsWith("/mnist_mlp.plexus"); }));
    QVERIFY(std::any_of(examples.begin(), examples.end(), [](const QString& p) { return p.endsWith("/mnist_lenet.plexus"); }));
  }

  void paletteDoubleClickAddsAtTheCentre() {
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    emit w.palette()->addRequested("ReLU");
    QCOMPARE(w.document()->graph().nodes.size(), size_t(1));
    QCOMPARE(w.scene()->selectedNodeIds(), QStringList{"relu1"});
    const QPointF centre = w.view()->mapToScene(w.view()->viewport()->rect().center());
    const QRectF box = w.scene()->nodeItem("relu1")->sceneBoundingRect();
    QVERIFY(box.adjusted(-30, -30, 30, 30).contains(centre));
  }

  // First impressions: the Layers dock opens wide enough for every name, and a project opens
  // readable — whole when it fits at kReadableZoom, else from its inputs at that zoom.
  void paletteShowsFullNamesAndProjectsOpenReadable() {
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTreeWidget* tree = w.palette()->tree();
    int layers = 0;
    for (QTreeWidgetItemIterator it(tree); *it; ++it) {
      if ((*it)->data(0, Qt::UserRole).toString().isEmpty()) continue;  // a category (no type name)
      const QModelIndex index = tree->indexFromItem(*it);
      QVERIFY2(tree->visualItemRect(*it).width() >= tree->sizeHintForIndex(index).width(), qPrintable((*it)->text(0)));
      ++layers;
    }
    QVERIFY(layers > 20);

    QVERIFY(w.openFile(QStringLiteral(PLEXUS_SOURCE_DIR "/examples/mnist_mlp.plexus")));
    QVERIFY(w.view()->zoom() >= widgets::NodeView::kReadableZoom);
    const QRectF shown = w.view()->mapToScene(w.view()->viewport()->rect()).boundingRect();
    for (const graph::Node& n : w.document()->graph().nodes)
      QVERIFY2(shown.contains(w.scene()->nodeItem(QString::fromStdString(n.id))->sceneBoundingRect()), n.id.c_str());

    // A graph too wide to fit readable (the MLP spread over 5,000 px) opens at kReadableZoom,
    // its inputs in view.
    QTemporaryDir dir;
    graph::Graph wide = example("mnist_mlp.plexus");
    for (size_t i = 0; i < wide.nodes.size(); ++i) wide.nodes[i].position = {1000.0 * double(i), 0};
    const QString wide_file = dir.filePath("wide.plexus");
    graph::save_project(wide_file.toStdString(), wide);
    QVERIFY(w.openFile(wide_file));
    QCOMPARE(w.view()->zoom(), widgets::NodeView::kReadableZoom);
    const QRectF start = w.view()->mapToScene(w.view()->viewport()->rect()).boundingRect();
    QVERIFY(start.contains(w.scene()->nodeItem("in")->sceneBoundingRect()));
  }

  // Every example opens whole in a 1280x800 window, at a zoom that keeps its cards readable:
  // the long models fold their repeated stages into blocks (LeNet's convolution stages, the
  // transformer's blocks, the ResNet's residual blocks) and every model wraps into rows.
  void examplesOpenWholeAndReadableAt1280x800() {
    Window w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QStringList examples = MainWindow::examples();
    QCOMPARE(examples.size(), 16);
    for (const QString& file : examples) {
      QVERIFY2(w.openFile(file), qPrintable(file));
      const QString name = QFileInfo(file).completeBaseName();
      if (name.endsWith("lenet") || name == "digits_folder" || name == "names_transformer" || name == "residual_mlp" ||
          name == "fashion_resnet")
        QVERIFY2(w.document()->graph().blocks.size() >= 3, qPrintable(name));
      QVERIFY2(w.view()->zoom() >= widgets::NodeView::kReadableZoom, qPrintable(name));
      QRectF drawn;  // every card and wire shown
      for (QGraphicsItem* item : w.scene()->items())
        if (!item->isVisible())
          continue;
        else if (qgraphicsitem_cast<widgets::NodeItem*>(item) || qgraphicsitem_cast<widgets::BlockItem*>(item))
          drawn |= item->sceneBoundingRect();
        else if (auto* wire = qgraphicsitem_cast<widgets::EdgeItem*>(item))
          drawn |= wire->path().boundingRect();
      const QRectF shown = w.view()->mapToScene(w.view()->viewport()->rect()).boundingRect();
      QVERIFY2(shown.contains(drawn), qPrintable(QStringLiteral("%1: %2,%3 %4x%5 outside the view").arg(name)
                                                     .arg(drawn.x()).arg(drawn.y()).arg(drawn.width()).arg(drawn.height())));
    }
    // LeNet's blocks are its stages; the transformer's hold a block's attention and MLP.
    QVERIFY(w.openFile(kExamples + "/names_transformer.plexus"));
    const graph::Block* block = w.document()->block("transformer1");
    QVERIFY(block);
    QCOMPARE(block->members.size(), size_t(10));
    QVERIFY(w.document()->block("transformer2"));
  }

  void problemsPanelCentresTheNode() {
    Window w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openFile(kExamples + "/mnist_mlp.plexus"));
    w.document()->setParam("fc2", "out_features", graph::ParamValue{int64_t(7)});
    QVERIFY(w.problems()->count() > 0);
    QVERIFY(w.windowTitle().contains("*") || w.isWindowModified());
    QSignalSpy spy(w.problems(), &widgets::ProblemsPanel::nodeActivated);
    emit w.problems()->nodeActivated("fc2");
    QCOMPARE(w.scene()->selectedNodeIds(), QStringList{"fc2"});
    w.answer = QMessageBox::Discard;
  }

  void layoutPersistsAcrossWindows() {
    {
      Window w;
      w.resize(1234, 777);
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      w.findChild<QDockWidget*>("problemsDock")->hide();
      QVERIFY(w.close());
    }
    Window again;
    again.show();
    QVERIFY(QTest::qWaitForWindowExposed(&again));
    QCOMPARE(again.size(), QSize(1234, 777));
    QVERIFY(!again.findChild<QDockWidget*>("problemsDock")->isVisible());
  }
};

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  if (argc == 3 && qstrcmp(argv[1], "--autosave-and-wait") == 0) return autosaveAndWait(QString::fromLocal8Bit(argv[2]));
  app.setAttribute(Qt::AA_Use96Dpi, true);  // as QTEST_MAIN does
  TestEditorWindow test;
  QTEST_SET_MAIN_SOURCE_PATH
  return QTest::qExec(&test, argc, argv);
}
#include "test_app_editor.moc"
