#pragma once
// The editor window: palette, canvas, property and problems panels around one GraphDocument,
// with the File / Edit / View menus, the toolbar and the status bar. Wiring only: the widgets
// show and edit, the document holds the truth, core loads and saves.
#include <QFuture>
#include <QMainWindow>
#include <QMessageBox>
#include <QSet>
#include <QPointer>

#include <functional>
#include <memory>
#include <string>

class QLabel;
class QMenu;
class QStackedWidget;

namespace plexus::session {
struct TrainedModel;
}  // namespace plexus::session

namespace plexus::widgets {
class BlockActions;
class GraphDocument;
class LayerPalette;
class NodeScene;
class NodeStatsLayer;
class NodeStatsModel;
class NodeStatsPanel;
class FeatureMapView;
class NodeView;
class ProblemsPanel;
class PropertyPanel;
class StartPage;
class TrainingPanel;
}  // namespace plexus::widgets

namespace plexus::app {

class Autosaver;
class Dashboard;
class ExperimentsPage;
class ProjectorPage;
class LoadWeightsDialog;
class LrFinderDialog;
class ProcessRun;
class RunFollower;
class TrainingController;
class TryItPage;
class FeatureMaps;
struct ProcessPlan;
struct TrainingRequest;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  widgets::GraphDocument* document() const { return document_; }
  widgets::NodeScene* scene() const { return scene_; }
  widgets::NodeView* view() const { return view_; }
  widgets::LayerPalette* palette() const { return palette_; }
  widgets::PropertyPanel* properties() const { return properties_; }
  widgets::ProblemsPanel* problems() const { return problems_; }
  widgets::NodeStatsModel* nodeStats() const { return node_stats_; }
  widgets::NodeStatsLayer* nodeStatsLayer() const { return node_stats_layer_; }
  widgets::NodeStatsPanel* nodeStatsPanel() const { return node_stats_panel_; }
  widgets::FeatureMapView* featureMapView() const { return feature_map_view_; }
  FeatureMaps* featureMaps() const { return feature_maps_; }
  widgets::BlockActions* blockActions() const { return blocks_; }
  Autosaver* autosaver() const { return autosaver_.get(); }
  TrainingController* training() const { return training_; }
  RunFollower* follower() const { return follower_; }
  ProcessRun* processes() const { return processes_; }
  Dashboard* dashboard() const { return dashboard_; }
  TryItPage* tryIt() const { return try_it_; }
  ExperimentsPage* experiments() const { return experiments_; }
  ProjectorPage* projector() const { return projector_; }
  widgets::TrainingPanel* trainingPanel() const { return training_panel_; }
  widgets::StartPage* startPage() const { return start_page_; }
  QAction* trainAction() const { return train_action_; }
  QAction* pauseAction() const { return pause_action_; }
  QAction* stopAction() const { return stop_action_; }
  QAction* followAction() const { return follow_action_; }
  QAction* trainProcessesAction() const { return processes_action_; }

  // File commands. A failure is shown (showError) and leaves the open project untouched.
  bool openFile(const QString& path);  // a project, or an ONNX model to import
  bool importModel(const QString& path);
  bool save();
  bool saveAs(const QString& path);
  void newProject();
  // A new untitled project from a start page template ("image", "tabular", "text"; see
  // start_projects.h), after the save prompt.
  bool newFromTemplate(const QString& name);
  // Closes the project (after the save prompt; not while a run is active) and shows the start
  // page in its place until a project is opened or made. False when the project stays.
  bool showStartPage();
  bool isStartPageShown() const;
  // Asks to save unsaved changes; false when the user cancels.
  bool maybeSave();
  // Offers the projects a crash left behind; accepted ones open (the first here, any others in
  // new windows). Returns how many were recovered.
  int offerRecovery();
  void addNodeAtCentre(const QString& type);

