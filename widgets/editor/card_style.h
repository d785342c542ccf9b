#pragma once
// What node cards (node_item) and block cards (block_item) share, so that a block sits in a
// graph like a node: header, port rows, corners and fonts. Scene units; the grid is 20.
#include <QFont>

#include <cstddef>

#include "editor/node_item.h"  // cardFont

namespace plexus::widgets::card {

constexpr qreal kHeader = 40;
constexpr qreal kBodyTop = kHeader + 6;
constexpr qreal kPortRow = 22;
constexpr qreal kBottom = 8;
constexpr qreal kRadius = 7;
constexpr qreal kTextInset = 10;
// Below this zoom text is too small to read: draw the shapes only (cheaper, less noise).
constexpr qreal kTextLod = 0.4;

// The centre of port row `row`, from the card's top.
inline qreal portY(size_t row) { return kBodyTop + kPortRow * (qreal(row) + 0.5); }

inline const QFont& titleFont() { static const QFont f = cardFont(12, true); return f; }
inline const QFont& smallFont() { static const QFont f = cardFont(11); return f; }

}  // namespace plexus::widgets::card
