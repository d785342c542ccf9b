// The training settings panel edits the project's settings one undo step at a time with the
// same checked fields as layer parameters, labelled for people under the table's sections with
// the rarely changed ones in a collapsed "Advanced" part; the progress strip follows a run's
// events.
#include <QApplication>
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QSpinBox>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>

#include "dashboard/training_progress.h"
#include "editor/device_selector.h"
#include "editor/model/graph_document.h"
#include "editor/param_editor.h"
#include "editor/training_panel.h"
#include "graph/training_params.h"

using namespace plexus;
using namespace plexus::widgets;

namespace {

// Types `text` into a setting's field and presses Enter, as a user does.
void type(TrainingPanel& panel, const char* name, const QString& text) {
  QWidget* field = panel.editor(name)->editor();
  auto* line = qobject_cast<QLineEdit*>(field);
  if (auto* spin = qobject_cast<QAbstractSpinBox*>(field)) line = spin->findChild<QLineEdit*>();
  QVERIFY2(line, name);
  line->setFocus();
  line->selectAll();
  QTest::keyClicks(line, text);
  QTest::keyClick(line, Qt::Key_Return);
}

// The form's rows as (section, field's objectName), in order; advanced rows under "Advanced".
// Rows hidden by the collapsed part are left out, as a person does not see them.
QList<std::pair<QString, QString>> shownRows(const TrainingPanel& panel) {
  QList<std::pair<QString, QString>> rows;
  const auto* form = panel.findChild<QFormLayout*>();
  QString section;
  for (int i = 0; i < form->rowCount(); ++i) {
    if (QLayoutItem* span = form->itemAt(i, QFormLayout::SpanningRole)) {
      const QString name = span->widget()->objectName();
      section = name == "advancedToggle" ? QStringLiteral("Advanced") : name.section(':', 1);
      continue;
    }
    QLayoutItem* field = form->itemAt(i, QFormLayout::FieldRole);
    if (field && field->widget()->isVisibleTo(&panel) && !field->widget()->objectName().isEmpty())
      rows.push_back({section, field->widget()->objectName()});
  }
  return rows;
}

QLabel* labelOf(const TrainingPanel& panel, const char* name) {
  return qobject_cast<QLabel*>(panel.findChild<QFormLayout*>()->labelForField(panel.editor(name)));
}

}  // namespace

class TestTrainingPanel : public QObject {
  Q_OBJECT

 private slots:
  void typedSettingsAreOneUndoStepEach() {
    GraphDocument doc;
    TrainingPanel panel(&doc);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    type(panel, "lr", "0.001");
    QCOMPARE(doc.graph().training.lr, 0.001);
    type(panel, "epochs", "12");
    QCOMPARE(doc.graph().training.epochs, int64_t(12));
    QCOMPARE(doc.undoStack()->count(), 2);
    doc.undoStack()->undo();
    QCOMPARE(doc.graph().training.epochs, graph::TrainingSettings{}.epochs);
    QCOMPARE(panel.editor("epochs")->error(), QString());
  }

  void outOfRangeTextIsRefusedWithTheReason() {
    GraphDocument doc;
    TrainingPanel panel(&doc);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    type(panel, "lr", "-1");
    QCOMPARE(doc.graph().training.lr, graph::TrainingSettings{}.lr);
    QVERIFY2(panel.editor("lr")->error().contains("between"), qPrintable(panel.editor("lr")->error()));
    QCOMPARE(doc.undoStack()->count(), 0);
    type(panel, "lr", "1e6");  // allowed: a diverging run is the trainer's to report
    QCOMPARE(doc.graph().training.lr, 1e6);
  }

  void choicesEnableWhatApplies() {
    GraphDocument doc;
    TrainingPanel panel(&doc);
    QVERIFY(panel.editor("momentum")->isEnabled());
    auto* optimizer = qobject_cast<QComboBox*>(panel.editor("optimizer")->editor());
    QVERIFY(optimizer);
    optimizer->setFocus();
    while (optimizer->currentText() != "adam" && optimizer->currentIndex() + 1 < optimizer->count())
      QTest::keyClick(optimizer, Qt::Key_Down);  // keyboard choice, as a user picks it
    QCOMPARE(doc.graph().training.optimizer, std::string("adam"));
    QVERIFY(!panel.editor("momentum")->isEnabled());
    QVERIFY(!panel.editor("gamma")->isEnabled());
    doc.undoStack()->undo();
    QCOMPARE(optimizer->currentText(), QStringLiteral("sgd"));
    QVERIFY(panel.editor("momentum")->isEnabled());
  }

