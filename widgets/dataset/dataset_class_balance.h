#pragma once
// ClassBalanceChart: how many examples of each class the training split holds, one horizontal
// bar per class (its name, the bar in its class colour, the count and share), with the ratio of
// the largest class to the smallest under them: what the class_balance training setting is for
// (session/class_balance.h). The counts are those a run trains on: the split is drawn as
// graph::open_dataset draws it with the project's seed and validation share, off the UI thread.
// Hidden for datasets without one class per example (regression, a text stream).
#include <QWidget>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "graph/graph.h"

namespace plexus::widgets {

class ClassBalanceChart : public QWidget {
  Q_OBJECT

 public:
  explicit ClassBalanceChart(QWidget* parent = nullptr);

  // Counts the training split of `dataset` (its path already located, graph::locate_dataset) in
  // the background when any of these changed since the last call; countsShown() follows. An
  // unbound, unreadable or unclassified dataset hides the chart.
  void showDataset(const graph::DatasetBinding& dataset, uint64_t seed, double validationFraction);
  // Shows these counts (one per class) and names at once; empty hides the chart.
  void setCounts(std::vector<int64_t> counts, std::vector<QString> names);

  int classes() const { return int(counts_.size()); }
  int64_t count(int cls) const;
  QString className(int cls) const;
  // "900 training examples; the largest class has 9.0 × the smallest's" (or the classes lacking any).
  QString summary() const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void countsShown();  // a background count was shown (or hid the chart)

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  int rowHeight() const;

  std::vector<int64_t> counts_;
  std::vector<QString> names_;
  using Key = std::tuple<graph::DatasetBinding, uint64_t, double>;
  std::optional<Key> key_;  // what the counts shown (or being counted) are of
  int generation_ = 0;      // of the latest request: an older one finishing is not shown
};

}  // namespace plexus::widgets
