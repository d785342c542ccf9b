#pragma once
// HeatMatrix: a node's output that is not a picture, coloured by value on one scale (viridis,
// from its least to its largest value): a vector [F] as a strip of bars over a heat strip, a
// sequence [T, F] as a position x feature heat map with each position's label (a text model's
// characters) down the left. Hovering names the cell and its value; a click picks a feature.
#include <QString>
#include <QStringList>
#include <QWidget>
#include <vector>

namespace plexus::widgets {

class HeatMatrix : public QWidget {
  Q_OBJECT

 public:
  explicit HeatMatrix(QWidget* parent = nullptr);

  // rows x columns values, row-major; one row shows bars above the strip. `rowLabels` (empty, or
  // one per row) name the positions.
  void setValues(std::vector<float> values, int rows, int columns, QStringList rowLabels = {});
  int rows() const { return rows_; }
  int columns() const { return columns_; }
  const std::vector<float>& values() const { return values_; }
  QStringList rowLabels() const { return labels_; }

  QSize sizeHint() const override;
  int columnAt(const QPoint& pos) const;  // -1 outside the bars and cells

 signals:
  void columnClicked(int column);  // a feature

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;  // tool tips

 private:
  QRect plotRect() const;  // the heat map's cells
  int labelWidth() const;

  std::vector<float> values_;
  int rows_ = 0, columns_ = 0;
  QStringList labels_;
  float lo_ = 0, hi_ = 0;
};

}  // namespace plexus::widgets
