#include "editor/freeze_actions.h"

#include <QAction>

#include "common/qt_text.h"
#include "editor/model/graph_document.h"
#include "editor/node_scene.h"
#include "editor/node_view.h"
#include "graph/node_settings.h"

namespace plexus::widgets {

FreezeActions::FreezeActions(NodeView* view, QObject* parent)
    : QObject(parent),
      view_(view),
      freeze_(new QAction(tr("&Freeze"), this)),
      unfreeze_(new QAction(tr("Un&freeze"), this)),
      up_to_here_(new QAction(tr("Freeze &Up to Here"), this)) {
  freeze_->setObjectName(QStringLiteral("freezeAction"));
  unfreeze_->setObjectName(QStringLiteral("unfreezeAction"));
  up_to_here_->setObjectName(QStringLiteral("freezeUpToHereAction"));
  freeze_->setStatusTip(tr("Keep the selected nodes' weights as they are while training (fine-tuning)"));
  unfreeze_->setStatusTip(tr("Train the selected nodes' weights again"));
  up_to_here_->setStatusTip(tr("Freeze the selected node and every node before it"));
  view_->addActions({freeze_, unfreeze_, up_to_here_});

  NodeScene* scene = view_->nodeScene();
  connect(freeze_, &QAction::triggered, this, [this, scene] { apply(scene->selectedNodeIds(), true); });
  connect(unfreeze_, &QAction::triggered, this, [this, scene] { apply(scene->selectedNodeIds(), false); });
  connect(up_to_here_, &QAction::triggered, this, [this, scene] {
    const QStringList selected = scene->selectedNodeIds();
    if (selected.size() != 1) return;
    QStringList nodes;
    for (const std::string& id : scene->document()->graph().upstream(selected.front().toStdString())) nodes << qstr(id);
    apply(nodes, true);
  });
  connect(scene, &QGraphicsScene::selectionChanged, this, &FreezeActions::updateEnabled);
  connect(scene->document(), &GraphDocument::nodeChanged, this, &FreezeActions::updateEnabled);
  updateEnabled();
}

void FreezeActions::apply(const QStringList& nodes, bool frozen) {
  const int changed = view_->nodeScene()->document()->setFrozen(nodes, frozen);
  emit message(frozen ? tr("Froze %n node(s)", nullptr, changed) : tr("Unfroze %n node(s)", nullptr, changed));
}

// Each action only where it would change something: a learning node of the selection that is
// not frozen (Freeze), one that is (Unfreeze); one selected node (Freeze Up to Here).
void FreezeActions::updateEnabled() {
  const GraphDocument* doc = view_->nodeScene()->document();
  const QStringList selected = view_->nodeScene()->selectedNodeIds();
  bool can_freeze = false, can_unfreeze = false;
  for (const QString& id : selected)
    if (const graph::Node* n = doc->node(id); n && graph::node_settings_apply(*n))
      (n->frozen ? can_unfreeze : can_freeze) = true;
  freeze_->setEnabled(can_freeze);
  unfreeze_->setEnabled(can_unfreeze);
  up_to_here_->setEnabled(selected.size() == 1);
}

}  // namespace plexus::widgets
