#include "tryit_page.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QScrollArea>
#include <QVBoxLayout>

#include "common/qt_text.h"
#include "data/text_classes.h"
#include "editor/model/graph_document.h"
#include "tryit/attention_view.h"
#include "tryit/attribution_view.h"
#include "predictor.h"
#include "session/data_pipeline.h"
#include "session/text_sampling.h"
#include "training_controller.h"
#include "tryit/text_prompt.h"
#include "tryit/tryit_panel.h"
#include "tryit_explainer.h"

namespace plexus::app {

TryItPage::TryItPage(TrainingController* controller, const widgets::GraphDocument* document, QWidget* parent)
    : QWidget(parent), controller_(controller), document_(document) {
  panel_ = new widgets::TryItPanel(this);
  text_ = new widgets::TextPrompt(this);
  text_->hide();
  predictor_ = new Predictor(this);
  explainer_ = new TryItExplainer(predictor_, panel_, text_, this);  // after the predictor: it outlives the views' jobs
  auto* input = new QVBoxLayout;
  input->addWidget(panel_);
  input->addWidget(text_);
  auto* explained = new QWidget;
  auto* explanations = new QVBoxLayout(explained);
  explanations->setContentsMargins(0, 8, 8, 8);
  explanations->addWidget(explainer_->attributions());
  explanations->addWidget(explainer_->attention(), 1);
  // Scrolled rather than widening the window: the column's choosers and maps must not push the
  // main window past a 1280-pixel screen (or past what the user made it).
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(explained);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  columns_ = new QHBoxLayout(this);
  columns_->setContentsMargins(0, 0, 0, 0);
  columns_->addLayout(input, 5);
  columns_->addWidget(scroll, 2);
  chooseCheckpoint = [this] {
    return QFileDialog::getOpenFileName(this, tr("Try a checkpoint of this project"), QString(),
                                        tr("Checkpoints and weights (*.safetensors)"));
  };

  // Twice a second looks live; each copy of the weights costs the worker a moment.
  live_.setInterval(500);
  connect(&live_, &QTimer::timeout, this, &TryItPage::askForWeights);
  connect(controller_, &TrainingController::stateChanged, this, &TryItPage::updateLive);
  connect(controller_, &TrainingController::started, this, &TryItPage::onStarted);
  connect(controller_, &TrainingController::epochEnded, this, [this] {
    if (watched()) askForWeights();
  });
  connect(controller_, &TrainingController::weightsSnapshot, this, &TryItPage::onWeights);
  // The edited model's weights follow: they need its graph.
  connect(controller_, &TrainingController::graphEdited, this, [this](const train::GraphEdit&, const graph::Graph& graph) {
    run_graph_ = graph;
    predictor_->useRun(run_graph_, run_info_);
  });
  connect(controller_, &TrainingController::finished, this, [this](const train::Finished& result) {
    ended_ = tr("%1, epoch %2 of %3")
                 .arg(result.cancelled ? tr("stopped") : tr("completed"))
                 .arg(result.epochs_completed)
                 .arg(run_epochs_);
    final_weights_wanted_ = true;
    if (watched()) askForWeights();
  });

  connect(panel_, &widgets::TryItPanel::inputChanged, predictor_, &Predictor::predict);
  connect(panel_, &widgets::TryItPanel::loadCheckpointRequested, this, [this] {
    const QString path = chooseCheckpoint();
    if (!path.isEmpty()) loadCheckpoint(path);
  });
  connect(predictor_, &Predictor::modelChanged, this,
          [this](const QString& description, const QStringList& class_names, const Shape& input_shape,
                 const std::optional<data::TextEncoding>& text,
                 const std::shared_ptr<const data::TablePreparation>& preparation) {
            if (preparation)
              panel_->setTableInput(preparation);
            else if (text)
              panel_->setTextInput(input_shape, textNote(text->length, text->lowercase),
                                   [encoding = *text](const QString& typed) {
                                     return data::encode_typed_text(encoding, typed.toStdString());
                                   });
            else if (input_shape != panel_->inputShape() || panel_->textInput())
              panel_->setInputShape(input_shape);
            panel_->setModel(description, class_names);
            text_->setModel(description);
          });
  connect(predictor_, &Predictor::predicted, this, [this](const Prediction& prediction) {
    if (!prediction.probabilities.empty())
      panel_->showProbabilities(prediction.probabilities);
    else if (!prediction.reconstruction.defined())
      panel_->showValues(prediction.values);
    if (prediction.reconstruction.defined()) panel_->showReconstruction(prediction.reconstruction);
    emit predictionShown();
  });
  connect(predictor_, &Predictor::failed, panel_, &widgets::TryItPanel::showError);
  connect(predictor_, &Predictor::failed, text_, &widgets::TextPrompt::showError);
  connect(text_, &widgets::TextPrompt::generateRequested, this, [this](const QString& prompt, double temperature, int count) {
    session::SampleOptions o;
    o.prime = prompt.toStdString();
    o.temperature = temperature;
    o.count = count;
    o.seed = ++generations_;
    predictor_->generate(o);
  });
  connect(predictor_, &Predictor::generated, this, [this](const QStringList& samples) {
    text_->showSamples(samples);
    emit textGenerated();
  });

  connect(document_, &widgets::GraphDocument::validated, this, &TryItPage::projectChanged);
  projectChanged();
}

void TryItPage::showTextPrompt(bool text) {
  panel_->setVisible(!text);
  text_->setVisible(text);
  explainer_->setPanelShown(!text);
  // A prompt's attention maps want room: half the page.
  columns_->setStretch(0, text ? 1 : 5);
  columns_->setStretch(1, text ? 1 : 2);
}

void TryItPage::beginRun(const graph::Graph& graph) {
  run_graph_ = graph;
  showTextPrompt(session::is_text_project(graph));
  following_run_ = true;
  preparePicturesFor(graph.dataset);
}

void TryItPage::onStarted(const RunInfo& info) {
  run_info_ = info;
  predictor_->useRun(run_graph_, info);
  run_epochs_ = info.epochs;
  run_batches_ = info.batchesPerEpoch;
  final_weights_wanted_ = false;
  if (watched()) askForWeights();
}

void TryItPage::askForWeights() {
  if (following_run_ && (controller_->isRunning() || final_weights_wanted_)) controller_->requestWeights();
  final_weights_wanted_ = false;
}

bool TryItPage::requestModel() {
  const bool coming = following_run_ && (controller_->isRunning() || final_weights_wanted_);
  askForWeights();
  return coming || panel_->hasModel();
}

void TryItPage::setWatched(bool watched) {
  watched_ = watched;
  updateLive();
  if (watched_) askForWeights();
}

void TryItPage::updateLive() {
  if (watched() && controller_->isRunning())
    live_.start();
  else
    live_.stop();
}

void TryItPage::onWeights(const WeightsSnapshot& weights) {
  if (!following_run_) return;
  QString description;
  if (weights.final)
    description = tr("The last run's weights (%1)").arg(ended_);
  else if (weights.batch == 0)
    description = tr("Live weights: end of epoch %1 of %2").arg(weights.epoch).arg(run_epochs_);
  else
    description = tr("Live weights: epoch %1 of %2, batch %3 of %4")
                      .arg(weights.epoch)
                      .arg(run_epochs_)
                      .arg(weights.batch)
                      .arg(run_batches_);
  predictor_->setWeights(weights, description);
}

void TryItPage::loadCheckpoint(const QString& path) {
  following_run_ = false;
  showTextPrompt(session::is_text_project(document_->graph()));
  preparePicturesFor(document_->graph().dataset);
  predictor_->loadFile(document_->graph(), path, projectDir(), tr("Checkpoint: %1").arg(QFileInfo(path).fileName()));
}

QString TryItPage::projectDir() const {
  return document_->filePath().isEmpty() ? QString() : QFileInfo(document_->filePath()).absolutePath();
}

QString TryItPage::textNote(int64_t length, bool lowercase) const {
  if (length < 1) return QString();
  return (lowercase ? tr("The model reads the first %1 characters, lowercased, as its training read its examples.")
                    : tr("The model reads the first %1 characters, as its training read its examples."))
      .arg(length);
}

// Before there is a model, the panel gets ready for the open project's input.
void TryItPage::projectChanged() {
  if (panel_->hasModel()) return;
  showTextPrompt(session::is_text_project(document_->graph()));
  preparePicturesFor(document_->graph().dataset);
  const graph::DatasetBinding& binding = document_->graph().dataset;
  const auto& info = document_->datasetInfo();
  if (binding.kind == "text_classes") {  // the text field, fed once a model comes
    const Shape shape = info ? info->input_shape : Shape{};
    panel_->setTextInput(shape, textNote(shape.size() == 1 ? shape[0] : 0, binding.lowercase), nullptr);
    return;
  }
  if (binding.kind == "csv") return panel_->setTableInput(nullptr);  // the form, once a model names its columns
  if (!info) return;
  const Shape& shape = info->input_shape;
  if (shape != panel_->inputShape()) panel_->setInputShape(shape);
}

// An image folder's pictures are fitted, sized and coloured by its settings; the IDX kinds' by
// data::image_to_input. A model keeps the settings it was trained with, however the project
// changes since.
void TryItPage::preparePicturesFor(const graph::DatasetBinding& binding) {
  if (binding == pictures_for_) return;
  pictures_for_ = binding;
  panel_->setPictureConverter([binding](const data::Image& picture, const Shape& chw) {
    return session::picture_input(picture, binding, chw);
  });
}

void TryItPage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  updateLive();
  askForWeights();
}

void TryItPage::hideEvent(QHideEvent* event) {
  QWidget::hideEvent(event);
  updateLive();
}

}  // namespace plexus::app
