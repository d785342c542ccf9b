#include "dataset/dataset_pager.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QShortcut>
#include <QToolButton>

#include <algorithm>

#include "common/icons.h"
#include "common/theme.h"

namespace plexus::widgets {

DatasetPager::DatasetPager(QWidget* parent) : QWidget(parent), label_(new QLabel(this)), size_(new QComboBox(this)) {
  first_ = addButton(tr("First page (Alt+Home)"), QKeySequence(Qt::ALT | Qt::Key_Home), [] { return 0; });
  previous_ = addButton(tr("Previous page (Alt+Left)"), QKeySequence(Qt::ALT | Qt::Key_Left), [this] { return page_ - 1; });
  next_ = addButton(tr("Next page (Alt+Right)"), QKeySequence(Qt::ALT | Qt::Key_Right), [this] { return page_ + 1; });
  last_ = addButton(tr("Last page (Alt+End)"), QKeySequence(Qt::ALT | Qt::Key_End), [this] { return pages_ - 1; });
  label_->setAlignment(Qt::AlignCenter);
  label_->setMinimumWidth(QFontMetrics(label_->font()).horizontalAdvance(tr("Page 8888 of 8888")) + 8);
  for (const int n : kPageSizes) size_->addItem(tr("%1 per page").arg(n), n);
  size_->setCurrentIndex(1);
  size_->setToolTip(tr("Samples per page"));

  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(first_);
  layout->addWidget(previous_);
  layout->addWidget(label_);
  layout->addWidget(next_);
  layout->addWidget(last_);
  layout->addSpacing(8);
  layout->addWidget(size_);

  connect(size_, &QComboBox::currentIndexChanged, this, [this] { emit pageSizeChanged(pageSize()); });
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &DatasetPager::updateIcons);
  updateIcons();
  setState(0, 1);
}

QToolButton* DatasetPager::addButton(const QString& tip, const QKeySequence& keys, std::function<int()> target) {
  auto* button = new QToolButton(this);
  button->setToolTip(tip);
  button->setAutoRaise(true);
  button->setIconSize(QSize(16, 16));
  auto request = [this, target] {
    const int page = std::clamp(target(), 0, pages_ - 1);
    if (page != page_) emit pageRequested(page);
  };
  connect(button, &QToolButton::clicked, this, request);
  // The shortcuts work wherever the focus is inside the preview, not only on the pager.
  auto* shortcut = new QShortcut(keys, parentWidget() ? parentWidget() : this);
  shortcut->setContext(Qt::WidgetWithChildrenShortcut);
  connect(shortcut, &QShortcut::activated, this, request);
  return button;
}

void DatasetPager::updateIcons() {
  first_->setIcon(icon(QStringLiteral("page-first")));
  previous_->setIcon(icon(QStringLiteral("page-previous")));
  next_->setIcon(icon(QStringLiteral("page-next")));
  last_->setIcon(icon(QStringLiteral("page-last")));
}

void DatasetPager::setState(int page, int pages) {
  pages_ = std::max(pages, 1);
  page_ = std::clamp(page, 0, pages_ - 1);
  label_->setText(tr("Page %1 of %2").arg(page_ + 1).arg(pages_));
  first_->setEnabled(page_ > 0);
  previous_->setEnabled(page_ > 0);
  next_->setEnabled(page_ < pages_ - 1);
  last_->setEnabled(page_ < pages_ - 1);
}

int DatasetPager::pageSize() const { return size_->currentData().toInt(); }

void DatasetPager::setPageSize(int size) {
  if (const int i = size_->findData(size); i >= 0) size_->setCurrentIndex(i);
}

}  // namespace plexus::widgets
