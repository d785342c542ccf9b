#include "featuremaps/feature_map_view.h"

#include <QLabel>
#include <QScrollArea>
#include <QTimer>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "common/panel_style.h"
#include "featuremaps/activation_gallery.h"
#include "featuremaps/colour_map.h"
#include "featuremaps/heat_matrix.h"
#include "featuremaps/tile_grid.h"

namespace plexus::widgets {
namespace {

QString shapeText(const Shape& shape) {
  QStringList dims;
  for (int64_t d : shape) dims << QString::number(d);
  return QStringLiteral("[%1]").arg(dims.join(QStringLiteral(", ")));
}

// Each channel on its own range: a weak channel's pattern shows as clearly as a strong one's.
TileGrid::Tile channelTile(const float* v, int64_t h, int64_t w, const QString& caption) {
  const auto [lo, hi] = std::minmax_element(v, v + h * w);
  return {colourMapped(v, h, w, *lo, *hi), caption,
          QObject::tr("%1: %2 … %3").arg(caption).arg(*lo, 0, 'g', 3).arg(*hi, 0, 'g', 3)};
}

// One filter [in, kh, kw]: in colour for three input channels (each on the filter's own range,
// as weights are shown), else the mean over them on the colour map.
TileGrid::Tile filterTile(const float* v, int64_t in, int64_t kh, int64_t kw, int index) {
  const int64_t n = kh * kw;
  const QString caption = QString::number(index);
  if (in == 3) {
    const auto range = std::minmax_element(v, v + 3 * n);
    const float lo = *range.first, hi = *range.second, span = std::max(hi - lo, 1e-12f);
    QImage image(int(kw), int(kh), QImage::Format_RGB32);
    const auto level = [&](int64_t c, int64_t i) { return int(255 * (v[c * n + i] - lo) / span + 0.5f); };
    for (int64_t i = 0; i < n; ++i)
      image.setPixel(int(i % kw), int(i / kw), qRgb(level(0, i), level(1, i), level(2, i)));
    return {image, caption, QObject::tr("filter %1: %2 … %3").arg(index).arg(lo, 0, 'g', 3).arg(hi, 0, 'g', 3)};
  }
  std::vector<float> mean(size_t(n), 0.0f);
  for (int64_t c = 0; c < in; ++c)
    for (int64_t i = 0; i < n; ++i) mean[size_t(i)] += v[c * n + i] / float(in);
  TileGrid::Tile tile = channelTile(mean.data(), kh, kw, caption);
  tile.toolTip = QObject::tr("filter %1 (the mean over its %2 input channels): %3")
                     .arg(index)
                     .arg(in)
                     .arg(tile.toolTip.section(QStringLiteral(": "), 1));
  return tile;
}

}  // namespace

FeatureMapView::FeatureMapView(QWidget* parent) : QWidget(parent) {
  pages_ = new QStackedWidget(this);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(pages_);

  hint_ = new QLabel(pages_);
  hint_->setObjectName(QStringLiteral("featureMapsHint"));
  hint_->setAlignment(Qt::AlignCenter);
  hint_->setWordWrap(true);
  hint_->setMargin(16);
  hint_->setForegroundRole(QPalette::PlaceholderText);
  pages_->addWidget(hint_);

  auto* scroll = new QScrollArea(pages_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  auto* content = new QWidget(scroll);
  auto* column = new QVBoxLayout(content);
  column->setContentsMargins(8, 8, 8, 8);
  title_ = sectionLabel(QString(), content);
  about_ = new QLabel(content);
  about_->setWordWrap(true);
  about_->setForegroundRole(QPalette::PlaceholderText);
  channelsHeading_ = new QLabel(content);
  channelsHeading_->setWordWrap(true);
  channels_ = new TileGrid(content);
  matrix_ = new HeatMatrix(content);
  filtersHeading_ = sectionLabel(tr("Filters"), content);
  filterGrid_ = new TileGrid(content);
  gallery_ = new ActivationGallery(content);
  // The gallery right under the channels it is about; the filters last.
  for (QWidget* w : std::initializer_list<QWidget*>{title_, about_, channelsHeading_, channels_, matrix_, gallery_,
                                                     filtersHeading_, filterGrid_})
    column->addWidget(w);
  column->addStretch(1);
  scroll->setWidget(content);
  scroll_ = scroll;
  pages_->addWidget(scroll);
  connect(channels_, &TileGrid::tileClicked, this, &FeatureMapView::channelClicked);
  connect(matrix_, &HeatMatrix::columnClicked, this, [this](int feature) {
    selected_ = feature;
    emit channelClicked(feature);
  });
  showFilters(Tensor());
  showHint(QString());
}

void FeatureMapView::showHint(const QString& text) {
  hint_->setText(text);
  pages_->setCurrentWidget(hint_);
}
bool FeatureMapView::showsHint() const { return pages_->currentWidget() == hint_; }
QString FeatureMapView::hint() const { return hint_->text(); }

void FeatureMapView::showOutput(const QString& node, const QString& about, const Tensor& value,
                                const QStringList& tokens) {
  const Shape shape = value.shape();
  const int keep = node == node_ && output_.defined() && output_.shape() == shape ? selectedChannel() : -1;
  node_ = node;
  output_ = value;
  title_->setText(tr("%1  ·  output %2").arg(node, shapeText(shape)));
  about_->setText(about);
  const std::vector<float> v = value.to_vector();
  layout_ = shape.size() == 3 ? Layout::Channels : shape.size() == 2 ? Layout::Sequence : Layout::Vector;
  if (layout_ == Layout::Channels) {
    const int64_t k = shape[0], h = shape[1], w = shape[2];
    std::vector<TileGrid::Tile> tiles;
    for (int64_t c = 0; c < k; ++c) tiles.push_back(channelTile(v.data() + c * h * w, h, w, QString::number(c)));
    channels_->setTiles(std::move(tiles));
    channels_->setSelected(keep);
    channelsHeading_->setText(
        tr("%1 channels, each on its own range. Click one for the examples that excite it most.").arg(k));
    selected_ = -1;
  } else if (layout_ == Layout::Sequence) {
    matrix_->setValues(v, int(shape[0]), int(shape[1]), tokens);
    channelsHeading_->setText(tr("%1 positions × %2 features. Click a feature for the examples that excite it most.")
                                  .arg(shape[0])
                                  .arg(shape[1]));
  } else {
    matrix_->setValues(v, 1, int(v.size()));
    channelsHeading_->setText(shape.size() == 1
                                  ? tr("%1 values. Click one for the examples that excite it most.").arg(v.size())
                                  : tr("%1 values, flattened.").arg(v.size()));
  }
  channels_->setVisible(layout_ == Layout::Channels);
  matrix_->setVisible(layout_ != Layout::Channels);
  if (layout_ != Layout::Channels) selected_ = keep;
  if (keep < 0) gallery_->hide();
  pages_->setCurrentIndex(1);
}

void FeatureMapView::showFilters(const Tensor& filters) {
  filters_ = filters;
  const bool shown = filters.defined() && filters.shape().size() == 4;
  filtersHeading_->setVisible(shown);
  filterGrid_->setVisible(shown);
  if (!shown) return filterGrid_->setTiles({});
  const Shape s = filters.shape();
  const std::vector<float> v = filters.to_vector();
  std::vector<TileGrid::Tile> tiles;
  for (int64_t o = 0; o < s[0]; ++o)
    tiles.push_back(filterTile(v.data() + o * s[1] * s[2] * s[3], s[1], s[2], s[3], int(o)));
  filterGrid_->setTiles(std::move(tiles), 40);
  filtersHeading_->setText(s[1] == 3   ? tr("Filters %1 (in colour: red, green, blue inputs)").arg(shapeText(s))
                           : s[1] == 1 ? tr("Filters %1").arg(shapeText(s))
                                       : tr("Filters %1 (averaged over the inputs)").arg(shapeText(s)));
}

void FeatureMapView::revealGallery() {
  // Once laid out with its new content: until then its place is the old one.
  QTimer::singleShot(0, this, [this] { scroll_->ensureWidgetVisible(gallery_, 0, 8); });
}

int FeatureMapView::selectedChannel() const { return layout_ == Layout::Channels ? channels_->selected() : selected_; }

void FeatureMapView::selectChannel(int channel) {
  if (layout_ == Layout::Channels) channels_->setSelected(channel);
  selected_ = channel;
  emit channelClicked(channel);
}

}  // namespace plexus::widgets
