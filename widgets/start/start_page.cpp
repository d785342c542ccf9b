#include "start/start_page.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLayout>
#include <QLocale>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

#include "common/icons.h"
#include "common/panel_style.h"
#include "common/theme.h"
#include "editor/graph_thumbnail.h"

namespace plexus::widgets {

// Cards in equal columns, as many as fit at least `min_width` wide (so the grid flows with the
// window), each row as tall as its tallest card.
class CardGrid : public QLayout {
 public:
  CardGrid(int min_width, int spacing) : min_width_(min_width), gap_(spacing) {}
  ~CardGrid() override {
    while (QLayoutItem* item = takeAt(0)) delete item;
  }
  void addItem(QLayoutItem* item) override { items_.append(item); }
  int count() const override { return int(items_.size()); }
  QLayoutItem* itemAt(int i) const override { return items_.value(i); }
  QLayoutItem* takeAt(int i) override { return i >= 0 && i < items_.size() ? items_.takeAt(i) : nullptr; }
  Qt::Orientations expandingDirections() const override { return Qt::Horizontal; }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override { return arrange(QRect(0, 0, width, 0), false); }
  QSize minimumSize() const override {
    const QMargins m = contentsMargins();
    return {min_width_ + m.left() + m.right(), heightForWidth(min_width_ + m.left() + m.right())};
  }
  QSize sizeHint() const override {
    const int width = 3 * min_width_ + 2 * gap_;
    return {width, heightForWidth(width)};
  }
  void setGeometry(const QRect& rect) override {
    QLayout::setGeometry(rect);
    arrange(rect, true);
  }

 private:
  int arrange(const QRect& rect, bool apply) const {
    const QMargins m = contentsMargins();
    const QRect r = rect.marginsRemoved(m);
    const int columns = std::max(1, (r.width() + gap_) / (min_width_ + gap_));
    const int width = std::max(min_width_, (r.width() - (columns - 1) * gap_) / columns);
    int y = r.y();
    for (int first = 0; first < items_.size(); first += columns) {
      const int last = std::min(int(items_.size()), first + columns);
      int height = 0;
      for (int i = first; i < last; ++i) {
        const QLayoutItem* item = items_[i];
        height = std::max(height, item->hasHeightForWidth() ? item->heightForWidth(width) : item->sizeHint().height());
      }
      // The widget itself: its item would centre a shorter card in the row, and a row of cards
      // reads best as one height.
      if (apply)
        for (int i = first; i < last; ++i) {
          const QRect cell(r.x() + (i - first) * (width + gap_), y, width, height);
          if (QWidget* w = items_[i]->widget())
            w->setGeometry(cell);
          else
            items_[i]->setGeometry(cell);
        }
      y += height + gap_;
    }
    if (!items_.isEmpty()) y -= gap_;
    return y - r.y() + m.top() + m.bottom();
  }

  QList<QLayoutItem*> items_;
  int min_width_, gap_;
};

namespace {

constexpr int kCardMinWidth = 340;  // three columns at 1280 pixels: pictures big enough to read
constexpr int kCardPreviewHeight = 84;  // most graphs are wide chains: room for their height
constexpr int kRowIconSize = 36;

// A line of text that shortens itself in the middle, where a path has the least to say.
class ElidedLabel : public QWidget {
 public:
  ElidedLabel(const QString& text, QWidget* parent) : QWidget(parent), text_(text) {
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    setToolTip(text);
  }
  QSize sizeHint() const override { return {fontMetrics().horizontalAdvance(text_), fontMetrics().height()}; }
  QSize minimumSizeHint() const override { return {0, fontMetrics().height()}; }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(rect(), Qt::AlignLeft | Qt::AlignVCenter, fontMetrics().elidedText(text_, Qt::ElideMiddle, width()));
  }

 private:
  QString text_;
};

QLabel* label(const QString& text, QWidget* parent, bool wrap = true) {
  auto* l = new QLabel(text, parent);
  l->setForegroundRole(QPalette::WindowText);  // not the ButtonText an item's child would take
  l->setWordWrap(wrap);
  l->setTextFormat(Qt::PlainText);
  return l;
}

void setMuted(QWidget* w) { setColour(w, QPalette::WindowText, ThemeManager::instance().theme().mutedText); }

void scaleFont(QWidget* w, double factor, bool bold) {
  QFont f = w->font();
  f.setPointSizeF(f.pointSizeF() * factor);
  f.setBold(bold);
  w->setFont(f);
}

QLabel* heading(const QString& text, QWidget* parent) {
  QLabel* l = label(text, parent, false);
  scaleFont(l, 1.25, true);
  return l;
}

// Labels inside an item must not take its clicks.
void passClicks(QWidget* item) {
  for (QWidget* child : item->findChildren<QWidget*>()) child->setAttribute(Qt::WA_TransparentForMouseEvents);
}

void deleteLayoutItems(QLayout* layout) {
  while (QLayoutItem* item = layout->takeAt(0)) {
    delete item->widget();
    if (QLayout* inner = item->layout()) deleteLayoutItems(inner);  // a layout is its own item
    delete item;
  }
}

}  // namespace

