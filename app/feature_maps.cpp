#include "feature_maps.h"

#include <QFileInfo>
#include <QLineEdit>
#include <QtConcurrent>
#include <exception>

#include "common/image_thumbnail.h"
#include "common/qt_text.h"
#include "editor/model/graph_document.h"
#include "featuremaps/activation_gallery.h"
#include "explain/attribution.h"
#include "featuremaps/feature_map_view.h"
#include "explain/probe.h"
#include "predictor.h"
#include "session/text_sampling.h"
#include "tryit/tryit_panel.h"
#include "tryit_page.h"

namespace plexus::app {
namespace {

const QString kOutputKey = QStringLiteral("featureMaps");
const QString kCopyKey = QStringLiteral("featureMaps.copy");

// The characters of a text input [T] (ids), for a sequence's positions; none for a picture.
QStringList tokensOf(const session::TrainedModel& model, const Tensor& input) {
  QStringList tokens;
  if (input.shape().size() != 1 || model.info.input_shape.size() != 1) return tokens;
  for (float id : input.to_vector()) tokens << widgets::qstr(explain::input_symbol(model, int64_t(id)));
  return tokens;
}

QString textOf(const session::TrainedModel& model, const Tensor& ids) {
  QString text;
  for (float id : ids.to_vector())
    if (id != 0 || model.vocabulary.empty()) text += widgets::qstr(explain::input_symbol(model, int64_t(id)));
  return text;
}

}  // namespace

FeatureMaps::FeatureMaps(widgets::FeatureMapView* view, TryItPage* tryIt, const widgets::GraphDocument* document,
                         QObject* parent)
    : QObject(parent), view_(view), try_it_(tryIt), document_(document) {
  Predictor* predictor = try_it_->predictor();
  connect(predictor, &Predictor::modelChanged, this, [this](const QString& description) {
    const bool first = model_.isEmpty();
    model_ = description;
    if (first) update();  // the hint changes; the inspection itself runs with the model
  });
  connect(predictor, &Predictor::inspectionFailed, this, [this](const QString& key, const QString& message) {
    if (key == kOutputKey) {
      view_->showHint(tr("%1: %2").arg(node_, message));
      emit outputShown();
    } else if (key == kCopyKey) {
      try_it_->predictor()->setInspection(kCopyKey, {});
      view_->gallery()->showError(tr("Top examples"), message);
      emit galleryShown();
    }
  });
  connect(view_, &widgets::FeatureMapView::channelClicked, this, &FeatureMaps::startGallery);
  connect(view_->gallery(), &widgets::ActivationGallery::exampleClicked, this, &FeatureMaps::galleryClicked);
  connect(view_->gallery(), &widgets::ActivationGallery::stopRequested, this, [this] {
    if (gallery_stop_) *gallery_stop_ = true;
  });
  update();
}

FeatureMaps::~FeatureMaps() {
  if (gallery_stop_) *gallery_stop_ = true;
  gallery_.waitForFinished();
}

void FeatureMaps::setNode(const QString& node) {
  if (node == node_) return;
  node_ = node;
  update();
}

void FeatureMaps::setShown(bool shown) {
  if (try_it_) try_it_->setWatched(shown);
}

void FeatureMaps::update() {
  Predictor* predictor = try_it_->predictor();
  predictor->setInspection(kCopyKey, {});
  if (gallery_stop_) *gallery_stop_ = true;
  ++gallery_id_;
  if (node_.isEmpty() || model_.isEmpty()) {
    predictor->setInspection(kOutputKey, {});
    view_->showHint(node_.isEmpty() ? tr("Select a node on the canvas to see what it computes for the input in Try It.")
                                    : tr("No model yet: train the project, or load a checkpoint in Try It."));
    return;
  }
  predictor->setInspection(
      kOutputKey, [self = QPointer(this), node = node_](const session::TrainedModel& model, const Tensor& input) {
        if (!input.defined())
          return std::function<void()>([self] {
            if (!self || !self->try_it_) return;
            self->view_->showHint(self->try_it_->panel()->textInput()
                                      ? tr("Type a text in Try It to see what this node computes for it.")
                                      : tr("Draw a digit (or open a picture) in Try It to see what this node computes "
                                           "for it."));
            emit self->outputShown();
          });
        const Tensor batch = explain::node_output(model, input.unsqueeze(0), node.toStdString());
        Shape shape = batch.shape();
        shape.erase(shape.begin());
        const Tensor output = batch.reshape(shape);
        const graph::Node* n = model.project.find(node.toStdString());
        const Tensor filters = n && n->type == "Conv2d" ? explain::conv_filters(model, node.toStdString()) : Tensor();
        return std::function<void()>([self, node, output, filters, tokens = tokensOf(model, input)] {
          if (!self) return;
          self->view_->showOutput(node, self->model_, output, tokens);
          self->view_->showFilters(filters);
          emit self->outputShown();
        });
      });
}

void FeatureMaps::startGallery(int channel) {
  if (gallery_stop_) *gallery_stop_ = true;
  const uint64_t id = ++gallery_id_;
  const QString title = (view_->layout() == widgets::FeatureMapView::Layout::Channels
                             ? tr("%1, channel %2: the validation examples that excite it most")
                             : tr("%1, feature %2: the validation examples that excite it most"))
                            .arg(node_)
                            .arg(channel);
  view_->gallery()->showProgress(title, 0, galleryScanned);
  view_->revealGallery();
  explain::FeatureOptions options;
  options.node = node_.toStdString();
  options.max_examples = galleryScanned;
  const QString file = document_->filePath();
  session::LoadOptions load;
  if (!file.isEmpty()) load.project_dir = QFileInfo(file).absolutePath().toStdString();
  // The job hands over a copy of the model, once; a worker computes with it.
  try_it_->predictor()->setInspection(kCopyKey, [self = QPointer(this), id, title, options, load, channel](
                                                    const session::TrainedModel& model, const Tensor&) {
    return std::function<void()>(
        [self, id, title, options, load, channel,
         copy = std::make_shared<const session::TrainedModel>(session::clone_trained_model(model))]() mutable {
          if (!self || id != self->gallery_id_) return;
          self->try_it_->predictor()->setInspection(kCopyKey, {});
          self->runGallery(id, title, std::move(options), load, channel, copy);
        });
  });
}

void FeatureMaps::runGallery(uint64_t id, const QString& title, explain::FeatureOptions options,
                             const session::LoadOptions& load, int channel,
                             std::shared_ptr<const session::TrainedModel> model) {
  gallery_.waitForFinished();  // the one before, told to stop
  auto stop = std::make_shared<std::atomic<bool>>(false);
  gallery_stop_ = stop;
  options.cancelled = stop.get();
  // Posted to this object: what is still queued when it goes is dropped with it, and the
  // destructor waits for the worker.
  options.progress = [this, id, title](int64_t done, int64_t total) {
    QMetaObject::invokeMethod(
        this,
        [this, id, title, done, total] {
          if (id == gallery_id_) view_->gallery()->showProgress(title, done, total);
        },
        Qt::QueuedConnection);
  };
  gallery_ = QtConcurrent::run([this, id, title, options, load, channel, model, stop, k = galleryCount] {
    try {
      explain::TopActivations top = explain::top_activations(*model, load, options, channel, k);
      std::vector<widgets::ActivationGallery::Example> examples;
      for (const explain::ChannelActivation& a : top.top) {
        const data::Example e = top.split->get(a.index);
        widgets::ActivationGallery::Example shown;
        shown.activation = a.activation;
        if (widgets::isImageShape(e.input.shape()))
          shown.picture = widgets::thumbnailImage(e.input.contiguous().data(), e.input.shape());
        else
          shown.text = textOf(*model, e.input);
        const int64_t label = e.target.numel() == 1 ? int64_t(e.target.to_vector().front()) : -1;
        shown.toolTip = label >= 0 && size_t(label) < model->class_names.size()
                            ? tr("example %1, a %2: activation %3")
                                  .arg(a.index)
                                  .arg(widgets::qstr(model->class_names[size_t(label)]))
                                  .arg(a.activation)
                            : tr("example %1: activation %2").arg(a.index).arg(a.activation);
        examples.push_back(std::move(shown));
      }
      QMetaObject::invokeMethod(
          this,
          [this, id, title, top = std::move(top), examples = std::move(examples)]() mutable {
            if (id != gallery_id_) return;
            shown_ = std::move(top);
            view_->gallery()->showExamples(title, std::move(examples));
            view_->revealGallery();
            emit galleryShown();
          },
          Qt::QueuedConnection);
    } catch (const explain::Cancelled&) {
      QMetaObject::invokeMethod(
          this,
          [this, id, title] {
            if (id != gallery_id_) return;
            view_->gallery()->showError(title, tr("Stopped."));
            emit galleryShown();
          },
          Qt::QueuedConnection);
    } catch (const std::exception& e) {  // the dataset unreadable, a node top_activations cannot rank
      QMetaObject::invokeMethod(
          this,
          [this, id, title, m = widgets::qstr(e.what())] {
            if (id != gallery_id_) return;
            view_->gallery()->showError(title, m);
            emit galleryShown();
          },
          Qt::QueuedConnection);
    }
  });
}

// The example becomes the Try It input; this panel then shows the node's output for it.
void FeatureMaps::galleryClicked(int index) {
  if (index < 0 || size_t(index) >= shown_.top.size() || !shown_.split) return;
  const Tensor raw = shown_.split->get(shown_.top[size_t(index)].index).input;
  widgets::TryItPanel* panel = try_it_->panel();
  if (panel->textInput())
    panel->textField()->setText(view_->gallery()->examples().at(size_t(index)).text);
  else
    panel->openPicture(data::input_to_image(raw));
}

}  // namespace plexus::app
