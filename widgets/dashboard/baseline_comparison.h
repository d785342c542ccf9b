#pragma once
// BaselineComparison: a model's judging figures beside the trivial baseline's (always the most
// frequent class, always the mean target), one row per figure, so what the network adds reads
// off at a glance. The table is exactly as tall as its rows.
#include <QTableWidget>
#include <vector>

namespace plexus::widgets {

class BaselineComparison : public QTableWidget {
  Q_OBJECT

 public:
  struct Row {
    QString figure;            // "RMSE", "Macro F1"
    double model = 0, baseline = 0;
    bool percent = false;      // shown as "87.30 %" rather than "0.8730"
    QString toolTip;
  };

  explicit BaselineComparison(QWidget* parent = nullptr);

  // `baseline` heads the baseline's column ("Baseline: always 'male'"); its tool tip says more.
  void setRows(const std::vector<Row>& rows, const QString& baseline, const QString& baselineToolTip);
  QString text(int row, int column) const;  // "" outside the table

  // A compact row: the text's height and a little air (the style's default is about twice that).
  static int rowHeight(const QWidget* table);

  // A figure as the table writes it: four significant decimals, "–" where it is undefined.
  static QString number(double v, bool percent = false);
};

}  // namespace plexus::widgets
