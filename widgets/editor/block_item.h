#pragma once
// A block on the canvas (graph/blocks.h). Collapsed, it is one card like a node's: the block's
// name, how many layers it holds and what they learn, and a proxy port for each open port of
// its members, labelled with the member (and the port, where the member has several); wires to
// the hidden members end there, and wiring to a proxy wires the member's own port. Open, it is
// a tinted frame around its members, titled with its name. A double click on the card or the
// frame's title bar opens or closes it (NodeScene does that). Only a collapsed card moves: its
// members move with it. Items only show the document; NodeScene turns gestures into edits.
#include <QGraphicsItem>
#include <QString>

#include <optional>
#include <vector>

#include "graph/graph.h"
#include "graph/problem.h"
#include "graph/registry.h"

namespace plexus::widgets {

class EdgeItem;
class PortItem;

class BlockItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 4 };

  // One open port of the members, shown on the collapsed card.
  struct Proxy {
    graph::PortRef ref;     // the member's port
    graph::PortSpec spec;   // its type's description (a bare one for an unknown type)
    QString label;          // "fc1", or "attn · key" for a member with several ports on that side
    bool connected = false; // wired from or to outside the block
  };
  struct Card {
    QString name, summary;  // "encoder"; "3 layers · 101,770 parameters"
    std::vector<Proxy> inputs, outputs;
  };

  // A collapsed block: its card with the top-left at `pos`.
  BlockItem(const QString& id, const Card& card, QPointF pos);
  // An open block: a frame around `members` (a scene rectangle), `depth` blocks deep (0 at the
  // top level; deeper frames are drawn above the ones around them).
  BlockItem(const QString& id, const QString& name, const QString& summary, const QRectF& members, int depth);

  // The card's size for these many proxy rows (inputs and outputs side by side).
  static QSizeF cardSize(size_t rows);
  // The frame's padding around its members, and its title bar above them.
  static constexpr qreal kFramePadding = 16, kFrameTitle = 26;

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  QPainterPath shape() const override;  // the card, or the frame's title bar
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  QString id() const { return id_; }
  bool isCollapsed() const { return collapsed_; }
  QRectF sceneCardRect() const { return QRectF(pos(), size_); }  // the card, or the whole frame
  QRectF sceneTitleRect() const;                                   // the frame's title bar

  const std::vector<PortItem*>& ports() const { return ports_; }
  PortItem* port(const graph::PortRef& ref, bool input) const;
  // The proxy port's centre, or the middle of the card's side for a port it has none for.
  QPointF portScenePos(const graph::PortRef& ref, bool input) const;

  // The problems of the members a collapsed card hides: outline colour and tooltip.
  void setProblems(const std::vector<graph::Problem>& problems);
  std::optional<graph::Severity> problemSeverity() const { return severity_; }
  // The wires drawn to its proxy ports, kept by the scene; moving the card re-routes them.
  void setRoutedEdges(std::vector<EdgeItem*> edges) { edges_ = std::move(edges); }
  void detach(EdgeItem* edge) { std::erase(edges_, edge); }

 protected:
  QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;

 private:
  void paintCard(QPainter* painter, bool detailed) const;
  void paintFrame(QPainter* painter, bool detailed) const;
  void refreshToolTip();

  QString id_, name_, summary_;
  bool collapsed_;
  QSizeF size_;
  std::vector<PortItem*> ports_;
  std::vector<EdgeItem*> edges_;
  std::vector<graph::Problem> problems_;
  std::optional<graph::Severity> severity_;
};

}  // namespace plexus::widgets
