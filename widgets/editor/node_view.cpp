#include "editor/node_view.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QContextMenuEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QMimeData>
#include <QScrollBar>
#include <QVarLengthArray>

#include <algorithm>
#include <cmath>

#include "editor/block_item.h"
#include "editor/edge_item.h"
#include "editor/layer_help.h"
#include "editor/node_item.h"
#include "editor/model/graph_document.h"
#include "editor/node_scene.h"
#include "editor/palette.h"
#include "graph/blocks.h"
#include "common/theme.h"

namespace plexus::widgets {
namespace {

constexpr qreal kExtent = 100000;      // the canvas is this far in every direction: endless in practice
constexpr double kZoomStep = 1.25;     // zoomIn / zoomOut
constexpr double kWheelStep = 1.2;     // per wheel notch (120 units)
constexpr qreal kMajorEvery = 5;       // a major grid line every 5 minor ones
constexpr qreal kMinGridSpacing = 7;   // device pixels; denser lines are left out
constexpr qreal kFitMargin = 40;

std::optional<QString> plexusFile(const QMimeData* data) {
  for (const QUrl& url : data->urls())
    if (url.isLocalFile() && url.toLocalFile().endsWith(QStringLiteral(".plexus"), Qt::CaseInsensitive))
      return url.toLocalFile();
  return std::nullopt;
}

}  // namespace

NodeView::NodeView(NodeScene* scene, QWidget* parent) : QGraphicsView(scene, parent), scene_(scene) {
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing | QPainter::SmoothPixmapTransform);
  setDragMode(RubberBandDrag);
  setRubberBandSelectionMode(Qt::ContainsItemShape);  // what lies inside the band, not what it grazes
  setTransformationAnchor(NoAnchor);                  // zoomAbout() anchors itself
  setResizeAnchor(AnchorViewCenter);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setFrameShape(QFrame::NoFrame);
  setSceneRect(-kExtent, -kExtent, 2 * kExtent, 2 * kExtent);
  setFocusPolicy(Qt::StrongFocus);
  setAcceptDrops(true);
  connect(&ThemeManager::instance(), &ThemeManager::changed, viewport(), qOverload<>(&QWidget::update));
  // The empty-canvas hint comes and goes with the first node: repaint all of it then.
  const auto hint_may_change = [this] {
    if (scene_->document()->graph().nodes.size() <= 1) viewport()->update();
  };
  connect(scene_->document(), &GraphDocument::nodeAdded, this, hint_may_change);
  connect(scene_->document(), &GraphDocument::nodeRemoved, this, hint_may_change);
  connect(scene_->document(), &GraphDocument::graphReset, this, hint_may_change);
  centerOn(0, 0);
}

// ---- zoom ----------------------------------------------------------------------------------

double NodeView::zoom() const { return transform().m11(); }

void NodeView::zoomAbout(double zoom, QPoint anchor) {
  zoom = std::clamp(zoom, kMinZoom, kMaxZoom);
  if (zoom == this->zoom()) return;
  const QPointF scene_anchor = mapToScene(anchor);
  setTransform(QTransform::fromScale(zoom, zoom));
  const QPoint drift = mapFromScene(scene_anchor) - anchor;
  horizontalScrollBar()->setValue(horizontalScrollBar()->value() + drift.x());
  verticalScrollBar()->setValue(verticalScrollBar()->value() + drift.y());
  emit zoomChanged(zoom);
}

void NodeView::setZoom(double zoom) { zoomAbout(zoom, viewport()->rect().center()); }
void NodeView::zoomIn() { setZoom(zoom() * kZoomStep); }
void NodeView::zoomOut() { setZoom(zoom() / kZoomStep); }
void NodeView::resetZoom() { setZoom(1); }

void NodeView::fitAll() {
  const QRectF bounds = graphBounds();
  if (bounds.isEmpty()) {
    resetZoom();
    centerOn(0, 0);
    return;
  }
  setZoom(std::min(viewport()->width() / bounds.width(), viewport()->height() / bounds.height()));
  centerOn(bounds.center());
}

void NodeView::showGraph() {
  const QRectF bounds = graphBounds();
  if (bounds.isEmpty() ||
      std::min(viewport()->width() / bounds.width(), viewport()->height() / bounds.height()) >= kReadableZoom)
    return fitAll();
  setZoom(kReadableZoom);
  const double visible_width = viewport()->width() / kReadableZoom;
  centerOn(bounds.left() + visible_width / 2, bounds.center().y());
}

