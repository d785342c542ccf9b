#pragma once
// ProbabilityBars: a model's class probabilities as horizontal bars, one row per class with its
// name and percentage, the most probable class highlighted. With many classes only the most
// probable ones are listed, most probable first; otherwise the classes keep their order, so a
// bar does not jump about while one draws.
#include <QStringList>
#include <QWidget>

#include <vector>

namespace plexus::widgets {

class ProbabilityBars : public QWidget {
  Q_OBJECT

 public:
  explicit ProbabilityBars(QWidget* parent = nullptr);

  static constexpr int kMaxRows = 15;

  void setClassNames(const QStringList& names);  // index = class; clears the probabilities
  const QStringList& classNames() const { return names_; }
  // One per class; empty clears the bars (the rows stay, empty).
  void setProbabilities(const std::vector<float>& probabilities);

  const std::vector<float>& probabilities() const { return probabilities_; }
  int topClass() const;  // -1 when there are no probabilities
  int rows() const { return int(order_.size()); }
  int classAtRow(int row) const { return order_[size_t(row)]; }
  // The track of a row's bar: its filled part is probability x width, from the left.
  QRect trackRect(int row) const;
  QColor fillColour(bool top) const;
  QColor trackColour() const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void classClicked(int cls);  // a row clicked: its class (Try It explains that one)

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  void reorder();
  QString nameOf(int cls) const;
  int rowHeight() const;
  int nameWidth() const;
  int percentWidth() const;

  QStringList names_;
  std::vector<float> probabilities_;
  std::vector<int> order_;  // the class shown in each row
};

}  // namespace plexus::widgets
