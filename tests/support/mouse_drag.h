#pragma once
// Mouse moves and drags as a person makes them, for the canvas (a QGraphicsView) and the
// widgets around it.
#include <QApplication>
#include <QMouseEvent>
#include <QPoint>
#include <QTest>
#include <QWidget>

namespace plexus::testing {

// QTest::mouseMove does not carry held buttons into QGraphicsView in Qt 6: send the event.
inline void moveMouse(QWidget* widget, QPoint pos, Qt::MouseButtons held = Qt::LeftButton) {
  QMouseEvent event(QEvent::MouseMove, pos, widget->mapToGlobal(pos), Qt::NoButton, held, Qt::NoModifier);
  QApplication::sendEvent(widget, &event);
}

// Press at `from`, move there in steps (past the drag distance), release at `to`.
inline void dragMouse(QWidget* widget, QPoint from, QPoint to, Qt::KeyboardModifiers modifiers = {}) {
  QTest::mousePress(widget, Qt::LeftButton, modifiers, from);
  for (int i = 1; i <= 8; ++i) moveMouse(widget, from + (to - from) * i / 8);
  QTest::mouseRelease(widget, Qt::LeftButton, modifiers, to);
}

}  // namespace plexus::testing
