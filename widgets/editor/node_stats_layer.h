#pragma once
// Puts a NodeStatsModel on a NodeScene: every node the model has samples for gets a
// NodeStatsOverlay (and its badge), kept up to date as samples arrive; nodes without any have
// none. It follows the scene as the document changes (a node deleted and brought back by undo,
// another graph) and can hide all overlays at once (View > Show Node Statistics).
#include <QObject>
#include <QString>

namespace plexus::widgets {

class NodeScene;
class NodeStatsModel;
class NodeStatsOverlay;

class NodeStatsLayer : public QObject {
  Q_OBJECT

 public:
  // Create it after the scene: the scene's items must follow a document change first.
  NodeStatsLayer(NodeStatsModel* model, NodeScene* scene, QObject* parent = nullptr);

  void setShown(bool shown);
  bool isShown() const { return shown_; }
  NodeStatsOverlay* overlay(const QString& node) const;  // null when the node has none

 private:
  void refresh();

  NodeStatsModel* model_;
  NodeScene* scene_;
  bool shown_ = true;
};

}  // namespace plexus::widgets
