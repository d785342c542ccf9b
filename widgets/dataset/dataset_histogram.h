#pragma once
// ClassHistogram: a compact bar chart of how many samples each class has, one bar per class in
// its class colour, the count above each bar where it fits and in a tooltip on hover. Clicking a
// bar asks to show only that class; the highlighted class is drawn at full strength, the others
// faded.
#include <QWidget>
#include <cstdint>
#include <vector>

namespace plexus::widgets {

class ClassHistogram : public QWidget {
  Q_OBJECT

 public:
  explicit ClassHistogram(QWidget* parent = nullptr);

  void setCounts(std::vector<int64_t> counts, std::vector<QString> names);
  void setHighlighted(int cls);  // -1: none
  int highlighted() const { return highlighted_; }
  int classes() const { return int(counts_.size()); }
  int64_t count(int cls) const;
  QRect barRect(int cls) const;  // the bar's column (full height), widget coordinates
  QString toolTipFor(int cls) const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void classClicked(int cls);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;
  bool event(QEvent* event) override;

 private:
  int classAt(const QPoint& pos) const;
  QRect plotRect() const;
  bool labelsFit() const;
  void paintBar(QPainter& painter, int cls, int64_t max) const;

  std::vector<int64_t> counts_;
  std::vector<QString> names_;
  int64_t total_ = 0;
  int highlighted_ = -1;
  int hovered_ = -1;
};

}  // namespace plexus::widgets
