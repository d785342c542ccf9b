#pragma once
// A node's live statistics on the canvas, two child items of its NodeItem:
//   NodeStatsOverlay  a strip that hangs below the card like a drawer (stacked behind it): a
//                     sparkline of the output mean with a ±std band over the recent samples, the
//                     latest sample's histogram beside it, and the latest figures ("μ 0.12  σ 0.80  zeros 45%", and for nodes with
//                     parameters "|g| 3.1e-3  Δ/w 1.2e-3"); with health issues, a tinted rim
//                     around card and strip.
//   NodeHealthBadge   a red (NaN/Inf, exploding gradients) or amber "!" on the card's top-right
//                     corner, its tooltip the issues' one-line reasons. It keeps its size on
//                     screen at every zoom, so a problem shows in the overview too.
// Painting is cheap: texts and paths are made when first painted after a sample arrived (most
// nodes of a big graph may be off screen), only at zooms where they can be read, and both
// items draw into device caches.
// Hiding the overlay hides the badge and the tooltip note too.
#include <QGraphicsItem>
#include <QPainterPath>
#include <QString>

#include <array>
#include <vector>

#include "editor/node_stats_model.h"

namespace plexus::widgets {

class NodeItem;

class NodeHealthBadge : public QGraphicsItem {
 public:
  enum { Type = UserType + 21 };
  static constexpr qreal kRadius = 8;  // screen pixels

  explicit NodeHealthBadge(NodeItem* node);

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  void setSevere(bool severe);
  bool isSevere() const { return severe_; }

 private:
  bool severe_ = false;
};

class NodeStatsOverlay : public QGraphicsItem {
 public:
  enum { Type = UserType + 20 };
  static constexpr size_t kRecent = 60;  // samples in the sparkline

  explicit NodeStatsOverlay(NodeItem* node);  // a child of `node`, with its badge beside it

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  // The node's samples (oldest first, not empty) and its standing issues.
  void setStatistics(const std::vector<NodeSample>& samples, const std::vector<train::HealthIssue>& issues);

  NodeItem* node() const;
  NodeHealthBadge* badge() const { return badge_; }
  // The part that shows below the card, in the node's coordinates.
  QRectF stripRect() const;
  // What the strip says: "μ 0.12  σ 0.8  zeros 45%", "|g| 3.1e-3  Δ/w 1.2e-3" or "".
  QString figures() const;
  QString paramFigures() const;
  QString reasons() const { return reasons_; }  // the issues' reasons, one a line; "" for none
  bool hasIssues() const { return !reasons_.isEmpty(); }

 protected:
  QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;

 private:
  QRectF drawerRect() const;  // the whole strip, its top tucked under the card
  void prepare();  // the texts and paths to draw
  void buildSparkline(const QRectF& area);
  void buildHistogram(const QRectF& area);
  void showIssues();

  NodeHealthBadge* badge_;  // a sibling: children of an item stacked behind the card are too
  NodeSample last_;
  std::vector<QPointF> recent_;  // the last kRecent samples' (mean, std); NaN mean: not finite
  bool severe_ = false;
  QString reasons_;
  bool prepared_ = false;
  std::array<QString, 2> lines_;  // the figures, elided to the strip
  QPainterPath band_, line_, histogram_;  // in the node's coordinates
  qreal painted_lod_ = 1;  // the level of detail it was last painted at
  // What the strip shows now: an update that brings nothing new repaints nothing.
  int64_t shown_step_ = -1;
  size_t shown_count_ = 0;
};

}  // namespace plexus::widgets
