#pragma once
// ConfusionMatrixView: the evaluation's confusion matrix as a heatmap. Rows are the true class,
// columns the predicted one; each cell is shaded by its share of the row (blue on the diagonal,
// red for mistakes, so errors stand out however few), with its count written in when it fits.
// The overall accuracy heads it and each row's accuracy stands beside it. Hovering a cell tells
// what it holds; clicking it emits cellClicked, so the app can show those samples. With many
// classes the cells shrink and the text is left out. Follows the theme.
#include <QWidget>
#include <cstdint>
#include <vector>

namespace plexus::widgets {

class ConfusionMatrixView : public QWidget {
  Q_OBJECT

 public:
  explicit ConfusionMatrixView(QWidget* parent = nullptr);

  // `rowMajor` holds classes×classes counts (as train::EpochEnd::confusion); missing names are
  // shown as the class index. A vector of the wrong size shows an empty matrix.
  void setMatrix(const std::vector<int64_t>& rowMajor, int classes, const std::vector<QString>& classNames);
  void clear();

  int classes() const { return classes_; }
  int64_t total() const { return total_; }
  int64_t count(int trueClass, int predictedClass) const;  // 0 outside the matrix
  int64_t rowTotal(int trueClass) const;
  double accuracy() const;                 // correct / total; 0 when empty
  double classAccuracy(int trueClass) const;  // the row's diagonal share; 0 for an empty row

  // Where a cell is drawn (widget coordinates); empty outside the matrix.
  QRect cellRect(int trueClass, int predictedClass) const;
  // {true, predicted} of the cell under `pos`, {-1, -1} where there is none.
  std::pair<int, int> cellAt(const QPoint& pos) const;
  std::pair<int, int> hoveredCell() const { return hovered_; }  // outlined, its row and column lit
  // "true 4, predicted 9: 12 samples (1.2% of 4s)"
  QString cellToolTip(int trueClass, int predictedClass) const;
  // Whether the cells are large enough for their counts at the current size.
  bool countsShown() const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void cellClicked(int trueClass, int predictedClass);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;
  bool event(QEvent* event) override;

 private:
  struct Layout;
  Layout layout() const;
  QString name(int cls) const;
  QColor cellColour(int trueClass, int predictedClass) const;
  void paintHeader(QPainter& painter, const Layout& l) const;
  void paintAxes(QPainter& painter, const Layout& l) const;
  void paintCells(QPainter& painter, const Layout& l) const;
  void paintRowAccuracy(QPainter& painter, const Layout& l) const;
  void paintLegend(QPainter& painter, const Layout& l) const;

  std::vector<int64_t> counts_;
  std::vector<int64_t> row_totals_;
  std::vector<QString> names_;
  int classes_ = 0;
  int64_t total_ = 0, correct_ = 0;
  std::pair<int, int> hovered_{-1, -1}, pressed_{-1, -1};
};

}  // namespace plexus::widgets
