#include "soak_driver.h"

#include <QCoreApplication>
#include <QSignalSpy>
#include <QTest>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dashboard.h"
#include "dashboard/training_plots.h"
#include "data/image_file.h"
#include "data/synthetic_digits.h"
#include "editor/model/graph_document.h"
#include "graph/project.h"
#include "ops/ops.h"
#include "session/data_pipeline.h"
#include "session/trained_model.h"
#include "support/app_fixture.h"
#include "support/mlp_fixture.h"
#include "training_controller.h"
#include "tryit/tryit_panel.h"
#include "tryit_page.h"

namespace fs = std::filesystem;

namespace plexus::testing {
namespace {

// The first hidden layer's two widths, one per edit in turn: wide enough that a run's model
// (784 x 256 floats, 0.8 MiB, three times that with Adam's moments) kept by mistake shows in
// the resident memory of a 20-run session.
constexpr int64_t kWide = 256, kNarrow = 192;
constexpr int kWaitMs = 60000;  // for any one step, on a loaded machine

}  // namespace

ProcessHealth process_health() {
  ProcessHealth h;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmRSS:")) h.rss_mib = std::stod(line.substr(6)) / 1024;  // "VmRSS:  123456 kB"
    if (line.starts_with("Threads:")) h.threads = std::stoi(line.substr(8));
  }
  for ([[maybe_unused]] const fs::directory_entry& e : fs::directory_iterator("/proc/self/fd")) ++h.fds;
  return h;
}

SoakSession::SoakSession() {
  if (!dir_.isValid()) throw std::runtime_error("soak: cannot make a temporary folder");
  isolate_app(dir_.filePath("recovery"));
  const fs::path root = dir_.path().toStdString();
  // 300 examples (270 to train on in batches of 30), 3 epochs: a run is a few dozen steps.
  data::write_synthetic_digits(root / "digits", 300, 60);
  graph::Graph g = mlp_graph("digits", {{"fc1", kWide}, {"fc2", 10}});
  g.training.optimizer = "adam";
  g.training.lr = 0.002;
  g.training.batch_size = 30;
  g.training.epochs = 3;
  project_ = dir_.filePath("soak.plexus");
  graph::save_project(project_.toStdString(), g);
  const data::SyntheticDigits digits = data::make_synthetic_digits(2, 7);
  for (int i = 0; i < 2; ++i) {
    pictures_[i] = root / ("digit" + std::to_string(i) + ".png");
    const auto first = digits.images.begin() + i * 28 * 28;
    data::write_png(pictures_[i], data::Image{28, 28, 1, std::vector<uint8_t>(first, first + 28 * 28)});
  }

  window_ = std::make_unique<TestWindow>();
  window_->confirm = [](const QString&, const QString&, const QString&) { return true; };  // Delete
  window_->show();
  QSignalSpy loaded(window_->dashboard(), &app::Dashboard::runsLoaded);
  expect(window_->openFile(project_) && loaded.wait(kWaitMs), 0, "the project did not open");
}

SoakSession::~SoakSession() = default;

// Throws when a step did not happen, saying what the window showed then.
void SoakSession::expect(bool ok, int run, const char* step) const {
  if (ok) return;
  std::string state = "no window";
  if (window_) {
    const app::TrainingController* t = window_->training();
    state = std::string(t->isRunning() ? "running" : "not running") + (t->isPaused() ? ", paused" : "");
    if (const QString error = window_->dashboard()->errorText(); !error.isEmpty())
      state += "; dashboard: " + error.toStdString();
    if (const QString notes = window_->dashboard()->notesText(); !notes.isEmpty())
      state += "; notes: " + notes.toStdString();
    if (!window_->errors.isEmpty()) state += "; error shown: " + window_->errors.join("; ").toStdString();
  }
  throw std::runtime_error("soak run " + std::to_string(run) + ": " + step + " (" + state + ")");
}

