#pragma once
// The colours of Try It's explanation views: core's perceptual colour map (explain::magma, as
// `plexus-cli explain` draws: brightness rises steadily from black through purple and orange to
// pale yellow, so "brighter" reads as "more" in gray print and for colour-blind eyes too), and the
// legend bar that says what bright means.
#include <QColor>
#include <QString>
#include <QWidget>

namespace plexus::widgets {

// t in [0, 1] (clamped): black at 0, pale yellow at 1 (explain::magma).
QColor heatColour(double t);

// Text that reads on `background`: black or white.
QColor textOn(const QColor& background);

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
