// Run ▸ Load Weights… in the real window, offscreen: a file whose tensors carry PyTorch-style
// names ("net.0.weight") is reported tensor by tensor in the dialog before anything changes;
// Load writes the project's weights beside the file with the matched tensors, and the next
// Train starts from them (its run folder names the file); Cancel changes nothing; a file that
// is not safetensors is an error shown, with no dialog.
#include <QDialogButtonBox>
#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>

#include "data/synthetic_digits.h"
#include "graph/project.h"
#include "io/safetensors.h"
#include "load_weights_dialog.h"
#include "main_window.h"
#include "ops/ops.h"
#include "session/run.h"
#include "session/run_log.h"
#include "support/app_fixture.h"
#include "support/mlp_fixture.h"

using namespace plexus;
namespace fs = std::filesystem;

class TestAppLoadWeights : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString project_, torch_;
  io::NamedTensors state_;  // what the file holds, in PyTorch's names

  fs::path at(const QString& name) const { return fs::path(dir_.filePath(name).toStdString()); }

 private slots:
  void initTestCase() {
    testing::isolate_app(dir_.filePath(QStringLiteral("recovery")));
    data::write_synthetic_digits(at("digits"), 200, 40);
    project_ = dir_.filePath(QStringLiteral("mlp.plexus"));
    graph::save_project(project_.toStdString(), testing::partial_load_mlp(at("digits").string(), 16, "fc3"));
    // The project's tensors, renamed as an nn.Sequential's and given values of their own.
    session::TrainingRun run = session::make_training_run(graph::load_project(project_.toStdString()));
    const std::map<std::string, std::string> module{{"fc1", "0"}, {"fc2", "2"}, {"fc3", "4"}};
    float v = 0.f;
    for (const auto& [name, t] : run.compiled.model->state()) {
      const size_t dot = name.find('.');
      Tensor values = full(t.shape(), v += 0.125f);
      state_.emplace_back("net." + module.at(name.substr(0, dot)) + name.substr(dot), values);
    }
    torch_ = dir_.filePath(QStringLiteral("torch.safetensors"));
    io::save_safetensors(torch_.toStdString(), state_);
  }

  void reportsThenLoadsAndTheNextRunStartsFromIt() {
    testing::TestWindow w;
    QVERIFY(w.openFile(project_));
    app::LoadWeightsDialog* dialog = w.loadWeights(torch_);
    QVERIFY(dialog);
    QVERIFY(dialog->complete());
    QTableWidget* table = dialog->table();
    QCOMPARE(table->rowCount(), 6);
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("matched"));
    QCOMPARE(table->item(0, 1)->text(), QStringLiteral("order"));
    QCOMPARE(table->item(0, 2)->text(), QStringLiteral("net.0.weight"));
    QCOMPARE(table->item(0, 3)->text(), QStringLiteral("[32, 784]"));
    QCOMPARE(table->item(0, 4)->text(), QStringLiteral("fc1.weight"));
    QVERIFY(w.attachedWeights().isEmpty());  // nothing changed yet

    QPushButton* load = nullptr;
    for (QAbstractButton* b : dialog->buttons()->buttons())
      if (b->text() == QStringLiteral("Load")) load = qobject_cast<QPushButton*>(b);
    QVERIFY(load && load->isEnabled());
    load->click();
    const QString written = dir_.filePath(QStringLiteral("torch.plexus.safetensors"));
    QCOMPARE(w.attachedWeights(), written);
    const io::SafetensorsFile file = io::load_safetensors(written.toStdString());
    QCOMPARE(file.find("fc2.bias")->to_vector(), state_[3].second.to_vector());

    QVERIFY(w.startTraining({}, {}, w.attachedWeights()));  // as Train does
    w.training()->waitForFinished(-1);
    const session::RunRecord run = session::read_run(w.latestRunDirectory().toStdString());
    QCOMPARE(run.header.init_from, fs::absolute(written.toStdString()).lexically_normal().string());
  }

  void trainUsesTheAttachedWeightsOnce() {
    testing::TestWindow w;
    QVERIFY(w.openFile(project_));
    app::LoadWeightsDialog* dialog = w.loadWeights(torch_);
    QVERIFY(dialog);
    dialog->accept();
    QVERIFY(!w.attachedWeights().isEmpty());
    w.trainAction()->trigger();
    QVERIFY(w.attachedWeights().isEmpty());  // the next training only
    w.training()->waitForFinished(-1);
    const session::RunRecord run = session::read_run(w.latestRunDirectory().toStdString());
    QVERIFY2(run.header.init_from.ends_with("torch.plexus.safetensors"), run.header.init_from.c_str());
  }

  void cancelChangesNothingAndABadFileIsAnError() {
    testing::TestWindow w;
    QVERIFY(w.openFile(project_));
    app::LoadWeightsDialog* dialog = w.loadWeights(torch_);
    QVERIFY(dialog);
    dialog->reject();
    QVERIFY(w.attachedWeights().isEmpty());
    QVERIFY(!w.loadWeights(project_));  // a project file, not safetensors
    QCOMPARE(w.errors.size(), 1);
    QVERIFY2(w.errors.front().contains(QStringLiteral("mlp.plexus")), qPrintable(w.errors.front()));
  }
};

QTEST_MAIN(TestAppLoadWeights)
#include "test_app_load_weights.moc"
