#pragma once
// PropertyPanel: edits what the canvas selects. One node: its name and one typed editor per
// parameter of its registry type (ParamEditor, param_editor.h; the registry is the only list of
// parameters, labelled as it labels them), with inline validation, reset to default, the node's
// problems and a button showing the type's help (LayerHelp). Several nodes:
// what is selected. One block: its name and members (BlockPage). Nothing: the project, i.e. the dataset binding (its kind, path, a CSV file's
// target and feature columns from its header, an image folder's settings and the augmentation,
// the last two a SettingsForm of graph::dataset_settings()) and a summary of the graph.
// Every change goes through GraphDocument as one undo step; the panel follows the document's
// signals and keeps its editors (with focus and cursor) when only values change, e.g. on undo.
#include <QString>
#include <QStringList>
#include <QWidget>

class QLabel;
class QScrollArea;

namespace plexus::widgets {

class GraphDocument;

class PropertyPanel : public QWidget {
  Q_OBJECT

 public:
  explicit PropertyPanel(GraphDocument* document, QWidget* parent = nullptr);

  // The canvas selection (node and block ids); ids of nodes that do not exist are ignored.
  void showNodes(const QStringList& ids);
  QStringList shownNodes() const { return ids_; }
  // A view of the bound dataset from another feature folder (the app places dataset/'s class
  // balance here), shown on the project page under the dataset's form.
  void addDatasetView(QWidget* view);

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
  class BlockPage* block_ = nullptr;
  QLabel* selection_;  // several nodes
};

}  // namespace plexus::widgets
