#include "tryit/attention_view.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "common/panel_style.h"
#include "tryit/heat_colours.h"

namespace plexus::widgets {

namespace {

QFont axisFont(const QWidget* w) {
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSizeF(w->font().pointSizeF());
  return mono;
}

// A character as an axis shows it: a space must be seen.
QString shownChar(const QString& c) { return c == QLatin1String(" ") ? QStringLiteral("␣") : c; }

}  // namespace

AttentionGrid::AttentionGrid(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("attentionGrid"));
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void AttentionGrid::setMaps(std::vector<Map> maps, int queries, int keys, const QStringList& query_labels,
                            const QStringList& key_labels) {
  maps_ = std::move(maps);
  queries_ = queries;
  keys_ = keys;
  query_labels_ = query_labels;
  key_labels_ = key_labels;
  update();
}

// Maps in the most square grid whose cells come out largest.
AttentionGrid::Geometry AttentionGrid::geometry() const {
  Geometry g;
  if (maps_.empty() || queries_ < 1 || keys_ < 1) return g;
  const QFontMetrics fm(axisFont(this));
  g.label = fm.horizontalAdvance(QLatin1Char('M')) + fm.height() / 2;
  g.title = maps_.size() > 1 || !maps_.front().title.isEmpty() ? fm.height() + 4 : 0;
  const int n = int(maps_.size()), gap = 12;
  for (int columns = 1; columns <= n; ++columns) {
    const int rows = (n + columns - 1) / columns;
    const int w = (width() - (columns - 1) * gap) / columns - g.label;
    const int h = (height() - (rows - 1) * gap) / rows - g.label - g.title;
    const int cell = std::min(w / keys_, h / queries_);
    if (cell > g.cell) {
      g.cell = cell;
      g.columns = columns;
    }
  }
  g.cell = std::max(g.cell, 2);
  g.panelWidth = g.label + g.cell * keys_ + gap;
  g.panelHeight = g.title + g.label + g.cell * queries_ + gap;
  return g;
}

QRect AttentionGrid::matrixRect(int map) const {
  const Geometry g = geometry();
  const int col = map % g.columns, row = map / g.columns;
  return QRect(col * g.panelWidth + g.label, row * g.panelHeight + g.title + g.label, g.cell * keys_,
               g.cell * queries_);
}

QRect AttentionGrid::cellRect(int map, int query, int key) const {
  const QRect m = matrixRect(map);
  const int cell = keys_ ? m.width() / keys_ : 0;
  return QRect(m.left() + key * cell, m.top() + query * cell, cell, cell);
}

bool AttentionGrid::cellAt(const QPoint& pos, int* map, int* query, int* key) const {
  for (int m = 0; m < int(maps_.size()); ++m) {
    const QRect r = matrixRect(m);
    if (!r.contains(pos) || keys_ < 1) continue;
    const int cell = r.width() / keys_;
    *map = m;
    *key = std::min(keys_ - 1, (pos.x() - r.left()) / cell);
    *query = std::min(queries_ - 1, (pos.y() - r.top()) / cell);
    return true;
  }
  return false;
}

QString AttentionGrid::describe(int map, int query, int key) const {
  const Map& m = maps_[size_t(map)];
  return tr("%1: query %2 “%3” → key %4 “%5”: %6")
      .arg(m.title)
      .arg(query + 1)
      .arg(shownChar(query_labels_.value(query)))
      .arg(key + 1)
      .arg(shownChar(key_labels_.value(key)))
      .arg(double(m.values[size_t(query) * size_t(keys_) + size_t(key)]), 0, 'f', 3);
}

void AttentionGrid::mouseMoveEvent(QMouseEvent* event) {
  int map = 0, query = 0, key = 0;
  if (cellAt(event->position().toPoint(), &map, &query, &key))
    QToolTip::showText(event->globalPosition().toPoint(), describe(map, query, key), this, cellRect(map, query, key));
  else
    QToolTip::hideText();
}

void AttentionGrid::paintEvent(QPaintEvent*) {
  if (maps_.empty()) return;
  QPainter p(this);
  const Geometry g = geometry();
  p.setFont(axisFont(this));
  const QColor text = palette().color(QPalette::WindowText);
  for (int m = 0; m < int(maps_.size()); ++m) {
    const QRect r = matrixRect(m);
    p.setPen(text);
    if (g.title)
      p.drawText(QRect(r.left(), r.top() - g.label - g.title, r.width(), g.title), Qt::AlignHCenter | Qt::AlignBottom,
                 maps_[size_t(m)].title);
    const bool labels = g.cell >= 8;  // smaller cells leave no room for a character each
    for (int t = 0; t < queries_; ++t) {
      if (labels)
        p.drawText(QRect(r.left() - g.label, r.top() + t * g.cell, g.label - 2, g.cell),
                   Qt::AlignRight | Qt::AlignVCenter, shownChar(query_labels_.value(t)));
      for (int s = 0; s < keys_; ++s)
        p.fillRect(QRect(r.left() + s * g.cell, r.top() + t * g.cell, g.cell, g.cell),
                   heatColour(maps_[size_t(m)].values[size_t(t) * size_t(keys_) + size_t(s)]));
    }
    if (labels)
      for (int s = 0; s < keys_; ++s)
        p.drawText(QRect(r.left() + s * g.cell, r.top() - g.label, g.cell, g.label - 2),
                   Qt::AlignHCenter | Qt::AlignBottom, shownChar(key_labels_.value(s)));
  }
}

AttentionView::AttentionView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("attentionView"));
  node_ = new QComboBox(this);
  node_->setObjectName(QStringLiteral("attentionNode"));
  head_ = new QComboBox(this);
  head_->setObjectName(QStringLiteral("attentionHeads"));
  for (QComboBox* box : {node_, head_}) {
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(5);
    guardWheel(box);
  }
  grid_ = new AttentionGrid(this);
  legend_ = new HeatLegend(this);
  legend_->setEnds(QStringLiteral("0"), QStringLiteral("1"));
  legend_->setToolTip(tr("The weight a query position gives a key position; each row sums to 1"));
  caption_ = new QLabel(this);
  caption_->setObjectName(QStringLiteral("attentionCaption"));
  caption_->setWordWrap(true);
  error_ = errorLabel(QStringLiteral("attentionError"), this);

  auto* choosers = new QFormLayout;
  choosers->setContentsMargins(0, 0, 0, 0);
  choosers->addRow(tr("Node"), node_);
  choosers->addRow(tr("Heads"), head_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(sectionLabel(tr("Attention"), this));
  layout->addLayout(choosers);
  layout->addWidget(caption_);
  layout->addWidget(legend_);
  layout->addWidget(error_);
  layout->addWidget(grid_, 1);

  connect(node_, &QComboBox::currentIndexChanged, this, &AttentionView::nodeChanged);
  connect(head_, &QComboBox::currentIndexChanged, this, &AttentionView::render);
  showMessage(QString());
}

