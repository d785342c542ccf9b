#include "dataset_pager.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPainterPath>
#include <QShortcut>
#include <QToolButton>

#include <algorithm>

#include "theme.h"

namespace plexus::widgets {
namespace {

enum class Arrow { First, Previous, Next, Last };

// A chevron (a double one with a bar for first/last), drawn in the theme's text colour so it
// follows light and dark and stays sharp at any size.
QIcon arrowIcon(Arrow arrow) {
  const QColor ink = ThemeManager::instance().theme().text;
  QIcon icon;
  for (const int size : {16, 24, 32, 48}) {
    QPixmap pixmap(size, size);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    const bool left = arrow == Arrow::First || arrow == Arrow::Previous;
    if (left) {  // drawn pointing right, then mirrored
      painter.translate(size, 0);
      painter.scale(-1, 1);
    }
    const qreal s = size / 16.0;
    QPainterPath path;
    const qreal x = arrow == Arrow::Previous || arrow == Arrow::Next ? 6.5 : 5.0;
    path.moveTo(x * s, 4 * s);
    path.lineTo((x + 4) * s, 8 * s);
    path.lineTo(x * s, 12 * s);
    if (arrow == Arrow::First || arrow == Arrow::Last) {
      path.moveTo(11.5 * s, 4 * s);
      path.lineTo(11.5 * s, 12 * s);
    }
    painter.setPen(QPen(ink, 1.6 * s, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
    painter.drawPath(path);
    painter.end();
    icon.addPixmap(pixmap);
  }
  return icon;
}

}  // namespace

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
  first_->setIcon(arrowIcon(Arrow::First));
  previous_->setIcon(arrowIcon(Arrow::Previous));
  next_->setIcon(arrowIcon(Arrow::Next));
  last_->setIcon(arrowIcon(Arrow::Last));
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
