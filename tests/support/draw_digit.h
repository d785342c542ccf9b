#pragma once
// A "1" drawn on Try It's canvas with the mouse, as a user draws it: one stroke down the middle.
#include <QTest>

#include "tryit/digit_canvas.h"

namespace plexus::testing {

inline void draw_one(widgets::DigitCanvas* canvas) {
  const QRectF sheet = canvas->sheetRect();
  const auto at = [&](double x, double y) {
    return QPoint(int(sheet.left() + x * sheet.width()), int(sheet.top() + y * sheet.height()));
  };
  QTest::mousePress(canvas, Qt::LeftButton, {}, at(0.52, 0.2));
  for (int i = 1; i <= 12; ++i) QTest::mouseMove(canvas, at(0.52 - 0.004 * i, 0.2 + 0.05 * i));
  QTest::mouseRelease(canvas, Qt::LeftButton, {}, at(0.472, 0.8));
}

}  // namespace plexus::testing
