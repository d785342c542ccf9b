#pragma once
// A picture of a graph as the editor draws it: the editor's own NodeScene rendered into an
// image, for previews (the start page's example and template cards). Nothing of it is live.
#include <QImage>
#include <QSize>

#include "graph/graph.h"

namespace plexus::widgets {

// `graph` drawn on the canvas colour of the current theme and fitted, centred, into `size`
// (device-independent pixels) at `device_pixel_ratio`, never blown up past the editor's own
// size. A drawing much wider than `size` (a long chain of layers) is cut in the gaps between
// cards into up to four lines, stacked as wrapped text is, when that draws it larger. Wire
// shapes and problem marks are left out: a preview has no dataset to check against.
QImage graphThumbnail(const graph::Graph& graph, QSize size, qreal device_pixel_ratio = 1.0);

}  // namespace plexus::widgets
