#pragma once
// The node editor's viewport onto a NodeScene: an endless grid canvas with zoom (wheel, under
// the mouse), pan (middle drag, or space + left drag), rubber-band selection, Delete, Escape
// and F1 (the help of the selected node's layer type, LayerHelp), drops from the layer palette
// (layers, and blocks as fragments) and of project files, and a context menu of the actions
// added to it. Copy, paste and the other edits are the app's
// actions, calling NodeScene.
#include <QGraphicsView>
#include <QString>

#include <optional>

class QMimeData;

namespace plexus::graph {
struct LayerType;
}

namespace plexus::widgets {

class NodeScene;

class NodeView : public QGraphicsView {
  Q_OBJECT

 public:
  static constexpr double kMinZoom = 0.15, kMaxZoom = 4.0;

  explicit NodeView(NodeScene* scene, QWidget* parent = nullptr);

  NodeScene* nodeScene() const { return scene_; }
  double zoom() const;
  void setZoom(double zoom);  // about the view's centre, clamped to [kMinZoom, kMaxZoom]
  void zoomIn();
  void zoomOut();
  void resetZoom();
  void fitAll();  // every node and wire in view (clamped zoom)
  // How a graph opens: fitted when that keeps the cards readable (zoom >= kReadableZoom); a
  // bigger graph opens at that zoom instead, its inputs (left edge) in view, scrolled to the rest.
  static constexpr double kReadableZoom = 0.5;
  void showGraph();
  // Selects it and scrolls it to the middle; a node inside a collapsed block: the block.
  void centerOnNode(const QString& id);

  // {"zoom":z,"center":[x,y]}, kept in the project file; text that is not such an object is ignored.
  QString viewState() const;
  void restoreViewState(const QString& json);

 signals:
  void zoomChanged(double zoom);
  void fileDropped(const QString& path);  // a .plexus file was dropped; opening it is the app's call

 protected:
  void drawBackground(QPainter* painter, const QRectF& rect) override;
  void drawForeground(QPainter* painter, const QRectF& rect) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void keyReleaseEvent(QKeyEvent* event) override;
  void focusOutEvent(QFocusEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dragMoveEvent(QDragMoveEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  void zoomAbout(double zoom, QPoint anchor);  // keeps the scene point under `anchor` in place
  QRectF graphBounds() const;  // every card and wire with a margin; empty for an empty scene
  void drawGrid(QPainter* painter, const QRectF& rect, qreal step, const QColor& colour) const;
  bool handleShortcut(QKeyEvent* event);
  const graph::LayerType* selectedLayerType() const;  // of the one selected node; null otherwise
  void setSpaceHeld(bool held);
  bool acceptsDrop(const QMimeData* data) const;

  NodeScene* scene_;
  bool space_held_ = false;
  std::optional<QPoint> pan_from_;  // panning, with the last mouse position
};

}  // namespace plexus::widgets
