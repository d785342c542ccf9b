#include "editor/palette.h"

#include <QAction>
#include <QApplication>
#include <QDrag>
#include <QHash>
#include <QKeyEvent>
#include <QLineEdit>
#include <QMimeData>
#include <QPainter>
#include <QStyle>
#include <QStyledItemDelegate>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "common/icons.h"
#include "common/theme.h"
#include "editor/node_scene.h"
#include "graph/registry.h"

namespace plexus::widgets {
namespace {

constexpr int kTypeRole = Qt::UserRole;        // a layer item's type name; none on categories
constexpr int kSearchRole = Qt::UserRole + 1;  // what the filter looks in
constexpr int kFragmentRole = Qt::UserRole + 2;  // a block item's fragment text
constexpr int kNoteRole = Qt::UserRole + 3;      // greyed after the name (a block's origin)

QString portLines(const std::vector<graph::PortSpec>& ports) {
  QStringList lines;
  for (const graph::PortSpec& p : ports) {
    QString line = QStringLiteral("<i>%1</i>").arg(QString::fromStdString(p.name).toHtmlEscaped());
    if (p.variadic) line += QObject::tr(" (any number)");
    if (!p.required) line += QObject::tr(" (optional)");
    lines << line + QStringLiteral(": ") + QString::fromStdString(p.doc).toHtmlEscaped();
  }
  return lines.join(QStringLiteral("<br>"));
}

QString layerToolTip(const graph::LayerType& t) {
  const QString name = QString::fromStdString(t.name), display = QString::fromStdString(t.display_name);
  QString tip = QStringLiteral("<qt><b>%1</b>").arg(display.toHtmlEscaped());
  if (name != display) tip += QStringLiteral(" &nbsp;(%1)").arg(name.toHtmlEscaped());
  tip += QStringLiteral("<br>") + QString::fromStdString(t.description).toHtmlEscaped();
  if (!t.inputs.empty()) tip += QObject::tr("<p><b>Inputs</b><br>%1</p>").arg(portLines(t.inputs));
  if (!t.outputs.empty()) tip += QObject::tr("<p><b>Outputs</b><br>%1</p>").arg(portLines(t.outputs));
  return tip + QStringLiteral("</qt>");
}

// Draws a layer's type name ("Conv2d", as in project files and on nodes) greyed after its
// display name, when the two differ and the row has room for all of it. The row's size hint is
// the display name's alone, so the palette's width is set by the names people read.
class LayerDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;

  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
    QStyledItemDelegate::paint(painter, option, index);
    const QString type = typeShown(index);
    if (type.isEmpty()) return;
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QStyle* style = opt.widget ? opt.widget->style() : QApplication::style();
    QRect rect = style->subElementRect(QStyle::SE_ItemViewItemText, &opt, opt.widget);
    // The style insets the text by the focus frame margin, plus one.
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, &opt, opt.widget) + 1;
    rect.setLeft(rect.left() + margin + opt.fontMetrics.horizontalAdvance(opt.text + QStringLiteral("  ")));
    rect.setRight(rect.right() - margin);
    if (rect.width() < opt.fontMetrics.horizontalAdvance(type)) return;  // whole or not at all
    const Theme& theme = ThemeManager::instance().theme();
    QColor colour = opt.state & QStyle::State_Selected ? opt.palette.color(QPalette::HighlightedText) : theme.mutedText;
    if (opt.state & QStyle::State_Selected) colour.setAlphaF(0.75f);
    painter->save();
    painter->setPen(colour);
    painter->setFont(opt.font);
    painter->drawText(rect, Qt::AlignLeft | Qt::AlignVCenter, type);
    painter->restore();
  }

 private:
  static QString typeShown(const QModelIndex& index) {
    if (const QString note = index.data(kNoteRole).toString(); !note.isEmpty()) return note;
    const QString type = index.data(kTypeRole).toString();
    return type == index.data(Qt::DisplayRole).toString() ? QString() : type;
  }
};

// Drags carry the layer type, not Qt's generic item data.
class LayerTree : public QTreeWidget {
 public:
  using QTreeWidget::QTreeWidget;
  // The widest row, indentation included.
  int contentWidth() const { return sizeHintForColumn(0); }

