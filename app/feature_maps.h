#pragma once
// FeatureMaps: the editor's Feature Maps panel (widgets::FeatureMapView), wired. For the node
// selected on the canvas it shows the node's output for the Try It input, and a Conv2d node's
// filters, computed by a standing inspection on the Try It Predictor (so again as live weights
// arrive while a run trains, and when a checkpoint is loaded). A channel clicked gets the
// gallery of the validation examples that excite it most (explain::top_activations), computed
// on a worker thread with a copy of the model the inspection hands over, with progress; a
// gallery example clicked becomes the Try It input. While the panel is shown, the Try It page
// keeps the run's weights coming as if it were shown itself.
#include <QFuture>
#include <QObject>
#include <QPointer>
#include <QString>
#include <atomic>
#include <cstdint>
#include <memory>

#include "explain/features.h"

namespace plexus::widgets {
class FeatureMapView;
class GraphDocument;
}  // namespace plexus::widgets

namespace plexus::app {

class TryItPage;

class FeatureMaps : public QObject {
  Q_OBJECT

 public:
  FeatureMaps(widgets::FeatureMapView* view, TryItPage* tryIt, const widgets::GraphDocument* document,
              QObject* parent = nullptr);
  ~FeatureMaps() override;  // stops a gallery in the making and waits for it

  void setNode(const QString& node);  // "" for none
  QString node() const { return node_; }
  // The view is shown (the editor page, the panel's dock raised): the model follows the run.
  void setShown(bool shown);

  int64_t galleryCount = 16;      // examples in a gallery
  int64_t galleryScanned = 2000;  // of the validation split, at most (a seeded sample)

 signals:
  void outputShown();   // the view shows the node's output for the current model and input
  void galleryShown();  // a gallery is complete (or failed)

 private:
  void update();  // the inspection for the node, or the hint
  void startGallery(int channel);
  void runGallery(uint64_t id, const QString& title, explain::FeatureOptions options, const session::LoadOptions& load,
                  int channel, std::shared_ptr<const session::TrainedModel> model);
  void galleryClicked(int index);

  widgets::FeatureMapView* view_;
  QPointer<TryItPage> try_it_;  // may go first when the window closes
  const widgets::GraphDocument* document_;
  QString node_;
  QString model_;            // the Try It model's description; "" before there is one
  uint64_t gallery_id_ = 0;  // the gallery asked for last: older answers are dropped
  std::shared_ptr<std::atomic<bool>> gallery_stop_;
  QFuture<void> gallery_;
  explain::TopActivations shown_;  // the gallery's examples
};

}  // namespace plexus::app
