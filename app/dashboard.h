#pragma once
// The training dashboard: progress, curves of this session's runs (trained here, or followed
// from the folder another process writes) and of the project's past runs (read from their run
// folders in the background), the confusion matrix (the top confusions for many classes), a text
// project's loss per character and generated samples, the samples of the dataset's splits, the
// validation samples with the model's predictions, and the files of an image folder a run left
// out; the final model's judging figures on the test split beside the confusion matrix (per-class
// table, a two-class model's ROC and precision-recall curves, a regression's predicted versus
// actual), each beside a trivial baseline's; or, on a page of its own, two past runs compared. Wiring only: it feeds the widgets with
// what the TrainingController or the RunFollower reports and what core reads from disk, and
// never touches a model.
#include <QFutureWatcher>
#include <QString>
#include <QWidget>

#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "data/transforms.h"
#include "dataset/dataset_samples.h"
#include "graph/dataset_info.h"
#include "graph/graph.h"
#include "session/evaluation_report.h"
#include "train/events.h"

class QLabel;
class QPlainTextEdit;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QToolButton;

namespace plexus::widgets {
class BinaryCurvesView;
class ClassReportView;
class ConfusionMatrixView;
class DatasetPreview;
class ReconstructionsView;
class RegressionView;
class ResumeOffer;
class RunComparison;
class RunList;
class TextFigures;
class TextSamplesView;
class TopConfusionsView;
class TrainingPlots;
class TrainingProgress;
}  // namespace plexus::widgets

namespace plexus::app {

class RunFollower;
class TrainingController;
struct RunInfo;
struct SkippedFiles;
struct TrainingRequest;

// The splits of a project's dataset, opened off the UI thread for the preview (validation may
// be null), and how the run augments the training images.
struct PreviewData {
  std::shared_ptr<const data::Dataset> train, validation, test;
  Shape input;  // an example's input shape
  data::TransformPtr augmentation;
  std::vector<QString> class_names, feature_names;
  QString error;
};

class Dashboard : public QWidget {
  Q_OBJECT

 public:
  // Shows the runs of `controller` and those `follower` follows, alike.
  Dashboard(TrainingController* controller, RunFollower* follower, QWidget* parent = nullptr);
  ~Dashboard() override;

  // A new run is starting: a new curve in the plots (kept in request.runDir) named `name`
  // ("" = "Run 1", "Run 2", ...), progress reset.
  void beginRun(const TrainingRequest& request, const QString& name = {});
  // The same for a run that another process writes into request.runDir, which the follower is
  // about to follow: its dataset's samples are read here (request.projectDir resolves a relative
  // dataset path) and stay while it is followed.
  void beginFollowedRun(const TrainingRequest& request, const QString& name = {});
  // The past runs of the project saved in `project_file` (session::list_runs) replace the runs
  // shown, but for one that is training. The newest kShownPastRuns are shown, the others
  // listed unchecked; a run whose log cannot be read is listed with the reason. runsLoaded()
  // follows.
  void showProjectRuns(const QString& project_file);
  // The past run `run` of the plots, which stopped short with a `last` checkpoint (its origin is
  // resumable), goes on in its folder as request asks (request.resumeRun): it becomes the run
  // that trains, its curves as they were when `last` was saved, the rest appended as it trains.
  // False (nothing changes) when `run` is not such a run.
  bool beginResumedRun(int run, const TrainingRequest& request);
  // Adds the run kept in `folder` (any project's); runsLoaded(), or runOpenFailed() saying why not.
  void openRunFolder(const QString& folder);
  // Deletes the run's folder (session::delete_run) in the background, then the run from the
  // plots; runDeleted() says how it went. Not for a run that is training or has no folder.
  void deleteRun(int run);
  static constexpr int kShownPastRuns = 3;
  // Reads two runs of the plots (a began first) in the background and shows their comparison in
  // the dashboard's place; comparisonShown(), or runOpenFailed() saying why not. The run list's
  // Compare Runs asks for it.
  void compareRuns(int a, int b);
  // The same for any two run folders, named after their folders unless named here.
  void compareRunFolders(const QString& a, const QString& b, const QString& name_a = {}, const QString& name_b = {});
  // Back to the runs; starting a run or showing another project's runs also goes back.
  void closeComparison();
  bool isComparing() const;
  // Shows the splits of the project's dataset (opened in the background), the validation split
  // (else the test split) first.
  void previewDataset(const graph::Graph& graph, const QString& project_dir);
  // Evaluates a checkpoint or weights file of `graph` on its test split in the background and
  // shows the figures where a run's test result goes (or the error); emits testEvaluated.
  void evaluateCheckpoint(const graph::Graph& graph, const QString& project_dir, const QString& file);