  void followsTheDocumentAndLocks() {
    GraphDocument doc;
    TrainingPanel panel(&doc);
    graph::Graph g;
    g.training.batch_size = 64;
    g.training.device = "cuda:7";
    doc.reset(g, QString());
    auto* batch = qobject_cast<QSpinBox*>(panel.editor("batch_size")->editor());
    QVERIFY(batch);
    QCOMPARE(batch->value(), 64);
    QVERIFY(panel.editor("batch_size")->resetButton()->isEnabled());
    panel.setLocked(true);
    QVERIFY(!panel.editor("batch_size")->isEnabled());
    QVERIFY(!panel.deviceSelector()->isEnabled());
    panel.setLocked(false);
    QVERIFY(panel.editor("batch_size")->isEnabled());
    QCOMPARE(panel.deviceSelector()->currentDevice(), Device::cpu());  // no cuda:7 here
  }

  // A person reads "Learning rate"; the tooltip says what it does and the key a file holds it
  // under; the editor keeps the key as its objectName. Every label is the table's.
  void settingsAreLabelledForPeople() {
    GraphDocument doc;
    TrainingPanel panel(&doc);
    QLabel* lr = labelOf(panel, "lr");
    QVERIFY(lr);
    QCOMPARE(lr->text(), QStringLiteral("Learning rate"));
    QCOMPARE(panel.editor("lr")->objectName(), QStringLiteral("lr"));
    QVERIFY2(lr->toolTip().contains("The step size of each update of the weights."), qPrintable(lr->toolTip()));
    QVERIFY2(lr->toolTip().contains("File key: <code>lr</code>"), qPrintable(lr->toolTip()));
    QCOMPARE(labelOf(panel, "accumulate_steps")->text(), QStringLiteral("Gradient accumulation steps"));
    QCOMPARE(labelOf(panel, "warmup_start_factor")->text(), QStringLiteral("Warm-up start factor"));
    for (const graph::TrainingSetting& row : graph::training_settings()) {
      if (!row.in_form) continue;
      QLabel* label = labelOf(panel, row.spec.name.c_str());
      QVERIFY2(label, row.spec.name.c_str());
      QCOMPARE(label->text(), QString::fromStdString(row.spec.label));
      QVERIFY2(label->toolTip().contains(QString::fromStdString(row.spec.name)), row.spec.name.c_str());
    }
  }

  void settingsSitUnderTheirSections() {
    GraphDocument doc;
    TrainingPanel panel(&doc);
    using Rows = QList<std::pair<QString, QString>>;
    const Rows everyday{{"Optimizer", "optimizer"},     {"Optimizer", "lr"},
                        {"Optimizer", "momentum"},      {"Optimizer", "weight_decay"},
                        {"Optimizer", "clip_norm"},
                        {"Schedule", "schedule"},       {"Schedule", "step_size"},
                        {"Schedule", "gamma"},          {"Schedule", "warmup_steps"},
                        {"Schedule", "end_factor"},     {"Schedule", "pct_start"},
                        {"Schedule", "plateau_factor"}, {"Schedule", "plateau_patience"},
                        {"Batches", "batch_size"},      {"Batches", "epochs"},
                        {"Batches", "validation_fraction"}, {"Batches", "seed"},
                        {"Batches", "class_balance"},
                        {"Stopping", "early_stopping_patience"}, {"Stopping", "monitor"},
                        {"Monitoring", "stats_every"},  {"Hardware", "precision"},
                        {"Hardware", "deviceSelector"}};
    QCOMPARE(shownRows(panel), everyday);
    const Rows advanced{{"Advanced", "nesterov"},       {"Advanced", "clip_value"},
                        {"Advanced", "warmup_start_factor"}, {"Advanced", "div_factor"},
                        {"Advanced", "final_div_factor"}, {"Advanced", "plateau_threshold"},
                        {"Advanced", "plateau_threshold_mode"}, {"Advanced", "plateau_cooldown"},
                        {"Advanced", "plateau_min_lr"},
                        {"Advanced", "carry_state"},    {"Advanced", "accumulate_steps"},
                        {"Advanced", "monitor_mode"},   {"Advanced", "early_stopping_min_delta"},
                        {"Advanced", "checkpoint_minutes"}, {"Advanced", "cuda_graphs"},
                        {"Advanced", "sync_batchnorm"}};
    panel.advancedToggle()->setChecked(true);
    QCOMPARE(shownRows(panel), everyday + advanced);
  }

