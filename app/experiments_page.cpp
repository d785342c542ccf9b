#include "experiments_page.h"

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <algorithm>
#include <exception>

#include "common/qt_text.h"
#include "editor/model/graph_document.h"
#include "experiment/experiment_view.h"
#include "experiment/sweep_editor.h"
#include "graph/dataset_info.h"
#include "graph/project.h"
#include "graph/sweep_settings.h"
#include "process_run.h"
#include "session/run_log.h"
#include "sweep/assignment.h"

namespace plexus::app {

using widgets::qstr;

namespace {

constexpr qsizetype kKeptOutput = 64 * 1024;
// The definition's column: its form and a list of five narrow columns. It may narrow to the
// minimum: the page must not hold the window wider than the editor's page does.
constexpr int kEditorWidth = 360, kEditorMinimumWidth = 240;

QVariant variantOf(const graph::ParamValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return qlonglong(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return qstr(graph::to_string(v));  // a choice, a flag: a category of the plot
}

// A parameter's axis is logarithmic for a log range, and for listed values over two decades or more.
bool logAxis(const graph::SweepParameter& p) {
  if (p.scale == "log") return true;
  double lo = 0, hi = 0;
  for (const graph::ParamValue& v : p.values) {
    const QVariant q = variantOf(v);
    if (q.typeId() == QMetaType::QString || q.toDouble() <= 0) return false;
    lo = lo == 0 ? q.toDouble() : std::min(lo, q.toDouble());
    hi = std::max(hi, q.toDouble());
  }
  return lo > 0 && hi / lo >= 100;
}

std::vector<widgets::SweptParameter> parametersOf(const sweep::SweepState& state) {
  std::vector<widgets::SweptParameter> out;
  for (const graph::SweepParameter& p : state.project.sweep.parameters) out.push_back({qstr(p.target), logAxis(p)});
  return out;
}

std::vector<widgets::Trial> trialsOf(const sweep::SweepState& state) {
  std::vector<widgets::Trial> out;
  for (const sweep::TrialState& t : state.trials) {
    widgets::Trial trial;
    trial.index = int(t.index);
    for (const graph::SweepParameter& p : state.project.sweep.parameters) {
      QVariant value;
      if (t.assignment)
        for (const sweep::Setting& s : *t.assignment)
          if (s.target == p.target) value = variantOf(s.value);
      trial.values.push_back(value);
    }
    trial.status = qstr(sweep::to_string(t.status));
    trial.bestLoss = t.best_validation_loss;
    trial.bestAccuracy = t.best_validation_accuracy;
    trial.bestEpoch = t.best_epoch;
    trial.epochs = t.epochs_done;
    trial.seconds = t.seconds;
    if (t.status != sweep::TrialStatus::Pending) trial.folder = qstr(t.folder.string());
    out.push_back(trial);
  }
  return out;
}

}  // namespace

ExperimentsPage::ExperimentsPage(widgets::GraphDocument* document, QWidget* parent) : QWidget(parent), doc_(document) {
  editor_ = new widgets::SweepEditor(doc_, this);
  view_ = new widgets::ExperimentView(this);

  start_ = new QAction(tr("Start &Sweep"), this);
  start_->setObjectName(QStringLiteral("startSweepAction"));
  start_->setToolTip(tr("Run the project's sweep: each trial trains in a process of its own"));
  stop_ = new QAction(tr("Stop S&weep"), this);
  stop_->setObjectName(QStringLiteral("stopSweepAction"));
  stop_->setToolTip(tr("Stop the running trials cleanly; Resume Sweep goes on with them"));
  connect(stop_, &QAction::triggered, this, &ExperimentsPage::stop);
  resume_ = new QAction(tr("&Resume Sweep"), this);
  resume_->setObjectName(QStringLiteral("resumeSweepAction"));
  resume_->setToolTip(tr("Go on with the sweep shown: its finished trials are kept"));
  connect(resume_, &QAction::triggered, this, [this] {
    if (const QString why = resume(); !why.isEmpty()) emit ended(why, true);
  });
  open_ = new QAction(tr("&Open Sweep Folder…"), this);
  open_->setObjectName(QStringLiteral("openSweepAction"));

  // The definition in a column of its own that scrolls; the sweep takes the rest.
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setWidget(editor_);
  scroll->setMinimumWidth(kEditorMinimumWidth);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->setObjectName(QStringLiteral("experimentsSplit"));
  split->addWidget(scroll);
  split->addWidget(view_);
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  split->setSizes({kEditorWidth, 1280 - kEditorWidth});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);