// ---- GraphPreview ----------------------------------------------------------------------------

GraphPreview::GraphPreview(graph::Graph graph, QSize size, QWidget* parent)
    : QWidget(parent), graph_(std::move(graph)), size_hint_(size) {
  setMinimumHeight(size.height());
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

QImage GraphPreview::image() {
  const qreal dpr = devicePixelRatioF();
  if (image_.isNull() || image_.deviceIndependentSize().toSize() != size() || image_.devicePixelRatio() != dpr)
    image_ = graphThumbnail(graph_, size(), dpr);
  return image_;
}

void GraphPreview::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  QPainterPath frame;
  frame.addRoundedRect(QRectF(rect()), 6, 6);
  p.setClipPath(frame);
  p.drawImage(QPointF(0, 0), image());
}

// ---- StartItem -------------------------------------------------------------------------------

StartItem::StartItem(QWidget* parent) : QAbstractButton(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setCursor(Qt::PointingHandCursor);
  setAttribute(Qt::WA_Hover);  // repainted as the mouse comes and goes
}

void StartItem::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const QPalette& pal = palette();
  const bool focus = hasFocus(), lit = isEnabled() && (underMouse() || isDown());
  const QRectF r = QRectF(rect()).adjusted(1, 1, -1, -1);
  p.setBrush(isEnabled() ? pal.color(QPalette::Base) : pal.color(QPalette::Window));
  QPen pen(focus || lit ? pal.color(QPalette::Highlight) : pal.color(QPalette::Mid), focus ? 2 : 1);
  if (!isEnabled()) pen.setStyle(Qt::DashLine);
  p.setPen(pen);
  p.drawRoundedRect(r, 8, 8);
}

void StartItem::keyPressEvent(QKeyEvent* event) {
  const bool plain = (event->modifiers() & ~Qt::KeypadModifier) == Qt::NoModifier;
  if ((event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter) && plain) {
    click();
    return;
  }
  QAbstractButton::keyPressEvent(event);
}

// ---- StartPage -------------------------------------------------------------------------------

StartPage::StartPage(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("startPage"));
  auto* scroll = new QScrollArea(this);
  scroll->setObjectName(QStringLiteral("startScroll"));
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setFocusPolicy(Qt::NoFocus);  // Tab goes from choice to choice; the page scrolls to each
  auto* content = new QWidget(scroll);
  auto* column = new QWidget(content);
  column->setMaximumWidth(1500);  // on a wide screen, lines stay readable and cards card-sized
  auto* centre = new QHBoxLayout(content);
  centre->setContentsMargins(0, 0, 0, 0);
  centre->addStretch(1);
  centre->addWidget(column, 100);
  centre->addStretch(1);
  scroll->setWidget(content);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(scroll);

  auto* page = new QVBoxLayout(column);
  page->setContentsMargins(32, 24, 32, 32);
  page->setSpacing(22);

  auto* header = new QHBoxLayout;
  header->setSpacing(14);
  auto* logo = new QLabel(column);
  logo->setPixmap(appIcon().pixmap(52, 52));
  header->addWidget(logo);
  auto* titles = new QVBoxLayout;
  titles->setSpacing(2);
  QLabel* name = label(tr("Plexus"), column, false);
  scaleFont(name, 1.9, true);
  QLabel* tagline = label(tr("Design a neural network by wiring layers together, then train it and try it out."), column);
  tagline->setObjectName(QStringLiteral("startTagline"));
  titles->addWidget(name);
  titles->addWidget(tagline);
  header->addLayout(titles, 1);
  page->addLayout(header);

  auto* top = new QHBoxLayout;
  top->setSpacing(32);
  auto* start = new QVBoxLayout;
  start->setSpacing(10);
  start->addWidget(heading(tr("New project"), column));
  templates_box_ = new QVBoxLayout;
  templates_box_->setSpacing(10);
  start->addLayout(templates_box_);
  auto* buttons = new QHBoxLayout;
  blank_ = new QPushButton(tr("Blank Project"), column);
  blank_->setObjectName(QStringLiteral("startBlank"));
  blank_->setToolTip(tr("An empty canvas: drag layers from the Layers panel"));
  open_ = new QPushButton(tr("Open…"), column);
  open_->setObjectName(QStringLiteral("startOpen"));
  for (QPushButton* b : {blank_, open_}) {
    b->setAutoDefault(true);  // Enter presses a focused button, as Space does
    buttons->addWidget(b);
  }
  buttons->addStretch(1);
  start->addLayout(buttons);
  start->addStretch(1);
  connect(blank_, &QPushButton::clicked, this, &StartPage::blankRequested);
  connect(open_, &QPushButton::clicked, this, &StartPage::openDialogRequested);

  auto* recent = new QVBoxLayout;
  recent->setSpacing(10);
  recent->addWidget(heading(tr("Recent projects"), column));
  recent_box_ = new QVBoxLayout;
  recent_box_->setSpacing(6);
  recent->addLayout(recent_box_);
  recent->addStretch(1);
  top->addLayout(start, 1);
  top->addLayout(recent, 1);
  page->addLayout(top);

  examples_section_ = new QWidget(column);
  auto* examples = new QVBoxLayout(examples_section_);
  examples->setContentsMargins(0, 0, 0, 0);
  examples->setSpacing(10);
  examples->addWidget(heading(tr("Examples"), examples_section_));
  QLabel* hint = label(tr("Each opens as a project of its own, ready to train once its data is on this machine."),
                       examples_section_);
  hint->setObjectName(QStringLiteral("startExamplesHint"));
  examples->addWidget(hint);
  examples_grid_ = new CardGrid(kCardMinWidth, 16);
  examples->addLayout(examples_grid_);
  page->addWidget(examples_section_);
  page->addStretch(1);

  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &StartPage::rebuild);
  rebuild();
}

