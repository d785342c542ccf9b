#include "editor/block_actions.h"

#include <algorithm>

#include <QAction>
#include <QDir>
#include <QInputDialog>
#include <QMimeData>
#include <QTimer>

#include "common/qt_text.h"
#include "editor/model/graph_document.h"
#include "editor/node_scene.h"
#include "editor/node_view.h"
#include "graph/blocks.h"
#include "editor/palette.h"
#include "graph/fragment.h"

namespace plexus::widgets {

BlockActions::BlockActions(NodeView* view, LayerPalette* palette, const QString& library_folder, QObject* parent)
    : QObject(parent),
      view_(view),
      palette_(palette),
      library_(library_folder),
      group_(new QAction(tr("&Group into Block"), this)),
      ungroup_(new QAction(tr("&Ungroup"), this)),
      rename_(new QAction(tr("&Rename Block…"), this)),
      save_(new QAction(tr("Save to &My Blocks"), this)) {
  NodeScene* scene = view_->nodeScene();
  GraphDocument* doc = scene->document();
  group_->setObjectName(QStringLiteral("groupAction"));
  ungroup_->setObjectName(QStringLiteral("ungroupAction"));
  rename_->setObjectName(QStringLiteral("renameBlockAction"));
  save_->setObjectName(QStringLiteral("saveBlockAction"));
  group_->setShortcut(QKeySequence(tr("Ctrl+G")));
  ungroup_->setShortcut(QKeySequence(tr("Ctrl+Shift+G")));
  for (QAction* a : {group_, ungroup_, rename_, save_}) a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  view_->addActions({group_, ungroup_, rename_, save_});

  askName = [this](const QString& current) {
    return QInputDialog::getText(view_, tr("Rename Block"), tr("Name:"), QLineEdit::Normal, current);
  };
  connect(group_, &QAction::triggered, scene, [scene] { scene->groupSelection(); });
  connect(ungroup_, &QAction::triggered, scene, &NodeScene::ungroupSelection);
  connect(rename_, &QAction::triggered, this, &BlockActions::renameSelected);
  connect(save_, &QAction::triggered, this, &BlockActions::saveSelected);
  connect(scene, &QGraphicsScene::selectionChanged, this, &BlockActions::updateEnabled);
  connect(doc, &GraphDocument::blocksChanged, this, &BlockActions::updateEnabled);
  connect(palette_, &LayerPalette::fragmentRequested, this, &BlockActions::insert);

  // The project's blocks change with nearly any edit: the palette follows once per burst.
  const auto later = [this] {
    if (refresh_pending_) return;
    refresh_pending_ = true;
    QTimer::singleShot(0, this, &BlockActions::refreshPalette);
  };
  connect(doc, &GraphDocument::blocksChanged, this, later);
  connect(doc, &GraphDocument::validated, this, later);
  connect(doc, &GraphDocument::graphReset, this, later);
  updateEnabled();
  refreshPalette();
}

void BlockActions::updateEnabled() {
  NodeScene* scene = view_->nodeScene();
  const int blocks = int(scene->selectedBlockIds().size());
  group_->setEnabled(!scene->selectedItemIds().isEmpty());
  ungroup_->setEnabled(blocks > 0);
  rename_->setEnabled(blocks == 1);
  save_->setEnabled(blocks == 1);
}

void BlockActions::refreshPalette() {
  refresh_pending_ = false;
  std::vector<PaletteBlock> shown;
  const graph::Graph& g = view_->nodeScene()->document()->graph();
  for (const graph::Block& b : g.blocks) {
    // A nested block by its path ("layer1 ▸ 0"): an imported model has many blocks named "0".
    QString name = qstr(b.name);
    for (const graph::Block* p = graph::parent_block(g, b.id); p; p = graph::parent_block(g, p->id))
      name = qstr(p->name) + QString::fromUtf8(" \u25B8 ") + name;
    shown.push_back({name, tr("this project"), tr("Block '%1' of this project: inserts a copy").arg(name),
                     QByteArray::fromStdString(graph::fragment_to_text(graph::extract_block(g, b.id)))});
  }
  std::sort(shown.begin(), shown.end(), [](const PaletteBlock& a, const PaletteBlock& b) { return a.name < b.name; });
  for (const BlockLibrary::Entry& e : library_.entries())
    shown.push_back({e.name, tr("saved"), tr("Saved block: %1").arg(QDir::toNativeSeparators(e.path)),
                     QByteArray::fromStdString(graph::fragment_to_text(e.fragment))});
  palette_->setMyBlocks(shown);
}

void BlockActions::insert(const QByteArray& fragment) {
  QMimeData data;
  data.setData(QString::fromLatin1(kGraphMimeType), fragment);
  NodeScene* scene = view_->nodeScene();
  const QPointF centre = view_->mapToScene(view_->viewport()->rect().center());
  const QStringList ids = scene->paste(&data, centre);
  if (!ids.isEmpty()) emit message(tr("Inserted a copy of the block"));
}

void BlockActions::renameSelected() {
  const QStringList blocks = view_->nodeScene()->selectedBlockIds();
  if (blocks.size() != 1) return;
  GraphDocument* doc = view_->nodeScene()->document();
  const QString name = askName(qstr(doc->block(blocks[0])->name)).trimmed();
  if (!name.isEmpty()) doc->renameBlock(blocks[0], name);
}

void BlockActions::saveSelected() {
  const QStringList blocks = view_->nodeScene()->selectedBlockIds();
  if (blocks.size() != 1) return;
  try {
    const QString path = library_.save(view_->nodeScene()->document()->graph(), blocks[0].toStdString());
    refreshPalette();
    emit message(tr("Saved the block to My blocks (%1)").arg(QDir::toNativeSeparators(path)));
  } catch (const std::exception& e) {
    emit failed(tr("Cannot save the block"), qstr(e.what()));
  }
}

}  // namespace plexus::widgets
