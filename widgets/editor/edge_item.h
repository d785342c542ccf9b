#pragma once
// A wire on the canvas: a cubic Bézier from an output port to an input port, labelled at its
// middle with the shape of one example flowing through it ("N×1×28×28"); of the wires leaving
// one output port, which all carry that shape, only the first shows it. Selectable by
// clicking near the curve. An end whose node a collapsed block hides is drawn at the block's
// proxy port for it.
#include <QGraphicsItem>
#include <QPainterPath>
#include <QStaticText>

#include <optional>

#include "graph/graph.h"
#include "tensor/shape.h"

namespace plexus::widgets {

class BlockItem;
class NodeItem;

// The curve every wire takes, also the one being dragged: it leaves the output to the right
// and enters the input from the left, an S-bend when the input lies behind the output.
QPainterPath wirePath(QPointF from, QPointF to);

// "N×128", "N×1×28×28", "N" for a single value per example, "?" when unknown.
QString shapeLabel(const std::optional<Shape>& shape);

class EdgeItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 3 };

  // Both nodes must outlive the item (the scene removes wires before their nodes).
  EdgeItem(const graph::Edge& edge, NodeItem* from, NodeItem* to);

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  QPainterPath shape() const override;  // a band about 10 units wide around the curve, and the label
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  const graph::Edge& edge() const { return edge_; }
  NodeItem* fromNode() const { return from_; }
  NodeItem* toNode() const { return to_; }
  const QPainterPath& path() const { return path_; }  // scene coordinates
  QString label() const { return label_.text(); }
  void setLabel(const QString& text);
  // Whether the label is drawn (the tooltip names the shape either way).
  bool labelShown() const { return label_shown_; }
  void setLabelShown(bool shown);
  // The collapsed blocks whose proxy ports the ends are drawn at (null: the node's own port).
  void setProxies(const BlockItem* from, const BlockItem* to);
  const BlockItem* fromProxy() const { return from_proxy_; }
  const BlockItem* toProxy() const { return to_proxy_; }
  // An end moved: recompute the curve.
  void updatePath();

 private:
  QRectF labelRect(qreal scale) const;
  qreal labelScale(qreal preferred) const;
  bool drawsLabel() const { return label_shown_ && !label_size_.isEmpty(); }

  graph::Edge edge_;
  NodeItem* from_;
  NodeItem* to_;
  const BlockItem* from_proxy_ = nullptr;
  const BlockItem* to_proxy_ = nullptr;
  QPainterPath path_;
  QPointF mid_;  // where the label goes
  mutable QPainterPath hit_;  // shape(), built when first asked for after a change
  QRectF bounds_;
  QStaticText label_;  // laid out once per text, drawn every frame
  QSizeF label_size_;
  bool label_shown_ = true;
};

}  // namespace plexus::widgets