void StartPage::setRecentFiles(const QStringList& paths) {
  recent_ = paths;
  rebuild();
}

void StartPage::setTemplates(std::vector<StartProject> templates) {
  templates_ = std::move(templates);
  rebuild();
}

void StartPage::setExamples(std::vector<StartProject> examples) {
  examples_ = std::move(examples);
  rebuild();
}

void StartPage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  // Enter opens the likeliest choice at once: the last project, else the first template.
  if (focusWidget() && isAncestorOf(focusWidget())) return;
  for (StartItem* item : recent_items_ + template_items_)
    if (item->isEnabled()) return item->setFocus(Qt::OtherFocusReason);
}

StartItem* StartPage::projectItem(const StartProject& project, bool example, QWidget* parent) {
  const Theme& theme = ThemeManager::instance().theme();
  auto* item = new StartItem(parent);
  item->setText(project.title);  // what the button is called, for accessibility
  item->setToolTip(project.dataset_note.isEmpty() ? project.description : project.description + "\n\n" + project.dataset_note);
  QLabel* title = label(project.title, item, false);
  scaleFont(title, 1.1, true);
  QLabel* description = label(project.description, item);
  QLabel* status = label(project.dataset_present ? tr("✔ Its data is on this machine") : tr("⚠ Its data is not on this machine"),
                         item);
  status->setObjectName(QStringLiteral("startDataStatus"));
  setColour(status, QPalette::WindowText, project.dataset_present ? theme.mutedText : theme.warning);
  auto* dataset = new ElidedLabel(tr("Dataset: %1").arg(project.dataset), item);
  dataset->setObjectName(QStringLiteral("startDataset"));
  setMuted(dataset);
  auto* text = new QVBoxLayout;
  text->setSpacing(4);
  text->addWidget(title);
  text->addWidget(description);
  text->addStretch(1);
  text->addWidget(dataset);
  text->addWidget(status);
  // Where the data comes from matters to whoever does not have it yet (and is in the tooltip).
  if (!project.dataset_present && !project.dataset_note.isEmpty()) {
    QLabel* note = label(project.dataset_note, item);
    note->setObjectName(QStringLiteral("startDataNote"));
    setMuted(note);
    scaleFont(note, 0.92, false);
    text->addWidget(note);
  }
  if (example) {
    auto* card = new QVBoxLayout(item);
    card->setContentsMargins(10, 10, 10, 12);
    card->setSpacing(8);
    card->addWidget(new GraphPreview(project.graph, QSize(kCardMinWidth, kCardPreviewHeight), item));
    card->addLayout(text, 1);
  } else {
    auto* symbol = new QLabel(item);
    symbol->setPixmap(categoryIcon(project.category).pixmap(kRowIconSize, kRowIconSize));
    auto* row = new QHBoxLayout(item);
    row->setContentsMargins(12, 10, 12, 10);
    row->setSpacing(12);
    row->addWidget(symbol, 0, Qt::AlignTop);
    row->addLayout(text, 1);
  }
  passClicks(item);
  return item;
}

