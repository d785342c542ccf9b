#pragma once
// Predictor: the Try-it page's model, run off the UI thread. It holds a session::TrainedModel —
// a run's weights (live during training, the last ones after it) or a loaded checkpoint — and
// runs TrainedModel::forward on the panel's input (a picture, or typed text encoded as the
// model's modelChanged says), or, for a text project, generates text (session::sample_text)
// when asked.
//
// One background job at a time does all the work (a private pool of one thread), and it alone
// touches the model. Requests made meanwhile wait for it and replace each other: the latest
// input and the latest model win. A result is dropped when a newer request was made after it
// was taken, so the panel only ever shows the output of its current input and model.
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThreadPool>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <variant>
#include <vector>

#include "data/text_classes.h"
#include "graph/graph.h"
#include "session/text_sampling.h"
#include "session/trained_model.h"
#include "tensor/tensor.h"
#include "training_controller.h"

namespace plexus::app {

// What a model made of an input: classification gives probabilities (softmax of its scores),
// regression its output values; a model scored against its input (an autoencoder, a decoder
// head) its reconstruction, [C, H, W] in raw units, instead of values.
struct Prediction {
  std::vector<float> probabilities;
  std::vector<float> values;
  Tensor reconstruction;
};

class Predictor : public QObject {
  Q_OBJECT

 public:
  explicit Predictor(QObject* parent = nullptr);
  ~Predictor() override;  // waits for the job in flight

  // The run whose weights setWeights() will bring: its graph (compiled once, on the first
  // weights) and what it reported when it started (input normalisation, class names).
  void useRun(const graph::Graph& graph, const RunInfo& info);
  // The run's weights become the model; `description` is what the panel says about it.
  void setWeights(const WeightsSnapshot& weights, const QString& description);
  // A checkpoint or weights file of `project` becomes the model (session::load_trained_model);
  // on failure the model stays as it was and failed() says why.
  void loadFile(const graph::Graph& project, const QString& file, const QString& project_dir,
                const QString& description);
  // Runs the model on one raw example [C, H, W] (an undefined tensor: nothing to run); run
  // again whenever the model changes.
  void predict(const Tensor& raw);
  // Text from the current model (a text project's); answered by generated() or failed(). A
  // newer model arriving meanwhile does not drop the answer, a newer request does.
  void generate(const session::SampleOptions& options);

  // A view's standing computation on the model and the current input (undefined when there is
  // none), run by the job that owns the model: now, and again whenever the model or the input
  // changes, until replaced. It returns what to do with its result on the UI thread, which is
  // dropped when the model or the input has changed meanwhile. An empty job removes `key`'s.
  // Its exceptions come back as inspectionFailed(key, message).
  using Inspection = std::function<std::function<void()>(const session::TrainedModel& model, const Tensor& input)>;
  void setInspection(const QString& key, Inspection job);

 signals:
  // `textEncoding`: how typed text becomes the model's input, for a model of labelled texts;
  // `preparation`: how a typed row does, for a model of a CSV file's rows (else null).
  void modelChanged(const QString& description, const QStringList& classNames, const plexus::Shape& inputShape,
                    const std::optional<plexus::data::TextEncoding>& textEncoding,
                    const std::shared_ptr<const plexus::data::TablePreparation>& preparation);
  void predicted(const plexus::app::Prediction& prediction);
  void failed(const QString& message);
  void generated(const QStringList& samples);
  void inspectionFailed(const QString& key, const QString& message);

 private:
  struct RunSpec {
    graph::Graph graph;
    graph::DatasetInfo info;
    std::vector<std::string> class_names;
    session::InputNormalization normalization;
    std::vector<std::string> vocabulary;
    std::shared_ptr<const data::TablePreparation> preparation;
  };
  struct LiveWeights {
    std::shared_ptr<const RunSpec> run;
    WeightsSnapshot weights;
  };
  struct ModelFile {
    graph::Graph project;
    std::filesystem::path file, project_dir;
  };
  struct Source {
    std::variant<LiveWeights, ModelFile> what;
    QString description;
  };

  void schedule();  // starts the job unless it is running; under mu_
  void work();      // the job: until nothing is pending
  void apply(const Source& source);
  Prediction run(const Tensor& raw) const;

  // UI thread only.
  std::shared_ptr<const RunSpec> run_;
  uint64_t source_requests_ = 0, input_requests_ = 0, generate_requests_ = 0;  // for dropping stale results

  std::mutex mu_;  // guards the pending requests and busy_
  std::optional<Source> pending_source_;
  Tensor input_;
  bool input_pending_ = false, busy_ = false;
  uint64_t pending_source_id_ = 0, pending_input_id_ = 0;
  std::optional<session::SampleOptions> pending_generation_;
  uint64_t pending_generation_id_ = 0;
  std::map<QString, Inspection> pending_inspections_;  // new or replaced since the job last looked; empty: removed
  std::map<QString, uint64_t> inspection_requests_;    // UI thread: per key, for dropping stale results

  // The job's own.
  std::unique_ptr<session::TrainedModel> model_;
  std::shared_ptr<const RunSpec> model_run_;  // the run model_ was compiled for, if any
  std::map<QString, std::pair<Inspection, uint64_t>> inspections_;  // standing, with their request ids

  QThreadPool pool_;
};

}  // namespace plexus::app
