// The property panel and the problems panel, driven with real key presses and clicks on a real
// GraphDocument: editors come from the registry, valid text commits one undo step, invalid
// text is refused with a reason, the panels follow undo, and problems lead to their node.
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPainter>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTextBrowser>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QTreeWidget>

#include <climits>

#include "common/theme.h"
#include "editor/model/graph_document.h"
#include "editor/layer_help.h"
#include "editor/param_editor.h"
#include "editor/problems_panel.h"
#include "editor/property_panel.h"
#include "graph/dataset_params.h"
#include "graph/node_settings.h"
#include "graph/registry.h"

using namespace plexus;
using namespace plexus::widgets;
using graph::ParamValue;

const std::optional<ParamValue> kUnset;  // a parameter the node does not set

namespace {

graph::Node node(const std::string& id, const std::string& type) { return graph::Node{id, type, id, {}, {}}; }
graph::Edge wire(const std::string& from, const std::string& out, const std::string& to, const std::string& in) {
  return graph::Edge{{from, out}, {to, in}};
}

// Input -> Reshape -> Flatten -> Linear -> ReLU -> Linear -> CrossEntropy on MNIST: no problems.
graph::Graph classifier() {
  graph::Graph g;
  for (const auto& [id, type] : std::vector<std::pair<std::string, std::string>>{
           {"in", "Input"}, {"shape", "Reshape"}, {"flat", "Flatten"}, {"fc1", "Linear"},
           {"relu", "ReLU"}, {"fc2", "Linear"}, {"loss", "CrossEntropy"}})
    g.nodes.push_back(node(id, type));
  g.edges = {wire("in", "x", "shape", "input"),    wire("shape", "output", "flat", "input"),
             wire("flat", "output", "fc1", "input"), wire("fc1", "output", "relu", "input"),
             wire("relu", "output", "fc2", "input"), wire("fc2", "output", "loss", "input"),
             wire("in", "y", "loss", "target")};
  g.dataset = {.kind = "mnist", .path = "data/mnist"};
  return g;
}

const graph::ParamSpec& specOf(const std::string& type, const std::string& param) {
  return *graph::Registry::instance().find(type)->param(param);
}

std::optional<ParamValue> paramOf(const GraphDocument& doc, const char* id, const char* name) {
  const graph::Node* n = doc.node(QString::fromLatin1(id));
  const auto it = n->params.find(name);
  return it == n->params.end() ? std::nullopt : std::optional<ParamValue>(it->second);
}

// Replaces a field's text the way a person does: select all, delete, type, Enter.
void typeInto(QWidget* field, const QString& text) {
  field->setFocus();
  QTest::keyClick(field, Qt::Key_A, Qt::ControlModifier);
  QTest::keyClick(field, Qt::Key_Delete);
  QTest::keyClicks(field, text);
  QTest::keyClick(field, Qt::Key_Return);
}

QString fieldText(QWidget* editor) {
  if (auto* spin = qobject_cast<QSpinBox*>(editor)) return spin->text();
  return qobject_cast<QLineEdit*>(editor)->text();
}

// A document with `g` and a property panel on screen, active, so focus behaves as for a user.
struct Editor {
  GraphDocument doc;
  PropertyPanel panel{&doc};

  explicit Editor(graph::Graph g = classifier()) {
    doc.reset(std::move(g), QString());
    panel.resize(360, 640);
    panel.show();
    QApplication::setActiveWindow(&panel);
  }
  bool ready() { return QTest::qWaitForWindowActive(&panel); }
  ParamEditor* param(const char* node, const char* name) {
    panel.showNodes({QString::fromLatin1(node)});
    return panel.findChild<ParamEditor*>(QString::fromLatin1(name));
  }
  int steps() { return doc.undoStack()->count(); }
  // The editors on the page shown (the project page, hidden, keeps its own).
  QList<ParamEditor*> shownEditors() {
    QList<ParamEditor*> shown = panel.findChildren<ParamEditor*>();
    shown.removeIf([](ParamEditor* editor) { return !editor->isVisible(); });
    return shown;
  }
};

bool writeFile(const QString& path, const char* text) {
  QFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(text) == qint64(qstrlen(text));
}

QLabel* heading(const PropertyPanel& panel, const QString& text) {
  for (QLabel* label : panel.findChildren<QLabel*>())
    if (label->text() == text) return label;
  return nullptr;
}

QStringList checkedFeatures(const QListWidget* list) {
  QStringList checked;
  for (int i = 0; i < list->count(); ++i)
    if (list->item(i)->checkState() == Qt::Checked) checked << list->item(i)->text();
  return checked;
}

// Checks or unchecks a column with the keyboard, as a user can.
void toggleFeature(QListWidget* list, const QString& column) {
  list->setFocus();
  list->setCurrentItem(list->findItems(column, Qt::MatchExactly).value(0));
  QTest::keyClick(list, Qt::Key_Space);
}

}  // namespace

