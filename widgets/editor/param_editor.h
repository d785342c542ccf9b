#pragma once
// A parameter as the editor shows and takes it: its value as text, the text read back and
// checked, the tooltip, and ParamEditor, the field that edits one parameter of a node. All of it
// follows the parameter's registry ParamSpec alone.
#include <QString>
#include <QWidget>
#include <optional>

#include "graph/registry.h"

class QLabel;
class QLineEdit;
class QToolButton;

namespace plexus::widgets {

// ---- parameter text: one set of rules for what is typed and what a file holds --------------

// How a value reads in an editor: "128", "1e-05", "true", "same", "1, 28, 28".
QString paramText(const graph::ParamValue& value);
// "" when the value suits the spec; else why not, e.g. "must be between 1 and 65536" (the
// validator's own check, graph::check_param_value).
QString paramProblem(const graph::ParamSpec& spec, const graph::ParamValue& value);

struct ParsedParam {
  QString error;                           // "" = the text is valid
  std::optional<graph::ParamValue> value;  // when valid; nullopt for empty text (the default)
};
// Reads an Int, Float, IntList, FloatList or IntPair parameter as typed ("1e-5", "1, 28, 28",
// "0.5, 2", "5, 1", "same") and checks it.
ParsedParam parseParam(const graph::ParamSpec& spec, const QString& text);

// The label's and the editor's tooltip (rich text): the label, the doc, the kind of value and its
// range or choices, the default, and the key the project file holds it under.
QString paramToolTip(const graph::ParamSpec& spec);

// The editor of one parameter, built from its ParamSpec alone: a spin box, a line edit, a check
// box or a combo box (a line edit for a choice without a list: free text), a reset-to-default
// button and the validation message under them.
class ParamEditor : public QWidget {
  Q_OBJECT

 public:
  explicit ParamEditor(const graph::ParamSpec& spec, QWidget* parent = nullptr);

  const graph::ParamSpec& spec() const { return spec_; }
  // What the node holds (nullopt = not set: the default shows greyed). A value equal to the one
  // shown leaves the editor alone, so typing in progress survives unrelated changes.
  void setValue(const std::optional<graph::ParamValue>& value);
  QWidget* editor() const { return editor_; }
  QToolButton* resetButton() const { return reset_; }
  QString error() const;  // the message shown under the editor, "" when none
  void applyTheme();

 signals:
  void committed(const std::optional<plexus::graph::ParamValue>& value);  // nullopt = reset to default

 private:
  QWidget* makeEditor();
  QLineEdit* typedField();  // a line edit for text, numbers and lists
  void display();
  void finishEditing();
  void commit(const std::optional<graph::ParamValue>& value);
  void updateLook();
  QString currentProblem() const;

  graph::ParamSpec spec_;
  std::optional<graph::ParamValue> held_;  // what the node holds, as shown
  QWidget* editor_ = nullptr;
  QLineEdit* text_ = nullptr;  // the text of Int, Float and list editors (a spin box's own)
  // What was typed since the value was last shown or committed. A spin box reverts invalid text
  // when focus leaves, before it says editing finished, so the typing is remembered here.
  std::optional<QString> typed_;
  QToolButton* reset_;
  QLabel* error_;
};

// The label of an editor's row in a form: the parameter's label, its tooltip, the editor as buddy.
QLabel* paramLabel(const ParamEditor* editor, QWidget* parent);

}  // namespace plexus::widgets
