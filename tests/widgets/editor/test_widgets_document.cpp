// GraphDocument: every edit is one undo step that restores the graph exactly; refused edits
// change nothing; validation follows meaning-changing edits only; files load atomically.
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "editor/model/graph_document.h"
#include "graph/fragment.h"
#include "graph/project.h"

using namespace plexus;
using plexus::widgets::GraphDocument;

namespace {

graph::PortRef port(const QString& node, const char* name) { return {node.toStdString(), name}; }

// Input -> Flatten -> Linear(out 16) -> CrossEntropy, with the label wired, on MNIST.
struct Mlp {
  GraphDocument doc;
  QString in, flat, fc, loss;
  Mlp() {
    doc.setDataset({"mnist", "data/mnist", "", ""});
    in = doc.addNode("Input", {0, 0});
    flat = doc.addNode("Flatten", {200, 0});
    fc = doc.addNode("Linear", {400, 0});
    loss = doc.addNode("CrossEntropy", {600, 0});
    doc.setParam(fc, "out_features", graph::ParamValue{int64_t(10)});
    doc.connectPorts(port(in, "x"), port(flat, "input"));
    doc.connectPorts(port(flat, "output"), port(fc, "input"));
    doc.connectPorts(port(fc, "output"), port(loss, "input"));
    doc.connectPorts(port(in, "y"), port(loss, "target"));
  }
};

}  // namespace

class TestGraphDocument : public QObject {
  Q_OBJECT

 private slots:
  void addsNodesWithFreshIdsAndNames() {
    GraphDocument doc;
    const QString a = doc.addNode("Linear", {10, 20});
    const QString b = doc.addNode("Linear", {30, 40});
    QCOMPARE(a, QStringLiteral("linear1"));
    QCOMPARE(b, QStringLiteral("linear2"));
    QCOMPARE(doc.node(a)->name, std::string("linear1"));
    QCOMPARE(doc.node(b)->position, (graph::Position{30, 40}));
    QVERIFY(doc.addNode("NoSuchLayer", {}).isEmpty());
    QCOMPARE(doc.undoStack()->count(), 2);
  }

  void buildsAValidGraphWithShapes() {
    Mlp m;
    const auto& problems = m.doc.validation().problems;
    QVERIFY2(problems.empty(), problems.empty() ? "" : graph::to_string(problems.front()).c_str());
    const auto shape = m.doc.edgeShape({port(m.flat, "output"), port(m.fc, "input")});
    QVERIFY(shape.has_value());
    QCOMPARE(*shape, (Shape{784}));
    QCOMPARE(*m.doc.edgeShape({port(m.fc, "output"), port(m.loss, "input")}), (Shape{10}));
  }

  void undoingEverythingEmptiesAndRedoRestoresExactly() {
    Mlp m;
    const std::string built = graph::serialize_project(m.doc.graph());
    while (m.doc.undoStack()->canUndo()) m.doc.undoStack()->undo();
    QCOMPARE(m.doc.graph(), graph::Graph{});
    while (m.doc.undoStack()->canRedo()) m.doc.undoStack()->redo();
    QCOMPARE(graph::serialize_project(m.doc.graph()), built);
  }

  void refusesInvalidConnections() {
    Mlp m;
    const auto edges = m.doc.graph().edges;
    const int steps = m.doc.undoStack()->count();
    QString why;
    QVERIFY(!m.doc.connectPorts(port(m.fc, "output"), port(m.flat, "input"), &why));  // cycle
    QVERIFY2(why.contains("cycle"), qPrintable(why));
    QVERIFY(!m.doc.connectPorts(port(m.fc, "output"), port(m.fc, "input"), &why));  // itself
    QVERIFY(!m.doc.connectPorts(port(m.flat, "output"), port(m.fc, "input"), &why));  // already there
    QVERIFY2(why.contains("already"), qPrintable(why));
    QVERIFY(!m.doc.connectPorts(port(m.fc, "input"), port(m.loss, "input"), &why));  // wrong direction
    QVERIFY(!m.doc.connectPorts(port(m.fc, "output"), port("ghost", "input"), &why));
    QCOMPARE(m.doc.graph().edges, edges);
    QCOMPARE(m.doc.undoStack()->count(), steps);
  }

  void wiringAnOccupiedInputReplacesTheWireInOneStep() {
    Mlp m;
    const size_t edges = m.doc.graph().edges.size();
    const int steps = m.doc.undoStack()->count();
    QVERIFY(m.doc.connectPorts(port(m.in, "x"), port(m.fc, "input")));
    QCOMPARE(m.doc.graph().edges.size(), edges);
    QCOMPARE(m.doc.undoStack()->count(), steps + 1);
    QVERIFY(!m.doc.edgeShape({port(m.flat, "output"), port(m.fc, "input")}).has_value());
    QVERIFY(!m.doc.validation().ok());  // Linear on [1, 28, 28] works, but the loss sees 28 features
    m.doc.undoStack()->undo();
    QVERIFY(m.doc.validation().ok());
  }

