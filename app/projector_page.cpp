#include "projector_page.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <chrono>

#include "common/image_thumbnail.h"
#include "common/qt_text.h"
#include "editor/model/graph_document.h"
#include "explain/attribution.h"
#include "explain/projection.h"
#include "predictor.h"
#include "tryit/tryit_panel.h"
#include "tryit_page.h"

namespace plexus::app {

using widgets::qstr;

namespace {
const QString kInspection = QStringLiteral("projector");
}

ProjectorPage::ProjectorPage(TryItPage* try_it, const widgets::GraphDocument* document, QWidget* parent)
    : QWidget(parent), try_it_(try_it), document_(document) {
  node_ = new QComboBox(this);
  node_->setObjectName(QStringLiteral("projectorNode"));
  node_->setToolTip(tr("The node whose outputs are mapped: one point per example"));
  method_ = new QComboBox(this);
  method_->addItem(tr("t-SNE"), QStringLiteral("tsne"));
  method_->addItem(tr("PCA"), QStringLiteral("pca"));
  examples_ = new QSpinBox(this);
  examples_->setRange(10, 100000);
  examples_->setSingleStep(500);
  examples_->setValue(5000);
  examples_->setSuffix(tr(" examples"));
  examples_->setToolTip(tr("A seeded sample of the validation split (the test split where there is none)"));
  compute_ = new QPushButton(tr("Compute"), this);
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setEnabled(false);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 1000);
  progress_->setTextVisible(false);
  progress_->setMaximumWidth(220);
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("projectorStatus"));
  // Long messages are cut, not a reason for the window to grow.
  status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  plot_ = new widgets::ProjectorPlot(this);

  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Node"), this));
  bar->addWidget(node_);
  bar->addWidget(method_);
  bar->addWidget(examples_);
  bar->addWidget(compute_);
  bar->addWidget(cancel_);
  bar->addWidget(progress_);
  bar->addWidget(status_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(plot_, 1);

  plot_->setPreview([this](int row) { return preview(row); });
  connect(plot_, &widgets::ProjectorPlot::clicked, this, &ProjectorPage::openExample);
  connect(compute_, &QPushButton::clicked, this, [this] { compute(); });
  connect(cancel_, &QPushButton::clicked, this, &ProjectorPage::cancel);
  connect(&watcher_, &QFutureWatcher<Result>::finished, this, &ProjectorPage::finish);
  connect(document_, &widgets::GraphDocument::validated, this, &ProjectorPage::refreshNodes);
  connect(try_it_->predictor(), &Predictor::inspectionFailed, this, [this](const QString& key, const QString& message) {
    if (key != kInspection) return;
    try_it_->predictor()->setInspection(kInspection, {});
    waiting_for_model_ = false;
    setBusy(false);
    status_->setText(message);
    emit failed(message);
  });
  refreshNodes();
  status_->setText(tr("Train a model or load a checkpoint in Try It, then Compute."));
}

ProjectorPage::~ProjectorPage() {
  if (cancelled_) *cancelled_ = true;
  watcher_.waitForFinished();
}

QString ProjectorPage::statusText() const { return status_->text(); }

bool ProjectorPage::busy() const { return waiting_for_model_ || watcher_.isRunning(); }

// The nodes with a vector output per example, in graph order; the second last (the penultimate
// layer, before the class scores) chosen unless the choice is still there.
void ProjectorPage::refreshNodes() {
  const QString chosen = node_->currentText();
  const graph::InferenceResult& shapes = document_->validation().shapes;
  QStringList nodes;
  for (const std::string& id : shapes.order) {
    const auto it = shapes.outputs.find(id);
    const graph::Node* n = document_->graph().find(id);
    if (it == shapes.outputs.end() || it->second.empty() || !n || n->type == "Input") continue;
    if (it->second.front().size() == 1) nodes << qstr(id);  // per example (no batch dimension)
  }
  node_->clear();
  node_->addItems(nodes);
  if (nodes.contains(chosen))
    node_->setCurrentText(chosen);
  else if (nodes.size() >= 2)
    node_->setCurrentIndex(int(nodes.size()) - 2);
}

void ProjectorPage::setBusy(bool busy) {
  compute_->setEnabled(!busy);
  cancel_->setEnabled(busy);
  node_->setEnabled(!busy);
  method_->setEnabled(!busy);
  examples_->setEnabled(!busy);
  if (!busy) progress_->setValue(0);
}

bool ProjectorPage::compute() {
  if (busy()) return false;
  if (!try_it_->requestModel()) {
    status_->setText(tr("No model yet: train one, or load a checkpoint in Try It."));
    return false;
  }
  if (node_->currentText().isEmpty()) {
    status_->setText(tr("The project has no node with a vector output to map."));
    return false;
  }
  const QString file = document_->filePath();
  project_dir_ = file.isEmpty() ? QString() : QFileInfo(file).absolutePath();
  cancelled_ = std::make_shared<std::atomic<bool>>(false);
  waiting_for_model_ = true;
  setBusy(true);
  status_->setText(tr("Taking a copy of the model…"));
  // The job that owns the model copies it; the copy is mapped on a thread of our own, so Try It's
  // predictions go on meanwhile.
  QPointer<ProjectorPage> self(this);
  try_it_->predictor()->setInspection(kInspection, [self](const session::TrainedModel& model, const Tensor&) {
    auto copy = std::make_shared<const session::TrainedModel>(session::clone_trained_model(model));
    return std::function<void()>([self, copy] {
      if (self) self->start(copy);
    });
  });
  return true;
}

