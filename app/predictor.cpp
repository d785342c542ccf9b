#include "predictor.h"

#include <algorithm>
#include <exception>
#include <utility>
#include <new>

#include "autograd/grad_mode.h"
#include "common/qt_text.h"
#include "ops/ops.h"
#include "session/data_pipeline.h"
#include "session/reconstructions.h"
#include "util/error.h"
#include "util/overloaded.h"

namespace plexus::app {

namespace {

// Copies a run's weights into a model compiled from the same graph: same names, same order,
// same shapes. Checked before anything changes.
void loadState(nn::Module& model, const nn::NamedTensors& state) {
  const nn::NamedTensors own = model.state();
  bool fits = own.size() == state.size();
  for (size_t i = 0; fits && i < own.size(); ++i)
    fits = own[i].first == state[i].first && own[i].second.shape() == state[i].second.shape();
  if (!fits) throw ValueError("the run's weights do not fit the model compiled from its graph");
  NoGradGuard no_grad;
  for (size_t i = 0; i < own.size(); ++i) {
    Tensor target = own[i].second;
    target.copy_(state[i].second);
  }
}

QString messageOf(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::bad_alloc&) {
    return QObject::tr("out of memory");
  } catch (const std::exception& e) {
    return widgets::qstr(e.what());
  } catch (...) {
    return QObject::tr("an unknown error");
  }
}

}  // namespace

Predictor::Predictor(QObject* parent) : QObject(parent) {
  qRegisterMetaType<Prediction>();
  pool_.setMaxThreadCount(1);
}

Predictor::~Predictor() { pool_.waitForDone(); }  // what it posts afterwards is discarded with this object

void Predictor::useRun(const graph::Graph& graph, const RunInfo& info) {
  auto spec = std::make_shared<RunSpec>();
  spec->graph = graph;
  spec->info = info.datasetInfo;
  for (const QString& name : info.classNames) spec->class_names.push_back(name.toStdString());
  spec->normalization = info.normalization;
  spec->vocabulary = info.vocabulary;
  spec->preparation = info.preparation;
  run_ = std::move(spec);
}

void Predictor::setWeights(const WeightsSnapshot& weights, const QString& description) {
  if (!run_ || !weights.state) return;
  std::lock_guard lock(mu_);
  pending_source_ = Source{LiveWeights{run_, weights}, description};
  pending_source_id_ = ++source_requests_;
  schedule();
}

void Predictor::loadFile(const graph::Graph& project, const QString& file, const QString& project_dir,
                         const QString& description) {
  std::lock_guard lock(mu_);
  pending_source_ = Source{ModelFile{project, file.toStdString(), project_dir.toStdString()}, description};
  pending_source_id_ = ++source_requests_;
  schedule();
}

void Predictor::predict(const Tensor& raw) {
  std::lock_guard lock(mu_);
  input_ = raw;
  input_pending_ = raw.defined();
  pending_input_id_ = ++input_requests_;
  if (input_pending_) schedule();
}

void Predictor::generate(const session::SampleOptions& options) {
  std::lock_guard lock(mu_);
  pending_generation_ = options;
  pending_generation_id_ = ++generate_requests_;
  schedule();
}

void Predictor::setInspection(const QString& key, Inspection job) {
  std::lock_guard lock(mu_);
  ++inspection_requests_[key];
  pending_inspections_[key] = std::move(job);
  schedule();
}

void Predictor::schedule() {
  if (busy_) return;  // the job takes what is pending before it ends
  busy_ = true;
  pool_.start([this] { work(); });
}

