#include "dashboard.h"

#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QSet>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "common/panel_style.h"
#include "common/qt_text.h"
#include "common/theme.h"
#include "dashboard/binary_curves.h"
#include "dashboard/class_report_view.h"
#include "dashboard/confusion_matrix.h"
#include "dashboard/reconstructions.h"
#include "dashboard/regression_view.h"
#include "dashboard/resume_offer.h"
#include "dashboard/run_comparison.h"
#include "dashboard/run_list.h"
#include "dashboard/text_figures.h"
#include "dashboard/text_samples.h"
#include "dashboard/top_confusions.h"
#include "dashboard/training_plots.h"
#include "dashboard/training_progress.h"
#include "data/csv.h"
#include "dataset/dataset_preview.h"
#include "graph/dataset_info.h"
#include "graph/dataset_params.h"
#include "graph/project.h"
#include "run_follower.h"
#include "session/data_pipeline.h"
#include "session/resume.h"
#include "session/run_log.h"
#include "session/text_sampling.h"
#include "session/trained_model.h"
#include "train/health.h"
#include "train/readable_figures.h"
#include "training_controller.h"

namespace plexus::app {

using widgets::qstr;

namespace {

std::vector<QString> qstrings(const std::vector<std::string>& in) {
  std::vector<QString> out;
  for (const std::string& s : in) out.push_back(qstr(s));
  return out;
}

// "sgd, lr 0.1, momentum 0.9, batch 100, 5 epochs, seed 1, cpu" — a run's settings at a glance.
// An edit made while paused as a marker on the run's curves: between the batch it followed and
// the next, with what changed and what the weights kept.
void markEdit(widgets::TrainingPlots* plots, int run, const train::GraphEdit& e) {
  QStringList tip{QObject::tr("Edited while paused: epoch %1, after batch %2 of %3").arg(e.epoch).arg(e.batch).arg(e.batches)};
  for (const std::string& change : e.changes) tip << QStringLiteral("• ") + qstr(change);
  tip << QObject::tr("Weights: kept %1 tensors, reset %2").arg(e.kept).arg(e.reset);
  const double epoch = e.epoch - 1 + (e.batches > 0 ? double(e.batch) / double(e.batches) : 0.0);
  plots->addMarker(run, e.step(), epoch, tip.join(QLatin1Char('\n')));
}

QString summary(const graph::TrainingSettings& s) {
  QString text = QStringLiteral("%1, lr %2").arg(qstr(s.optimizer)).arg(s.lr);
  if (s.momentum > 0 && (s.optimizer == "sgd" || s.optimizer == "rmsprop")) text += QStringLiteral(", momentum %1").arg(s.momentum);
  if (s.weight_decay > 0) text += QStringLiteral(", weight decay %1").arg(s.weight_decay);
  if (s.schedule != "none") text += QStringLiteral(", %1 schedule").arg(qstr(s.schedule));
  return text + QStringLiteral(", batch %1, %2 epochs, seed %3, %4")
                    .arg(s.batch_size)
                    .arg(s.epochs)
                    .arg(s.seed)
                    .arg(qstr(s.device));
}

// Opens the splits as a run does: the same seeded validation split.
PreviewData readPreview(graph::DatasetBinding binding, std::filesystem::path project_dir, uint64_t seed,
                        double validation_fraction) {
  PreviewData out;
  try {
    const graph::DatasetBinding resolved = graph::resolve_dataset(binding, project_dir);
    graph::DatasetSplits splits = graph::open_dataset(resolved, seed, validation_fraction);
    out.train = splits.train;
    out.validation = splits.validation;
    out.test = splits.test;
    out.input = splits.info.input_shape;
    out.augmentation = session::training_augmentation(binding);
    out.class_names = qstrings(splits.train->class_names());
    if (const auto* csv = dynamic_cast<const data::CsvDataset*>(splits.train.get()))
      out.feature_names = qstrings(csv->feature_names());
  } catch (const std::exception& e) {
    out.error = qstr(e.what());
  }
  return out;
}

// The preview's tabs. The training images are the ones augmented; the split the run evaluates
// every epoch (validation, else test) is the one its predictions are of.
std::vector<widgets::PreviewSplit> previewSplits(const PreviewData& data) {
  std::vector<widgets::PreviewSplit> splits{{QObject::tr("Training"), data.train, true, false, data.input}};
  if (data.validation) splits.push_back({QObject::tr("Validation"), data.validation, false, true, data.input});
  if (data.test) splits.push_back({QObject::tr("Test"), data.test, false, !data.validation, data.input});
  return splits;
}

// The final model's figures on the test split, for a run's tool tip.
QString testNote(const train::EpochEnd& test, bool classification) {
  QString text = QObject::tr("Test (final model): loss %1").arg(QString::number(test.eval_loss, 'g', 4)) +
                 qstr(train::parts_text(test.eval_losses));
  if (classification) text += QObject::tr(", accuracy %1%").arg(QString::number(100 * test.eval_accuracy, 'f', 2));
  return text;
}

// What the plots and figures call a graph's loss nodes: their labels ("MSE 'reconstruct'").
train::NodeInfos lossNames(const graph::Graph& graph) {
  train::NodeInfos names;
  for (const graph::Node& n : graph.nodes) names[n.id].label = n.label();
  return names;
}

QString folderName(const QString& folder) { return QFileInfo(folder).fileName(); }

// When a `last` checkpoint was saved (ResumePoint::saved, local ISO 8601), for people.
QString savedText(const std::string& saved) {
  const QDateTime when = QDateTime::fromString(qstr(saved), Qt::ISODateWithMs);
  return when.isValid() ? QLocale().toString(when, QLocale::ShortFormat) : qstr(saved);
}

// Paths compare as the same folder however they are spelt; "" stays "".
QString canonical(const QString& folder) {
  if (folder.isEmpty()) return {};
  const QString c = QFileInfo(folder).canonicalFilePath();
  return c.isEmpty() ? QDir::cleanPath(QFileInfo(folder).absoluteFilePath()) : c;
}

}  // namespace

// A run folder read in the background: its record, or why it could not be read.
struct Dashboard::LoadedRun {
  QString folder;
  std::optional<session::RunRecord> record;
  QString error;
  train::NodeInfos lossNames;  // from the project it trained; none when that is unreadable
  // Where a run that stopped short resumes (session/resume.h); or why it cannot.
  std::optional<session::ResumePoint> resume;
  QString resumeError;
};

std::vector<Dashboard::LoadedRun> Dashboard::readRuns(const std::vector<std::filesystem::path>& folders) {
  std::vector<LoadedRun> out;
  for (const std::filesystem::path& folder : folders) {
    LoadedRun run{qstr(folder.string()), std::nullopt, {}, {}, std::nullopt, {}};
    try {
      run.record = session::read_run(folder);
    } catch (const std::exception& e) {
      run.error = qstr(e.what());
    }
    if (run.record && run.record->status != session::RunStatus::Completed &&
        run.record->status != session::RunStatus::StoppedEarly && run.record->has_last) {
      try {
        run.resume = session::find_resume_point(folder);
      } catch (const std::exception& e) {
        run.resumeError = qstr(e.what());
      }
    }
    try {  // the loss nodes are called by their ids without it
      run.lossNames = lossNames(graph::load_project(folder / session::kRunProjectFile));
    } catch (const std::exception&) {
    }
    out.push_back(std::move(run));
  }
  return out;
}

Dashboard::Dashboard(TrainingController* controller, RunFollower* follower, QWidget* parent)
    : QWidget(parent), controller_(controller), follower_(follower) {
  plots_ = new widgets::TrainingPlots(this);
  runs_ = new widgets::RunList(plots_, this);
  progress_ = new widgets::TrainingProgress(this);
  confusion_ = new widgets::ConfusionMatrixView(this);
  top_confusions_ = new widgets::TopConfusionsView(this);
  confusions_ = new QStackedWidget(this);
  confusions_->addWidget(confusion_);
  confusions_->addWidget(top_confusions_);
  reconstructions_ = new widgets::ReconstructionsView(this);  // an autoencoder's, in the same place
  confusions_->addWidget(reconstructions_);
  class_report_ = new widgets::ClassReportView(this);
  curves_ = new widgets::BinaryCurvesView(this);
  regression_ = new widgets::RegressionView(this);
  figures_ = new QTabWidget(this);
  figures_->setObjectName(QStringLiteral("figureTabs"));
  figures_->setDocumentMode(true);
  figures_->addTab(confusions_, tr("Last Epoch"));
  figures_->addTab(class_report_, tr("Test: Classes"));
  // Below the room its curves, slider and matrix need (a laptop's dashboard), it scrolls.
  auto* curves_area = new QScrollArea(this);
  curves_area->setWidget(curves_);
  curves_area->setWidgetResizable(true);
  curves_area->setFrameShape(QFrame::NoFrame);
  curves_area->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  figures_->addTab(curves_area, tr("Test: ROC && PR"));
  figures_->addTab(regression_, tr("Test: Regression"));
  figures_->setTabToolTip(0, tr("The last epoch's evaluation: the validation split's, else the test split's"));
  for (int tab : {1, 2, 3}) {
    figures_->setTabToolTip(tab, tr("The final model on the test split, beside a trivial baseline's figures"));
    figures_->setTabVisible(tab, false);
  }
  text_figures_ = new widgets::TextFigures(this);
  text_figures_->hide();
  preview_ = new widgets::DatasetPreview(this);
  text_samples_ = new widgets::TextSamplesView(this);
  text_samples_->hide();
  error_ = new QLabel(this);
  error_->setObjectName(QStringLiteral("trainingError"));
  error_->setWordWrap(true);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->hide();
  checkpoint_ = new QLabel(this);
  checkpoint_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  trained_ = new QLabel(this);
  trained_->setObjectName(QStringLiteral("trainedParameters"));
  trained_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  trained_->hide();
  // How the run executes (train::Notice): a CUDA graph or why not, a precision the device
  // does not have. Kept for the whole run, unlike the status bar's message.
  notes_ = new QLabel(this);
  notes_->setObjectName(QStringLiteral("runNotes"));
  notes_->setWordWrap(true);
  notes_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  notes_->hide();
  test_ = new QLabel(this);
  test_->setObjectName(QStringLiteral("testResult"));
  test_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  test_->hide();
  buildSkipped();

  // On a small screen the three plots would be squeezed until their titles overlap: below
  // their own minimum they scroll instead.
  auto* plots_area = new QScrollArea(this);
  plots_area->setWidget(plots_);
  plots_area->setWidgetResizable(true);
  plots_area->setFrameShape(QFrame::NoFrame);
  plots_area->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  top_ = new QSplitter(Qt::Horizontal, this);
  top_->addWidget(plots_area);
  top_->addWidget(figures_);
  top_->setStretchFactor(0, 3);
  top_->setStretchFactor(1, 2);
  // Until a run of this session evaluates, the curves of past runs have the room.
  figures_->hide();
  bottom_ = new QSplitter(Qt::Horizontal, this);
  bottom_->addWidget(preview_);
  bottom_->addWidget(runs_);
  bottom_->addWidget(text_samples_);  // hidden: a text project's go beside the plots
  // The run list has past runs to compare too: it gets as much room as the samples.
  bottom_->setStretchFactor(0, 1);
  bottom_->setStretchFactor(1, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(top_);
  split->addWidget(bottom_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  // The parts' own minimums add up to more than a laptop screen; the splitter shares what
  // there is instead of forcing the window taller.
  split->setMinimumSize(320, 240);

  runs_page_ = new QWidget(this);
  comparison_ = new widgets::RunComparison(this);
  resume_offer_ = new widgets::ResumeOffer(this);
  connect(resume_offer_, &widgets::ResumeOffer::resumeRequested, this, &Dashboard::resumeRequested);
  pages_ = new QStackedWidget(this);
  pages_->addWidget(runs_page_);
  pages_->addWidget(comparison_);
  auto* page = new QVBoxLayout(this);
  page->setContentsMargins(0, 0, 0, 0);
  page->addWidget(pages_);
  connect(runs_, &widgets::RunList::compareRequested, this, &Dashboard::compareRuns);
  connect(comparison_, &widgets::RunComparison::closeRequested, this, &Dashboard::closeComparison);

  auto* layout = new QVBoxLayout(runs_page_);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(resume_offer_);
  layout->addWidget(error_);
  layout->addWidget(progress_);
  layout->addWidget(checkpoint_);
  layout->addWidget(trained_);
  layout->addWidget(notes_);
  layout->addWidget(test_);
  layout->addWidget(text_figures_);
  layout->addWidget(skipped_row_);
  layout->addWidget(split, 1);

  // A run of the controller's and one followed from its folder come the same way.
  listen(controller_);
  listen(follower_);
  connect(controller_, &TrainingController::filesSkipped, this, &Dashboard::showSkipped);
  connect(controller_, &TrainingController::stateChanged, this, &Dashboard::updateTraining);
  connect(follower_, &RunFollower::stateChanged, this, &Dashboard::updateTraining);
  connect(follower_, &RunFollower::silent, this, [this](double seconds) {
    if (seconds > 0)
      progress_->setStatus(tr("No update for %1").arg(widgets::TrainingProgress::duration(seconds)), false);
    else
      progress_->setStatus(tr("Training"), true);
  });
  connect(follower_, &RunFollower::lost, this, [this](const QString& why) {
    addNote(why);
    progress_->finish(tr("Not followed"), false);
    if (run_ >= 0) plots_->finishRun(run_, tr("not followed"));
  });
  connect(confusion_, &widgets::ConfusionMatrixView::cellClicked, this, &Dashboard::showCell);
  connect(top_confusions_, &widgets::TopConfusionsView::cellClicked, this, &Dashboard::showCell);
  connect(&preview_loading_, &QFutureWatcher<PreviewData>::finished, this, [this] {
    if (preview_loading_.isCanceled()) return;  // a run handed over its own samples meanwhile
    const PreviewData data = preview_loading_.result();
    if (!data.error.isEmpty()) {
      preview_split_.reset();
      preview_key_.clear();  // try again next time
      return;
    }
    showSplits(data);
  });
  connect(&evaluating_, &QFutureWatcher<Evaluated>::finished, this, [this] {
    const Evaluated e = evaluating_.result();
    if (e.error.isEmpty()) {
      showTest(e.figures, QFileInfo(e.file).fileName(), e.examples);
      showReport(e.report);
    } else {
      test_->setText(tr("Cannot evaluate %1: %2").arg(QFileInfo(e.file).fileName(), e.error));
      test_->show();
    }
    emit testEvaluated();
  });
  connect(&widgets::ThemeManager::instance(), &widgets::ThemeManager::changed, this, [this] {
    if (!error_->isHidden()) showError(error_->text());
    widgets::setColour(skipped_, QPalette::WindowText, widgets::ThemeManager::instance().theme().warning);
  });
}

// The signals a run's source (TrainingController, RunFollower) reports it with.
template <class Source>
void Dashboard::listen(Source* source) {
  connect(source, &Source::started, this, &Dashboard::onStarted);
  connect(source, &Source::batches, this, [this](const std::vector<train::BatchEnd>& batches) {
    if (batches.empty() || run_ < 0) return;
    plots_->addBatches(run_, batches);
    progress_->update(batches.back());
  });
  connect(source, &Source::epochEnded, this, &Dashboard::onEpoch);
  connect(source, &Source::checkpointSaved, this, [this](const QString& path, const QString& kind) {
    checkpoint_->setText(tr("Saved the %1 weights: %2").arg(kind, QDir::toNativeSeparators(path)));
    if (kind != QLatin1String("final")) return;
    widgets::TrainingPlots::RunOrigin origin = plots_->runInfo(run_).origin;
    origin.continuable = true;
    plots_->setRunOrigin(run_, origin);
  });
  connect(source, &Source::tested, this, &Dashboard::onTested);
  if constexpr (std::is_same_v<Source, TrainingController>)  // a followed run's log holds no predictions
    connect(source, &Source::judged, this, &Dashboard::showReport);
  connect(source, &Source::notice, this, &Dashboard::addNote);
  connect(source, &Source::graphEdited, this, [this](const train::GraphEdit& e) {
    if (run_ < 0) return;
    markEdit(plots_, run_, e);
    addNote(tr("Edited at epoch %1, batch %2: %3").arg(e.epoch).arg(e.batch).arg(qstr(e.carried)));
  });
  connect(source, &Source::finished, this, &Dashboard::onFinished);
  connect(source, &Source::failed, this, &Dashboard::onFailed);
}

void Dashboard::addNote(const QString& text) {
  notes_->setText(notes_->text().isEmpty() ? text : notes_->text() + QLatin1Char('\n') + text);
  notes_->show();
}

// While a run trains or is followed, none can be continued.
void Dashboard::updateTraining() { runs_->setTraining(controller_->isRunning() || follower_->isFollowing()); }

// The line about an image folder's files left out, with a button that lists them below it.
void Dashboard::buildSkipped() {
  skipped_row_ = new QWidget(this);
  skipped_ = new QLabel(skipped_row_);
  skipped_->setObjectName(QStringLiteral("skippedFiles"));
  skipped_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  widgets::setColour(skipped_, QPalette::WindowText, widgets::ThemeManager::instance().theme().warning);
  skipped_button_ = new QToolButton(skipped_row_);
  skipped_button_->setObjectName(QStringLiteral("showSkippedFiles"));
  skipped_button_->setText(tr("Show Files"));
  skipped_button_->setCheckable(true);
  skipped_button_->setAutoRaise(true);
  skipped_button_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  skipped_button_->setArrowType(Qt::RightArrow);
  skipped_list_ = new QPlainTextEdit(skipped_row_);
  skipped_list_->setObjectName(QStringLiteral("skippedFileList"));
  skipped_list_->setReadOnly(true);
  skipped_list_->setLineWrapMode(QPlainTextEdit::NoWrap);
  skipped_list_->setMaximumHeight(8 * QFontMetrics(skipped_list_->font()).height());
  skipped_list_->hide();
  auto* line = new QHBoxLayout;
  line->addWidget(skipped_);
  line->addWidget(skipped_button_);
  line->addStretch(1);
  auto* layout = new QVBoxLayout(skipped_row_);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(line);
  layout->addWidget(skipped_list_);
  skipped_row_->hide();
  connect(skipped_button_, &QToolButton::toggled, this, [this](bool on) {
    skipped_list_->setVisible(on);
    skipped_button_->setText(on ? tr("Hide Files") : tr("Show Files"));
    skipped_button_->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
  });
}

Dashboard::~Dashboard() {
  preview_loading_.waitForFinished();
  evaluating_.waitForFinished();
}

QString Dashboard::errorText() const { return error_->isHidden() ? QString() : error_->text(); }

QString Dashboard::testText() const { return test_->isHidden() ? QString() : test_->text(); }

QString Dashboard::skippedText() const { return skipped_row_->isHidden() ? QString() : skipped_->text(); }
QString Dashboard::notesText() const { return notes_->isHidden() ? QString() : notes_->text(); }

void Dashboard::showTextProject(bool text) {
  preview_->setVisible(!text);
  text_samples_->setVisible(text);
  text_figures_->setVisible(text);
  plots_->setTextUnits(text);
  if (text == text_) return;
  text_ = text;
  // What a character model writes is the best measure of it: the samples go beside the plots,
  // where the confusion matrix of an image model is, and the confusions below.
  QWidget* beside = text ? static_cast<QWidget*>(text_samples_) : figures_;
  QWidget* below = text ? static_cast<QWidget*>(figures_) : preview_;
  QWidget* spare = text ? static_cast<QWidget*>(preview_) : text_samples_;  // hidden, last
  top_->insertWidget(1, beside);  // moves it out of the splitter below
  bottom_->insertWidget(0, below);
  bottom_->addWidget(spare);
  // Shares of the width, in pixels of a typical dashboard (a splitter scales them to its own):
  // the plots 3 to 2 beside the confusion matrix, about 2 to 1 beside the samples; below, the
  // run list as much as the image samples, or twice what the top confusions need.
  top_->setSizes({text ? 650 : 600, text ? 350 : 400});
  bottom_->setSizes({text ? 330 : 500, text ? 670 : 500, 0});
}

void Dashboard::beginRun(const TrainingRequest& request, const QString& name) {
  closeComparison();  // the run's progress is what to watch now
  resume_offer_->withdraw();  // one run at a time: the offer would wait until this one ends
  const graph::Graph& graph = request.graph;
  showTextProject(session::is_text_project(graph));
  text_samples_->clear();
  text_figures_->clear();
  const QString& project_dir = request.projectDir;
  run_ = plots_->beginRun(name.isEmpty() ? tr("Run %1").arg(++runs_started_) : name, summary(graph.training));
  plots_->setLossNames(run_, lossNames(graph));
  text_figures_->setLossNames(lossNames(graph));
  widgets::TrainingPlots::RunOrigin origin{request.runDir, QDateTime::currentDateTime(), false, false, {}};
  if (!request.continueFrom.isEmpty()) {
    QString continued = folderName(request.continueFrom);
    for (int id : plots_->runIds())
      if (const auto info = plots_->runInfo(id); canonical(info.origin.folder) == canonical(request.continueFrom))
        continued = info.name;
    origin.note = tr("Continues %1").arg(continued);
  }
  if (!request.initFrom.isEmpty()) origin.note = tr("Starts from the matching tensors of %1").arg(request.initFrom);
  plots_->setRunOrigin(run_, origin);
  error_->hide();
  checkpoint_->clear();
  trained_->hide();
  notes_->clear();
  notes_->hide();
  test_->clear();
  test_->hide();
  skipped_row_->hide();
  skipped_button_->setChecked(false);
  confusion_->clear();
  top_confusions_->clear();
  reconstructions_->clear();
  confusions_->setCurrentWidget(confusion_);
  showReport({});
  figures_->show();
  preview_->clearPredictions();
  progress_->begin(int(graph.training.epochs), 0, qstr(graph.training.device), {});
  run_key_ = previewKey(graph, project_dir);  // the run itself hands over its samples (onStarted)
  run_augmentation_ = session::training_augmentation(graph.dataset);
}

void Dashboard::beginFollowedRun(const TrainingRequest& request, const QString& name) {
  // Listed already as a past run (its log read as it was then): it is shown live instead.
  for (int id : plots_->runIds())
    if (const auto info = plots_->runInfo(id); !info.active && canonical(info.origin.folder) == canonical(request.runDir))
      plots_->removeRun(id);
  beginRun(request, name);
  previewDataset(request.graph, request.projectDir);  // the run hands over no samples
}

bool Dashboard::beginResumedRun(int run, const TrainingRequest& request) {
  const auto found = resumable_.find(run);
  if (found == resumable_.end() || plots_->runInfo(run).active) return false;
  const std::shared_ptr<const LoadedRun> past = found->second;
  resumable_.erase(found);
  const session::ResumePoint& at = *past->resume;
  const session::RunRecord& r = *past->record;
  // Its curves again, as they were when `last` was saved: the log's later lines are cut off and
  // trained again, so they would be drawn twice.
  const auto before = [&at](int epoch, int64_t batch) { return epoch < at.epoch || (epoch == at.epoch && batch <= at.batch); };
  const widgets::TrainingPlots::RunOrigin was = plots_->runInfo(run).origin;
  const QString name = plots_->runInfo(run).name;
  plots_->removeRun(run);
  beginRun(request, name);
  std::vector<train::BatchEnd> batches;
  for (const train::BatchEnd& b : r.batches)
    if (before(b.epoch, b.batch)) batches.push_back(b);
  plots_->addBatches(run_, batches);
  for (const train::EpochEnd& e : r.epochs)
    if (e.epoch < at.epoch) plots_->addEpoch(run_, e);
  for (const train::GraphEdit& e : r.edits)
    if (before(e.epoch, e.batch)) markEdit(plots_, run_, e);
  widgets::TrainingPlots::RunOrigin origin = was;
  origin.resumable = false;
  origin.continuable = false;
  origin.note = tr("Resumed, %1").arg(qstr(session::resume_point_text(at)));
  plots_->setRunOrigin(run_, origin);
  return true;
}

QString Dashboard::previewKey(const graph::Graph& graph, const QString& project_dir) {
  // Every dataset setting (how pictures are read, the augmentation shown, ...); the validation
  // split also depends on the seed and the fraction.
  const graph::DatasetBinding& b = graph.dataset;
  QStringList key{qstr(b.kind), qstr(b.path), qstr(b.target), qstr(b.task), project_dir};
  for (const std::string& feature : b.features) key << qstr(feature);
  for (const graph::DatasetSetting& setting : graph::dataset_settings())
    key << qstr(graph::to_string(*graph::dataset_value(b, setting.name())));
  key << QString::number(graph.training.seed) << QString::number(graph.training.validation_fraction);
  return key.join(QLatin1Char('|'));
}

void Dashboard::previewDataset(const graph::Graph& graph, const QString& project_dir) {
  // A followed run's samples stay while it is followed (beginFollowedRun read them).
  if (graph.dataset.kind.empty() || follower_->isFollowing()) return;
  // A text project has no pictures to show: its runs' samples take the preview's place.
  const bool text = session::is_text_project(graph);
  if (!controller_->isRunning()) showTextProject(text);
  if (text) return;
  const QString key = previewKey(graph, project_dir);
  // The run starting with these samples hands them over itself (onStarted).
  if (key == preview_key_ || (controller_->isRunning() && key == run_key_)) return;
  preview_key_ = key;
  preview_loading_.waitForFinished();
  preview_loading_.setFuture(QtConcurrent::run(readPreview, graph.dataset, std::filesystem::path(project_dir.toStdString()),
                                               graph.training.seed, graph.training.validation_fraction));
}

void Dashboard::showProjectRuns(const QString& project_file) {
  closeComparison();
  resume_offer_->withdraw();
  const int load = ++project_load_;
  for (int id : plots_->runIds())
    if (!plots_->runInfo(id).active) {
      plots_->removeRun(id);
      resumable_.erase(id);
    }
  runs_started_ = 0;
  auto* watcher = new QFutureWatcher<std::vector<LoadedRun>>(this);
  connect(watcher, &QFutureWatcher<std::vector<LoadedRun>>::finished, this, [this, watcher, load] {
    watcher->deleteLater();
    if (load == project_load_) addPastRuns(watcher->result(), true);
  });
  const std::filesystem::path file = project_file.toStdString();
  watcher->setFuture(QtConcurrent::run([file] { return readRuns(session::list_runs(file)); }));
}

void Dashboard::openRunFolder(const QString& folder) {
  auto* watcher = new QFutureWatcher<std::vector<LoadedRun>>(this);
  connect(watcher, &QFutureWatcher<std::vector<LoadedRun>>::finished, this, [this, watcher] {
    watcher->deleteLater();
    const std::vector<LoadedRun> runs = watcher->result();
    if (!runs.front().error.isEmpty())
      emit runOpenFailed(runs.front().error);
    else
      addPastRuns(runs, false);
  });
  watcher->setFuture(QtConcurrent::run(readRuns, std::vector<std::filesystem::path>{folder.toStdString()}));
}

// `runs` newest first, as list_runs gives them; they join the plots oldest first.
void Dashboard::addPastRuns(const std::vector<LoadedRun>& runs, bool project) {
  QSet<QString> shown;
  for (int id : plots_->runIds()) shown.insert(canonical(plots_->runInfo(id).origin.folder));
  // Runs already shown (a run started while these were read may have its folder among them)
  // are neither listed again nor counted.
  std::vector<const LoadedRun*> fresh;
  for (auto it = runs.rbegin(); it != runs.rend(); ++it)
    if (!shown.contains(canonical(it->folder))) fresh.push_back(&*it);
  int number = 0;
  for (const LoadedRun* it : fresh) {
    ++number;
    const QString name = project ? tr("Run %1").arg(number) : folderName(it->folder);
    widgets::TrainingPlots::RunOrigin origin{it->folder, {}, true, false, {}};
    if (!it->record) {
      const int id = plots_->beginRun(name, QString());
      plots_->finishRun(id, tr("unreadable: %1").arg(it->error));
      plots_->setRunOrigin(id, origin);
      continue;
    }
    const session::RunRecord& r = *it->record;
    const int id = plots_->beginRun(name, summary(r.header.settings));
    plots_->setLossNames(id, it->lossNames);
    plots_->addBatches(id, r.batches);
    for (const train::EpochEnd& e : r.epochs) plots_->addEpoch(id, e);
    for (const train::GraphEdit& e : r.edits) markEdit(plots_, id, e);
    const bool interrupted = r.status == session::RunStatus::Incomplete;
    plots_->finishRun(id, r.status == session::RunStatus::Failed ? tr("failed: %1").arg(qstr(r.message))
                          : interrupted && it->resume ? qstr(session::resume_point_text(*it->resume))
                          : interrupted               ? tr("interrupted")
                                                      : qstr(session::status_text(r)));
    origin.started = QDateTime::fromString(qstr(r.header.started), Qt::ISODateWithMs);
    origin.continuable = r.has_final;
    origin.resumable = it->resume.has_value();
    if (it->resume) resumable_[id] = std::make_shared<const LoadedRun>(*it);
    QStringList note;
    if (interrupted) note << tr("The app closed during this run (%1).").arg(qstr(r.message));
    if (it->resume)
      note << tr("It resumes from its last checkpoint (%1), saved %2.")
                  .arg(qstr(session::resume_point_text(*it->resume)), savedText(it->resume->saved));
    if (!it->resumeError.isEmpty()) note << tr("It cannot be resumed: %1").arg(it->resumeError);
    if (!r.header.continued_from.empty()) note << tr("Continues %1").arg(folderName(qstr(r.header.continued_from)));
    if (r.header.train_subset > 0) note << tr("Trained on the first %L1 examples").arg(r.header.train_subset);
    if (!r.header.init_from.empty()) note << tr("Started from the matching tensors of %1").arg(qstr(r.header.init_from));
    if (!r.edits.empty()) note << tr("Edited %n time(s) while paused", nullptr, int(r.edits.size()));
    if (r.test) note << testNote(*r.test, r.header.classification);
    origin.note = note.join(QLatin1Char('\n'));
    plots_->setRunOrigin(id, origin);
    // The newest few overlaid; older ones wait, unchecked, in the list.
    if (project && int(fresh.size()) - number >= kShownPastRuns) plots_->setRunVisible(id, false);
    // The project's newest run, when the app closed during it, is offered to resume (not while
    // another run is active: one at a time).
    if (project && it == &runs.front() && interrupted && it->resume &&
        !controller_->isRunning() && !follower_->isFollowing())
      resume_offer_->offer(id, tr("Plexus closed during the last run, %1: it was %2. Resume it where it stopped, from "
                                  "its last checkpoint saved %3?")
                                   .arg(name, qstr(session::resume_point_text(*it->resume)),
                                        savedText(it->resume->saved)));
  }
  if (project) {
    // A run started while these were read was numbered before them: it follows them instead.
    int session = 0;
    for (int id : plots_->runIds())
      if (const auto info = plots_->runInfo(id); !info.origin.past && info.name == tr("Run %1").arg(++session))
        plots_->setRunName(id, tr("Run %1").arg(number + session));
    runs_started_ = number + session;
  }
  emit runsLoaded();
}

void Dashboard::compareRuns(int a, int b) {
  const widgets::TrainingPlots::RunInfo ia = plots_->runInfo(a), ib = plots_->runInfo(b);
  compareRunFolders(ia.origin.folder, ib.origin.folder, ia.name, ib.name);
}

void Dashboard::compareRunFolders(const QString& a, const QString& b, const QString& name_a, const QString& name_b) {
  struct Read {
    std::vector<widgets::ComparedRun> runs;
    QString error;
  };
  const int load = ++comparison_load_;
  auto* watcher = new QFutureWatcher<Read>(this);
  connect(watcher, &QFutureWatcher<Read>::finished, this, [this, watcher, load] {
    watcher->deleteLater();
    if (load != comparison_load_) return;
    const Read read = watcher->result();
    if (!read.error.isEmpty()) {
      emit runOpenFailed(read.error);
      return;
    }
    comparison_->compare(read.runs[0], read.runs[1]);
    pages_->setCurrentWidget(comparison_);
    emit comparisonShown();
  });
  const std::vector<std::pair<QString, QString>> runs{{a, name_a.isEmpty() ? folderName(a) : name_a},
                                                      {b, name_b.isEmpty() ? folderName(b) : name_b}};
  watcher->setFuture(QtConcurrent::run([runs] {
    Read out;
    try {
      for (const auto& [folder, name] : runs) {
        const std::filesystem::path path = folder.toStdString();
        out.runs.push_back({name, session::read_run(path), graph::load_project(path / session::kRunProjectFile)});
      }
    } catch (const std::exception& e) {
      out.error = qstr(e.what());
    }
    return out;
  }));
}

void Dashboard::closeComparison() {
  ++comparison_load_;  // a comparison still being read is not shown
  if (!isComparing()) return;
  pages_->setCurrentWidget(runs_page_);
  emit comparisonClosed();
}

bool Dashboard::isComparing() const { return pages_->currentWidget() == comparison_; }

void Dashboard::deleteRun(int run) {
  const widgets::TrainingPlots::RunInfo info = plots_->runInfo(run);
  if (info.origin.folder.isEmpty() || info.active) return;
  // While its files go, the run can be neither continued, resumed nor deleted again.
  widgets::TrainingPlots::RunOrigin going = info.origin;
  going.folder.clear();
  going.continuable = false;
  going.resumable = false;
  if (resume_offer_->run() == run) resume_offer_->withdraw();
  plots_->setRunOrigin(run, going);
  plots_->finishRun(run, tr("deleting…"));
  struct Outcome {
    bool removed = false;
    QString error;
  };
  auto* watcher = new QFutureWatcher<Outcome>(this);
  connect(watcher, &QFutureWatcher<Outcome>::finished, this, [this, watcher, run, info] {
    watcher->deleteLater();
    const Outcome outcome = watcher->result();
    if (outcome.error.isEmpty()) {
      plots_->removeRun(run);
      resumable_.erase(run);
    } else {  // as it was: the folder, or what is left of it, is still there
      plots_->setRunOrigin(run, info.origin);
      plots_->finishRun(run, info.status);
    }
    emit runDeleted(info.origin.folder, outcome.error, outcome.error.isEmpty() && !outcome.removed);
  });
  const std::filesystem::path folder = info.origin.folder.toStdString();
  watcher->setFuture(QtConcurrent::run([folder] {
    try {
      return Outcome{session::delete_run(folder), {}};
    } catch (const std::exception& e) {
      return Outcome{false, qstr(e.what())};
    }
  }));
}

void Dashboard::onStarted(const RunInfo& info) {
  progress_->begin(info.epochs, info.batchesPerEpoch, info.device, qstr(info.peak.measured), info.elapsed);
  progress_->setPeakDescription(qstr(train::describe(info.peak)));
  test_examples_ = info.testSize;
  trained_->setText(info.trainedParameters);
  trained_->setVisible(!info.trainedParameters.isEmpty());
  if (!info.trainSplit) return;  // a followed run's: the samples are read here (beginFollowedRun)
  class_names_.assign(info.classNames.begin(), info.classNames.end());
  if (run_key_ == preview_key_ && preview_split_) return;  // already showing these samples
  preview_loading_.cancel();
  preview_key_ = run_key_;
  showSplits({info.trainSplit, info.evalSplit, info.testSplit, info.datasetInfo.input_shape, run_augmentation_,
              class_names_, std::vector<QString>(info.featureNames.begin(), info.featureNames.end()), {}});
}

void Dashboard::showSplits(const PreviewData& data) {
  preview_split_ = data.validation ? data.validation : data.test;
  class_names_ = data.class_names;
  preview_->setSplits(previewSplits(data), data.class_names);
  preview_->setAugmentation(data.augmentation);
  preview_->setFeatureNames(data.feature_names);
  emit previewLoaded();
}

void Dashboard::onEpoch(const train::EpochEnd& epoch) {
  if (run_ >= 0) plots_->addEpoch(run_, epoch);
  progress_->epochDone(epoch);
  if (epoch.classes > 0 && !epoch.confusion.empty()) {
    if (epoch.classes <= kMatrixMaxClasses) {
      confusion_->setMatrix(epoch.confusion, int(epoch.classes), class_names_);
      confusions_->setCurrentWidget(confusion_);
    } else {
      top_confusions_->setMatrix(epoch.confusion, int(epoch.classes), class_names_);
      confusions_->setCurrentWidget(top_confusions_);
    }
  }
  if (text_) text_figures_->setEpoch(epoch);
  if (!epoch.predicted.empty()) preview_->setPredictions({epoch.predicted, epoch.confidence});
  if (!epoch.samples.empty()) text_samples_->addEpoch(epoch.epoch, qstrings(epoch.samples));
  // A model that also classifies keeps its confusion matrix in view; its pictures are a choice
  // of the page stack's below it no more than a reconstruction-only model's are.
  if (!epoch.reconstructions.empty()) {
    reconstructions_->addEpoch(epoch.epoch, epoch.reconstructions);
    if (epoch.classes == 0) confusions_->setCurrentWidget(reconstructions_);
  }
}

void Dashboard::onTested(const train::TestEnd& test) {
  showTest(test.figures, tr("final model"), test_examples_);
  widgets::TrainingPlots::RunOrigin origin = plots_->runInfo(run_).origin;
  origin.note += (origin.note.isEmpty() ? QString() : QStringLiteral("\n")) +
                 testNote(test.figures, test.figures.classes > 0);
  plots_->setRunOrigin(run_, origin);
}

void Dashboard::evaluateCheckpoint(const graph::Graph& graph, const QString& project_dir, const QString& file) {
  evaluating_.waitForFinished();
  test_->setText(tr("Evaluating %1 on the test set…").arg(QFileInfo(file).fileName()));
  test_->show();
  evaluating_.setFuture(QtConcurrent::run([graph, project_dir, file] {
    Evaluated out;
    out.file = file;
    try {
      const session::LoadOptions where{std::filesystem::path(project_dir.toStdString())};
      session::TrainedModel m = session::load_trained_model(graph, file.toStdString(), where);
      const session::TestEvaluation t = session::evaluate_on_test(m, where, 1000, Device::cpu(), true);
      out.report = session::evaluation_report(m.classification(), t);
      out.figures = t.figures;
      out.examples = t.split->size();
    } catch (const std::exception& e) {
      out.error = qstr(e.what());
    }
    return out;
  }));
}

void Dashboard::showTest(const train::EpochEnd& t, const QString& what, int64_t examples) {
  // A followed run's log does not say how many.
  QString text = examples > 0 ? tr("Test set, %1 (%L2 examples): ").arg(what).arg(examples) : tr("Test set, %1: ").arg(what);
  if (t.classes > 0)
    text += tr("accuracy %1 %, top-5 %2 %, loss %3")
                .arg(100 * t.eval_accuracy, 0, 'f', 2)
                .arg(100 * t.eval_top5, 0, 'f', 2)
                .arg(t.eval_loss, 0, 'g', 4);
  else
    text += tr("loss %1").arg(t.eval_loss, 0, 'g', 4);
  test_->setText(text + qstr(train::parts_text(t.eval_losses)));
  test_->show();
}

void Dashboard::showReport(const session::EvaluationReport& report) {
  const QString split = qstr(report.baseline_split);
  const auto& c = report.classification;
  if (c) class_report_->setReport(*c, class_names_, split);
  if (c && c->binary) curves_->setReport(*c->binary, class_names_);
  if (report.regression) regression_->setReport(*report.regression, split);
  figures_->setTabVisible(1, bool(c));
  figures_->setTabVisible(2, c && c->binary);
  figures_->setTabVisible(3, bool(report.regression));
  if (!c) class_report_->clear();
  if (!c || !c->binary) curves_->clear();
  if (!report.regression) regression_->clear();
  // What the run ended with is what to look at now; a classifier of two classes by its curves.
  if (c || report.regression) {
    figures_->setCurrentIndex(report.regression ? 3 : c->binary ? 2 : 1);
    figures_->show();
  } else {
    figures_->setCurrentWidget(confusions_);
  }
}

void Dashboard::onFinished(const train::Finished& result) {
  const QString early =
      tr("stopped early at epoch %1; best epoch %2").arg(result.epochs_completed).arg(result.best_epoch);
  const QString status = result.cancelled       ? tr("Stopped after %n epoch(s)", "", result.epochs_completed)
                         : result.stopped_early ? tr("Stopped early at epoch %1; best epoch %2")
                                                      .arg(result.epochs_completed)
                                                      .arg(result.best_epoch)
                                                : tr("Completed");
  progress_->finish(status, !result.cancelled);
  if (run_ >= 0)
    plots_->finishRun(run_, result.cancelled ? tr("stopped") : result.stopped_early ? early : tr("completed"));
}

void Dashboard::onFailed(const QString& message) {
  showError(message);
  progress_->finish(tr("Failed"), false);
  if (run_ >= 0) plots_->finishRun(run_, tr("failed: %1").arg(message));
  // A run that failed before it began training left no folder to delete.
  if (widgets::TrainingPlots::RunOrigin origin = plots_->runInfo(run_).origin; !QFileInfo::exists(origin.folder)) {
    origin.folder.clear();
    plots_->setRunOrigin(run_, origin);
  }
}

void Dashboard::showError(const QString& message) {
  widgets::styleAsError(error_);
  error_->setText(message);
  error_->show();
}

// Each file with why; the tool tip names the first few, the list all that came (the first
// SkippedFiles::kListed).
void Dashboard::showSkipped(const SkippedFiles& skipped) {
  constexpr int kInToolTip = 10;
  skipped_->setText(skipped.count == 1 ? tr("Left out 1 file of the image folder (bad files: %1)").arg(skipped.badFiles)
                                       : tr("Left out %L1 files of the image folder (bad files: %2)")
                                             .arg(skipped.count)
                                             .arg(skipped.badFiles));
  QStringList lines;
  for (const data::SkippedFile& f : skipped.files)
    lines << QStringLiteral("%1: %2").arg(QDir::toNativeSeparators(qstr(f.path)), qstr(f.reason));
  const int64_t unlisted = skipped.count - int64_t(lines.size());
  QStringList tip = lines.mid(0, kInToolTip);
  if (const int64_t more = skipped.count - int64_t(tip.size()); more > 0) tip << tr("… and %L1 more (Show Files)").arg(more);
  skipped_->setToolTip(tip.join(QLatin1Char('\n')));
  if (unlisted > 0) lines << tr("… and %L1 more").arg(unlisted);
  skipped_list_->setPlainText(lines.join(QLatin1Char('\n')));
  skipped_row_->show();
}

void Dashboard::showCell(int true_class, int predicted_class) {
  if (!preview_split_) return;
  const std::vector<int64_t> samples =
      widgets::samplesWith(*preview_split_, preview_->predictions(), true_class, predicted_class);
  const auto name = [this](int c) { return c < int(class_names_.size()) ? class_names_[size_t(c)] : QString::number(c); };
  preview_->showSamples(samples, tr("True %1, predicted %2: %Ln sample(s)", "", qint64(samples.size()))
                                     .arg(name(true_class), name(predicted_class)));
}

}  // namespace plexus::app
