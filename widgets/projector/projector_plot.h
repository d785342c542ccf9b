#pragma once
// The embedding projector's scatter plot: one dot per example, coloured by its true class (the
// legend names them), a misclassified example drawn as a ring with a cross in the colour of its
// true class. Hovering a dot shows a card with the example (its picture, where a preview gives
// one) and its true and predicted class; clicking it emits clicked(). The dots are painted into
// a cached image when the points or the size change, so hovering over thousands repaints fast.
#include <QImage>
#include <QStringList>
#include <QWidget>

#include <functional>
#include <vector>

namespace plexus::widgets {

class ProjectorPlot : public QWidget {
  Q_OBJECT

 public:
  struct Point {
    float x = 0, y = 0;
    int label = -1;      // true class; -1 unknown
    int predicted = -1;  // the model's class; -1 unknown
  };
  explicit ProjectorPlot(QWidget* parent = nullptr);

  void setPoints(std::vector<Point> points, const QStringList& class_names);
  void clear() { setPoints({}, {}); }
  int count() const { return int(points_.size()); }
  // The example's picture for the hover card; a null image shows none.
  using Preview = std::function<QImage(int row)>;
  void setPreview(Preview preview) { preview_ = std::move(preview); }

  // The point nearest `pos` within a few pixels, or -1; and where point `row` is drawn.
  int pointAt(const QPointF& pos) const;
  QPointF screenPosition(int row) const;
  int hoveredRow() const { return hovered_; }
  // Shows point `row`'s card as hovering it does (-1: none).
  void hover(int row);
  QSize sizeHint() const override { return {640, 480}; }

 signals:
  void hovered(int row);  // -1: none
  void clicked(int row);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  void render();  // the dots and the legend into cache_
  void paintCard(QPainter& p) const;
  QRectF plotRect() const;

  std::vector<Point> points_;
  QStringList class_names_;
  float x0_ = 0, x1_ = 1, y0_ = 0, y1_ = 1;  // the points' extent
  QImage cache_;
  Preview preview_;
  int hovered_ = -1;
};

}  // namespace plexus::widgets
