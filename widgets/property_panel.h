#pragma once
// PropertyPanel: edits what the canvas selects. One node: its name and one typed editor per
// parameter of its registry type (the registry is the only list of parameters), with inline
// validation, reset to default and the node's problems. Several nodes: what is selected.
// Nothing: the project, i.e. the dataset binding and a summary of the graph. Every change goes
// through GraphDocument as one undo step; the panel follows the document's signals and keeps
// its editors (with focus and cursor) when only values change, e.g. on undo.
#include <QString>
#include <QStringList>
#include <QWidget>
#include <optional>

#include "graph/registry.h"

class QLabel;
class QLineEdit;
class QScrollArea;
class QToolButton;

namespace plexus::widgets {

class GraphDocument;

// ---- parameter text: one set of rules for what is typed and what a file holds --------------

// How a value reads in an editor: "128", "1e-05", "true", "same", "1, 28, 28".
QString paramText(const graph::ParamValue& value);
// "" when the value suits the spec; else why not, e.g. "must be between 1 and 65536".
QString paramProblem(const graph::ParamSpec& spec, const graph::ParamValue& value);

struct ParsedParam {
  QString error;                           // "" = the text is valid
  std::optional<graph::ParamValue> value;  // when valid; nullopt for empty text (the default)
};
// Reads an Int, Float or IntList parameter as typed ("1e-5", "1, 28, 28") and checks it.
ParsedParam parseParam(const graph::ParamSpec& spec, const QString& text);

// The label's tooltip: the doc, the kind of value and its range or choices, the default.
QString paramToolTip(const graph::ParamSpec& spec);

// The editor of one parameter, built from its ParamSpec alone: a spin box, a line edit, a check
// box or a combo box, a reset-to-default button and the validation message under them.
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
  void display();
  void finishEditing();
  void commit(const std::optional<graph::ParamValue>& value);
  void updateLook();
  QString currentProblem() const;

  graph::ParamSpec spec_;
  std::optional<graph::ParamValue> held_;  // what the node holds, as shown
  QWidget* editor_ = nullptr;
  QLineEdit* text_ = nullptr;  // the text of Int, Float and IntList editors (a spin box's own)
  // What was typed since the value was last shown or committed. A spin box reverts invalid text
  // when focus leaves, before it says editing finished, so the typing is remembered here.
  std::optional<QString> typed_;
  QToolButton* reset_;
  QLabel* error_;
};

class PropertyPanel : public QWidget {
  Q_OBJECT

 public:
  explicit PropertyPanel(GraphDocument* document, QWidget* parent = nullptr);

  // The canvas selection; ids of nodes that do not exist are ignored.
  void showNodes(const QStringList& ids);
  QStringList shownNodes() const { return ids_; }

 private:
  class NodePage;
  class ProjectPage;

  void showSelection(const QStringList& ids);  // showNodes without committing pending typing
  bool showsSameNode(const QStringList& ids) const;
  void refresh();  // re-reads the document into what is shown
  void setPage(QWidget* page);
  void commitPendingEdit();

  GraphDocument* document_;
  QStringList ids_;
  QScrollArea* scroll_;
  ProjectPage* project_;
  NodePage* node_ = nullptr;
  QLabel* selection_;  // several nodes
};

}  // namespace plexus::widgets