void SoakSession::run(int index) {
  TestWindow& w = *window_;
  QSignalSpy edited(w.training(), &app::TrainingController::graphEdited);
  QSignalSpy finished(w.training(), &app::TrainingController::finished);
  QSignalSpy checkpoints(w.training(), &app::TrainingController::checkpointSaved);
  startPaused(index);

  // Edit while paused, and Resume: the run goes on with the edited model.
  w.document()->setParam("fc1", "out_features", index % 2 ? kNarrow : kWide);
  QSignalSpy notices(w.training(), &app::TrainingController::notice);
  w.pauseAction()->trigger();
  expect(!w.training()->isPaused(), index, "Resume left the run paused");
  expect(QTest::qWaitFor([&] { return !edited.isEmpty() || !finished.isEmpty(); }, kWaitMs), index,
         "the run neither took the edit made while paused nor ended");
  // A run may have trained to its end before Pause reached it (the UI thread is not the
  // worker's): it ends without the edit, and says so (TrainingController::endRun).
  if (edited.isEmpty()) {
    bool said = false;
    for (const QList<QVariant>& n : notices)
      said = said || n.at(0).toString().startsWith("the run ended before the edit");
    expect(said, index, "the run ended without the edit made while paused and without saying so");
  }
  if (index % 2 == 0) w.stopAction()->trigger();
  expect(!finished.isEmpty() || finished.wait(kWaitMs), index, "the run did not end");
  expect(w.errors.isEmpty(), index, "an error was shown");
  last_checkpoint_.clear();
  for (const QList<QVariant>& c : checkpoints)
    if (c.at(1).toString() == "final") last_checkpoint_ = c.at(0).toString().toStdString();
  expect(!last_checkpoint_.empty(), index, "the run saved no final checkpoint");

  compareAndDelete(index);
  tryIt(index, !edited.isEmpty());
  w.showEditor();
  QTest::qWait(1);  // what the window deleted later goes, as the app's event loop would see to
}

// Paused as it starts, as a fast run must be to be paused at all: its Trainer waits before the
// first batch, and an edit made meanwhile is applied there (TrainingController::attach).
void SoakSession::startPaused(int index) {
  TestWindow& w = *window_;
  expect(w.startTraining(), index, "Train did not start");
  w.pauseAction()->trigger();
  expect(w.training()->isPaused(), index, "Pause did not pause");
}

// The run's last weights predict a picture; every second run its final checkpoint, loaded for
// the open project, too, when that is the project the run trained (it took the edit).
void SoakSession::tryIt(int index, bool checkpoint_fits) {
  TestWindow& w = *window_;
  app::TryItPage* page = w.tryIt();
  widgets::TryItPanel* panel = page->panel();
  QSignalSpy shown(page, &app::TryItPage::predictionShown);
  w.showTryIt();  // asks for the ended run's weights
  expect(QTest::qWaitFor([&] { return panel->modelStatus().startsWith("The last run's weights"); }, kWaitMs), index,
         "Try It did not take the run's last weights");
  shown.clear();
  expect(panel->openImage(QString::fromStdString(picture(index).string())), index, "Try It did not open the picture");
  expect(shown.wait(kWaitMs), index, "Try It showed no prediction of the run's weights");
  if (index % 2 || !checkpoint_fits) return;
  shown.clear();
  page->loadCheckpoint(QString::fromStdString(last_checkpoint_.string()));
  expect(QTest::qWaitFor([&] { return panel->modelStatus() == "Checkpoint: final.safetensors" && !shown.isEmpty(); },
                         kWaitMs),
         index, "Try It showed no prediction of the loaded checkpoint");
  expect(panel->errorText().isEmpty(), index, "Try It showed an error");
}

// The two newest runs compared; then the oldest deleted down to kKeptRuns.
void SoakSession::compareAndDelete(int index) {
  TestWindow& w = *window_;
  app::Dashboard* d = w.dashboard();
  std::vector<int> ids = d->plots()->runIds();  // oldest first
  if (ids.size() >= 2) {
    QSignalSpy shown(d, &app::Dashboard::comparisonShown);
    d->compareRuns(ids[ids.size() - 2], ids.back());
    expect(shown.wait(kWaitMs) && d->isComparing(), index, "the comparison was not shown");
    d->closeComparison();
  }
  for (size_t i = 0; i + kKeptRuns < ids.size(); ++i) {
    QSignalSpy deleted(d, &app::Dashboard::runDeleted);
    w.deleteRun(ids[i]);
    expect(deleted.wait(kWaitMs) && deleted.at(0).at(1).toString().isEmpty(), index, "a run was not deleted");
  }
  expect(int(d->plots()->runIds().size()) == std::min(int(ids.size()), kKeptRuns), index,
         "the dashboard lists other runs than it should");
}

int predict_once(const fs::path& checkpoint, const fs::path& picture) {
  const std::optional<graph::Graph> project = session::project_in_checkpoint(checkpoint);
  if (!project) throw std::runtime_error(checkpoint.string() + " holds no project");
  // A run's checkpoint carries the normalisation and the classes: the dataset is not read.
  const session::TrainedModel model = session::load_trained_model(*project, checkpoint);
  const Tensor x = session::picture_input(data::read_image(picture), project->dataset, model.info.input_shape);
  const std::vector<float> p = softmax(model.forward(x.unsqueeze(0)), 1).to_vector();
  return int(std::max_element(p.begin(), p.end()) - p.begin());
}

}  // namespace plexus::testing
