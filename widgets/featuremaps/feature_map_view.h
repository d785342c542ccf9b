#pragma once
// FeatureMapView: what one node of a model computes for the Try It input. Its output as
//   channels  a picture-shaped output [K, h, w]: one tile per channel, each normalised to its own
//             range, on the viridis colour map, its index under it;
//   vector    [F]: bars over a heat strip;
//   sequence  [T, F]: a position x feature heat map, the positions named (a text's characters);
// anything else flattened to a vector. A click picks a channel (a feature). For a Conv2d node also
// its filters [out, in, kh, kw], one tile per output filter: the input channels averaged, or in
// colour for three. Under the channels, the gallery of the picked one's top examples (ActivationGallery).
// In place of all this, a hint saying what is missing (no model, no input, no node). It shows
// only; the app computes.
#include <QString>
#include <QStringList>
#include <QWidget>

#include "tensor/tensor.h"

class QLabel;
class QScrollArea;
class QStackedWidget;

namespace plexus::widgets {

class ActivationGallery;
class HeatMatrix;
class TileGrid;

class FeatureMapView : public QWidget {
  Q_OBJECT

 public:
  enum class Layout { Channels, Vector, Sequence };

  explicit FeatureMapView(QWidget* parent = nullptr);

  void showHint(const QString& text);
  bool showsHint() const;
  QString hint() const;

  // `value`: node `node`'s output for one example (no batch dimension); `about` says which model
  // and input, in a few words; `tokens` name a sequence's positions. Keeps the picked channel
  // when the node and its channel count stay (live weights arriving).
  void showOutput(const QString& node, const QString& about, const Tensor& value, const QStringList& tokens = {});
  // A convolution's filters [out, in, kh, kw]; an undefined tensor: none (not a Conv2d).
  void showFilters(const Tensor& filters);

  QString node() const { return node_; }
  Layout layout() const { return layout_; }
  const Tensor& output() const { return output_; }
  const Tensor& filters() const { return filters_; }
  int selectedChannel() const;
  void selectChannel(int channel);  // as a click does: emits channelClicked
  void revealGallery();             // scrolls it into view

  TileGrid* channelGrid() const { return channels_; }
  HeatMatrix* matrix() const { return matrix_; }
  TileGrid* filterGrid() const { return filterGrid_; }
  ActivationGallery* gallery() const { return gallery_; }

 signals:
  void channelClicked(int channel);

 private:
  QStackedWidget* pages_;
  QScrollArea* scroll_;
  QLabel* hint_;
  QLabel* title_;
  QLabel* about_;
  QLabel* channelsHeading_;
  TileGrid* channels_;
  HeatMatrix* matrix_;
  QLabel* filtersHeading_;
  TileGrid* filterGrid_;
  ActivationGallery* gallery_;
  QString node_;
  Layout layout_ = Layout::Vector;
  int selected_ = -1;  // a vector's or sequence's picked feature
  Tensor output_, filters_;
};

}  // namespace plexus::widgets
