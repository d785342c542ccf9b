#pragma once
// TopConfusionsView: the evaluation's most frequent mistakes as a list, for when there are too
// many classes for a readable confusion matrix (a character model's 50-odd symbols): true
// class → predicted class, how many, and their share of the true class, most frequent first.
// Symbols that print as nothing are shown as signs ('␣' a space, '↵' a newline). Clicking a
// row emits cellClicked, as a matrix cell does.
#include <QString>
#include <QWidget>
#include <cstdint>
#include <vector>

class QLabel;
class QTreeWidget;

namespace plexus::widgets {

class TopConfusionsView : public QWidget {
  Q_OBJECT

 public:
  static constexpr size_t kShown = 20;  // a screenful; the rest are rarer still

  explicit TopConfusionsView(QWidget* parent = nullptr);

  // As ConfusionMatrixView::setMatrix: row-major classes×classes counts, missing names shown as
  // the class index.
  void setMatrix(const std::vector<int64_t>& rowMajor, int classes, const std::vector<QString>& classNames);
  void clear();

  int rows() const;
  // The row's cells as shown: true, predicted, count, share.
  QStringList rowText(int row) const;
  QString title() const;

  // A class name as it reads: whitespace and control characters as visible signs.
  static QString readable(const QString& name);

 signals:
  void cellClicked(int trueClass, int predictedClass);

 private:
  QLabel* title_;
  QTreeWidget* list_;
};

}  // namespace plexus::widgets