 protected:
  void startDrag(Qt::DropActions) override {
    QTreeWidgetItem* item = currentItem();
    const QString type = item ? item->data(0, kTypeRole).toString() : QString();
    const QByteArray fragment = item ? item->data(0, kFragmentRole).toByteArray() : QByteArray();
    if (type.isEmpty() && fragment.isEmpty()) return;
    auto* drag = new QDrag(this);
    if (type.isEmpty()) {
      auto* data = new QMimeData;
      data->setData(QString::fromLatin1(kGraphMimeType), fragment);
      drag->setMimeData(data);
    } else {
      drag->setMimeData(LayerPalette::mimeDataForType(type));
    }
    drag->setPixmap(item->parent()->icon(0).pixmap(QSize(24, 24), devicePixelRatioF()));
    drag->exec(Qt::CopyAction);
  }
};

bool isEnter(const QKeyEvent* e) { return e->key() == Qt::Key_Return || e->key() == Qt::Key_Enter; }

// A layer or a block, not a group or a hint.
bool activatable(const QTreeWidgetItem* item) {
  return item && (!item->data(0, kTypeRole).toString().isEmpty() || !item->data(0, kFragmentRole).toByteArray().isEmpty());
}

}  // namespace

LayerPalette::LayerPalette(QWidget* parent)
    : QWidget(parent), search_(new QLineEdit), tree_(new LayerTree), my_blocks_(new QTreeWidgetItem(tree_, {tr("My blocks")})) {
  search_->setPlaceholderText(tr("Search layers"));
  search_->setClearButtonEnabled(true);
  search_icon_ = search_->addAction(QIcon(), QLineEdit::LeadingPosition);
  search_->installEventFilter(this);
  setFocusProxy(search_);

  tree_->setHeaderHidden(true);
  tree_->setItemDelegate(new LayerDelegate(tree_));
  tree_->setDragDropMode(QAbstractItemView::DragOnly);
  tree_->setUniformRowHeights(true);
  tree_->installEventFilter(this);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  layout->addWidget(search_);
  layout->addWidget(tree_);

  populate();
  applyTheme();
  connect(search_, &QLineEdit::textChanged, this, &LayerPalette::applyFilter);
  connect(tree_, &QTreeWidget::itemDoubleClicked, this, &LayerPalette::activate);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &LayerPalette::applyTheme);
}

QSize LayerPalette::sizeHint() const {
  // The tree measures every shown row with its indentation; the frame and a vertical
  // scroll bar (the list is usually taller than the window) come on top.
  const int rows = static_cast<const LayerTree*>(tree_)->contentWidth();
  const int chrome = 2 * tree_->frameWidth() + tree_->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, tree_) + 4;
  return {std::max(rows + chrome, search_->sizeHint().width()), QWidget::sizeHint().height()};
}

void LayerPalette::populate() {
  my_blocks_->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
  QFont bold = my_blocks_->font(0);
  bold.setBold(true);
  my_blocks_->setFont(0, bold);
  setMyBlocks({});
  QHash<QString, QTreeWidgetItem*> categories;
  for (const graph::LayerType& t : graph::Registry::instance().types()) {
    const QString category = QString::fromStdString(t.category);
    QTreeWidgetItem*& group = categories[category];
    if (!group) {
      group = new QTreeWidgetItem(tree_, {category});
      group->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
      QFont bold = group->font(0);
      bold.setBold(true);
      group->setFont(0, bold);
    }
    const QString name = QString::fromStdString(t.name);
    auto* item = new QTreeWidgetItem(group, {QString::fromStdString(t.display_name)});
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDragEnabled);
    item->setData(0, kTypeRole, name);
    item->setData(0, kSearchRole,
                  QStringList{name, item->text(0), QString::fromStdString(t.description)}.join(QLatin1Char('\n')));
    item->setToolTip(0, layerToolTip(t));
  }
  tree_->expandAll();
}

void LayerPalette::applyTheme() {
  search_icon_->setIcon(icon(QStringLiteral("search")));
  const Theme& theme = ThemeManager::instance().theme();
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* group = tree_->topLevelItem(i);
    group->setIcon(0, group == my_blocks_ ? icon(QStringLiteral("block"), theme.dark ? theme.block.lighter(170) : theme.block)
                                          : categoryIcon(group->text(0)));
  }
}

// Every word must occur in the type's name, display name, description or category.
void LayerPalette::applyFilter(const QString& text) {
  const QStringList words = text.split(QLatin1Char(' '), Qt::SkipEmptyParts);
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* group = tree_->topLevelItem(i);
    int shown = 0;
    for (int j = 0; j < group->childCount(); ++j) {
      QTreeWidgetItem* item = group->child(j);
      const QString haystack = item->data(0, kSearchRole).toString() + QLatin1Char('\n') + group->text(0);
      const bool match = std::all_of(words.begin(), words.end(),
                                     [&](const QString& w) { return haystack.contains(w, Qt::CaseInsensitive); });
      item->setHidden(!match);
      shown += match;
    }
    group->setHidden(shown == 0);
    if (!words.isEmpty() && shown > 0) group->setExpanded(true);
  }
  // Keep a visible layer current, so Enter in the search box adds the best match: one whose name
  // has every word ("conv" finds Conv2d before a layer whose description mentions convolutions).
  QTreeWidgetItem* current = tree_->currentItem();
  if (!words.isEmpty() && (!current || current->isHidden() || current->parent() == nullptr))
    tree_->setCurrentItem(firstVisibleLayer(words));
}

