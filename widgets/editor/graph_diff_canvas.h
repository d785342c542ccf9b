#pragma once
// The structural difference of two graphs (of two runs, A and B, in the run comparison) on a
// read-only node canvas: B's graph where B had it, the nodes and wires removed since A where A
// had them (graph::union_graph), drawn by the editor's own NodeScene and NodeView, with the
// diff marks (diff_marks.h) over them and a legend. Panning and zooming work as in the editor;
// nothing can be edited. The view fits the whole drawing whenever it is shown anew or resized.
#include <QHash>
#include <QWidget>

#include <memory>
#include <vector>

#include "graph/diff.h"
#include "graph/graph.h"

namespace plexus::widgets {

class GraphDocument;
class NodeDiffMark;
class NodeScene;
class NodeView;
class WireDiffMark;

class GraphDiffCanvas : public QWidget {
  Q_OBJECT

 public:
  explicit GraphDiffCanvas(QWidget* parent = nullptr);
  ~GraphDiffCanvas() override;

  // Draws `after` against `before`; `diff` is graph::diff(before, after).
  void showDiff(const graph::Graph& before, const graph::Graph& after, const graph::GraphDiff& diff);

  NodeScene* scene() const { return scene_; }
  NodeView* view() const { return view_; }
  NodeDiffMark* nodeMark(const QString& id) const;     // null for a node that did not change
  WireDiffMark* wireMark(const graph::Edge& edge) const;  // null for a wire in both graphs
  void fit();  // the whole drawing, marks and notes included, in view

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void clearMarks();
  void refreshTheme();

  std::unique_ptr<GraphDocument> document_;  // the union graph; never edited
  NodeScene* scene_;
  NodeView* view_;
  QHash<QString, NodeDiffMark*> node_marks_;
  std::vector<WireDiffMark*> wire_marks_;
};

}  // namespace plexus::widgets
