#pragma once
// The colours of Try It's explanation views: a perceptual colour map (matplotlib's inferno:
// brightness rises steadily from black through red to pale yellow, so "brighter" reads as "more"
// in gray print and for colour-blind eyes too), a heat map laid over a picture, and the legend
// bar that says what bright means.
#include <QColor>
#include <QImage>
#include <QString>
#include <QWidget>

#include <vector>

namespace plexus::widgets {

// t in [0, 1] (clamped): black at 0, pale yellow at 1.
QColor heatColour(double t);

// Text that reads on `background`: black or white.
QColor textOn(const QColor& background);

// `heat` (height x width values ≥ 0, row-major) coloured by heatColour(value / its max) and laid
// over `picture` (scaled to the heat's size) with opacity `opacity` in [0, 1]: 0 shows the
// picture alone, 1 the heat alone. An all-zero heat is black.
QImage heatOverlay(const QImage& picture, const std::vector<float>& heat, int height, int width, double opacity);

// A horizontal bar of the colour map with a word at each end ("low", "high" by default).
class HeatLegend : public QWidget {
  Q_OBJECT
 public:
  explicit HeatLegend(QWidget* parent = nullptr);
  void setEnds(const QString& low, const QString& high);
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QString low_, high_;
};

}  // namespace plexus::widgets