  // Collapsed at first; a click shows its rows, whole at the panel's narrowest, and hides them again.
  void advancedSettingsAreCollapsedUntilAsked() {
    GraphDocument doc;
    TrainingPanel panel(&doc);
    panel.resize(panel.minimumWidth(), 700);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QToolButton* toggle = panel.advancedToggle();
    QVERIFY(toggle->isVisible());
    QVERIFY(!toggle->isChecked());
    QVERIFY(!panel.editor("accumulate_steps")->isVisible());
    QVERIFY(!labelOf(panel, "accumulate_steps")->isVisible());
    QVERIFY(panel.editor("lr")->isVisible());

    QTest::mouseClick(toggle, Qt::LeftButton);
    QVERIFY(panel.editor("accumulate_steps")->isVisible());
    QVERIFY(labelOf(panel, "accumulate_steps")->isVisible());
    type(panel, "accumulate_steps", "4");
    QCOMPARE(doc.graph().training.accumulate_steps, int64_t(4));
    QApplication::processEvents();  // the layout of the rows just shown
    for (QLabel* label : panel.findChildren<QLabel*>())
      if (label->isVisible() && !label->wordWrap())
        QVERIFY2(label->width() >= label->sizeHint().width(), qPrintable(label->text()));

    QTest::mouseClick(toggle, Qt::LeftButton);
    QVERIFY(!panel.editor("accumulate_steps")->isVisible());
  }

  void progressFollowsARun() {
    TrainingProgress p;
    p.begin(3, 50, "CPU", "2026-11-25");
    train::BatchEnd b;
    b.epoch = 2;
    b.epochs = 3;
    b.batch = 25;
    b.batches = 50;
    b.samples_per_second = 1234;
    b.eta_seconds = 75;
    p.update(b);
    QCOMPARE(p.epochBar()->value(), 1);
    QCOMPARE(p.batchBar()->value(), 25);
    // A model whose products were not counted shows its rate alone.
    QCOMPARE(p.speedText(), QLocale().toString(1234) + " samples/s");
    b.samples_per_second = 41200;
    b.gflops = 98.4;
    b.peak_gflops = 228;
    p.update(b);
    QCOMPARE(p.speedText(), QLocale().toString(41200) + " samples/s · " + QLocale().toString(98.4, 'f', 1) +
                                " GFLOP/s · 43 % of this machine's peak (228 GFLOP/s, measured 2026-11-25)");
    b.peak_gflops = 51000;  // a GPU's peak: a small model's share keeps its digits
    p.update(b);
    QVERIFY2(p.speedText().endsWith(" GFLOP/s · 0.19 % of this machine's peak (" + QLocale().toString(51000) +
                                    " GFLOP/s, measured 2026-11-25)"),
             qPrintable(p.speedText()));
    b.gflops = 2040;
    p.update(b);
    QVERIFY2(p.speedText().contains(" GFLOP/s · 4.0 % of this machine's peak"), qPrintable(p.speedText()));
    b.gflops = 240;  // recorded above its peak (an older version): shown at 100 %, never more
    b.peak_gflops = 228;
    p.update(b);
    QVERIFY2(p.speedText().contains(" GFLOP/s · 100 % of this machine's peak (228 GFLOP/s"), qPrintable(p.speedText()));
    // The speed's tooltip says what the peak is of; a new run starts without one.
    auto* speed = p.findChild<QLabel*>(QStringLiteral("trainingSpeed"));
    QVERIFY(speed);
    p.setPeakDescription("the fastest our matrix product ran here");
    QCOMPARE(speed->toolTip(), QStringLiteral("The share of peak is of the fastest our matrix product ran here"));
    b.gflops = 98.4;
    b.peak_gflops = 0;  // a peak that could not be measured
    b.gflops = 1234.5;
    p.update(b);
    QCOMPARE(p.speedText(), QLocale().toString(41200) + " samples/s · " + QLocale().toString(1235) + " GFLOP/s");
    QVERIFY(p.findChildren<QLabel*>().size() >= 5);
    p.begin(3, 50, "CPU", "2026-11-25");
    QCOMPARE(speed->toolTip(), QString());
    p.finish("Completed", true);
    QCOMPARE(p.epochBar()->value(), 3);
    QCOMPARE(p.batchBar()->value(), 50);
    QCOMPARE(p.statusText(), QStringLiteral("Completed"));
    QCOMPARE(TrainingProgress::duration(42), QStringLiteral("42 s"));
    QCOMPARE(TrainingProgress::duration(185), QStringLiteral("3 min 05 s"));
    QCOMPARE(TrainingProgress::duration(3720), QStringLiteral("1 h 02 min"));
  }
};

QTEST_MAIN(TestTrainingPanel)
#include "test_widgets_training_panel.moc"