  void removeRestoresNodesAndWiresInTheirOrder() {
    Mlp m;
    const graph::Graph before = m.doc.graph();
    m.doc.remove({m.flat, m.loss}, {});
    QCOMPARE(m.doc.graph().nodes.size(), size_t(2));
    QCOMPARE(m.doc.graph().edges.size(), size_t(0));
    QCOMPARE(m.doc.undoStack()->undoText(), QStringLiteral("Delete 2 nodes"));
    m.doc.undoStack()->undo();
    QCOMPARE(m.doc.graph(), before);
    m.doc.remove({}, {{port(m.in, "y"), port(m.loss, "target")}});
    QCOMPARE(m.doc.graph().edges.size(), before.edges.size() - 1);
    QVERIFY(!m.doc.validation().ok());  // the loss now misses its target
  }

  void movesDoNotRevalidate() {
    Mlp m;
    QSignalSpy validated(&m.doc, &GraphDocument::validated);
    QSignalSpy moved(&m.doc, &GraphDocument::nodeMoved);
    m.doc.moveNodes({{m.fc, {1000, 500}}, {m.flat, {10, 10}}});
    QCOMPARE(m.doc.node(m.fc)->position, (graph::Position{1000, 500}));
    QCOMPARE(moved.count(), 2);
    QCOMPARE(validated.count(), 0);
    QCOMPARE(m.doc.undoStack()->undoText(), QStringLiteral("Move 2 nodes"));
    m.doc.undoStack()->undo();
    QCOMPARE(m.doc.node(m.fc)->position, (graph::Position{400, 0}));
    const int steps = m.doc.undoStack()->count();
    m.doc.moveNodes({{m.fc, {400, 0}}});  // no change: no step
    QCOMPARE(m.doc.undoStack()->count(), steps);
  }

  void parametersAndNamesUndo() {
    Mlp m;
    QSignalSpy changed(&m.doc, &GraphDocument::nodeChanged);
    m.doc.setParam(m.fc, "out_features", graph::ParamValue{int64_t(7)});
    QCOMPARE(std::get<int64_t>(m.doc.node(m.fc)->params.at("out_features")), int64_t(7));
    QCOMPARE(changed.count(), 1);
    QVERIFY(!m.doc.validation().ok());  // 7 classes of output for 10 classes
    m.doc.resetParam(m.fc, "out_features");
    QVERIFY(!m.doc.node(m.fc)->params.count("out_features"));
    m.doc.undoStack()->undo();
    m.doc.undoStack()->undo();
    QCOMPARE(std::get<int64_t>(m.doc.node(m.fc)->params.at("out_features")), int64_t(10));
    QVERIFY(m.doc.validation().ok());
    m.doc.rename(m.fc, "classifier");
    QCOMPARE(m.doc.node(m.fc)->name, std::string("classifier"));
    m.doc.undoStack()->undo();
    QCOMPARE(m.doc.node(m.fc)->name, m.fc.toStdString());
  }

  void problemsAreAttachedToNodes() {
    Mlp m;
    m.doc.setParam(m.fc, "out_features", graph::ParamValue{int64_t(7)});
    bool found = false;
    for (const QString& id : {m.in, m.flat, m.fc, m.loss}) found = found || !m.doc.problemsFor(id).empty();
    QVERIFY(found);
    QVERIFY(m.doc.problemsFor("ghost").empty());
  }

  void pasteKeepsInternalWiresOnly() {
    Mlp m;
    const graph::Graph fragment = graph::extract_fragment(m.doc.graph(), {m.flat.toStdString(), m.fc.toStdString()});
    QCOMPARE(fragment.edges.size(), size_t(1));
    const QStringList ids = m.doc.paste(fragment, {40, 40}, "Paste");
    QCOMPARE(ids.size(), 2);
    QVERIFY(!ids.contains(m.flat) && !ids.contains(m.fc));
    QCOMPARE(m.doc.graph().edges.back(), (graph::Edge{port(ids[0], "output"), port(ids[1], "input")}));
    QCOMPARE(m.doc.node(ids[1])->position, (graph::Position{440, 40}));
    m.doc.undoStack()->undo();
    QCOMPARE(m.doc.graph().nodes.size(), size_t(4));
  }

  void autoLayoutIsOneStep() {
    Mlp m;
    m.doc.moveNodes({{m.fc, {-500, 900}}});
    const graph::Graph before = m.doc.graph();
    m.doc.autoLayout();
    QCOMPARE(m.doc.undoStack()->undoText(), QStringLiteral("Auto layout"));
    QVERIFY(m.doc.node(m.fc)->position.x > m.doc.node(m.flat)->position.x);
    m.doc.undoStack()->undo();
    QCOMPARE(m.doc.graph(), before);
  }