  // Run commands. Train checks the graph first: with errors, the problems panel shows them and
  // nothing starts. Returns whether a run started. `continue_from`: a run folder to continue
  // (its final checkpoint and epoch numbering; session::make_continued_run). `init_from`: a
  // checkpoint or weights file whose matching tensors start the run (train::init_from).
  bool startTraining(const QString& resume_from = QString(), const QString& continue_from = QString(),
                     const QString& init_from = QString());
  // Pause / Resume. Resuming goes on with the project as edited while paused (layers, nodes and
  // edges; TrainingController::resume): a refused edit is shown and the run stays paused.
  void setPaused(bool paused);
  // The run list's commands, on a run of the dashboard's plots: continue it with the open
  // project; delete its folder after asking (naming it); add a run folder chosen by the user.
  bool continueRun(int run);
  // Goes on with a run that stopped short (killed, stopped, failed on a full disk) in its own
  // folder, from its `last` checkpoint, with the project and settings it trained with; the
  // dashboard's run list and its resume offer ask for it. False when nothing started (a run is
  // active, the run cannot be resumed, or its folder cannot be read: shown).
  bool resumeRun(int run);
  void deleteRun(int run);
  void openRunFolder();
  // Follows the run another process is writing into `folder` (any project's, on this machine or
  // a shared file system) live on the dashboard, named after its folder; shows why not (not a
  // run folder, a run active here) and returns false.
  bool followRunFolder(const QString& folder);
  // Run ▸ Train with N Processes, once its dialog is answered: the open project as it is
  // (saved or not) goes to plan.project, its dataset path made absolute as this window finds
  // it, and `mpirun` trains it into plan.runDir while the dashboard follows that folder.
  bool trainWithProcesses(const ProcessPlan& plan);
  // Stop: the run training here, else the processes started here, else stops following.
  void stopRun();
  // A run training here, in processes started here, or followed from its folder.
  bool isRunActive() const;
  void showEditor();
  void showDashboard();
  void showTryIt();
  void showExperiments();
  void showProjector();
  // Where a run of the current project keeps its checkpoints: next to a saved project
  // (<name>.runs/<date-time>), else in the app's data folder; $PLEXUS_RUNS_DIR/<date-time>
  // when that is set.
  QString newRunDirectory() const;
  // Where a new sweep of the current project goes: beside its runs, sweeps/<date-time>.
  QString newSweepDirectory() const;
  QString projectDirectory() const;  // of the open project file; "" for an unsaved project
  // The open project's most recent run folder, where checkpoint dialogs start ("" = none yet).
  QString latestRunDirectory() const;

  // File > Export > ONNX: the open project with the weights of `checkpoint`, written to `out` on
  // a worker thread; the status bar reports it, or showError the reason. The future gives the
  // error text ("" on success) once the report is shown.
  QFuture<QString> exportOnnx(const QString& checkpoint, const QString& out);
  // File > Export > PyTorch Code and C++ Code: the same, as one Python file
  // (exporter::export_pytorch) or C++ program (exporter::export_cpp).
  QFuture<QString> exportPytorch(const QString& checkpoint, const QString& out);
  QFuture<QString> exportCpp(const QString& checkpoint, const QString& out);

  // Run ▸ Load Weights…: how the tensors of `weights` (a PyTorch state_dict, named otherwise)
  // match the open project, in a dialog (returned, open; null, the error shown, when it cannot
  // be planned). Load writes <name>.plexus.safetensors beside `weights`: the next Train starts
  // from it (as --init-from) and Try It loads it.
  LoadWeightsDialog* loadWeights(const QString& weights);
  // Run ▸ Find Learning Rate…: the finder's dialog on the open project, opened window-modal;
  // null (and nothing opens) while a run is active or the graph has errors.
  LrFinderDialog* findLearningRate();
  QString attachedWeights() const { return attached_weights_; }  // "" when none

  // The dialogs, replaceable so tests and scripts can answer them without a modal loop.
  std::function<QMessageBox::StandardButton(const QString& title, const QString& text,
                                            QMessageBox::StandardButtons buttons)>
      ask;
  std::function<void(const QString& title, const QString& text)> showError;
  // Before what cannot be undone: true when the user presses `action` ("Delete"). Cancel is the
  // default button, so Enter destroys nothing.
  std::function<bool(const QString& title, const QString& text, const QString& action)> confirm;
  std::function<QString(const QString& caption)> chooseOpenPath, chooseSavePath;
  std::function<QString(const QString& caption)> chooseCheckpoint, chooseWeightsPath, chooseRunFolder, chooseOnnxPath;
  std::function<QString(const QString& caption, const QString& suffix)> chooseCodePath;  // ".py", ".cpp"

