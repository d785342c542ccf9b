#pragma once
// The editor's fine-tuning commands (graph::Node::frozen), as actions for the Edit menu and the
// canvas's context menu: Freeze and Unfreeze act on the selected nodes that learn values;
// Freeze Up to Here on the one selected node and every node it depends on (graph::Graph::upstream).
// Each is one undo step.
#include <QObject>

class QAction;

namespace plexus::widgets {

class NodeView;

class FreezeActions : public QObject {
  Q_OBJECT

 public:
  explicit FreezeActions(NodeView* view, QObject* parent = nullptr);

  QAction* freezeAction() const { return freeze_; }
  QAction* unfreezeAction() const { return unfreeze_; }
  QAction* freezeUpToHereAction() const { return up_to_here_; }

 signals:
  void message(const QString& text);  // for the status bar: what changed

 private:
  void updateEnabled();
  void apply(const QStringList& nodes, bool frozen);

  NodeView* view_;
  QAction* freeze_;
  QAction* unfreeze_;
  QAction* up_to_here_;
};

}  // namespace plexus::widgets