void LayerPalette::setMyBlocks(const std::vector<PaletteBlock>& blocks) {
  qDeleteAll(my_blocks_->takeChildren());
  for (const PaletteBlock& b : blocks) {
    auto* item = new QTreeWidgetItem(my_blocks_, {b.name});
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDragEnabled);
    item->setData(0, kFragmentRole, b.fragment);
    item->setData(0, kNoteRole, b.note);
    item->setData(0, kSearchRole, b.name + QLatin1Char('\n') + b.note);
    item->setToolTip(0, b.tooltip);
  }
  if (blocks.empty()) {  // says how to make one
    // Short: the palette's width follows its longest row.
    auto* hint = new QTreeWidgetItem(my_blocks_, {tr("None yet: group layers (Ctrl+G)")});
    hint->setToolTip(0, tr("Select layers on the canvas, then Edit ▸ Group into Block"));
    hint->setFlags(Qt::NoItemFlags);
  }
  my_blocks_->setExpanded(true);
  applyFilter(search_->text());
}

void LayerPalette::activate(const QTreeWidgetItem* item) {
  if (!item) return;
  if (const QString type = item->data(0, kTypeRole).toString(); !type.isEmpty())
    emit addRequested(type);
  else if (const QByteArray fragment = item->data(0, kFragmentRole).toByteArray(); !fragment.isEmpty())
    emit fragmentRequested(fragment);
}

QTreeWidgetItem* LayerPalette::firstVisibleLayer(const QStringList& name_words) const {
  QTreeWidgetItem* first = nullptr;
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
    const QTreeWidgetItem* group = tree_->topLevelItem(i);
    if (group->isHidden()) continue;
    for (int j = 0; j < group->childCount(); ++j) {
      QTreeWidgetItem* item = group->child(j);
      if (item->isHidden()) continue;
      const QString name = item->text(0) + QLatin1Char('\n') + item->data(0, kTypeRole).toString();
      if (std::all_of(name_words.begin(), name_words.end(), [&](const QString& w) { return name.contains(w, Qt::CaseInsensitive); }))
        return item;
      if (!first) first = item;
    }
  }
  return first;
}

bool LayerPalette::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() != QEvent::KeyPress) return QWidget::eventFilter(watched, event);
  const auto* key = static_cast<QKeyEvent*>(event);
  if (watched == search_) {
    if (key->key() == Qt::Key_Escape && !search_->text().isEmpty()) {
      search_->clear();
      return true;
    }
    if (key->key() == Qt::Key_Down) {
      QTreeWidgetItem* current = tree_->currentItem();
      if (!current || current->isHidden()) tree_->setCurrentItem(firstVisibleLayer());
      tree_->setFocus(Qt::TabFocusReason);
      return true;
    }
    if (isEnter(key) && activatable(tree_->currentItem()) && !tree_->currentItem()->isHidden()) {
      activate(tree_->currentItem());
      return true;
    }
  } else if (watched == tree_ && isEnter(key) && activatable(tree_->currentItem())) {
    activate(tree_->currentItem());
    return true;
  }
  return QWidget::eventFilter(watched, event);
}

QString LayerPalette::currentType() const {
  const QTreeWidgetItem* item = tree_->currentItem();
  return item ? item->data(0, kTypeRole).toString() : QString();
}

void LayerPalette::setFilter(const QString& text) { search_->setText(text); }

QMimeData* LayerPalette::mimeDataForType(const QString& type) {
  auto* data = new QMimeData;
  data->setData(QString::fromLatin1(kLayerMimeType), type.toUtf8());
  data->setText(type);
  return data;
}

std::optional<QString> LayerPalette::typeFromMimeData(const QMimeData* data) {
  const QString format = QString::fromLatin1(kLayerMimeType);
  if (!data || !data->hasFormat(format)) return std::nullopt;
  const QString type = QString::fromUtf8(data->data(format));
  if (!graph::Registry::instance().find(type.toStdString())) return std::nullopt;
  return type;
}

}  // namespace plexus::widgets
