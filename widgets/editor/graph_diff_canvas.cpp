#include "editor/graph_diff_canvas.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>

#include "common/qt_text.h"
#include "common/theme.h"
#include "editor/diff_marks.h"
#include "editor/edge_item.h"
#include "editor/model/graph_document.h"
#include "editor/node_item.h"
#include "editor/node_scene.h"
#include "editor/node_view.h"

namespace plexus::widgets {
namespace {

constexpr qreal kDiffFitMargin = 30;
constexpr double kMaxFitZoom = 1.25;  // a small graph is not blown up
constexpr qreal kRemovedOpacity = 0.45;

bool contains(const std::vector<graph::Edge>& edges, const graph::Edge& e) {
  return std::find(edges.begin(), edges.end(), e) != edges.end();
}

}  // namespace

GraphDiffCanvas::GraphDiffCanvas(QWidget* parent)
    : QWidget(parent), document_(std::make_unique<GraphDocument>()), scene_(new NodeScene(document_.get(), this)) {
  view_ = new NodeView(scene_, this);
  view_->setObjectName(QStringLiteral("runDiffView"));
  // Read-only: the mouse pans (and the wheel zooms) but reaches no item; no drops.
  view_->setInteractive(false);
  view_->setDragMode(QGraphicsView::ScrollHandDrag);
  view_->setAcceptDrops(false);
  view_->viewport()->installEventFilter(this);

  auto* legend = new QHBoxLayout;
  legend->setContentsMargins(8, 2, 8, 2);
  legend->setSpacing(14);
  for (DiffKind kind : {DiffKind::Added, DiffKind::Removed, DiffKind::Changed}) {
    auto* entry = new QLabel(this);
    legend->addWidget(entry);
    const QString text = kind == DiffKind::Added     ? tr("added in run B")
                         : kind == DiffKind::Removed ? tr("removed since run A")
                                                     : tr("changed: run A → run B");
    const auto paint = [entry, kind, text] {
      const QColor c = diffColour(kind, ThemeManager::instance().theme());
      entry->setText(QStringLiteral("<span style='color:%1'>■</span> %2").arg(c.name(), text.toHtmlEscaped()));
    };
    paint();
    connect(&ThemeManager::instance(), &ThemeManager::changed, entry, paint);
  }
  legend->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addLayout(legend);
  layout->addWidget(view_, 1);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &GraphDiffCanvas::refreshTheme);
}

// The view and the scene go before the document they show.
GraphDiffCanvas::~GraphDiffCanvas() {
  // A view being destroyed still sends its viewport events, when it is no view any more.
  view_->viewport()->removeEventFilter(this);
  delete view_;
  delete scene_;
}

NodeDiffMark* GraphDiffCanvas::nodeMark(const QString& id) const { return node_marks_.value(id); }

WireDiffMark* GraphDiffCanvas::wireMark(const graph::Edge& edge) const {
  for (WireDiffMark* mark : wire_marks_)
    if (mark->edge() == edge) return mark;
  return nullptr;
}

void GraphDiffCanvas::clearMarks() {
  qDeleteAll(node_marks_);
  for (WireDiffMark* mark : wire_marks_) delete mark;
  node_marks_.clear();
  wire_marks_.clear();
}

void GraphDiffCanvas::showDiff(const graph::Graph& before, const graph::Graph& after, const graph::GraphDiff& diff) {
  clearMarks();
  document_->reset(graph::union_graph(before, after), QString());
  // The union is no graph to validate (a removed and an added wire may feed one input), and
  // shapes without the dataset are unknown: the cards and wires show the graphs only.
  for (const graph::Node& n : document_->graph().nodes)
    if (NodeItem* item = scene_->nodeItem(qstr(n.id))) item->setProblems({});
  for (const graph::Edge& e : document_->graph().edges)
    if (EdgeItem* item = scene_->edgeItem(e)) item->setLabel(QString());

  const auto markNode = [this](const std::string& id, DiffKind kind, std::vector<DiffNoteLine> note = {}) {
    NodeItem* node = scene_->nodeItem(qstr(id));
    if (!node) return;
    if (kind == DiffKind::Removed) node->setOpacity(kRemovedOpacity);
    auto* mark = new NodeDiffMark(node, kind, std::move(note));
    scene_->addItem(mark);
    node_marks_.insert(qstr(id), mark);
  };
  for (const std::string& id : diff.added) markNode(id, DiffKind::Added);
  for (const std::string& id : diff.removed) markNode(id, DiffKind::Removed);
  for (const graph::NodeChange& c : diff.changed) markNode(c.id, DiffKind::Changed, diffNote(c));

  for (const graph::Edge& e : document_->graph().edges) {
    const bool added = contains(diff.edges_added, e), removed = contains(diff.edges_removed, e);
    EdgeItem* wire = scene_->edgeItem(e);
    if (!wire || (!added && !removed)) continue;
    if (removed) wire->setOpacity(kRemovedOpacity);
    auto* mark = new WireDiffMark(wire, added ? DiffKind::Added : DiffKind::Removed);
    scene_->addItem(mark);
    wire_marks_.push_back(mark);
  }
  fit();
}

void GraphDiffCanvas::fit() {
  QRectF bounds;
  for (const QGraphicsItem* item : scene_->items())
    if (const auto* wire = qgraphicsitem_cast<const EdgeItem*>(item))
      bounds |= wire->path().boundingRect();  // the curve, not the room kept for a label
    else if (!item->parentItem())
      bounds |= item->sceneBoundingRect();
  if (bounds.isEmpty()) return;
  bounds.adjust(-kDiffFitMargin, -kDiffFitMargin, kDiffFitMargin, kDiffFitMargin);
  const QSize room = view_->viewport()->size();
  view_->setZoom(std::min({room.width() / bounds.width(), room.height() / bounds.height(), kMaxFitZoom}));
  view_->centerOn(bounds.center());
}

bool GraphDiffCanvas::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Resize && watched == view_->viewport()) fit();
  return QWidget::eventFilter(watched, event);
}

void GraphDiffCanvas::refreshTheme() {
  for (WireDiffMark* mark : wire_marks_) mark->refreshTheme();
}

}  // namespace plexus::widgets
