#pragma once
// The editor's block commands, as actions for the Edit menu, the canvas's context menu and
// shortcuts: Group into Block (Ctrl+G), Ungroup (Ctrl+Shift+G), Rename Block, Save to My Blocks;
// and the "My blocks" section of the palette, kept to the open project's blocks and the saved
// ones (BlockLibrary), whose blocks it inserts as copies at the middle of the view.
#include <QObject>
#include <QString>

#include <functional>

#include "editor/block_library.h"

class QAction;

namespace plexus::widgets {

class LayerPalette;
class NodeView;

class BlockActions : public QObject {
  Q_OBJECT

 public:
  BlockActions(NodeView* view, LayerPalette* palette, const QString& library_folder, QObject* parent = nullptr);

  QAction* groupAction() const { return group_; }
  QAction* ungroupAction() const { return ungroup_; }
  QAction* renameAction() const { return rename_; }
  QAction* saveAction() const { return save_; }
  const BlockLibrary& library() const { return library_; }

  // Pastes a block's fragment (from My blocks) as a copy, grouped and collapsed, at the middle
  // of the view, as one undo step; selects it.
  void insert(const QByteArray& fragment);
  void refreshPalette();

  // Asks for a block's new name (a dialog; replaceable by tests): "" or the same = no change.
  std::function<QString(const QString& current)> askName;

 signals:
  void message(const QString& text);  // for the status bar
  void failed(const QString& title, const QString& text);

 private:
  void updateEnabled();
  void renameSelected();
  void saveSelected();

  NodeView* view_;
  LayerPalette* palette_;
  BlockLibrary library_;
  QAction* group_;
  QAction* ungroup_;
  QAction* rename_;
  QAction* save_;
  bool refresh_pending_ = false;
};

}  // namespace plexus::widgets
