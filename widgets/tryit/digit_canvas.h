#pragma once
// DigitCanvas: a square sheet to draw on with the mouse (or a pen: Qt turns unhandled tablet
// events into mouse events), white strokes on black as MNIST's digits are, with a thick, round,
// antialiased pen. It can instead show a picture (an opened image file); drawing replaces it.
// Strokes are kept in sheet coordinates (0..1), so they survive resizing and render at any size.
#include <QImage>
#include <QPolygonF>
#include <QWidget>

#include <vector>

namespace plexus::widgets {

class DigitCanvas : public QWidget {
  Q_OBJECT

 public:
  explicit DigitCanvas(QWidget* parent = nullptr);

  // The pen's width as a share of the sheet's side: MNIST strokes, once the digit is framed.
  static constexpr double kPenWidth = 0.08;

  bool isEmpty() const { return strokes_.empty() && picture_.isNull(); }
  const std::vector<QPolygonF>& strokes() const { return strokes_; }
  // The strokes drawn white on black at side x side pixels (8-bit gray).
  QImage render(int side) const;
  // Where the sheet is in the widget.
  QRectF sheetRect() const;

  // Adds a whole stroke (sheet coordinates), as if drawn; for scripts and tests.
  void addStroke(const QPolygonF& stroke);
  void undo();  // the last stroke
  void clear();
  // Shows `picture` (fitted, centred) instead of strokes; drawing replaces it.
  void setPicture(const QImage& picture);

  QSize sizeHint() const override { return {360, 360}; }
  QSize minimumSizeHint() const override { return {160, 160}; }

 signals:
  // The strokes changed: while drawing (at most every 40 ms), at the end of a stroke, on undo
  // and clear. Not for setPicture().
  void changed();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;

 private:
  QPointF toSheet(const QPointF& widget_pos) const;
  void drawStrokes(class QPainter& painter, double side) const;
  void changedWhileDrawing();

  std::vector<QPolygonF> strokes_;
  QImage picture_;
  bool drawing_ = false;
  class QTimer* throttle_;  // coalesces changed() while the pen moves
};

}  // namespace plexus::widgets