  // Whether restoreSettings found a saved window size (else the caller picks the first one).
  bool hasSavedGeometry() const { return has_saved_geometry_; }

  static QStringList recentFiles();
  // The examples/*.plexus shipped with Plexus (the source tree's, or installed next to the app).
  static QStringList examples();

 protected:
  void closeEvent(QCloseEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  // Writes a trained model to a file (its path, the project's name), off the UI thread; returns
  // what it wrote, for the status bar.
  using ModelWriter =
      std::function<QString(const session::TrainedModel& model, const std::string& out, const std::string& name)>;
  // exportOnnx and exportPytorch: the model of `checkpoint` written by `write`; `failure` titles the error.
  QFuture<QString> exportModel(const QString& checkpoint, const QString& out, const QString& failure,
                               const ModelWriter& write);
  // The open project's file name with `suffix`, in its folder: where export dialogs start ("" unsaved).
  QString nextToProject(const QString& suffix) const;
  void createActions();
  void createRunActions();
  void createExperimentActions(QMenu* run);  // Run ▸ Start Sweep, …, wired to the Experiments page
  void createDocks();
  void updateRunActions();
  bool checkTrainable();  // the graph can train, else the problems are shown
  void follow(const TrainingRequest& request, const QString& name);
  void processesEnded(int exit_code, bool crashed);
  void tabChanged();
  void restoreSettings();
  void updateTitle();
  void updateStatus();
  void rememberRecent(const QString& path);
  void fillRecentMenu();
  void fillExamplesMenu();
  void saveViewState();
  void leaveStartPage();  // the editor again, with the panels the start page hid

  widgets::GraphDocument* document_ = nullptr;
  widgets::NodeScene* scene_ = nullptr;
  widgets::NodeView* view_ = nullptr;
  widgets::LayerPalette* palette_ = nullptr;
  widgets::PropertyPanel* properties_ = nullptr;
  widgets::ProblemsPanel* problems_ = nullptr;
  widgets::BlockActions* blocks_ = nullptr;
  widgets::TrainingPanel* training_panel_ = nullptr;
  widgets::NodeStatsModel* node_stats_ = nullptr;  // the current (or last) run's
  widgets::NodeStatsLayer* node_stats_layer_ = nullptr;
  widgets::NodeStatsPanel* node_stats_panel_ = nullptr;
  widgets::FeatureMapView* feature_map_view_ = nullptr;
  FeatureMaps* feature_maps_ = nullptr;
  TrainingController* training_ = nullptr;
  RunFollower* follower_ = nullptr;
  ProcessRun* processes_ = nullptr;
  Dashboard* dashboard_ = nullptr;
  TryItPage* try_it_ = nullptr;
  ExperimentsPage* experiments_ = nullptr;
  ProjectorPage* projector_ = nullptr;
  QString attached_weights_;  // Load Weights' file, for the next Train; "" when none
  class QTabWidget* tabs_ = nullptr;
  QStackedWidget* central_ = nullptr;  // the tabs, or the start page while no project is open
  widgets::StartPage* start_page_ = nullptr;
  QByteArray layout_before_start_;  // the panels the start page hid (saveState), to restore
  QAction* train_action_ = nullptr;
  QAction* pause_action_ = nullptr;
  QAction* stop_action_ = nullptr;
  QAction* follow_action_ = nullptr;
  QAction* processes_action_ = nullptr;
  QAction* export_action_ = nullptr;
  QAction* lr_finder_action_ = nullptr;
  QSet<class QDockWidget*> hidden_for_pages_;  // docks the dashboard or Try It page hid, to show again
  bool first_layout_pending_ = false;
  bool has_saved_geometry_ = false;  // no saved dock layout: showEvent sizes the docks once
  std::unique_ptr<Autosaver> autosaver_;
  QMenu* recent_menu_ = nullptr;
  QMenu* examples_menu_ = nullptr;
  QLabel* validity_label_ = nullptr;
  QLabel* dataset_label_ = nullptr;
  QLabel* zoom_label_ = nullptr;
};

}  // namespace plexus::app
