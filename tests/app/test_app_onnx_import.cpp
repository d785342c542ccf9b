// File > Open of an ONNX model in the real window, offscreen: the model opens as a new, unsaved
// project with its module names as nodes and its weights written beside the model; a model that
// cannot be imported shows the error and leaves the open project as it was.
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "editor/model/graph_document.h"
#include "graph/project.h"
#include "io/safetensors.h"
#include "main_window.h"
#include "support/app_fixture.h"

using namespace plexus;

class TestAppOnnxImport : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

  // A seed of the importer's fuzz corpus, copied where the window may write beside it.
  QString model(const QString& name) {
    const QString to = dir_.filePath(name);
    QFile::remove(to);
    QFile::copy(QStringLiteral(PLEXUS_SOURCE_DIR "/tests/fuzz/corpus/onnx/") + name, to);
    return to;
  }

 private slots:
  void initTestCase() { testing::isolate_app(dir_.path() + "/recovery"); }

  void opensTheModelAsAnUnsavedProject() {
    testing::TestWindow w;
    QVERIFY(w.openFile(model(QStringLiteral("conv_bn_train.onnx"))));
    QVERIFY(w.errors.isEmpty());
    const graph::Graph& g = w.document()->graph();
    QVERIFY(g.find("conv") && g.find("bn") && g.find("fc"));
    QCOMPARE(g.find("conv")->type, std::string("Conv2d"));
    QVERIFY(w.document()->filePath().isEmpty());  // Save asks where
    QVERIFY(w.document()->isModified());
    // The weights beside the model, under the imported nodes' names.
    const io::SafetensorsFile weights = io::load_safetensors(dir_.filePath("conv_bn_train.safetensors").toStdString());
    QVERIFY(weights.find("conv.weight") && weights.find("bn.running_var") && weights.find("fc.bias"));
  }

  void aFailedImportLeavesTheProjectOpen() {
    testing::TestWindow w;
    const QString project = dir_.filePath("mlp.plexus");
    graph::save_project(project.toStdString(), graph::load_project(PLEXUS_SOURCE_DIR "/examples/mnist_mlp.plexus"));
    QVERIFY(w.openFile(project));
    const graph::Graph before = w.document()->graph();
    QVERIFY(!w.openFile(model(QStringLiteral("bad_unsupported_erf.onnx"))));
    QCOMPARE(w.errors.size(), 1);
    QVERIFY2(w.errors[0].contains("(Erf)"), qPrintable(w.errors[0]));
    QCOMPARE(w.document()->filePath(), project);
    QVERIFY(w.document()->graph() == before);
    QVERIFY(!QFile::exists(dir_.filePath("bad_unsupported_erf.safetensors")));  // nothing written
  }
};

QTEST_MAIN(TestAppOnnxImport)
#include "test_app_onnx_import.moc"