void Predictor::work() {
  for (;;) {
    std::optional<Source> source;
    std::optional<session::SampleOptions> generation;
    Tensor input;
    bool new_input = false, new_model = false;
    uint64_t source_id = 0, input_id = 0, generation_id = 0;
    std::vector<QString> fresh;  // inspections set since the last pass
    {
      std::lock_guard lock(mu_);
      if (!pending_source_ && !input_pending_ && !pending_generation_ && pending_inspections_.empty()) {
        busy_ = false;
        return;
      }
      source.swap(pending_source_);
      generation.swap(pending_generation_);
      generation_id = pending_generation_id_;
      input = input_;
      new_input = std::exchange(input_pending_, false);
      source_id = pending_source_id_;
      input_id = pending_input_id_;
      for (auto& [key, job] : pending_inspections_) {
        if (job) inspections_[key] = {std::move(job), inspection_requests_[key]};
        else inspections_.erase(key);
        fresh.push_back(key);
      }
      pending_inspections_.clear();
    }
    // Results are posted with the requests they answer; the UI drops those overtaken since.
    const auto post = [this, source_id, input_id](bool needs_input, auto deliver) {
      QMetaObject::invokeMethod(
          this,
          [this, source_id, input_id, needs_input, deliver] {
            if (source_id == source_requests_ && (!needs_input || input_id == input_requests_)) deliver();
          },
          Qt::QueuedConnection);
    };
    if (source) {
      try {
        apply(*source);
        new_model = true;
        QStringList names;
        for (const std::string& name : model_->class_names) names << widgets::qstr(name);
        const Shape shape = model_->info.input_shape;
        std::optional<data::TextEncoding> text = session::text_encoding(*model_);
        post(false, [this, d = source->description, names, shape, text = std::move(text), p = model_->preparation] {
          emit modelChanged(d, names, shape, text, p);
        });
      } catch (...) {
        post(false, [this, m = messageOf(std::current_exception())] { emit failed(m); });
      }
    }
    if (generation) {
      const auto answer = [this, generation_id](auto deliver) {
        QMetaObject::invokeMethod(
            this, [this, generation_id, deliver] { if (generation_id == generate_requests_) deliver(); },
            Qt::QueuedConnection);
      };
      try {
        if (!model_) throw ValueError("no model yet: train the project, or load a checkpoint");
        QStringList samples;
        for (const std::string& s : session::sample_text(*model_, *generation, "this model")) samples << widgets::qstr(s);
        answer([this, samples] { emit generated(samples); });
      } catch (...) {
        answer([this, m = messageOf(std::current_exception())] { emit failed(m); });
      }
    }
    // A model that failed to load leaves the output as it was, and its message shown.
    if ((new_input || new_model) && model_ && input.defined()) {
      try {
        post(true, [this, p = run(input)] { emit predicted(p); });
      } catch (...) {
        post(true, [this, m = messageOf(std::current_exception())] { emit failed(m); });
      }
    }
    if (!model_) continue;
    // After the prediction: the views' computations may take longer.
    for (const auto& [key, standing] : inspections_) {
      if (!(new_input || new_model) && std::find(fresh.begin(), fresh.end(), key) == fresh.end()) continue;
      const auto answer = [this, &post, key = key, id = standing.second](auto deliver) {
        post(true, [this, key, id, deliver] {
          if (inspection_requests_[key] == id) deliver();
        });
      };
      try {
        if (std::function<void()> deliver = standing.first(*model_, input)) answer(std::move(deliver));
      } catch (...) {
        answer([this, key, m = messageOf(std::current_exception())] { emit inspectionFailed(key, m); });
      }
    }
  }
}

void Predictor::apply(const Source& source) {
  std::visit(Overloaded{
                 [this](const LiveWeights& live) {
                   if (!model_ || model_run_ != live.run) {
                     const RunSpec& run = *live.run;
                     auto model = std::make_unique<session::TrainedModel>();
                     model->project = run.graph;
                     model->info = run.info;
                     model->class_names = run.class_names;
                     model->normalization = run.normalization;
                     model->vocabulary = run.vocabulary;
                     model->preparation = run.preparation;
                     model->compiled = layers::compile(run.graph, run.info, run.graph.training.seed);
                     model->compiled.model->eval();
                     loadState(*model->compiled.model, *live.weights.state);
                     model_ = std::move(model);
                     model_run_ = live.run;
                   } else {
                     loadState(*model_->compiled.model, *live.weights.state);
                   }
                 },
                 [this](const ModelFile& file) {
                   model_ = std::make_unique<session::TrainedModel>(
                       session::load_trained_model(file.project, file.file, {.project_dir = file.project_dir}));
                   model_run_.reset();
                 },
             },
             source.what);
}

Prediction Predictor::run(const Tensor& raw) const {
  const std::optional<size_t> drawn = session::drawn_reconstruction(model_->compiled, model_->info);
  // A model that also reconstructs gives both from one pass.
  const std::vector<Tensor> all = drawn ? model_->predictions(raw.unsqueeze(0)) : std::vector<Tensor>{};
  const Tensor out = drawn ? all.at(model_->compiled.primary) : model_->forward(raw.unsqueeze(0));
  Prediction p;
  if (model_->classification())
    p.probabilities = softmax(out, 1).to_vector();
  else if (!drawn)
    p.values = out.to_vector();
  if (drawn) p.reconstruction = model_->normalization.unapply(all.at(*drawn)).reshape(raw.shape());
  return p;
}

}  // namespace plexus::app
