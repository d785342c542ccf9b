#pragma once
// The marks a graph comparison lays over the node canvas (GraphDiffCanvas): each node that was
// added, removed or changed between two graphs gets an outline and a badge in the colour of
// its kind, a changed node a note under its card ("out_features 128 → 64"), and each wire added
// or removed is traced over in that colour (dashed when removed). The cards and wires under them
// are the editor's own NodeItem and EdgeItem.
#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QStringList>

#include <vector>

#include "graph/diff.h"

namespace plexus::widgets {

struct Theme;
class EdgeItem;
class NodeItem;

enum class DiffKind { Added, Removed, Changed };

// Green, red and amber, readable on the theme's canvas.
QColor diffColour(DiffKind kind, const Theme& theme);
QString diffKindName(DiffKind kind);  // "added", "removed", "changed"

// One line of a changed node's note.
struct DiffNoteLine {
  QString name, before, after;
  QString text() const;  // "out_features 128 → 64"
};

// What changed in a node, for its note: its type, its name, its parameters (not those of a
// retyped node: they belong to another type), then its own training settings.
std::vector<DiffNoteLine> diffNote(const graph::NodeChange& change);

class NodeDiffMark : public QGraphicsItem {
 public:
  enum { Type = UserType + 20 };

  // Follows `node`'s card (which must outlive it); `note` only for a changed node.
  NodeDiffMark(const NodeItem* node, DiffKind kind, std::vector<DiffNoteLine> note = {});

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  DiffKind kind() const { return kind_; }
  QColor colour() const;
  const std::vector<DiffNoteLine>& note() const { return note_; }
  QRectF noteRect() const;  // in item coordinates; empty without a note

 private:
  DiffKind kind_;
  QSizeF card_;
  std::vector<DiffNoteLine> note_;
};

class WireDiffMark : public QGraphicsPathItem {
 public:
  enum { Type = UserType + 21 };

  WireDiffMark(const EdgeItem* wire, DiffKind kind);

  int type() const override { return Type; }
  DiffKind kind() const { return kind_; }
  const graph::Edge& edge() const { return edge_; }
  // Pen in the kind's colour of the current theme.
  void refreshTheme();

 private:
  DiffKind kind_;
  graph::Edge edge_;
};

}  // namespace plexus::widgets