void ProjectorPage::start(std::shared_ptr<const session::TrainedModel> model) {
  try_it_->predictor()->setInspection(kInspection, {});
  if (!waiting_for_model_) return;  // cancelled meanwhile
  waiting_for_model_ = false;
  explain::FeatureOptions fo;
  fo.node = node_->currentText().toStdString();
  fo.max_examples = examples_->value();
  const bool tsne = method_->currentData().toString() == QLatin1String("tsne");
  fo.cancelled = cancelled_.get();
  status_->setText(tr("Running the model over the examples…"));
  // Progress crosses to the UI thread queued: the first half the outputs, the second the map.
  QPointer<ProjectorPage> self(this);
  auto report = [self](int permille, const QString& text) {
    QMetaObject::invokeMethod(
        self.data(),
        [self, permille, text] {
          if (!self || !self->busy()) return;
          self->progress_->setValue(permille);
          if (!text.isEmpty()) self->status_->setText(text);
        },
        Qt::QueuedConnection);
  };
  fo.progress = [report](int64_t done, int64_t total) { report(int(500 * done / std::max<int64_t>(total, 1)), {}); };
  const session::LoadOptions load{.project_dir = project_dir_.toStdString()};
  std::shared_ptr<std::atomic<bool>> cancelled = cancelled_;
  watcher_.setFuture(QtConcurrent::run([model, fo, load, tsne, report, cancelled] {
    Result r;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      r.features = explain::collect_features(*model, load, fo);
      report(500, tsne ? tr("t-SNE…") : tr("PCA…"));
      Tensor map;
      if (tsne) {
        explain::TsneOptions to;
        to.cancelled = cancelled.get();
        const int64_t iterations = to.iterations;
        to.progress = [report, iterations](int64_t it, double) { report(int(500 + 500 * it / iterations), {}); };
        map = explain::tsne(r.features.features, to);
      } else {
        map = explain::pca(r.features.features, std::min<int64_t>(2, r.features.features.size(1))).points;
      }
      const std::vector<float> xy = map.to_vector();
      const int64_t k = map.size(1);
      for (size_t i = 0; i < r.features.indices.size(); ++i)
        r.points.push_back({xy[i * size_t(k)], k > 1 ? xy[i * size_t(k) + 1] : 0.f, int(r.features.labels[i]),
                            int(r.features.predicted[i])});
    } catch (const explain::Cancelled&) {
      r.error = tr("Cancelled.");
    } catch (const std::exception& e) {
      r.error = qstr(e.what());
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }));
}

void ProjectorPage::cancel() {
  if (cancelled_) *cancelled_ = true;
  if (waiting_for_model_) {
    try_it_->predictor()->setInspection(kInspection, {});
    waiting_for_model_ = false;
    setBusy(false);
    status_->setText(tr("Cancelled."));
  }
}

void ProjectorPage::finish() {
  Result r = watcher_.result();
  setBusy(false);
  if (!r.error.isEmpty()) {
    status_->setText(r.error);
    if (r.error != tr("Cancelled.")) emit failed(r.error);
    return;
  }
  int64_t wrong = 0;
  for (const auto& p : r.points) wrong += p.label >= 0 && p.predicted >= 0 && p.label != p.predicted;
  QStringList names;
  for (const std::string& n : r.features.class_names) names << qstr(n);
  status_->setText(tr("%1 examples of %2, %3 misclassified (%4 s)")
                       .arg(r.points.size())
                       .arg(qstr(r.features.node))
                       .arg(wrong)
                       .arg(r.seconds, 0, 'f', 1));
  result_ = std::move(r);
  plot_->setPoints(result_.points, names);
  emit computed();
}

QImage ProjectorPage::preview(int row) const {
  if (!result_.features.split || row < 0 || size_t(row) >= result_.features.indices.size()) return {};
  const Tensor input = result_.features.split->get(result_.features.indices[size_t(row)]).input.contiguous();
  if (!widgets::isImageShape(input.shape())) return {};
  return widgets::thumbnailImage(input.data(), input.shape());
}

// The example becomes Try It's input, as a picture of its raw pixels (in [0, 1], as the IDX and
// image-folder readers give them); other inputs cannot be shown there.
void ProjectorPage::openExample(int row) {
  if (!result_.features.split || row < 0 || size_t(row) >= result_.features.indices.size()) return;
  const Tensor input = result_.features.split->get(result_.features.indices[size_t(row)]).input.contiguous();
  if (!widgets::isImageShape(input.shape())) {
    status_->setText(tr("Only pictures open in Try It from here."));
    return;
  }
  try_it_->panel()->openPicture(data::input_to_image(input));
  emit openInTryIt();
}

}  // namespace plexus::app
