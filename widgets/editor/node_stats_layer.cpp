#include "editor/node_stats_layer.h"

#include "common/qt_text.h"
#include "editor/node_item.h"
#include "editor/node_scene.h"
#include "editor/node_stats_model.h"
#include "editor/node_stats_overlay.h"

namespace plexus::widgets {

NodeStatsLayer::NodeStatsLayer(NodeStatsModel* model, NodeScene* scene, QObject* parent)
    : QObject(parent), model_(model), scene_(scene) {
  connect(model_, &NodeStatsModel::updated, this, &NodeStatsLayer::refresh);
  connect(model_, &NodeStatsModel::cleared, this, &NodeStatsLayer::refresh);
  GraphDocument* doc = scene_->document();
  connect(doc, &GraphDocument::graphReset, this, &NodeStatsLayer::refresh);
  connect(doc, &GraphDocument::nodeAdded, this, &NodeStatsLayer::refresh);
  refresh();
}

// The items belong to the scene, which deletes them with their nodes: looked up, never kept.
NodeStatsOverlay* NodeStatsLayer::overlay(const QString& node) const {
  if (const NodeItem* item = scene_->nodeItem(node))
    for (QGraphicsItem* child : item->childItems())
      if (auto* overlay = qgraphicsitem_cast<NodeStatsOverlay*>(child)) return overlay;
  return nullptr;
}

void NodeStatsLayer::setShown(bool shown) {
  if (shown == shown_) return;
  shown_ = shown;
  refresh();
}

void NodeStatsLayer::refresh() {
  for (const graph::Node& n : scene_->document()->graph().nodes) {
    const QString id = qstr(n.id);
    NodeItem* item = scene_->nodeItem(id);
    if (!item) continue;
    const std::vector<NodeSample>& samples = model_->samples(id);
    NodeStatsOverlay* shown = overlay(id);
    if (samples.empty()) {
      if (shown) {
        item->setToolTipNote({});
        delete shown->badge();
        delete shown;
      }
      continue;
    }
    if (!shown) shown = new NodeStatsOverlay(item);
    shown->setVisible(shown_);
    shown->setStatistics(samples, model_->issues(id));
  }
}

}  // namespace plexus::widgets
