#pragma once
// A node on the canvas: a rounded card with a header in its category's colour (layer display
// name and the user's name, and how it trains when not as the project says: "frozen",
// "lr ×0.1"), up to three key parameters, and its ports on the edges — inputs
// on the left, outputs on the right. The geometry follows from the node's type and its output
// ports (which a Split's parameters decide) alone, never from fonts, so ports sit at fixed
// offsets that layout, hit tests and tests can rely on.
// Items only show the document; NodeScene turns gestures into document edits.
#include <QGraphicsItem>
#include <QString>

#include <optional>
#include <vector>

#include "graph/graph.h"
#include "graph/problem.h"
#include "graph/registry.h"

class QColor;

namespace plexus::widgets {

class EdgeItem;
class NodeItem;

// A font for text on cards, sized in scene units (pixels) so that it fits the fixed geometry.
QFont cardFont(int pixels, bool bold = false);

// The card's size: fixed width, height from the number of port rows and parameter lines.
QSizeF nodeCardSize(const graph::Node& node);

// A port: a circle on the card's edge and its name inside the card. It starts wires (the
// scene handles the gesture) and shows how it relates to a wire being dragged.
class PortItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 1 };
  // While a wire is dragged every port says whether it could take it.
  enum class WireState { Idle, Accepts, Refuses, Target };

  PortItem(NodeItem* node, const graph::PortSpec& spec, bool input, QPointF centre);
  // A port drawn on another item (a collapsed block's card) for `ref`, a port of a node it
  // hides: wires drawn from or to it connect `ref`. `label` is shown in `label_width` units.
  PortItem(QGraphicsItem* owner, const graph::PortSpec& spec, bool input, QPointF centre, graph::PortRef ref,
           const QString& label, qreal label_width);

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  QPainterPath shape() const override;  // the circle, a little larger: easy to hit
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  const graph::PortRef& ref() const { return ref_; }
  bool isInput() const { return input_; }
  bool takesManyWires() const { return variadic_; }
  void setConnected(bool connected);
  void setWireState(WireState state);
  WireState wireState() const { return state_; }

 protected:
  void hoverEnterEvent(QGraphicsSceneHoverEvent* event) override;
  void hoverLeaveEvent(QGraphicsSceneHoverEvent* event) override;

 private:
  QRectF labelRect() const;

  graph::PortRef ref_;
  QString label_;
  qreal label_width_;
  bool input_, required_, variadic_;
  bool connected_ = false, hovered_ = false;
  WireState state_ = WireState::Idle;
};

class NodeItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 2 };

  explicit NodeItem(const graph::Node& node);

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  QPainterPath shape() const override;  // the card
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  QString id() const { return id_; }
  const graph::LayerType* layerType() const { return type_; }  // null for an unknown type
  QSizeF size() const { return size_; }
  QRectF sceneCardRect() const { return QRectF(pos(), size_); }
  // Name or parameters changed (the type never does): refresh the texts, and the output ports
  // and the card's height where the parameters decide the ports.
  void setNode(const graph::Node& node);
  // The document's problems for this node: outline colour and tooltip.
  void setProblems(const std::vector<graph::Problem>& problems);
  std::optional<graph::Severity> problemSeverity() const { return severity_; }
  // Frozen for fine-tuning (graph::Node::frozen): a lock on the header.
  bool showsLock() const { return frozen_; }
  // More tooltip lines from outside the document (a run's health issues); "" for none.
  void setToolTipNote(const QString& note);

  const std::vector<PortItem*>& ports() const { return ports_; }
  PortItem* port(const std::string& name, bool input) const;
  // Where a wire meets the card: the port's centre, or the middle of the card's side for a
  // port the type does not have (an unknown type, a damaged file).
  QPointF portScenePos(const std::string& name, bool input) const;

  // The wires touching this node, kept by the scene; moving the node re-routes them.
  void attach(EdgeItem* edge);
  void detach(EdgeItem* edge);
  const std::vector<EdgeItem*>& edges() const { return edges_; }

 protected:
  QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;

 private:
  struct ParamLine {
    QString name, value;
    bool changed;  // differs from the type's default: emphasised
  };
  void setOutputPorts(std::vector<graph::PortSpec> outputs);
  void refreshConnections();
  void refreshToolTip();
  void paintHeader(QPainter* painter, const QRectF& card, bool detailed) const;
  void paintParams(QPainter* painter) const;
  void paintLock(QPainter* painter, const QRectF& where, const QColor& keyhole) const;

  QString id_;
  const graph::LayerType* type_;
  QSizeF size_;
  QString title_, subtitle_, description_;
  QString badge_;  // how it trains, when not as the project says: "frozen", "lr ×0.1"
  bool frozen_ = false;
  std::vector<ParamLine> params_;
  std::vector<PortItem*> ports_;
  std::vector<graph::PortSpec> outputs_;  // the node's output ports, as ports_ show them
  std::vector<EdgeItem*> edges_;
  std::vector<graph::Problem> problems_;
  std::optional<graph::Severity> severity_;
  QString note_;
};

}  // namespace plexus::widgets