  connect(view_, &widgets::ExperimentView::applyBestRequested, this, [this] {
    try {
      const QString changed = applyBest();
      emit message(changed.isEmpty() ? tr("The project already has the best trial's settings")
                                     : tr("Applied the best trial's settings: %1").arg(changed));
    } catch (const std::exception& e) {
      emit ended(tr("Cannot apply the best trial's settings: %1").arg(qstr(e.what())), true);
    }
  });
  connect(doc_, &widgets::GraphDocument::sweepChanged, this, &ExperimentsPage::updateActions);
  connect(doc_, &widgets::GraphDocument::graphReset, this, &ExperimentsPage::updateActions);
  poll_timer_.setInterval(kPollMs);
  connect(&poll_timer_, &QTimer::timeout, this, &ExperimentsPage::poll);
  kill_timer_.setSingleShot(true);
  connect(&kill_timer_, &QTimer::timeout, this, [this] {
    if (process_) process_->kill();
  });
  connect(&reading_, &QFutureWatcher<Read>::finished, this, [this] {
    const Read read = reading_.result();
    if (read.state && read.folder == folder_) show(*read.state);  // not one shown before
    if (poll_again_) {
      poll_again_ = false;
      poll();
    }
  });
  updateActions();
}

ExperimentsPage::~ExperimentsPage() {
  if (process_) {
    process_->disconnect(this);
    process_->terminate();  // the trials stop cleanly; the sweep can resume
    if (!process_->waitForFinished(10000)) process_->kill();
    process_->waitForFinished(2000);
  }
  reading_.waitForFinished();
}

QString ExperimentsPage::start(const QString& folder, const QString& project_dir) {
  if (process_) return tr("A sweep is running already");
  if (!doc_->graph().sweep.defined()) return tr("The project defines no sweep: add a parameter to sweep first");
  try {
    graph::check_sweep(doc_->graph());
  } catch (const std::exception& e) {
    return qstr(e.what());
  }
  // plexus-cli finds a relative dataset path next to the project file it is given, which is in
  // the sweep's folder: it gets the path this window finds.
  graph::Graph launched = doc_->graph();
  launched.view.clear();
  if (const graph::DatasetLocation at = graph::locate_dataset(launched.dataset.path, project_dir.toStdString());
      at.found)
    launched.dataset.path = std::filesystem::absolute(at.path).lexically_normal().string();
  const QString project = folder + QLatin1Char('/') + QLatin1String(session::kLaunchProjectFile);
  try {
    std::filesystem::create_directories(folder.toStdString());
    graph::save_project(project.toStdString(), launched);
  } catch (const std::exception& e) {
    return qstr(e.what());
  }
  folder_ = folder;
  state_.reset();
  view_->setSweep(QFileInfo(folder).fileName(), {}, widgets::TrialMetric::Loss);
  return launch({QStringLiteral("sweep"), project, QStringLiteral("--sweep-dir"), folder});
}

QString ExperimentsPage::resume() {
  if (process_) return tr("A sweep is running already");
  if (!state_) return tr("No sweep is shown: open its folder first");
  if (state_->running) return tr("The sweep is running in another process");
  if (state_->complete()) return tr("Every trial of the sweep has finished");
  return launch({QStringLiteral("sweep"), QStringLiteral("--resume"), folder_});
}

QString ExperimentsPage::launch(const QStringList& arguments) {
  const QString cli = ProcessRun::cliPath();
  if (!QFileInfo(cli).isExecutable()) return tr("plexus-cli was not found at %1").arg(QDir::toNativeSeparators(cli));
  process_ = new QProcess(this);
  process_->setProcessChannelMode(QProcess::MergedChannels);
  process_->setWorkingDirectory(folder_);
  output_.clear();
  stop_requested_ = false;
  connect(process_, &QProcess::readyRead, this, [this] {
    output_ += process_->readAll();
    if (output_.size() > kKeptOutput) output_ = output_.right(kKeptOutput);
  });
  connect(process_, &QProcess::finished, this, &ExperimentsPage::finished);
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error == QProcess::FailedToStart) finished(-1, QProcess::CrashExit);
  });
  process_->start(cli, arguments);
  poll_timer_.start();
  editor_->setLocked(true);
  updateActions();
  emit runningChanged();
  emit message(tr("Sweep running: its trials go to %1").arg(QDir::toNativeSeparators(folder_)));
  return {};
}