void AttentionView::setNodes(const QStringList& nodes) { replaceItemsKeepingChoice(node_, nodes, 0); }

QString AttentionView::node() const { return node_->currentText(); }

void AttentionView::chooseHeads(int choice) {
  const int index = head_->findData(choice);
  if (index >= 0) head_->setCurrentIndex(index);
}

void AttentionView::showWeights(const std::vector<float>& weights, int heads, int queries, int keys,
                                const QStringList& tokens) {
  if (heads != heads_) {  // the chooser's entries follow the node's heads; the choice stays where it can
    const int chosen = head_->count() ? head_->currentData().toInt() : kAllHeads;
    const QSignalBlocker quiet(head_);
    head_->clear();
    head_->addItem(tr("All %1 side by side").arg(heads), kAllHeads);
    head_->addItem(tr("Average of %1").arg(heads), kAverage);
    for (int h = 0; h < heads; ++h) head_->addItem(tr("Head %1").arg(h + 1), h);
    const int index = head_->findData(chosen);
    head_->setCurrentIndex(index >= 0 ? index : 0);
  }
  weights_ = weights;
  heads_ = heads;
  queries_ = queries;
  keys_ = keys;
  tokens_ = tokens;
  error_->hide();
  caption_->setText(
      tr("A row per query character: the weights it gives the keys (its row sums to 1). "
         "Hover a cell for its characters and weight."));
  legend_->show();
  render();
}

void AttentionView::render() {
  const size_t area = size_t(queries_) * size_t(keys_);
  if (heads_ < 1 || weights_.size() != size_t(heads_) * area) return grid_->setMaps({}, 0, 0, {}, {});
  const int choice = head_->currentData().toInt();
  std::vector<AttentionGrid::Map> maps;
  const auto head = [&](int h) {
    return AttentionGrid::Map{tr("Head %1").arg(h + 1),
                              std::vector<float>(weights_.begin() + std::ptrdiff_t(size_t(h) * area),
                                                 weights_.begin() + std::ptrdiff_t(size_t(h + 1) * area))};
  };
  if (choice == kAllHeads) {
    for (int h = 0; h < heads_; ++h) maps.push_back(head(h));
  } else if (choice == kAverage) {
    AttentionGrid::Map mean{tr("Average of %1 heads").arg(heads_), std::vector<float>(area, 0.f)};
    for (int h = 0; h < heads_; ++h)
      for (size_t i = 0; i < area; ++i) mean.values[i] += weights_[size_t(h) * area + i] / float(heads_);
    maps.push_back(std::move(mean));
  } else {
    maps.push_back(head(std::clamp(choice, 0, heads_ - 1)));
  }
  QStringList keys = tokens_;
  if (keys_ != queries_) {
    keys.clear();
    for (int s = 0; s < keys_; ++s) keys << QString::number(s + 1);
  }
  grid_->setMaps(std::move(maps), queries_, keys_, tokens_, keys);
}

void AttentionView::showMessage(const QString& message) {
  weights_.clear();
  heads_ = 0;
  error_->hide();
  caption_->setText(message);
  legend_->hide();
  grid_->setMaps({}, 0, 0, {}, {});
}

void AttentionView::showError(const QString& message) {
  showMessage(QString());
  error_->setText(message);
  error_->show();
}

QString AttentionView::caption() const { return caption_->text(); }

QString AttentionView::errorText() const { return error_->isHidden() ? QString() : error_->text(); }

}  // namespace plexus::widgets
