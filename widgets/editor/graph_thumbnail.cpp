#include "editor/graph_thumbnail.h"

#include <QPainter>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/qt_text.h"
#include "common/theme.h"
#include "editor/edge_item.h"
#include "editor/model/graph_document.h"
#include "editor/node_item.h"
#include "editor/node_scene.h"

namespace plexus::widgets {

namespace {

constexpr qreal kThumbnailMargin = 12;    // scene units around the drawing
constexpr qreal kLineGap = 28;   // scene units between the lines of a wrapped drawing
constexpr int kMaxLines = 4;

// The graph on the editor's scene, as the picture shows it, with the x ranges its cards cover.
struct Drawing {
  explicit Drawing(const graph::Graph& graph) {
    graph::Graph drawn = graph;
    drawn.dataset = {};  // nothing is read from disk for a picture
    document.reset(std::move(drawn), QString());
    for (const graph::Node& n : document.graph().nodes)
      if (NodeItem* item = scene.nodeItem(qstr(n.id))) item->setProblems({});
    for (const graph::Edge& e : document.graph().edges)
      if (EdgeItem* item = scene.edgeItem(e)) item->setLabel(QString());
    for (const QGraphicsItem* item : scene.items()) {
      if (const auto* wire = qgraphicsitem_cast<const EdgeItem*>(item)) {
        bounds |= wire->path().boundingRect();  // the curve, not the room kept for a label
      } else if (!item->parentItem() && item->isVisible()) {
        const QRectF r = item->sceneBoundingRect();
        bounds |= r;
        cards.push_back({r.left(), r.right()});
      }
    }
    if (!bounds.isEmpty()) bounds.adjust(-kThumbnailMargin, -kThumbnailMargin, kThumbnailMargin, kThumbnailMargin);
  }

  // Where the drawing may be cut into lines: the middle of each gap between cards.
  std::vector<qreal> cuts() const {
    std::vector<std::pair<qreal, qreal>> spans = cards;
    std::sort(spans.begin(), spans.end());
    std::vector<qreal> out;
    qreal reach = spans.empty() ? 0 : spans.front().second;
    for (const auto& [left, right] : spans) {
      if (left > reach) out.push_back((reach + left) / 2);
      reach = std::max(reach, right);
    }
    return out;
  }

  GraphDocument document;
  NodeScene scene{&document};
  QRectF bounds;
  std::vector<std::pair<qreal, qreal>> cards;  // x ranges of the node and block cards
};

// The drawing cut into `count` lines at the gaps nearest to equal widths (fewer when there are
// not enough gaps).
std::vector<QRectF> lines(const Drawing& d, int count) {
  const std::vector<qreal> cuts = d.cuts();
  std::vector<qreal> chosen;
  for (int i = 1; i < count; ++i) {
    const qreal ideal = d.bounds.left() + d.bounds.width() * i / count;
    qreal best = -1;
    for (qreal c : cuts)
      if ((chosen.empty() || c > chosen.back()) && (best < 0 || std::abs(c - ideal) < std::abs(best - ideal))) best = c;
    if (best >= 0) chosen.push_back(best);
  }
  std::vector<QRectF> out;
  qreal left = d.bounds.left();
  for (qreal cut : chosen) {
    out.emplace_back(QPointF(left, d.bounds.top()), QPointF(cut, d.bounds.bottom()));
    left = cut;
  }
  out.emplace_back(QPointF(left, d.bounds.top()), d.bounds.bottomRight());
  return out;
}

}  // namespace

QImage graphThumbnail(const graph::Graph& graph, QSize size, qreal device_pixel_ratio) {
  QImage image(size * device_pixel_ratio, QImage::Format_ARGB32_Premultiplied);
  image.setDevicePixelRatio(device_pixel_ratio);
  image.fill(ThemeManager::instance().theme().canvas);
  Drawing drawing(graph);
  if (drawing.bounds.isEmpty()) return image;

  // A long chain fitted into a card is a thin strip: wrapped into lines, as text is, it is drawn
  // larger. The number of lines that draws it largest wins.
  std::vector<QRectF> best;
  qreal scale = 0;
  for (int count = 1; count <= kMaxLines; ++count) {
    std::vector<QRectF> cut = lines(drawing, count);
    if (count > 1 && cut.size() < size_t(count)) break;
    qreal width = 0;
    for (const QRectF& line : cut) width = std::max(width, line.width());
    const qreal height = drawing.bounds.height() * qreal(cut.size()) + kLineGap * qreal(cut.size() - 1);
    const qreal s = std::min({size.width() / width, size.height() / height, 1.0});
    if (s > scale * 1.05) {  // another line only for a clear gain
      scale = s;
      best = std::move(cut);
    }
  }
  qreal width = 0;
  for (const QRectF& line : best) width = std::max(width, line.width());
  const qreal height = drawing.bounds.height() * qreal(best.size()) + kLineGap * qreal(best.size() - 1);
  QPointF at((size.width() - width * scale) / 2, (size.height() - height * scale) / 2);

  QPainter painter(&image);
  painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing | QPainter::SmoothPixmapTransform);
  for (const QRectF& line : best) {
    drawing.scene.render(&painter, QRectF(at, line.size() * scale), line);
    at.ry() += (drawing.bounds.height() + kLineGap) * scale;
  }
  return image;
}

}  // namespace plexus::widgets