QRectF NodeView::graphBounds() const {
  QRectF bounds;
  for (QGraphicsItem* item : scene_->items())
    if (!item->isVisible())
      continue;  // inside a collapsed block
    else if (qgraphicsitem_cast<NodeItem*>(item) || qgraphicsitem_cast<BlockItem*>(item))
      bounds |= item->sceneBoundingRect();
    else if (auto* edge = qgraphicsitem_cast<EdgeItem*>(item))
      bounds |= edge->path().boundingRect();  // the curve itself, not the room kept for its label
  return bounds.isEmpty() ? bounds : bounds.adjusted(-kFitMargin, -kFitMargin, kFitMargin, kFitMargin);
}

void NodeView::centerOnNode(const QString& id) {
  NodeItem* item = scene_->nodeItem(id);
  if (!item) return;
  if (!item->isVisible()) {  // inside a collapsed block: the block's card
    const graph::Block* hiding = graph::hiding_block(scene_->document()->graph(), id.toStdString());
    if (BlockItem* card = hiding ? scene_->blockItem(QString::fromStdString(hiding->id)) : nullptr) {
      scene_->selectNodes({card->id()});
      centerOn(card);
    }
    return;
  }
  scene_->selectNodes({id});
  centerOn(item);
}

QString NodeView::viewState() const {
  // The exact middle (QRect::center() is half a pixel short), as centerOn() takes it.
  const QPointF centre = viewportTransform().inverted().map(QRectF(viewport()->rect()).center());
  const QJsonObject state{{"zoom", zoom()}, {"center", QJsonArray{centre.x(), centre.y()}}};
  return QString::fromUtf8(QJsonDocument(state).toJson(QJsonDocument::Compact));
}

void NodeView::restoreViewState(const QString& json) {
  const QJsonObject state = QJsonDocument::fromJson(json.toUtf8()).object();
  const double zoom = state.value(QStringLiteral("zoom")).toDouble();
  const QJsonArray centre = state.value(QStringLiteral("center")).toArray();
  if (!(zoom > 0) || !std::isfinite(zoom) || centre.size() != 2 || !centre[0].isDouble() || !centre[1].isDouble())
    return;
  setZoom(zoom);
  centerOn(centre[0].toDouble(), centre[1].toDouble());
}

// ---- painting ------------------------------------------------------------------------------

void NodeView::drawBackground(QPainter* painter, const QRectF& rect) {
  const Theme& theme = ThemeManager::instance().theme();
  painter->fillRect(rect, theme.canvas);
  painter->save();
  painter->setRenderHint(QPainter::Antialiasing, false);  // crisp one-pixel lines
  drawGrid(painter, rect, NodeScene::kGrid, theme.gridMinor);
  drawGrid(painter, rect, NodeScene::kGrid * kMajorEvery, theme.gridMajor);
  painter->restore();
}

// An empty canvas says how to start, so a first-time user is not left with a blank grid.
void NodeView::drawForeground(QPainter* painter, const QRectF&) {
  if (!scene_->document()->graph().nodes.empty()) return;
  painter->save();
  painter->resetTransform();  // viewport pixels: the hint does not zoom
  painter->setPen(ThemeManager::instance().theme().mutedText);
  painter->drawText(viewport()->rect().adjusted(40, 40, -40, -40), Qt::AlignCenter | Qt::TextWordWrap,
                    tr("Drag layers here from the Layers panel, or double-click one.\n"
                       "Wire an output port to an input port; shapes appear on the wires.\n"
                       "Or open a ready-made model: File ▸ Examples."));
  painter->restore();
}

void NodeView::drawGrid(QPainter* painter, const QRectF& rect, qreal step, const QColor& colour) const {
  if (step * zoom() < kMinGridSpacing) return;
  QVarLengthArray<QLineF, 256> lines;
  for (qreal x = std::floor(rect.left() / step) * step; x <= rect.right(); x += step)
    lines.append(QLineF(x, rect.top(), x, rect.bottom()));
  for (qreal y = std::floor(rect.top() / step) * step; y <= rect.bottom(); y += step)
    lines.append(QLineF(rect.left(), y, rect.right(), y));
  painter->setPen(QPen(colour, 0));  // cosmetic: one device pixel at any zoom
  painter->drawLines(lines.constData(), int(lines.size()));
}

// ---- mouse ---------------------------------------------------------------------------------

void NodeView::wheelEvent(QWheelEvent* event) {
  zoomAbout(zoom() * std::pow(kWheelStep, event->angleDelta().y() / 120.0), event->position().toPoint());
  event->accept();
}

void NodeView::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::MiddleButton || (event->button() == Qt::LeftButton && space_held_)) {
    pan_from_ = event->position().toPoint();
    viewport()->setCursor(Qt::ClosedHandCursor);
    event->accept();
    return;
  }
  QGraphicsView::mousePressEvent(event);
}