void ExperimentsPage::stop() {
  if (!process_ || stop_requested_) return;
  stop_requested_ = true;
  process_->terminate();
  kill_timer_.start(kKillAfterMs);
  emit message(tr("Stopping the sweep…"));
}

void ExperimentsPage::finished(int exit_code, QProcess::ExitStatus status) {
  if (!process_) return;
  output_ += process_->readAll();
  process_->deleteLater();
  process_ = nullptr;
  kill_timer_.stop();
  editor_->setLocked(false);
  poll();  // the trials' last lines
  QString text;
  bool failed = false;
  if (stop_requested_) {
    text = tr("Sweep stopped: Resume Sweep goes on with it");
  } else if (status == QProcess::NormalExit && exit_code == 0) {
    text = tr("Sweep finished");
  } else {
    failed = true;
    text = tr("The sweep ended with an error:\n%1").arg(outputTail(12));
  }
  updateActions();
  emit runningChanged();
  emit ended(text, failed);
}

QString ExperimentsPage::outputTail(int lines) const {
  QStringList all = QString::fromUtf8(output_).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  return all.mid(std::max<qsizetype>(0, all.size() - lines)).join(QLatin1Char('\n'));
}

bool ExperimentsPage::open(const QString& folder, QString* why) {
  try {
    const sweep::SweepState state = sweep::read_sweep(folder.toStdString());
    if (process_ && folder != folder_) {
      if (why) *why = tr("A sweep is running: stop it before showing another one");
      return false;
    }
    folder_ = QString::fromStdString(state.folder.string());
    state_.reset();
    show(state);
    if (state.running) poll_timer_.start();  // another process runs it: followed live
    return true;
  } catch (const std::exception& e) {
    if (why) *why = qstr(e.what());
    return false;
  }
}

void ExperimentsPage::poll() {
  if (folder_.isEmpty()) return;
  if (reading_.isRunning()) {
    poll_again_ = true;
    return;
  }
  reading_.setFuture(QtConcurrent::run([folder = folder_] {
    Read read{folder, std::nullopt};
    try {
      read.state = sweep::read_sweep(folder.toStdString());
    } catch (const std::exception&) {
      // sweep.json not written yet (the sweep is starting): the next poll reads it
    }
    return read;
  }));
}

void ExperimentsPage::show(const sweep::SweepState& state) {
  const bool same_sweep =
      state_ && state_->project.sweep.parameters == state.project.sweep.parameters && state_->metric == state.metric;
  if (!same_sweep)
    view_->setSweep(
        QString::fromStdString(state.folder.filename().string()), parametersOf(state),
        state.metric == "validation_accuracy" ? widgets::TrialMetric::Accuracy : widgets::TrialMetric::Loss);
  state_ = state;
  view_->setTrials(trialsOf(state));
  if (!process_ && !state.running) poll_timer_.stop();
  updateActions();
  emit updated();
}

QString ExperimentsPage::applyBest() {
  if (!state_) return {};
  const std::optional<size_t> best = sweep::best_trial(*state_);
  if (!best || !state_->trials[*best].assignment) return {};
  const sweep::Assignment& assignment = *state_->trials[*best].assignment;
  const graph::Graph applied = sweep::apply_assignment(doc_->graph(), assignment);
  const bool changed =
      doc_->adoptSettings(applied, tr("Apply the settings of trial %1").arg(state_->trials[*best].index));
  return changed ? qstr(sweep::assignment_text(assignment)) : QString();
}

void ExperimentsPage::updateActions() {
  start_->setEnabled(!process_ && doc_->graph().sweep.defined());
  stop_->setEnabled(process_ != nullptr);
  resume_->setEnabled(!process_ && state_ && !state_->running && !state_->complete());
  open_->setEnabled(!process_);
}

}  // namespace plexus::app