  widgets::TrainingPlots* plots() const { return plots_; }
  widgets::RunList* runs() const { return runs_; }
  widgets::RunComparison* comparison() const { return comparison_; }
  // Above the runs: the offer to resume a project's newest run when the app closed during it
  // (shown by showProjectRuns; resumeRequested when taken).
  widgets::ResumeOffer* resumeOffer() const { return resume_offer_; }
  widgets::TrainingProgress* progress() const { return progress_; }
  widgets::ConfusionMatrixView* confusion() const { return confusion_; }
  // A matrix of more classes than this is unreadable (a character model's 50-odd symbols
  // leave cells of a few pixels, no labels); its most frequent mistakes are listed instead.
  static constexpr int kMatrixMaxClasses = 20;
  widgets::TopConfusionsView* topConfusions() const { return top_confusions_; }
  widgets::ReconstructionsView* reconstructions() const { return reconstructions_; }
  // Beside the plots: the last epoch's confusions, then the test report's tabs (shown once a
  // run's end or an evaluated checkpoint brings one).
  QTabWidget* figureTabs() const { return figures_; }
  widgets::ClassReportView* classReport() const { return class_report_; }
  widgets::BinaryCurvesView* binaryCurves() const { return curves_; }
  widgets::RegressionView* regression() const { return regression_; }
  // A text project's loss per character (nats, bits/char, perplexity) above the plots.
  widgets::TextFigures* textFigures() const { return text_figures_; }
  widgets::DatasetPreview* preview() const { return preview_; }
  // A text project's samples after each epoch, in the image preview's place.
  widgets::TextSamplesView* textSamples() const { return text_samples_; }
  QString errorText() const;  // the failure shown, "" when none
  QString testText() const;   // the final model's test figures shown, "" before a run's end
  // "Left out 3 files of the image folder (bad files: skip)", "" when the run left none out; its
  // tool tip and the list under Show Files name them.
  QString skippedText() const;
  QString notesText() const;  // the run's notices, one per line; empty when hidden
  QLabel* skippedLine() const { return skipped_; }
  QToolButton* skippedButton() const { return skipped_button_; }
  QPlainTextEdit* skippedList() const { return skipped_list_; }
  bool previewReady() const { return bool(preview_split_); }

 signals:
  void previewLoaded();
  void testEvaluated();  // evaluateCheckpoint's figures (or error) are shown
  void runsLoaded();
  void resumeRequested(int run);  // the resume offer's Resume
  void runOpenFailed(const QString& message);
  void comparisonShown();
  void comparisonClosed();
  // error: "" on success; folderKept: the folder held other files and stayed (they are intact).
  void runDeleted(const QString& folder, const QString& error, bool folderKept);

 private:
  static QString previewKey(const graph::Graph& graph, const QString& project_dir);
  struct LoadedRun;
  static std::vector<LoadedRun> readRuns(const std::vector<std::filesystem::path>& folders);
  void addPastRuns(const std::vector<LoadedRun>& runs, bool project);
  void showSplits(const PreviewData& data);
  template <class Source>
  void listen(Source* source);
  void addNote(const QString& text);
  void updateTraining();
  void onStarted(const RunInfo& info);
  void onEpoch(const train::EpochEnd& epoch);
  void onTested(const train::TestEnd& test);
  void showTest(const train::EpochEnd& figures, const QString& what, int64_t examples);
  // The report's tabs, the first of them in front; an empty report hides them.
  void showReport(const session::EvaluationReport& report);
  void onFinished(const train::Finished& result);
  void onFailed(const QString& message);
  void showCell(int true_class, int predicted_class);
  void showError(const QString& message);
  void showSkipped(const SkippedFiles& skipped);
  void buildSkipped();
  // A text project: its samples in the image preview's place, and large beside the plots; loss
  // per character as the headline and the plots' units; or back.
  void showTextProject(bool text);

  TrainingController* controller_;
  RunFollower* follower_;
  widgets::TrainingPlots* plots_;
  widgets::RunList* runs_;
  widgets::TrainingProgress* progress_;
  widgets::ConfusionMatrixView* confusion_;
  widgets::TopConfusionsView* top_confusions_;
  widgets::ReconstructionsView* reconstructions_;
  QStackedWidget* confusions_;  // the matrix, or the top confusions for many classes
  widgets::ClassReportView* class_report_;
  widgets::BinaryCurvesView* curves_;
  widgets::RegressionView* regression_;
  QTabWidget* figures_;  // the confusions and the test report's views
  widgets::TextFigures* text_figures_;
  QSplitter* top_;     // the plots and, beside them, the figures (a text project: its samples)
  QSplitter* bottom_;  // the samples (a text project: the figures) and the run list
  bool text_ = false;  // a text project's runs are shown
  widgets::DatasetPreview* preview_;
  widgets::TextSamplesView* text_samples_;
  widgets::RunComparison* comparison_;
  QStackedWidget* pages_;  // the runs, or a comparison of two of them
  QWidget* runs_page_;
  int comparison_load_ = 0;  // counts compareRunFolders calls: a superseded read is dropped
  QLabel* error_;
  QLabel* checkpoint_;
  QLabel* trained_;  // how many of the model's parameters train (fine-tuning freezes some)
  QLabel* notes_;
  QLabel* test_;
  QWidget* skipped_row_;
  QLabel* skipped_;
  QToolButton* skipped_button_;
  QPlainTextEdit* skipped_list_;
  int64_t test_examples_ = 0;
  int run_ = -1;          // the plots' id of the current run
  int runs_started_ = 0;  // for names: "Run 1", "Run 2", ...
  std::shared_ptr<const data::Dataset> preview_split_;  // the split the runs evaluate, shown
  std::vector<QString> class_names_;
  QFutureWatcher<PreviewData> preview_loading_;
  struct Evaluated {
    train::EpochEnd figures;
    session::EvaluationReport report;
    int64_t examples = 0;
    QString file, error;
  };
  QFutureWatcher<Evaluated> evaluating_;
  QString preview_key_;  // the binding + seed shown, so a second run does not reload it
  QString run_key_;      // the same for the run starting
  data::TransformPtr run_augmentation_;  // the run starting's, for the splits it hands over
  int project_load_ = 0;  // counts showProjectRuns calls: a superseded load's result is dropped
  widgets::ResumeOffer* resume_offer_;
  // The past runs that can be resumed, by their id in the plots: what their logs held, for the
  // curves of a resumed run up to its `last` checkpoint.
  std::map<int, std::shared_ptr<const LoadedRun>> resumable_;
};

}  // namespace plexus::app