void NodeView::mouseMoveEvent(QMouseEvent* event) {
  if (pan_from_) {
    const QPoint pos = event->position().toPoint();
    const QPoint delta = pos - *pan_from_;
    pan_from_ = pos;
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() - delta.x());
    verticalScrollBar()->setValue(verticalScrollBar()->value() - delta.y());
    event->accept();
    return;
  }
  QGraphicsView::mouseMoveEvent(event);
}

void NodeView::mouseReleaseEvent(QMouseEvent* event) {
  if (pan_from_ && (event->button() == Qt::MiddleButton || event->button() == Qt::LeftButton)) {
    pan_from_.reset();
    setSpaceHeld(space_held_);  // back to the open hand or the normal cursor
    event->accept();
    return;
  }
  QGraphicsView::mouseReleaseEvent(event);
}

// ---- keyboard ------------------------------------------------------------------------------

void NodeView::keyPressEvent(QKeyEvent* event) {
  if (handleShortcut(event)) {
    event->accept();
    return;
  }
  QGraphicsView::keyPressEvent(event);
}

bool NodeView::handleShortcut(QKeyEvent* event) {
  if (event->key() == Qt::Key_Space) {
    if (!event->isAutoRepeat()) setSpaceHeld(true);
  } else if (event->key() == Qt::Key_Delete || event->key() == Qt::Key_Backspace) {
    scene_->deleteSelection();
  } else if (event->key() == Qt::Key_Escape && scene_->isDrawingWire()) {
    scene_->cancelWire();
  } else if (event->key() == Qt::Key_F1 && selectedLayerType()) {
    LayerHelp::showFor(*selectedLayerType(), this);
  } else {
    return false;
  }
  return true;
}

const graph::LayerType* NodeView::selectedLayerType() const {
  const QStringList ids = scene_->selectedItemIds();
  const NodeItem* item = ids.size() == 1 ? scene_->nodeItem(ids.front()) : nullptr;
  return item ? item->layerType() : nullptr;
}

void NodeView::keyReleaseEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Space && !event->isAutoRepeat()) {
    setSpaceHeld(false);
    event->accept();
    return;
  }
  QGraphicsView::keyReleaseEvent(event);
}

void NodeView::focusOutEvent(QFocusEvent* event) {
  setSpaceHeld(false);  // the release may go to another window
  QGraphicsView::focusOutEvent(event);
}

void NodeView::setSpaceHeld(bool held) {
  space_held_ = held;
  if (pan_from_) return;
  if (held)
    viewport()->setCursor(Qt::OpenHandCursor);
  else
    viewport()->unsetCursor();
}

// ---- drops ---------------------------------------------------------------------------------

bool NodeView::acceptsDrop(const QMimeData* data) const {
  return LayerPalette::typeFromMimeData(data).has_value() || plexusFile(data).has_value() ||
         data->hasFormat(QString::fromLatin1(kGraphMimeType));
}

// No item takes drops, so the scene is not asked: the view takes layers and project files only.
void NodeView::dragEnterEvent(QDragEnterEvent* event) {
  if (acceptsDrop(event->mimeData()))
    event->acceptProposedAction();
  else
    event->ignore();
}

void NodeView::dragMoveEvent(QDragMoveEvent* event) {
  if (acceptsDrop(event->mimeData()))
    event->acceptProposedAction();
  else
    event->ignore();
}

void NodeView::dropEvent(QDropEvent* event) {
  if (const auto type = LayerPalette::typeFromMimeData(event->mimeData())) {
    const QPointF at = scene_->snapped(mapToScene(event->position().toPoint()));
    const QString id = scene_->document()->addNode(*type, at);
    if (!id.isEmpty()) scene_->selectNodes({id});
    setFocus();
    event->acceptProposedAction();
  } else if (event->mimeData()->hasFormat(QString::fromLatin1(kGraphMimeType))) {  // a block from My blocks
    scene_->paste(event->mimeData(), mapToScene(event->position().toPoint()));
    setFocus();
    event->acceptProposedAction();
  } else if (const auto path = plexusFile(event->mimeData())) {
    emit fileDropped(*path);
    event->acceptProposedAction();
  } else {
    event->ignore();
  }
}

// The menu acts on what was clicked: an unselected item becomes the selection first.
void NodeView::contextMenuEvent(QContextMenuEvent* event) {
  QGraphicsItem* item = itemAt(event->pos());
  while (item && !(item->flags() & QGraphicsItem::ItemIsSelectable)) item = item->parentItem();
  if (item && !item->isSelected()) {
    scene_->clearSelection();
    item->setSelected(true);
  }
  if (!actions().isEmpty()) QMenu::exec(actions(), event->globalPos(), nullptr, this);
  event->accept();
}

}  // namespace plexus::widgets