StartItem* StartPage::recentItem(const QString& path, QWidget* parent) {
  const QFileInfo file(path);
  auto* item = new StartItem(parent);
  item->setText(file.completeBaseName());
  item->setToolTip(QDir::toNativeSeparators(path));
  QLabel* name = label(file.completeBaseName(), item, false);
  scaleFont(name, 1.05, true);
  auto* folder = new ElidedLabel(QDir::toNativeSeparators(file.absolutePath()), item);
  setMuted(folder);
  QLabel* when = label(QString(), item, false);
  if (file.exists()) {
    const QDateTime modified = file.lastModified();
    when->setText(QLocale().toString(modified.date(), QLocale::ShortFormat) + QStringLiteral("  ") +
                  QLocale().toString(modified.time(), QStringLiteral("HH:mm")));
    when->setToolTip(tr("Last modified"));
    setMuted(when);
  } else {
    // Kept in the list (a drive may come back) but not offered: opening it could only fail.
    item->setEnabled(false);
    item->setToolTip(tr("%1 is no longer there: moved, renamed or deleted").arg(QDir::toNativeSeparators(path)));
    when->setText(tr("Not found"));
    setColour(when, QPalette::WindowText, ThemeManager::instance().theme().warning);
    setMuted(name);
  }
  auto* text = new QVBoxLayout;
  text->setSpacing(2);
  text->addWidget(name);
  text->addWidget(folder);
  auto* row = new QHBoxLayout(item);
  row->setContentsMargins(12, 8, 12, 8);
  row->setSpacing(12);
  row->addLayout(text, 1);
  row->addWidget(when, 0, Qt::AlignRight | Qt::AlignVCenter);
  passClicks(item);
  connect(item, &StartItem::clicked, this, [this, path] { emit openRequested(path); });
  return item;
}

void StartPage::rebuild() {
  QWidget* parent = blank_->parentWidget();
  blank_->setIcon(icon(QStringLiteral("new")));  // tinted for the theme
  open_->setIcon(icon(QStringLiteral("open")));
  recent_items_.clear();
  template_items_.clear();
  example_items_.clear();
  deleteLayoutItems(templates_box_);
  deleteLayoutItems(recent_box_);
  deleteLayoutItems(examples_grid_);

  for (const StartProject& t : templates_) {
    StartItem* item = projectItem(t, /*example=*/false, parent);
    item->setObjectName(QStringLiteral("startTemplate_") + t.key);
    connect(item, &StartItem::clicked, this, [this, key = t.key] { emit templateRequested(key); });
    templates_box_->addWidget(item);
    template_items_ << item;
  }

  bool missing = false;
  for (const QString& path : recent_) {
    StartItem* item = recentItem(path, parent);
    missing |= !item->isEnabled();
    recent_box_->addWidget(item);
    recent_items_ << item;
  }
  QPushButton* forget = nullptr;
  if (recent_.isEmpty()) {
    QLabel* none = label(tr("None yet: the projects you open and save are listed here."), parent);
    setMuted(none);
    recent_box_->addWidget(none);
  }
  if (!recent_.isEmpty() && missing) {
    forget = new QPushButton(tr("Remove Missing Projects from the List"), parent);
    forget->setObjectName(QStringLiteral("startForgetMissing"));
    forget->setAutoDefault(true);
    connect(forget, &QPushButton::clicked, this, &StartPage::forgetMissingRequested);
    auto* row = new QHBoxLayout;
    row->addWidget(forget);
    row->addStretch(1);
    recent_box_->addLayout(row);
  }

  if (recent_.isEmpty() && !examples_.empty()) {
    // Where a first start leaves room, the way in.
    recent_box_->addSpacing(12);
    recent_box_->addWidget(heading(tr("First steps"), parent));
    QLabel* steps = label(QString(), parent);
    steps->setObjectName(QStringLiteral("startFirstSteps"));
    steps->setTextFormat(Qt::RichText);
    steps->setText(tr("<ol style='margin-left:-20px'>"
                      "<li>Open the <b>mnist_mlp</b> example below: six layers that read handwritten digits.</li>"
                      "<li>Press <b>Train</b> (F5) and watch it learn on the Training page.</li>"
                      "<li>Draw a digit on the <b>Try It</b> page, or change a layer in the editor and train again.</li>"
                      "</ol>"));
    recent_box_->addWidget(steps);
  }

  for (const StartProject& e : examples_) {
    StartItem* item = projectItem(e, /*example=*/true, examples_section_);
    item->setObjectName(QStringLiteral("startExample_") + QFileInfo(e.key).completeBaseName());
    connect(item, &StartItem::clicked, this, [this, path = e.key] { emit openRequested(path); });
    examples_grid_->addWidget(item);
    example_items_ << item;
  }
  examples_section_->setVisible(!examples_.empty());

  // Tab goes down the page as it reads: new, recent, examples.
  QList<QWidget*> order;
  for (StartItem* item : template_items_) order << item;
  order << blank_ << open_;
  for (StartItem* item : recent_items_) order << item;
  if (forget) order << forget;
  for (StartItem* item : example_items_) order << item;
  for (qsizetype i = 1; i < order.size(); ++i) setTabOrder(order[i - 1], order[i]);
}

}  // namespace plexus::widgets