  // Save As to another folder keeps a dataset found next to the project: its relative path is
  // rewritten from the new folder, in the file and in the document, and nothing is left modified.
  void savingElsewhereKeepsTheDatasetBesideTheProject() {
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("a/data")) && QDir(dir.path()).mkpath(QStringLiteral("b/c")));
    QFile csv(dir.filePath(QStringLiteral("a/data/t.csv")));
    QVERIFY(csv.open(QIODevice::WriteOnly) && csv.write("x,y\n1,2\n") > 0);
    csv.close();
    Mlp m;
    graph::DatasetBinding table{.kind = "csv", .path = "data/t.csv", .target = "y", .task = "regression"};
    m.doc.setDataset(table);
    m.doc.save(dir.filePath(QStringLiteral("a/p.plexus")));
    QCOMPARE(m.doc.graph().dataset.path, std::string("data/t.csv"));  // the same folder: kept
    QSignalSpy settings(&m.doc, &GraphDocument::settingsChanged);
    m.doc.save(dir.filePath(QStringLiteral("b/c/p.plexus")));
    QCOMPARE(m.doc.graph().dataset.path, std::string("../../a/data/t.csv"));
    QCOMPARE(settings.count(), 1);
    QVERIFY(!m.doc.isModified());
    QVERIFY(m.doc.datasetLocation().found);
    const graph::Graph saved = graph::load_project(dir.filePath(QStringLiteral("b/c/p.plexus")).toStdString());
    QCOMPARE(saved.dataset.path, std::string("../../a/data/t.csv"));
    // A path the project does not find beside it (here: none at all) is kept as it is.
    table.path = "data/missing.csv";
    m.doc.setDataset(table);
    m.doc.save(dir.filePath(QStringLiteral("a/q.plexus")));
    QCOMPARE(m.doc.graph().dataset.path, std::string("data/missing.csv"));
  }

  void modifiedFollowsTheCleanState() {
    QTemporaryDir dir;
    Mlp m;
    QSignalSpy modified(&m.doc, &GraphDocument::modifiedChanged);
    QVERIFY(m.doc.isModified());
    const QString path = dir.filePath("mlp.plexus");
    m.doc.save(path);
    QVERIFY(!m.doc.isModified());
    QCOMPARE(m.doc.filePath(), path);
    QCOMPARE(m.doc.displayName(), QStringLiteral("mlp.plexus"));
    m.doc.rename(m.fc, "x");
    QVERIFY(m.doc.isModified());
    m.doc.undoStack()->undo();
    QVERIFY(!m.doc.isModified());
    QVERIFY(modified.count() >= 3);

    GraphDocument other;
    other.load(path);
    QCOMPARE(other.graph(), m.doc.graph());
    QVERIFY(!other.isModified());
    other.reset(m.doc.graph(), path, /*modified=*/true);  // a recovered autosave
    QVERIFY(other.isModified());
    QVERIFY(!other.undoStack()->canUndo());
  }

  void failedLoadLeavesTheDocumentUntouched() {
    QTemporaryDir dir;
    Mlp m;
    const graph::Graph before = m.doc.graph();
    const int steps = m.doc.undoStack()->count();
    const QString bad = dir.filePath("bad.plexus");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{ \"format\": 1, \"nodes\": [ }");
    f.close();
    bool threw = false;
    try {
      m.doc.load(bad);
    } catch (const std::exception& e) {
      threw = true;
      QVERIFY2(QString(e.what()).contains("bad.plexus"), e.what());
    }
    QVERIFY(threw);
    QCOMPARE(m.doc.graph(), before);
    QCOMPARE(m.doc.undoStack()->count(), steps);
    QVERIFY(m.doc.filePath().isEmpty());
  }

  void datasetChangesAreUndoable() {
    Mlp m;
    QVERIFY(m.doc.datasetInfo().has_value());
    m.doc.setDataset({});
    QVERIFY(!m.doc.datasetInfo().has_value());
    QVERIFY(!m.doc.edgeShape({port(m.flat, "output"), port(m.fc, "input")}).has_value());
    m.doc.undoStack()->undo();
    QCOMPARE(*m.doc.edgeShape({port(m.flat, "output"), port(m.fc, "input")}), (Shape{784}));
    graph::TrainingSettings t = m.doc.graph().training;
    t.lr = 0.5;
    m.doc.setTraining(t);
    QCOMPARE(m.doc.graph().training.lr, 0.5);
    m.doc.undoStack()->undo();
    QCOMPARE(m.doc.graph().training.lr, 0.1);
  }
};

QTEST_MAIN(TestGraphDocument)
#include "test_widgets_document.moc"
