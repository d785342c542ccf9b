#pragma once
// DatasetPager: the paging controls under the dataset preview: first, previous, "Page 3 of 120",
// next, last, and the page size. It only shows the state it is given and asks for changes.
// Alt+Left / Alt+Right and Alt+Home / Alt+End page from anywhere in the parent widget.
#include <QKeySequence>
#include <QWidget>
#include <functional>

class QComboBox;
class QLabel;
class QToolButton;

namespace plexus::widgets {

class DatasetPager : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kPageSizes[] = {50, 100, 200, 500};

  explicit DatasetPager(QWidget* parent = nullptr);

  void setState(int page, int pages);  // page is 0-based
  int pageSize() const;
  void setPageSize(int size);          // one of kPageSizes; others are ignored

  QToolButton* firstButton() const { return first_; }
  QToolButton* previousButton() const { return previous_; }
  QToolButton* nextButton() const { return next_; }
  QToolButton* lastButton() const { return last_; }
  QLabel* pageLabel() const { return label_; }
  QComboBox* pageSizeBox() const { return size_; }

 signals:
  void pageRequested(int page);
  void pageSizeChanged(int size);

 private:
  QToolButton* addButton(const QString& tip, const QKeySequence& keys, std::function<int()> target);
  void updateIcons();

  int page_ = 0, pages_ = 1;
  QToolButton *first_, *previous_, *next_, *last_;
  QLabel* label_;
  QComboBox* size_;
};

}  // namespace plexus::widgets