class TestPanels : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { ThemeManager::instance().setMode(ThemeMode::Light); }

  void everyRegistryTypeGetsOneEditorPerParameter() {
    for (const graph::LayerType& type : graph::Registry::instance().types()) {
      graph::Graph g;
      g.nodes.push_back(node("n", type.name));
      Editor e(g);
      e.panel.showNodes({"n"});
      const auto editors = e.shownEditors();
      // A layer that learns values also has its own training settings (lr_mult, ...).
      const size_t settings = graph::node_settings_apply(g.nodes[0]) ? graph::node_settings().size() : 0;
      QCOMPARE(editors.size(), qsizetype(type.params.size() + settings));
      for (const graph::ParamSpec& spec : type.params) {
        ParamEditor* editor = e.panel.findChild<ParamEditor*>(QString::fromStdString(spec.name));
        QVERIFY2(editor, (type.name + "." + spec.name).c_str());
        QWidget* w = editor->editor();
        switch (spec.type) {
          case graph::ParamType::Int:
            // Words besides numbers (Conv1d's padding "same") are typed, as a range beyond int is.
            QVERIFY(qobject_cast<QSpinBox*>(w) ||
                    ((spec.max > INT_MAX || !spec.choices.empty()) && qobject_cast<QLineEdit*>(w)));
            break;
          case graph::ParamType::Float:
          case graph::ParamType::IntPair:
          case graph::ParamType::IntList:
          case graph::ParamType::FloatList:
          case graph::ParamType::Names: QVERIFY(qobject_cast<QLineEdit*>(w)); break;
          case graph::ParamType::Bool: QVERIFY(qobject_cast<QCheckBox*>(w)); break;
          case graph::ParamType::Choice: QVERIFY(qobject_cast<QComboBox*>(w)); break;
        }
        QVERIFY(!editor->resetButton()->isEnabled());  // nothing set: all defaults
        QVERIFY(editor->error().isEmpty());
      }
    }
  }

  void typedIntCommitsOneStepAndUndoUpdatesTheSameEditor() {
    Editor e;
    QVERIFY(e.ready());
    ParamEditor* editor = e.param("fc1", "out_features");
    auto* spin = qobject_cast<QSpinBox*>(editor->editor());
    const int fallback = int(std::get<int64_t>(specOf("Linear", "out_features").default_value));
    QCOMPARE(spin->value(), fallback);
    const int before = e.steps();

    typeInto(spin, QString::number(fallback + 54));
    QCOMPARE(paramOf(e.doc, "fc1", "out_features"), std::optional<ParamValue>(int64_t(fallback + 54)));
    QCOMPARE(e.steps(), before + 1);
    QVERIFY(editor->resetButton()->isEnabled());

    QVERIFY(spin->hasFocus());
    e.doc.undoStack()->undo();
    QCOMPARE(paramOf(e.doc, "fc1", "out_features"), kUnset);
    QCOMPARE(e.panel.findChild<ParamEditor*>("out_features"), editor);  // kept, not rebuilt
    QCOMPARE(spin->value(), fallback);
    QVERIFY(spin->hasFocus());
    QVERIFY(!editor->resetButton()->isEnabled());
    e.doc.undoStack()->redo();
    QCOMPARE(spin->value(), fallback + 54);
  }

  void steppingCommitsEachStep() {
    Editor e;
    QVERIFY(e.ready());
    auto* spin = qobject_cast<QSpinBox*>(e.param("fc1", "out_features")->editor());
    spin->setFocus();
    const int before = e.steps(), start = spin->value();
    QTest::keyClick(spin, Qt::Key_Up);
    QTest::keyClick(spin, Qt::Key_Up);
    QCOMPARE(paramOf(e.doc, "fc1", "out_features"), std::optional<ParamValue>(int64_t(start + 2)));
    QCOMPARE(e.steps(), before + 2);
    // Steps stop at the parameter's minimum, though the box can show any int.
    const int minimum = int(specOf("Linear", "out_features").min);
    e.doc.setParam("fc1", "out_features", ParamValue(int64_t(minimum)));
    const int steps = e.steps();
    QTest::keyClick(spin, Qt::Key_Down);
    QCOMPARE(spin->value(), minimum);
    QCOMPARE(e.steps(), steps);
  }

  void invalidTextIsRefusedWithAReason() {
    Editor e;
    QVERIFY(e.ready());
    ParamEditor* editor = e.param("fc1", "out_features");
    QWidget* spin = editor->editor();
    const graph::Node before = *e.doc.node("fc1");
    const int steps = e.steps();
    const auto& spec = specOf("Linear", "out_features");

    typeInto(spin, QString::number(qint64(spec.max) + 1));
    QCOMPARE(*e.doc.node("fc1"), before);
    QCOMPARE(e.steps(), steps);
    QCOMPARE(editor->error(), QStringLiteral("must be between %1 and %2").arg(qint64(spec.min)).arg(qint64(spec.max)));
    QVERIFY(spin->property("invalid").toBool());
    QVERIFY(editor->findChild<QLabel*>("error")->isVisible());
    QCOMPARE(fieldText(spin), QString::number(qint64(spec.max) + 1));  // kept, to be fixed

    typeInto(spin, "12x");
    QCOMPARE(*e.doc.node("fc1"), before);
    QCOMPARE(editor->error(), QStringLiteral("not a whole number"));

    typeInto(spin, "32");
    QCOMPARE(paramOf(e.doc, "fc1", "out_features"), std::optional<ParamValue>(int64_t(32)));
    QVERIFY(editor->error().isEmpty());
    QVERIFY(!spin->property("invalid").toBool());
  }

  void leavingInvalidTextRestoresTheValue() {
    Editor e;
    QVERIFY(e.ready());
    ParamEditor* editor = e.param("fc1", "out_features");
    QWidget* spin = editor->editor();
    const QString shown = fieldText(spin);
    typeInto(spin, "abc");
    QVERIFY(!editor->error().isEmpty());
    e.panel.findChild<QLineEdit*>("name")->setFocus();  // leave the field: the typing is given up
    QCOMPARE(fieldText(spin), shown);
    QVERIFY(editor->error().isEmpty());
    QCOMPARE(paramOf(e.doc, "fc1", "out_features"), kUnset);
  }

  // Parameters read as people name them; the key a file holds stays the editor's name and is in
  // the tooltip. The help button shows the layer type's help.
  void parametersAreLabelledAndTheHelpIsAClickAway() {
    Editor e;
    QVERIFY(e.ready());
    ParamEditor* out = e.param("fc1", "out_features");
    QVERIFY(out && out->isVisible());
    QVERIFY(heading(e.panel, "Output features"));
    QVERIFY(!heading(e.panel, "out_features"));
    QVERIFY(heading(e.panel, "Output features")->toolTip().contains("File key: <code>out_features</code>"));
    auto* button = e.panel.findChild<QToolButton*>("layerHelpButton");
    QVERIFY(button && button->isVisible());
    QTest::mouseClick(button, Qt::LeftButton);
    auto* help = e.panel.findChild<LayerHelp*>();
    QVERIFY(help && help->isVisible());
    QCOMPARE(help->typeName(), QStringLiteral("Linear"));
    QVERIFY(help->browser()->toPlainText().contains("Output features"));
    help->close();
  }

  // A node that learns shows its own training settings under "Training", labelled for people;
  // an edit is one undo step on the node, undo shows the value before in the same editor.
  void aNodesLearningRateFactorIsEditedAndUndone() {
    Editor e;
    QVERIFY(e.ready());
    e.panel.showNodes({"relu"});
    QVERIFY(!e.panel.findChild<ParamEditor*>("lr_mult"));  // learns nothing
    ParamEditor* editor = e.param("fc1", "lr_mult");
    QVERIFY(editor && editor->isVisible());
    QVERIFY(heading(e.panel, "Training"));
    QVERIFY(heading(e.panel, "Learning rate ×"));
    QVERIFY(heading(e.panel, "Weight decay ×"));
    QVERIFY(!editor->resetButton()->isEnabled());  // 1: not set
    QWidget* field = editor->editor();
    const int steps = e.steps();

    typeInto(field, "0.1");
    QCOMPARE(e.doc.node("fc1")->lr_mult, 0.1);
    QCOMPARE(e.steps(), steps + 1);
    QCOMPARE(e.doc.undoStack()->undoText(), QStringLiteral("Set lr_mult of Linear 'fc1'"));
    typeInto(field, "0");
    QCOMPARE(e.doc.node("fc1")->lr_mult, 0.0);
    QCOMPARE(e.doc.node("fc2")->lr_mult, 1.0);  // only the node shown
    typeInto(field, "-1");
    QVERIFY(editor->error().contains(QStringLiteral("between")));
    QCOMPARE(e.steps(), steps + 2);
    QCOMPARE(e.doc.node("fc1")->lr_mult, 0.0);

    e.doc.undoStack()->undo();
    QCOMPARE(e.doc.node("fc1")->lr_mult, 0.1);
    QCOMPARE(e.panel.findChild<ParamEditor*>("lr_mult"), editor);  // kept, not rebuilt
    QCOMPARE(fieldText(field), paramText(0.1));
    e.doc.undoStack()->undo();
    QCOMPARE(e.doc.node("fc1")->lr_mult, 1.0);
    QVERIFY(!editor->resetButton()->isEnabled());
    e.doc.undoStack()->redo();
    QCOMPARE(e.doc.node("fc1")->lr_mult, 0.1);
    QTest::mouseClick(editor->resetButton(), Qt::LeftButton);
    QCOMPARE(e.doc.node("fc1")->lr_mult, 1.0);

    ParamEditor* decay = e.panel.findChild<ParamEditor*>("weight_decay_mult");
    typeInto(decay->editor(), "0");
    QCOMPARE(e.doc.node("fc1")->weight_decay_mult, 0.0);
    QCOMPARE(e.doc.node("fc1")->lr_mult, 1.0);
  }

  void floatTextIsTakenExactly() {
    Editor e;
    QVERIFY(e.ready());
    ParamEditor* editor = e.param("loss", "label_smoothing");
    QWidget* field = editor->editor();
    QVERIFY(qobject_cast<QLineEdit*>(field));
    for (const auto& [text, x] : {std::pair{"0.001", 0.001}, std::pair{"0.3", 0.3}, std::pair{"1e-5", 1e-5}}) {
      typeInto(field, text);
      QCOMPARE(paramOf(e.doc, "loss", "label_smoothing"), std::optional<ParamValue>(x));
    }
    QCOMPARE(fieldText(field), paramText(1e-5));

    const int steps = e.steps();
    const auto& spec = specOf("CrossEntropy", "label_smoothing");
    typeInto(field, QString::number(spec.max + 1));
    QVERIFY(editor->error().contains(QStringLiteral("between")));
    typeInto(field, "half");
    QCOMPARE(editor->error(), QStringLiteral("not a number"));
    QCOMPARE(e.steps(), steps);
    QCOMPARE(paramOf(e.doc, "loss", "label_smoothing"), std::optional<ParamValue>(1e-5));
  }

  void resetToDefaultRemovesTheParameter() {
    Editor e;
    QVERIFY(e.ready());
    e.doc.setParam("fc1", "out_features", ParamValue(int64_t(77)));
    ParamEditor* editor = e.param("fc1", "out_features");
    QVERIFY(editor->resetButton()->isEnabled());
    const int steps = e.steps();
    QTest::mouseClick(editor->resetButton(), Qt::LeftButton);
    QCOMPARE(paramOf(e.doc, "fc1", "out_features"), kUnset);
    QCOMPARE(e.steps(), steps + 1);
    QVERIFY(!editor->resetButton()->isEnabled());
    QCOMPARE(qobject_cast<QSpinBox*>(editor->editor())->value(),
             int(std::get<int64_t>(specOf("Linear", "out_features").default_value)));

    // Clearing a line edit and pressing Enter is a reset too.
    e.doc.setParam("loss", "label_smoothing", ParamValue(0.2));
    ParamEditor* smoothing = e.param("loss", "label_smoothing");
    typeInto(smoothing->editor(), "");
    QCOMPARE(paramOf(e.doc, "loss", "label_smoothing"), kUnset);
    QCOMPARE(fieldText(smoothing->editor()), QString());  // the default shows as the placeholder
  }

  void checkBoxCommits() {
    Editor e;
    QVERIFY(e.ready());
    auto* box = qobject_cast<QCheckBox*>(e.param("fc1", "bias")->editor());
    const bool fallback = std::get<bool>(specOf("Linear", "bias").default_value);
    QCOMPARE(box->isChecked(), fallback);
    const int steps = e.steps();
    QTest::mouseClick(box, Qt::LeftButton);
    QCOMPARE(paramOf(e.doc, "fc1", "bias"), std::optional<ParamValue>(!fallback));
    QCOMPARE(e.steps(), steps + 1);
    e.doc.undoStack()->undo();
    QCOMPARE(box->isChecked(), fallback);
  }

  // No registry type has a Choice parameter yet, so the editor is tried with one of its own.
  void aDefaultThatStandsForSomethingSaysSo() {
    const graph::ParamSpec* in = graph::Registry::instance().find("Linear")->param("in_features");
    QVERIFY(in);
    QVERIFY2(paramToolTip(*in).contains("Default: 0 (auto)"), qPrintable(paramToolTip(*in)));
    const graph::ParamSpec* out = graph::Registry::instance().find("Linear")->param("out_features");
    QVERIFY2(paramToolTip(*out).contains("Default: 10."), qPrintable(paramToolTip(*out)));
  }

  void comboBoxCommitsAChoice() {
    const graph::ParamSpec spec{"mode", "Padding mode", graph::ParamType::Choice, std::string("zeros"), 0, 0,
                                {"zeros", "reflect", "replicate"}, "The padding mode.", {}};
    ParamEditor editor(spec);
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    auto* combo = qobject_cast<QComboBox*>(editor.editor());
    QCOMPARE(combo->count(), 3);
    QCOMPARE(combo->currentText(), QStringLiteral("zeros"));
    std::vector<std::optional<ParamValue>> committed;
    connect(&editor, &ParamEditor::committed, this,
            [&](const std::optional<ParamValue>& v) { committed.push_back(v); });
    combo->setFocus();
    QTest::keyClick(combo, Qt::Key_Down);
    QCOMPARE(committed.size(), size_t(1));
    QCOMPARE(committed[0], std::optional<ParamValue>(std::string("reflect")));

    editor.setValue(ParamValue(std::string("mirror")));  // a file's value that is not a choice
    QCOMPARE(combo->currentIndex(), -1);
    QCOMPARE(combo->placeholderText(), QStringLiteral("mirror"));
    QVERIFY(editor.error().contains(QStringLiteral("zeros, reflect, replicate")));
  }

  void intListIsParsed() {
    Editor e;
    QVERIFY(e.ready());
    ParamEditor* editor = e.param("shape", "shape");
    QWidget* field = editor->editor();
    typeInto(field, "1, 28, 28");
    QCOMPARE(paramOf(e.doc, "shape", "shape"), std::optional<ParamValue>(std::vector<int64_t>{1, 28, 28}));
    QCOMPARE(fieldText(field), QStringLiteral("1, 28, 28"));
    typeInto(field, "[1 784]");
    QCOMPARE(paramOf(e.doc, "shape", "shape"), std::optional<ParamValue>(std::vector<int64_t>{1, 784}));

    const int steps = e.steps();
    typeInto(field, "1, x");
    QCOMPARE(editor->error(), QStringLiteral("'x' is not a whole number"));
    const auto& spec = specOf("Reshape", "shape");
    typeInto(field, QStringLiteral("4, %1").arg(qint64(spec.min) - 1));
    QVERIFY(editor->error().contains(QString::number(qint64(spec.min))));
    QCOMPARE(e.steps(), steps);
  }

  // An Input's table columns: names between commas (a CSV header's may hold spaces).
  void namesAreParsed() {
    Editor e;
    QVERIFY(e.ready());
    ParamEditor* editor = e.param("in", "columns");
    QWidget* field = editor->editor();
    QCOMPARE(qobject_cast<QLineEdit*>(field)->placeholderText(), QStringLiteral("all"));
    typeInto(field, "age, fare ,home port");
    QCOMPARE(paramOf(e.doc, "in", "columns"),
             std::optional<ParamValue>(std::vector<std::string>{"age", "fare", "home port"}));
    QCOMPARE(fieldText(field), QStringLiteral("age, fare, home port"));

    const int steps = e.steps();
    typeInto(field, "age, age");
    QVERIFY2(editor->error().contains(QStringLiteral("'age' twice")), qPrintable(editor->error()));
    QCOMPARE(e.steps(), steps);
    e.doc.undoStack()->undo();
    QCOMPARE(paramOf(e.doc, "in", "columns"), kUnset);
  }

  // A 2-D convolution's kernel, stride, padding and dilation: one number, [h, w] or a word.
  void intPairIsParsed() {
    graph::Graph g = classifier();
    g.nodes.push_back(node("conv", "Conv2d"));
    g.nodes.push_back(node("conv1d", "Conv1d"));
    Editor e(g);
    QVERIFY(e.ready());
    ParamEditor* kernel = e.param("conv", "kernel_size");
    QWidget* field = kernel->editor();
    QVERIFY(qobject_cast<QLineEdit*>(field));
    QCOMPARE(qobject_cast<QLineEdit*>(field)->placeholderText(), QStringLiteral("3"));
    typeInto(field, "5, 1");
    QCOMPARE(paramOf(e.doc, "conv", "kernel_size"), std::optional<ParamValue>(std::vector<int64_t>{5, 1}));
    QCOMPARE(fieldText(field), QStringLiteral("5, 1"));
    typeInto(field, "[1 7]");
    QCOMPARE(paramOf(e.doc, "conv", "kernel_size"), std::optional<ParamValue>(std::vector<int64_t>{1, 7}));
    typeInto(field, "4");
    QCOMPARE(paramOf(e.doc, "conv", "kernel_size"), std::optional<ParamValue>(int64_t(4)));  // stays a plain number

    // Bad text shows the validator's own message and changes nothing.
    const int steps = e.steps();
    const auto& spec = specOf("Conv2d", "kernel_size");
    for (const char* bad : {"[3]", "1, 2, 3", "same"}) {
      typeInto(field, bad);
      QCOMPARE(kernel->error(), QStringLiteral("must be a whole number or a pair [h, w]"));
    }
    typeInto(field, "0, 2");
    QCOMPARE(kernel->error(), paramProblem(spec, std::vector<int64_t>{0, 2}));
    QCOMPARE(kernel->error(), QStringLiteral("must have both entries between 1 and 64"));
    typeInto(field, "3, x");
    QCOMPARE(kernel->error(), QStringLiteral("'x' is not a whole number"));
    QCOMPARE(e.steps(), steps);

    // Padding also takes PyTorch's words; a misspelt one lists them.
    ParamEditor* padding = e.param("conv", "padding");
    QWidget* pad = padding->editor();
    QVERIFY(paramToolTip(padding->spec()).contains(QStringLiteral("one of same, valid")));
    typeInto(pad, "samee");
    QCOMPARE(padding->error(), QStringLiteral("must be a whole number, a pair [h, w] or one of same, valid"));
    QCOMPARE(e.steps(), steps);
    typeInto(pad, "same");
    QVERIFY(padding->error().isEmpty());
    QCOMPARE(paramOf(e.doc, "conv", "padding"), std::optional<ParamValue>(std::string("same")));
    QCOMPARE(fieldText(pad), QStringLiteral("same"));
    typeInto(pad, "2 0");
    QCOMPARE(paramOf(e.doc, "conv", "padding"), std::optional<ParamValue>(std::vector<int64_t>{2, 0}));

    // Conv1d's padding: one number or a word, never a pair.
    ParamEditor* pad1 = e.param("conv1d", "padding");
    QVERIFY(qobject_cast<QLineEdit*>(pad1->editor()));
    typeInto(pad1->editor(), "valid");
    QCOMPARE(paramOf(e.doc, "conv1d", "padding"), std::optional<ParamValue>(std::string("valid")));
    typeInto(pad1->editor(), "1, 2");
    QCOMPARE(pad1->error(), QStringLiteral("must be a whole number or one of same, valid"));
    typeInto(pad1->editor(), "3");
    QCOMPARE(paramOf(e.doc, "conv1d", "padding"), std::optional<ParamValue>(int64_t(3)));
  }

  void floatListIsParsed() {
    Editor e;
    QVERIFY(e.ready());
    ParamEditor* editor = e.param("loss", "weight");
    QWidget* field = editor->editor();
    typeInto(field, "0.5, 2, 1e-3");
    QCOMPARE(paramOf(e.doc, "loss", "weight"), std::optional<ParamValue>(std::vector<double>{0.5, 2, 1e-3}));
    QCOMPARE(fieldText(field), QStringLiteral("0.5, 2, 0.001"));
    typeInto(field, "[1 3]");
    QCOMPARE(paramOf(e.doc, "loss", "weight"), std::optional<ParamValue>(std::vector<double>{1, 3}));

    const int steps = e.steps();
    typeInto(field, "1, x");
    QCOMPARE(editor->error(), QStringLiteral("'x' is not a number"));
    typeInto(field, "1,, 2.5.1");
    QCOMPARE(editor->error(), QStringLiteral("'2.5.1' is not a number"));
    typeInto(field, "1, -0.5");
    QCOMPARE(editor->error(), QStringLiteral("must have every entry between 0 and 16777216"));
    typeInto(field, "1, inf");
    QCOMPARE(editor->error(), QStringLiteral("must have every entry between 0 and 16777216"));
    QCOMPARE(e.steps(), steps);
  }

  void heldInvalidValuesShowAsTheyAre() {
    graph::Graph g = classifier();
    g.find("fc1")->params["out_features"] = int64_t(0);
    g.find("fc1")->params["bias"] = std::string("yes");
    g.find("loss")->params["label_smoothing"] = 7.5;
    Editor e(g);
    ParamEditor* out = e.param("fc1", "out_features");
    QCOMPARE(fieldText(out->editor()), QStringLiteral("0"));
    QVERIFY(out->editor()->property("invalid").toBool());
    QCOMPARE(out->error(), paramProblem(specOf("Linear", "out_features"), int64_t(0)));
    QVERIFY(e.panel.findChild<ParamEditor*>("bias")->error().contains(QStringLiteral("true or false")));
    ParamEditor* smoothing = e.param("loss", "label_smoothing");
    QCOMPARE(fieldText(smoothing->editor()), QStringLiteral("7.5"));
    QVERIFY(!smoothing->error().isEmpty());
    QVERIFY(smoothing->resetButton()->isEnabled());
  }

  void renameCommitsOnEnter() {
    Editor e;
    QVERIFY(e.ready());
    e.panel.showNodes({"fc1"});
    auto* name = e.panel.findChild<QLineEdit*>("name");
    QCOMPARE(name->text(), QStringLiteral("fc1"));
    const int steps = e.steps();
    typeInto(name, "hidden");
    QCOMPARE(e.doc.node("fc1")->name, std::string("hidden"));
    QCOMPARE(e.steps(), steps + 1);
    e.doc.undoStack()->undo();
    QCOMPARE(name->text(), QStringLiteral("fc1"));
  }

  void typingNotYetCommittedGoesToItsNodeWhenTheSelectionChanges() {
    Editor e;
    QVERIFY(e.ready());
    QWidget* spin = e.param("fc1", "out_features")->editor();
    spin->setFocus();
    QTest::keyClick(spin, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(spin, "48");  // no Enter
    e.panel.showNodes({"fc2"});
    QCOMPARE(paramOf(e.doc, "fc1", "out_features"), std::optional<ParamValue>(int64_t(48)));
    QCOMPARE(paramOf(e.doc, "fc2", "out_features"), kUnset);
  }

  void themeChangeRecolours() {
    Editor e;
    ParamEditor* editor = e.param("fc1", "out_features");
    typeInto(editor->editor(), "0");
    QLabel* error = editor->findChild<QLabel*>("error");
    for (const ThemeMode mode : {ThemeMode::Dark, ThemeMode::Light}) {
      ThemeManager::instance().setMode(mode);
      const Theme& theme = ThemeManager::instance().theme();
      QCOMPARE(error->palette().color(QPalette::WindowText), theme.error);
      for (QLabel* l : e.panel.findChildren<QLabel*>())
        if (l->property("muted").toBool()) QCOMPARE(l->palette().color(QPalette::WindowText), theme.mutedText);
    }
  }

  void severalNodesAreSummarised() {
    Editor e;
    e.panel.showNodes({"fc1", "relu", "fc2", "gone"});
    QCOMPARE(e.panel.shownNodes(), QStringList({"fc1", "relu", "fc2"}));
    auto* label = e.panel.findChild<QLabel*>("selection");
    QVERIFY(label->isVisible());
    QVERIFY(label->text().contains(QStringLiteral("3 nodes selected")));
    QVERIFY(label->text().contains(QStringLiteral("2 × Linear")));
    QVERIFY(label->text().contains(QStringLiteral("1 × ReLU")));
    QVERIFY(e.shownEditors().isEmpty());
  }

  void unknownTypeCanStillBeRenamed() {
    graph::Graph g;
    g.nodes.push_back(node("odd", "Linaer"));
    g.nodes.back().params["out_features"] = int64_t(5);
    Editor e(g);
    QVERIFY(e.ready());
    e.panel.showNodes({"odd"});
    QVERIFY(e.shownEditors().isEmpty());
    bool said = false;
    for (QLabel* l : e.panel.findChildren<QLabel*>())
      said = said || l->text().contains(QStringLiteral("Unknown layer type"));
    QVERIFY(said);
    typeInto(e.panel.findChild<QLineEdit*>("name"), "mystery");
    QCOMPARE(e.doc.node("odd")->name, std::string("mystery"));
  }

  void removedNodeLeavesThePage() {
    Editor e;
    ParamEditor* editor = e.param("fc1", "out_features");
    QVERIFY(editor);
    e.doc.remove({"fc1"}, {});
    QVERIFY(e.panel.shownNodes().isEmpty());
    QVERIFY(e.panel.findChild<QComboBox*>("datasetKind")->isVisible());
  }

  void projectPageEditsTheDataset() {
    Editor e;
    QVERIFY(e.ready());
    e.panel.showNodes({});
    auto* kind = e.panel.findChild<QComboBox*>("datasetKind");
    QVERIFY(kind->isVisible());
    QCOMPARE(kind->currentData().toString(), QStringLiteral("mnist"));
    QCOMPARE(kind->currentText(), QStringLiteral("MNIST digits"));
    QStringList kinds;  // the table's kinds, in its order, and no dataset
    for (int i = 0; i < kind->count(); ++i) kinds << kind->itemData(i).toString();
    QCOMPARE(kinds, QStringList({"mnist", "fashion-mnist", "image_folder", "csv", "text", "text_classes", ""}));
    QCOMPARE(e.panel.findChild<QLineEdit*>("datasetPath")->text(), QStringLiteral("data/mnist"));
    QCOMPARE(e.panel.findChild<QLabel*>("datasetStatus")->text(), e.doc.datasetStatus());
    QVERIFY(e.panel.findChild<QLabel*>("graphSummary")->text().contains(
        QStringLiteral("%1 nodes, %2 wires").arg(e.doc.graph().nodes.size()).arg(e.doc.graph().edges.size())));
    auto* target = e.panel.findChild<QComboBox*>("datasetTarget");
    QVERIFY(!target->isVisible());  // only a CSV file has columns

    const int steps = e.steps();
    kind->setFocus();
    QTest::keyClick(kind, Qt::Key_Down);
    QCOMPARE(e.doc.graph().dataset,
             (graph::DatasetBinding{.kind = kind->currentData().toString().toStdString(), .path = "data/mnist"}));
    QCOMPARE(e.steps(), steps + 1);

    QTest::keyClick(kind, Qt::Key_Down);  // image_folder
    QTest::keyClick(kind, Qt::Key_Down);  // csv
    QCOMPARE(e.doc.graph().dataset.kind, std::string("csv"));
    QCOMPARE(e.doc.graph().dataset.task, std::string("classification"));
    QVERIFY(target->isVisible());
    typeInto(target->lineEdit(), "label");  // no readable file: any column can be typed
    QCOMPARE(e.doc.graph().dataset.target, std::string("label"));
    QCOMPARE(e.steps(), steps + 4);

    e.doc.undoStack()->undo();
    QCOMPARE(target->currentText(), QString());
    typeInto(e.panel.findChild<QLineEdit*>("datasetPath"), "elsewhere/data.csv");
    QCOMPARE(e.doc.graph().dataset.path, std::string("elsewhere/data.csv"));
    QCOMPARE(e.panel.findChild<QLabel*>("datasetStatus")->text(), e.doc.datasetStatus());

    QTest::keyClick(kind, Qt::Key_Down);  // text: its own settings, no CSV fields
    QCOMPARE(e.doc.graph().dataset.kind, std::string("text"));
    QVERIFY(e.panel.findChild<ParamEditor*>("dataset.seq_len")->isVisible());
    QVERIFY(e.panel.findChild<ParamEditor*>("dataset.max_vocab")->isVisible());
    QVERIFY(!e.panel.findChild<ParamEditor*>("dataset.height")->isVisible());
    QVERIFY(heading(e.panel, "Text")->isVisible());
    QVERIFY(!heading(e.panel, "Images")->isVisible());
    QVERIFY(!target->isVisible());

    QTest::keyClick(kind, Qt::Key_Down);  // labelled texts: a folder, the Text settings that apply
    QCOMPARE(e.doc.graph().dataset.kind, std::string("text_classes"));
    QCOMPARE(kind->currentText(), QStringLiteral("Labelled texts"));
    for (const char* shown : {"dataset.max_length", "dataset.max_vocab", "dataset.lowercase"})
      QVERIFY2(e.panel.findChild<ParamEditor*>(shown)->isVisible(), shown);
    QVERIFY(!e.panel.findChild<ParamEditor*>("dataset.seq_len")->isVisible());
    QVERIFY(heading(e.panel, "Text")->isVisible());
    QVERIFY(!target->isVisible());

    QTest::keyClick(kind, Qt::Key_Down);  // (none)
    QCOMPARE(e.doc.graph().dataset, graph::DatasetBinding{});
    QVERIFY(!e.panel.findChild<QLineEdit*>("datasetPath")->isEnabled());
  }

  // An image folder shows how its pictures become inputs and the augmentation, each setting an
  // editor from the dataset table; the CSV fields go.
  void imageFolderShowsItsSettings() {
    Editor e;
    QVERIFY(e.ready());
    e.panel.showNodes({});
    auto* kind = e.panel.findChild<QComboBox*>("datasetKind");
    kind->setFocus();
    QTest::keyClick(kind, Qt::Key_Down);
    QTest::keyClick(kind, Qt::Key_Down);
    QCOMPARE(e.doc.graph().dataset.kind, std::string("image_folder"));
    for (const graph::DatasetSetting& row : graph::dataset_settings()) {
      auto* editor = e.panel.findChild<ParamEditor*>(QString::fromStdString("dataset." + row.name()));
      QVERIFY2(editor, row.name().c_str());
      QVERIFY2(editor->isVisible() == (row.section != "Text" && row.section != "Table"), row.name().c_str());
    }
    QVERIFY(heading(e.panel, "Images")->isVisible());
    QVERIFY(heading(e.panel, "Augmentation")->isVisible());
    QVERIFY(!heading(e.panel, "Text")->isVisible());
    QVERIFY(!heading(e.panel, "Table")->isVisible());
    for (const char* csvOnly : {"datasetTarget", "datasetTask", "datasetFeatures"})
      QVERIFY2(!e.panel.findChild<QWidget*>(csvOnly)->isVisible(), csvOnly);

    // A typed height is one undo step, and undo shows the old value in the same editor.
    const int steps = e.steps();
    auto* height = e.panel.findChild<ParamEditor*>("dataset.height");
    typeInto(height->editor(), "64");
    QCOMPARE(e.doc.graph().dataset.height, int64_t(64));
    QCOMPARE(e.steps(), steps + 1);
    QVERIFY(height->resetButton()->isEnabled());
    e.doc.undoStack()->undo();
    QCOMPARE(e.doc.graph().dataset.height, graph::DatasetBinding{}.height);
    QCOMPARE(fieldText(height->editor()), QStringLiteral("28"));
    QVERIFY(!height->resetButton()->isEnabled());  // back at the default
    e.doc.undoStack()->redo();
    QCOMPARE(fieldText(height->editor()), QStringLiteral("64"));
    typeInto(height->editor(), "0");  // refused with the reason, kept to be fixed
    QCOMPARE(e.doc.graph().dataset.height, int64_t(64));
    QVERIFY2(height->error().contains("between"), qPrintable(height->error()));

    typeInto(e.panel.findChild<ParamEditor*>("dataset.augment.rotation")->editor(), "15");
    auto* flip = qobject_cast<QCheckBox*>(e.panel.findChild<ParamEditor*>("dataset.augment.flip")->editor());
    QTest::mouseClick(flip, Qt::LeftButton);
    QCOMPARE(e.doc.graph().dataset.augment_rotation, 15.0);
    QVERIFY(e.doc.graph().dataset.augment_flip);
    QCOMPARE(e.steps(), steps + 3);

    // Back to MNIST: the folder's settings go back to their defaults; augmentation stays.
    kind->setFocus();
    QTest::keyClick(kind, Qt::Key_Up);
    QTest::keyClick(kind, Qt::Key_Up);
    QCOMPARE(e.doc.graph().dataset.kind, std::string("mnist"));
    QCOMPARE(e.doc.graph().dataset.height, graph::DatasetBinding{}.height);
    QCOMPARE(e.doc.graph().dataset.augment_rotation, 15.0);
    QCOMPARE(e.steps(), steps + 5);
    QVERIFY(!height->isVisible());
    QVERIFY(!heading(e.panel, "Images")->isVisible());
    QVERIFY(e.panel.findChild<ParamEditor*>("dataset.augment.rotation")->isVisible());
    QVERIFY(heading(e.panel, "Augmentation")->isVisible());

    // A CSV file has no pictures: no augmentation either.
    QTest::keyClick(kind, Qt::Key_Down);
    QTest::keyClick(kind, Qt::Key_Down);
    QTest::keyClick(kind, Qt::Key_Down);
    QCOMPARE(e.doc.graph().dataset.kind, std::string("csv"));
    QCOMPARE(e.doc.graph().dataset.augment_rotation, 0.0);
    QVERIFY(!heading(e.panel, "Augmentation")->isVisible());
    QVERIFY(!e.panel.findChild<ParamEditor*>("dataset.augment.rotation")->isVisible());
    e.doc.undoStack()->undo();
    QCOMPARE(e.doc.graph().dataset.augment_rotation, 15.0);
  }

  // A CSV file's header gives the target's choices and the feature columns to check.
  void csvColumnsComeFromTheHeader() {
    QTemporaryDir dir;
    QVERIFY(writeFile(dir.filePath("data.csv"), "id,x1,x2,label\n1,0.5,1.5,a\n2,0.1,0.2,b\n"));
    graph::Graph g = classifier();
    g.dataset = {.kind = "csv", .path = "data.csv", .target = "label", .task = "classification"};
    Editor e;
    e.doc.reset(g, dir.filePath("project.plexus"));  // data.csv is found next to the project
    QVERIFY(e.ready());
    e.panel.showNodes({});
    auto* target = e.panel.findChild<QComboBox*>("datasetTarget");
    QStringList items;
    for (int i = 0; i < target->count(); ++i) items << target->itemText(i);
    QCOMPARE(items, QStringList({"id", "x1", "x2", "label"}));
    QCOMPARE(target->currentText(), QStringLiteral("label"));
    auto* features = e.panel.findChild<QListWidget*>("datasetFeatures");
    QVERIFY(features->isVisible());
    QCOMPARE(checkedFeatures(features), QStringList({"id", "x1", "x2"}));  // none listed: all
    QCOMPARE(features->count(), 3);

    // Unchecking one stores the others, in the file's order; checking it again stores none.
    const int steps = e.steps();
    toggleFeature(features, "id");
    QCOMPARE(e.doc.graph().dataset.features, (std::vector<std::string>{"x1", "x2"}));
    QCOMPARE(checkedFeatures(features), QStringList({"x1", "x2"}));
    toggleFeature(features, "id");
    QVERIFY(e.doc.graph().dataset.features.empty());
    QCOMPARE(e.steps(), steps + 2);
    e.doc.undoStack()->undo();
    QCOMPARE(checkedFeatures(features), QStringList({"x1", "x2"}));

    // The last feature cannot go: a model reads at least one column.
    toggleFeature(features, "x1");
    toggleFeature(features, "x2");
    QCOMPARE(e.doc.graph().dataset.features, std::vector<std::string>{"x2"});
    QCOMPARE(checkedFeatures(features), QStringList({"x2"}));
    QVERIFY(e.panel.findChild<QLabel*>("datasetStatus")->text().contains("at least one feature"));

    // Picking another target from the list: it leaves the features.
    target->setFocus();
    QTest::keyClick(target, Qt::Key_Up);  // x2
    QCOMPARE(e.doc.graph().dataset.target, std::string("x2"));
    QVERIFY(e.doc.graph().dataset.features.empty());
    QCOMPARE(checkedFeatures(features), QStringList({"id", "x1", "label"}));
    // A typed column name commits too.
    typeInto(target->lineEdit(), "label");
    QCOMPARE(e.doc.graph().dataset.target, std::string("label"));
  }

  void unreadableCsvSaysWhy() {
    QTemporaryDir dir;
    QVERIFY(writeFile(dir.filePath("bad.csv"), "a,\"b\n1,2\n"));  // the quote never ends
    graph::Graph g = classifier();
    g.dataset = {.kind = "csv", .path = dir.filePath("missing.csv").toStdString(), .target = "y", .task = "regression"};
    Editor e(g);
    QVERIFY(e.ready());
    e.panel.showNodes({});
    auto* status = e.panel.findChild<QLabel*>("datasetStatus");
    QVERIFY2(status->text().contains("missing.csv"), qPrintable(status->text()));
    QCOMPARE(status->palette().color(QPalette::WindowText), ThemeManager::instance().theme().error);
    QVERIFY(!e.panel.findChild<QListWidget*>("datasetFeatures")->isVisible());

    typeInto(e.panel.findChild<QLineEdit*>("datasetPath"), dir.filePath("bad.csv"));
    QVERIFY2(status->text().startsWith("The columns cannot be read") && status->text().contains("bad.csv"),
             qPrintable(status->text()));
    auto* target = e.panel.findChild<QComboBox*>("datasetTarget");
    QCOMPARE(target->count(), 0);
    typeInto(target->lineEdit(), "b");  // still typed freely
    QCOMPARE(e.doc.graph().dataset.target, std::string("b"));
  }

  void problemsAreListedAndLeadToTheirNode() {
    Editor e;
    QVERIFY(e.ready());
    ProblemsPanel problems(&e.doc);
    problems.resize(640, 200);
    problems.show();
    QVERIFY(QTest::qWaitForWindowExposed(&problems));
    QCOMPARE(problems.count(), 0);
    QCOMPARE(problems.headerText(), QStringLiteral("No problems"));

    // A wrong in_features, typed into the property panel, is a shape error at fc1's input.
    typeInto(e.param("fc1", "in_features")->editor(), "100");
    const auto& found = e.doc.validation().problems;
    QVERIFY(!found.empty());
    QCOMPARE(problems.count(), int(found.size()));
    const auto errors = std::count_if(found.begin(), found.end(),
                                      [](const auto& p) { return p.severity == graph::Severity::Error; });
    QVERIFY(problems.headerText().startsWith(QStringLiteral("%1 error").arg(errors)));
    QTreeWidgetItem* row = problems.list()->topLevelItem(0);
    QCOMPARE(row->text(0), QString::fromStdString(found[0].message));
    QCOMPARE(found[0].node, std::string("fc1"));
    QVERIFY(row->text(1).contains(QString::fromStdString(e.doc.node("fc1")->label())));

    // The property panel shows the node's problems under its parameters.
    bool shown = false;
    for (QLabel* l : e.panel.findChildren<QLabel*>()) shown = shown || l->text() == row->text(0);
    QVERIFY(shown);

    QSignalSpy activated(&problems, &ProblemsPanel::nodeActivated);
    QTreeWidget* list = problems.list();
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(row).center());
    QCOMPARE(activated.count(), 1);
    QCOMPARE(activated.at(0).at(0).toString(), QStringLiteral("fc1"));
    list->setFocus();
    QTest::keyClick(list, Qt::Key_Return);
    QCOMPARE(activated.count(), 2);

    e.doc.undoStack()->undo();
    QCOMPARE(problems.count(), 0);
    QCOMPARE(problems.headerText(), QStringLiteral("No problems"));
  }

  void errorsComeBeforeWarnings() {
    graph::Graph g = classifier();
    g.nodes.insert(g.nodes.begin(), node("spare", "ReLU"));  // leads nowhere: a warning, first in node order
    g.find("fc2")->params["out_features"] = int64_t(3);      // 3 class scores for 10 classes: an error
    GraphDocument doc;
    doc.reset(g, QString());
    ProblemsPanel problems(&doc);
    std::vector<graph::Problem> expected;
    for (const auto severity : {graph::Severity::Error, graph::Severity::Warning})
      for (const graph::Problem& p : doc.validation().problems)
        if (p.severity == severity) expected.push_back(p);
    const auto errors = std::count_if(expected.begin(), expected.end(),
                                      [](const auto& p) { return p.severity == graph::Severity::Error; });
    const auto warnings = qsizetype(expected.size()) - errors;
    QVERIFY(errors > 0 && warnings > 0);
    QCOMPARE(problems.count(), int(expected.size()));
    for (int i = 0; i < problems.count(); ++i)
      QCOMPARE(problems.list()->topLevelItem(i)->text(0), QString::fromStdString(expected[size_t(i)].message));
    QCOMPARE(problems.headerText(), QStringLiteral("%1 error%2, %3 warning%4")
                                        .arg(errors).arg(errors > 1 ? "s" : "")
                                        .arg(warnings).arg(warnings > 1 ? "s" : ""));
  }

  // Screenshots to look at: a node with an invalid entry and its problem, the project page, and
  // the problems list, in both themes.
  void renderScreenshots() {
    graph::Graph g = classifier();
    g.nodes.insert(g.nodes.begin(), node("spare", "ReLU"));
    g.find("fc1")->params["in_features"] = int64_t(100);
    g.find("fc1")->params["dropout"] = 0.5;  // not a Linear parameter: listed to be removed
    for (const auto& [mode, file] : {std::pair{ThemeMode::Light, "/tmp/props-light.png"},
                                     std::pair{ThemeMode::Dark, "/tmp/props-dark.png"}}) {
      ThemeManager::instance().setMode(mode);
      Editor e(g);
      QVERIFY(e.ready());
      typeInto(e.param("fc1", "out_features")->editor(), "0");
      PropertyPanel project(&e.doc);
      project.resize(e.panel.size());
      project.show();
      QVERIFY(QTest::qWaitForWindowExposed(&project));
      QCoreApplication::processEvents();  // settle the layouts before grabbing
      QImage image(e.panel.width() * 2 + 8, e.panel.height(), QImage::Format_ARGB32);
      image.fill(QApplication::palette().color(QPalette::Mid));
      QPainter painter(&image);
      painter.drawPixmap(0, 0, e.panel.grab());
      painter.drawPixmap(e.panel.width() + 8, 0, project.grab());
      painter.end();
      QVERIFY(image.save(file));

      if (mode == ThemeMode::Light) {
        ProblemsPanel problems(&e.doc);
        problems.resize(720, 180);
        problems.show();
        QVERIFY(QTest::qWaitForWindowExposed(&problems));
        QVERIFY(problems.grab().save("/tmp/problems.png"));
      }
    }
    ThemeManager::instance().setMode(ThemeMode::Light);
  }

  // Screenshots of the dataset part of the project page at the dock's width: an image folder
  // with augmentation (both themes) and a CSV file with its columns.
  void renderDatasetScreenshots() {
    QTemporaryDir dir;
    QVERIFY(writeFile(dir.filePath("houses.csv"),
                      "id,rooms,area_m2,year_built,distance_to_centre_km,price\n1,3,72.5,1984,4.2,310000\n"));
    graph::Graph folder = classifier();
    folder.dataset = graph::for_kind({.path = "data/flowers"}, "image_folder");
    folder.dataset.height = folder.dataset.width = 64;
    folder.dataset.color = "rgb";
    folder.dataset.augment_shift = 4;
    folder.dataset.augment_flip = true;
    folder.dataset.augment_rotation = 10;
    graph::Graph csv = classifier();
    csv.dataset = {.kind = "csv", .path = "houses.csv", .target = "price", .task = "regression",
                   .features = {"rooms", "area_m2", "distance_to_centre_km"}};
    for (const auto& [g, mode, file] : {std::tuple{folder, ThemeMode::Light, "/tmp/dataset-image-folder.png"},
                                        std::tuple{folder, ThemeMode::Dark, "/tmp/dataset-image-folder-dark.png"},
                                        std::tuple{csv, ThemeMode::Light, "/tmp/dataset-csv.png"}}) {
      ThemeManager::instance().setMode(mode);
      Editor e;
      e.doc.reset(g, dir.filePath("project.plexus"));
      e.panel.resize(300, 940);
      QVERIFY(e.ready());
      e.panel.showNodes({});
      QCoreApplication::processEvents();  // settle the layouts before grabbing
      QVERIFY(e.panel.grab().save(file));
    }
    ThemeManager::instance().setMode(ThemeMode::Light);
  }
};

QTEST_MAIN(TestPanels)
#include "test_widgets_panels.moc"
