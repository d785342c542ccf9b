#pragma once
// The Try It page: the Try-it panel fed by a Predictor. Its model is the current run's (live
// weights while the page is shown: asked for twice a second and after each epoch; the last
// ones once the run has ended), or a checkpoint loaded with Load Checkpoint… for the open
// project, which stays until the next run starts. Pictures opened in the panel are prepared as
// that model's training prepared its own (session::picture_input with its dataset settings);
// for a model of labelled texts the panel takes typed text instead, encoded as its training
// encoded its examples (data::encode_typed_text with the model's vocabulary, length and the
// project's lowercase setting); for a model of a CSV file's rows it takes a form of the columns,
// each typed row prepared as training prepared its rows (the model's data::TablePreparation).
// A text project gets a prompt instead of the panel (widgets::TextPrompt): the model continues
// it when asked. Wiring only: the panel shows, the Predictor computes off the UI thread, the
// TrainingController hands over copies of the weights.
#include <QString>
#include <QTimer>
#include <QWidget>

#include <functional>

#include "graph/graph.h"
#include "tensor/shape.h"
#include "train/events.h"
#include "training_controller.h"

class QHBoxLayout;

namespace plexus::widgets {
class GraphDocument;
class TextPrompt;
class TryItPanel;
}  // namespace plexus::widgets

namespace plexus::app {

class Predictor;
class TrainingController;
class TryItExplainer;
struct RunInfo;
struct WeightsSnapshot;

class TryItPage : public QWidget {
  Q_OBJECT

 public:
  TryItPage(TrainingController* controller, const widgets::GraphDocument* document, QWidget* parent = nullptr);

  // A run of `graph` is starting: its weights become the model as they come.
  void beginRun(const graph::Graph& graph);
  // Loads a checkpoint or weights file of the open project (in the background); errors are
  // shown in the panel.
  void loadCheckpoint(const QString& path);

  widgets::TryItPanel* panel() const { return panel_; }
  widgets::TextPrompt* textPrompt() const { return text_; }
  Predictor* predictor() const { return predictor_; }
  // For a view of the model besides this page (the projector): asks for the run's weights now, as
  // showing the page would. False when no model is there or coming (no run, no checkpoint).
  bool requestModel();

  // Another view of the model is shown (the editor's feature maps): the run's weights keep coming
  // while this page is hidden.
  void setWatched(bool watched);
  TryItExplainer* explainer() const { return explainer_; }  // the heat maps and attention maps beside

  // The Load Checkpoint dialog; replaceable so tests can answer it without a modal loop.
  std::function<QString()> chooseCheckpoint;

 signals:
  void predictionShown();  // the panel shows the model's output for its current input
  void textGenerated();    // the text prompt shows what the model generated

 protected:
  void showEvent(QShowEvent* event) override;
  void hideEvent(QHideEvent* event) override;

 private:
  void onStarted(const RunInfo& info);
  void onWeights(const WeightsSnapshot& weights);
  void askForWeights();
  void updateLive();
  void projectChanged();
  void preparePicturesFor(const graph::DatasetBinding& binding);
  void showTextPrompt(bool text);  // the prompt instead of the panel, or back
  bool watched() const { return isVisible() || watched_; }  // someone looks at the model
  QString projectDir() const;
  QString textNote(int64_t length, bool lowercase) const;  // how a labelled-texts model reads typed text

  TrainingController* controller_;
  const widgets::GraphDocument* document_;
  widgets::TryItPanel* panel_;
  widgets::TextPrompt* text_;
  Predictor* predictor_;
  TryItExplainer* explainer_;
  QHBoxLayout* columns_;  // the panel or the prompt, then the explanations
  QTimer live_{this};  // asks for the run's weights while the page is shown during a run
  graph::Graph run_graph_;  // of the run begun last, edits included
  RunInfo run_info_;        // what it said when it started
  graph::DatasetBinding pictures_for_;  // the dataset settings the panel's pictures are prepared for
  int run_epochs_ = 0;
  int64_t run_batches_ = 0;  // per epoch
  QString ended_;            // how the last run ended: "completed, epoch 5 of 5"
  bool final_weights_wanted_ = false;  // a run ended and its last weights are not asked for yet
  bool following_run_ = false;         // the run's weights are the model (no checkpoint loaded since)
  uint64_t generations_ = 0;           // each Generate draws with the next seed: new text every time
  bool watched_ = false;               // setWatched
};

}  // namespace plexus::app
