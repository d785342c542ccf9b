#include "main_window.h"

#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGraphicsItem>
#include <QLabel>
#include <QLayout>
#include <QMenuBar>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QUndoStack>
#include <QtConcurrent>

#include <exception>
#include <filesystem>
#include <vector>

#include "common/icons.h"
#include "common/qt_text.h"
#include "common/theme.h"
#include "dashboard.h"
#include "experiments_page.h"
#include "projector_page.h"
#include "dashboard/run_list.h"
#include "dashboard/training_plots.h"
#include "editor/block_actions.h"
#include "editor/freeze_actions.h"
#include "editor/model/graph_document.h"
#include "editor/node_scene.h"
#include "editor/node_stats_layer.h"
#include "editor/node_stats_model.h"
#include "editor/node_stats_panel.h"
#include "featuremaps/feature_map_view.h"
#include "editor/node_view.h"
#include "editor/palette.h"
#include "editor/problems_panel.h"
#include "export/onnx_import.h"
#include "dataset/dataset_class_balance.h"
#include "editor/property_panel.h"
#include "editor/training_panel.h"
#include "export/cpp_code.h"
#include "export/onnx.h"
#include "export/pytorch_code.h"
#include "graph/dataset_info.h"
#include "graph/project.h"
#include "load_weights_dialog.h"
#include "lr_finder_dialog.h"
#include "process_run.h"
#include "recovery.h"
#include "run_follower.h"
#include "session/run_folder.h"
#include "session/run_log.h"
#include "session/trained_model.h"
#include "start/start_page.h"
#include "start_projects.h"
#include "train_processes_dialog.h"
#include "training_controller.h"
#include "tryit_page.h"
#include "feature_maps.h"

namespace plexus::app {

using widgets::qstr;

namespace {

constexpr int kMaxRecent = 10;
const QString kRecentKey = QStringLiteral("recentFiles");

bool isProjectFile(const QUrl& url) {
  return url.isLocalFile() && url.toLocalFile().endsWith(QStringLiteral(".plexus"), Qt::CaseInsensitive);
}

// Icons are tinted for the theme, so they are fetched again when it changes.
void setThemedIcon(QAction* action, const QString& name) {
  action->setIcon(widgets::icon(name));
  QObject::connect(&widgets::ThemeManager::instance(), &widgets::ThemeManager::changed, action,
                   [action, name] { action->setIcon(widgets::icon(name)); });
}

QAction* makeAction(QObject* parent, const QString& text, const QString& icon_name,
                    const QList<QKeySequence>& shortcuts = {}) {
  auto* action = new QAction(text, parent);
  if (!icon_name.isEmpty()) setThemedIcon(action, icon_name);
  action->setShortcuts(shortcuts);
  return action;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName(QStringLiteral("mainWindow"));
  setAcceptDrops(true);
  document_ = new widgets::GraphDocument(this);
  scene_ = new widgets::NodeScene(document_, this);
  view_ = new widgets::NodeView(scene_, this);
  view_->setObjectName(QStringLiteral("canvas"));
  training_ = new TrainingController(this);
  follower_ = new RunFollower(this);
  processes_ = new ProcessRun(this);
  dashboard_ = new Dashboard(training_, follower_, this);
  tabs_ = new QTabWidget(this);
  tabs_->setDocumentMode(true);
  tabs_->addTab(view_, tr("Editor"));
  tabs_->addTab(dashboard_, tr("Training"));
  // A page of its own, beside the model and its training: drawing wants room, and the model
  // tried is the one those two pages made.
  try_it_ = new TryItPage(training_, document_, this);
  tabs_->addTab(try_it_, tr("Try It"));
  experiments_ = new ExperimentsPage(document_, this);
  experiments_->setObjectName(QStringLiteral("experimentsPage"));
  tabs_->addTab(experiments_, tr("Experiments"));
  // The embedding projector maps Try It's model: a clicked example opens there.
  projector_ = new ProjectorPage(try_it_, document_, this);
  projector_->setObjectName(QStringLiteral("projectorPage"));
  tabs_->addTab(projector_, tr("Projector"));
  connect(projector_, &ProjectorPage::openInTryIt, this, &MainWindow::showTryIt);
  start_page_ = new widgets::StartPage(this);
  central_ = new QStackedWidget(this);
  central_->addWidget(tabs_);
  central_->addWidget(start_page_);
  setCentralWidget(central_);
  connect(tabs_, &QTabWidget::currentChanged, this, &MainWindow::tabChanged);
  autosaver_ = std::make_unique<Autosaver>(document_, Autosaver::defaultDirectory());

  ask = [this](const QString& title, const QString& text, QMessageBox::StandardButtons buttons) {
    return QMessageBox::question(this, title, text, buttons);
  };
  showError = [this](const QString& title, const QString& text) { QMessageBox::critical(this, title, text); };
  confirm = [this](const QString& title, const QString& text, const QString& action) {
    QMessageBox box(QMessageBox::Warning, title, text, QMessageBox::Cancel, this);
    QPushButton* yes = box.addButton(action, QMessageBox::DestructiveRole);
    box.setDefaultButton(QMessageBox::Cancel);
    box.exec();
    return box.clickedButton() == yes;
  };
  chooseOpenPath = [this](const QString& caption) {
    return QFileDialog::getOpenFileName(this, caption, QString(),
                                        tr("Projects and ONNX models (*.plexus *.onnx);;Plexus projects (*.plexus);;"
                                           "ONNX models (*.onnx)"));
  };
  chooseSavePath = [this](const QString& caption) {
    return QFileDialog::getSaveFileName(this, caption, document_->filePath(), tr("Plexus projects (*.plexus)"));
  };
  chooseCheckpoint = [this](const QString& caption) {
    return QFileDialog::getOpenFileName(this, caption, latestRunDirectory(), tr("Checkpoints (*.safetensors)"));
  };
  chooseWeightsPath = [this](const QString& caption) {
    return QFileDialog::getSaveFileName(this, caption, QString(), tr("Weights (*.safetensors)"));
  };
  chooseOnnxPath = [this](const QString& caption) {
    return QFileDialog::getSaveFileName(this, caption, nextToProject(QStringLiteral(".onnx")), tr("ONNX models (*.onnx)"));
  };
  chooseCodePath = [this](const QString& caption, const QString& suffix) {
    return QFileDialog::getSaveFileName(this, caption, nextToProject(suffix),
                                        suffix == QLatin1String(".py") ? tr("Python files (*.py)") : tr("C++ files (*.cpp)"));
  };
  chooseRunFolder = [this](const QString& caption) {
    const QString project = document_->filePath();
    const QString start = project.isEmpty() ? QString() : QString::fromStdString(session::runs_folder(project.toStdString()).string());
    return QFileDialog::getExistingDirectory(this, caption, start);
  };

  createDocks();
  createActions();

  connect(document_, &widgets::GraphDocument::modifiedChanged, this, &MainWindow::updateTitle);
  connect(document_, &widgets::GraphDocument::filePathChanged, this, &MainWindow::updateTitle);
  // A project opened, made or edited (from the Edit menu) replaces the start page.
  connect(document_, &widgets::GraphDocument::graphReset, this, &MainWindow::leaveStartPage);
  connect(document_->undoStack(), &QUndoStack::indexChanged, this, &MainWindow::leaveStartPage);
  connect(document_, &widgets::GraphDocument::validated, this, &MainWindow::updateStatus);
  connect(document_, &widgets::GraphDocument::settingsChanged, this, &MainWindow::updateStatus);
  connect(training_, &TrainingController::stateChanged, this, &MainWindow::updateRunActions);
  connect(training_, &TrainingController::failed, this,
          [this](const QString& message) { statusBar()->showMessage(message, 15000); });  // says it failed
  connect(training_, &TrainingController::notice, this, [this](const QString& text) { statusBar()->showMessage(text, 15000); });
  connect(training_, &TrainingController::editRefused, this, [this](const QString& message) {
    statusBar()->showMessage(tr("Still paused: the edit was not applied"), 15000);
    showError(tr("Cannot resume with the edit"), message);
  });
  connect(training_, &TrainingController::graphEdited, this, [this](const train::GraphEdit& edit) {
    statusBar()->showMessage(tr("Resumed with the edit: kept %1 tensors, reset %2").arg(edit.kept).arg(edit.reset), 15000);
  });
  connect(training_, &TrainingController::finished, this, [this](const train::Finished& result) {
    statusBar()->showMessage(result.cancelled ? tr("Training stopped") : tr("Training finished"), 8000);
  });
  connect(follower_, &RunFollower::stateChanged, this, &MainWindow::updateRunActions);
  connect(follower_, &RunFollower::finished, this, [this](const train::Finished& result) {
    statusBar()->showMessage(result.cancelled ? tr("The followed run stopped") : tr("The followed run finished"), 8000);
  });
  connect(follower_, &RunFollower::failed, this, [this](const QString& message) { statusBar()->showMessage(message, 15000); });
  connect(follower_, &RunFollower::lost, this, [this](const QString& why) { statusBar()->showMessage(why, 15000); });
  connect(processes_, &ProcessRun::ended, this, &MainWindow::processesEnded);
  connect(scene_, &widgets::NodeScene::statusMessage, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
  connect(scene_, &QGraphicsScene::selectionChanged, this, [this] {
    properties_->showNodes(scene_->selectedItemIds());
    const QStringList ids = scene_->selectedNodeIds();
    node_stats_panel_->setNode(ids.size() == 1 ? ids.front() : QString());
    feature_maps_->setNode(ids.size() == 1 ? ids.front() : QString());
  });
  // Statistics belong to a run of this graph: another project or a new run starts afresh.
  connect(training_, &TrainingController::nodeStats, node_stats_, &widgets::NodeStatsModel::add);
  connect(document_, &widgets::GraphDocument::graphReset, node_stats_, &widgets::NodeStatsModel::clear);
  connect(view_, &widgets::NodeView::fileDropped, this, &MainWindow::openFile);
  connect(view_, &widgets::NodeView::zoomChanged, this,
          [this](double zoom) { zoom_label_->setText(QStringLiteral("%1%").arg(qRound(zoom * 100))); });
  connect(palette_, &widgets::LayerPalette::addRequested, this, &MainWindow::addNodeAtCentre);
  connect(problems_, &widgets::ProblemsPanel::nodeActivated, view_, &widgets::NodeView::centerOnNode);

  restoreSettings();
  updateTitle();
  updateStatus();
  properties_->showNodes({});
}

MainWindow::~MainWindow() = default;

// ---- layout --------------------------------------------------------------------------------

void MainWindow::createDocks() {
  const auto dock = [this](const QString& title, const QString& name, QWidget* content, Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, this);
    d->setObjectName(name);
    d->setWidget(content);
    addDockWidget(area, d);
    return d;
  };
  palette_ = new widgets::LayerPalette(this);
  properties_ = new widgets::PropertyPanel(document_, this);
  // The training split's classes on the project page: editor/ and dataset/ meet here.
  auto* balance = new widgets::ClassBalanceChart(this);
  properties_->addDatasetView(balance);
  const auto countClasses = [this, balance] {
    const graph::Graph& g = document_->graph();
    graph::DatasetBinding located = g.dataset;
    if (const graph::DatasetLocation where = document_->datasetLocation(); where.found) located.path = where.path.string();
    balance->showDataset(located, g.training.seed, g.training.validation_fraction);
  };
  connect(document_, &widgets::GraphDocument::settingsChanged, balance, countClasses);
  connect(document_, &widgets::GraphDocument::graphReset, balance, countClasses);
  connect(document_, &widgets::GraphDocument::filePathChanged, balance, countClasses);
  countClasses();
  problems_ = new widgets::ProblemsPanel(document_, this);
  dock(tr("Layers"), QStringLiteral("paletteDock"), palette_, Qt::LeftDockWidgetArea);
  QDockWidget* props = dock(tr("Properties"), QStringLiteral("propertiesDock"), properties_, Qt::RightDockWidgetArea);
  dock(tr("Problems"), QStringLiteral("problemsDock"), problems_, Qt::BottomDockWidgetArea);
  training_panel_ = new widgets::TrainingPanel(document_, this);
  QDockWidget* settings = dock(tr("Training Settings"), QStringLiteral("trainingDock"), training_panel_, Qt::RightDockWidgetArea);
  tabifyDockWidget(props, settings);
  node_stats_ = new widgets::NodeStatsModel(this);
  node_stats_layer_ = new widgets::NodeStatsLayer(node_stats_, scene_, this);
  node_stats_panel_ = new widgets::NodeStatsPanel(node_stats_, this);
  QDockWidget* stats = dock(tr("Node Statistics"), QStringLiteral("nodeStatsDock"), node_stats_panel_, Qt::RightDockWidgetArea);
  tabifyDockWidget(settings, stats);
  // What the selected node computes for the Try It input: beside its training statistics.
  feature_map_view_ = new widgets::FeatureMapView(this);
  QDockWidget* maps = dock(tr("Feature Maps"), QStringLiteral("featureMapsDock"), feature_map_view_, Qt::RightDockWidgetArea);
  tabifyDockWidget(stats, maps);
  feature_maps_ = new FeatureMaps(feature_map_view_, try_it_, document_, this);
  connect(maps, &QDockWidget::visibilityChanged, feature_maps_, &FeatureMaps::setShown);
  props->raise();

  validity_label_ = new QLabel(this);
  dataset_label_ = new QLabel(this);
  zoom_label_ = new QLabel(QStringLiteral("100%"), this);
  dataset_label_->setMaximumWidth(420);
  statusBar()->addPermanentWidget(dataset_label_);
  statusBar()->addPermanentWidget(validity_label_);
  statusBar()->addPermanentWidget(zoom_label_);
}

void MainWindow::createActions() {
  QUndoStack* undo = document_->undoStack();

  // File
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* new_action = makeAction(this, tr("&New"), QStringLiteral("new"), {QKeySequence::New});
  connect(new_action, &QAction::triggered, this, &MainWindow::newProject);
  QAction* new_window = makeAction(this, tr("New &Window"), {}, {QKeySequence(tr("Ctrl+Shift+N"))});
  connect(new_window, &QAction::triggered, this, [] {
    auto* w = new MainWindow;
    w->setAttribute(Qt::WA_DeleteOnClose);
    w->show();
    w->showStartPage();
  });
  QAction* open = makeAction(this, tr("&Open…"), QStringLiteral("open"), {QKeySequence::Open});
  connect(open, &QAction::triggered, this, [this] {
    const QString path = chooseOpenPath(tr("Open project"));
    if (!path.isEmpty()) openFile(path);
  });
  recent_menu_ = new QMenu(tr("Open &Recent"), this);
  connect(recent_menu_, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
  examples_menu_ = new QMenu(tr("&Examples"), this);
  connect(examples_menu_, &QMenu::aboutToShow, this, &MainWindow::fillExamplesMenu);
  QAction* start = makeAction(this, tr("Start &Page"), {}, {QKeySequence(tr("Alt+0"))});
  start->setObjectName(QStringLiteral("startPageAction"));
  start->setStatusTip(tr("Close the project and show the start page: templates, recent projects, examples"));
  connect(start, &QAction::triggered, this, &MainWindow::showStartPage);
  // The start page's choices are the File menu's.
  connect(start_page_, &widgets::StartPage::openDialogRequested, open, &QAction::trigger);
  connect(start_page_, &widgets::StartPage::blankRequested, new_action, &QAction::trigger);
  connect(start_page_, &widgets::StartPage::openRequested, this, &MainWindow::openFile);
  connect(start_page_, &widgets::StartPage::templateRequested, this, &MainWindow::newFromTemplate);
  connect(start_page_, &widgets::StartPage::forgetMissingRequested, this, [this] {
    QStringList kept = recentFiles();
    kept.removeIf([](const QString& path) { return !QFileInfo::exists(path); });
    QSettings().setValue(kRecentKey, kept);
    start_page_->setRecentFiles(kept);
  });
  QAction* save_action = makeAction(this, tr("&Save"), QStringLiteral("save"), {QKeySequence::Save});
  connect(save_action, &QAction::triggered, this, &MainWindow::save);
  QAction* save_as = makeAction(this, tr("Save &As…"), QStringLiteral("save-as"), {QKeySequence::SaveAs});
  connect(save_as, &QAction::triggered, this, [this] { saveAs(chooseSavePath(tr("Save project as"))); });
  QAction* quit = makeAction(this, tr("&Quit"), {}, {QKeySequence::Quit});
  connect(quit, &QAction::triggered, this, &QWidget::close);
  file->addActions({new_action, new_window, open});
  file->addMenu(recent_menu_);
  file->addMenu(examples_menu_);
  file->addAction(start);
  file->addSeparator();
  QAction* export_onnx = makeAction(this, tr("&ONNX…"), {});
  export_onnx->setObjectName(QStringLiteral("exportOnnxAction"));
  connect(export_onnx, &QAction::triggered, this, [this] {
    const QString checkpoint = chooseCheckpoint(tr("Export a checkpoint as an ONNX model"));
    const QString out = checkpoint.isEmpty() ? QString() : chooseOnnxPath(tr("Save the ONNX model as"));
    if (!out.isEmpty()) exportOnnx(checkpoint, out);
  });
  const auto export_code = [this](const QString& text, const QString& name, const QString& language,
                                   const QString& suffix) {
    QAction* action = makeAction(this, text, {});
    action->setObjectName(name);
    connect(action, &QAction::triggered, this, [this, language, suffix] {
      const QString checkpoint = chooseCheckpoint(tr("Export a checkpoint as %1 code").arg(language));
      const QString out =
          checkpoint.isEmpty() ? QString() : chooseCodePath(tr("Save the %1 code as").arg(language), suffix);
      if (!out.isEmpty()) (suffix == QLatin1String(".py") ? exportPytorch(checkpoint, out) : exportCpp(checkpoint, out));
    });
    return action;
  };
  QAction* export_pytorch = export_code(tr("&PyTorch Code…"), QStringLiteral("exportPytorchAction"),
                                        QStringLiteral("PyTorch"), QStringLiteral(".py"));
  QAction* export_cpp =
      export_code(tr("&C++ Code…"), QStringLiteral("exportCppAction"), QStringLiteral("C++"), QStringLiteral(".cpp"));
  file->addActions({save_action, save_as});
  file->addSeparator();
  QMenu* export_menu = file->addMenu(tr("&Export"));
  export_menu->addActions({export_onnx, export_pytorch, export_cpp});
  file->addSeparator();
  file->addAction(quit);

  // Edit: every edit goes to the scene, which goes to the document's undo stack.
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo_action = undo->createUndoAction(this, tr("&Undo"));
  undo_action->setShortcuts(QKeySequence::Undo);
  QAction* redo_action = undo->createRedoAction(this, tr("&Redo"));
  redo_action->setShortcuts({QKeySequence::Redo, QKeySequence(tr("Ctrl+Y"))});
  setThemedIcon(undo_action, QStringLiteral("undo"));
  setThemedIcon(redo_action, QStringLiteral("redo"));
  QAction* cut = makeAction(this, tr("Cu&t"), QStringLiteral("cut"), {QKeySequence::Cut});
  connect(cut, &QAction::triggered, scene_, &widgets::NodeScene::cutToClipboard);
  QAction* copy = makeAction(this, tr("&Copy"), QStringLiteral("copy"), {QKeySequence::Copy});
  connect(copy, &QAction::triggered, scene_, &widgets::NodeScene::copyToClipboard);
  QAction* paste = makeAction(this, tr("&Paste"), QStringLiteral("paste"), {QKeySequence::Paste});
  connect(paste, &QAction::triggered, this, [this] {
    // At the mouse when it is over the canvas, else where the nodes were copied from.
    const QPoint at = view_->viewport()->mapFromGlobal(QCursor::pos());
    std::optional<QPointF> where;
    if (view_->viewport()->rect().contains(at)) where = view_->mapToScene(at);
    scene_->pasteFromClipboard(where);
  });
  QAction* duplicate = makeAction(this, tr("D&uplicate"), QStringLiteral("duplicate"), {QKeySequence(tr("Ctrl+D"))});
  connect(duplicate, &QAction::triggered, scene_, &widgets::NodeScene::duplicateSelection);
  QAction* remove = makeAction(this, tr("&Delete"), QStringLiteral("delete"),
                               {QKeySequence::Delete, QKeySequence(Qt::Key_Backspace)});
  connect(remove, &QAction::triggered, scene_, &widgets::NodeScene::deleteSelection);
  QAction* select_all = makeAction(this, tr("Select &All"), {}, {QKeySequence::SelectAll});
  connect(select_all, &QAction::triggered, this, [this] {
    for (QGraphicsItem* item : scene_->items()) item->setSelected(true);
  });
  QAction* layout = makeAction(this, tr("Auto &Layout"), QStringLiteral("auto-layout"), {QKeySequence(tr("Ctrl+L"))});
  connect(layout, &QAction::triggered, this, [this] {
    scene_->autoLayout();
    view_->showGraph();
  });
  edit->addActions({undo_action, redo_action});
  edit->addSeparator();
  edit->addActions({cut, copy, paste, duplicate, remove});
  edit->addSeparator();
  edit->addActions({select_all, layout});
  blocks_ = new widgets::BlockActions(view_, palette_, widgets::BlockLibrary::defaultFolder(), this);
  connect(blocks_, &widgets::BlockActions::message, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
  connect(blocks_, &widgets::BlockActions::failed, this, [this](const QString& t, const QString& m) { showError(t, m); });
  edit->addSeparator();
  edit->addActions({blocks_->groupAction(), blocks_->ungroupAction(), blocks_->renameAction(), blocks_->saveAction()});
  auto* freezing = new widgets::FreezeActions(view_, this);
  connect(freezing, &widgets::FreezeActions::message, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
  edit->addSeparator();
  edit->addActions({freezing->freezeAction(), freezing->unfreezeAction(), freezing->freezeUpToHereAction()});
  // The canvas actions must work whichever dock has focus, but not steal keys from text fields.
  for (QAction* a : {cut, copy, paste, duplicate, remove, select_all}) a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  view_->addActions({cut, copy, paste, duplicate, remove, select_all});

  // View
  QMenu* view_menu = menuBar()->addMenu(tr("&View"));
  QAction* zoom_in = makeAction(this, tr("Zoom &In"), QStringLiteral("zoom-in"),
                                {QKeySequence::ZoomIn, QKeySequence(tr("Ctrl+="))});
  connect(zoom_in, &QAction::triggered, view_, &widgets::NodeView::zoomIn);
  QAction* zoom_out = makeAction(this, tr("Zoom &Out"), QStringLiteral("zoom-out"), {QKeySequence::ZoomOut});
  connect(zoom_out, &QAction::triggered, view_, &widgets::NodeView::zoomOut);
  QAction* actual = makeAction(this, tr("&Actual Size"), {}, {QKeySequence(tr("Ctrl+1"))});
  connect(actual, &QAction::triggered, view_, &widgets::NodeView::resetZoom);
  QAction* fit = makeAction(this, tr("&Fit Graph"), QStringLiteral("zoom-fit"), {QKeySequence(tr("Ctrl+0"))});
  connect(fit, &QAction::triggered, view_, &widgets::NodeView::fitAll);
  QAction* snap = makeAction(this, tr("&Snap to Grid"), QStringLiteral("grid"));
  snap->setCheckable(true);
  snap->setChecked(scene_->snapToGrid());
  connect(snap, &QAction::toggled, this, [this](bool on) {
    scene_->setSnapToGrid(on);
    QSettings().setValue(QStringLiteral("snapToGrid"), on);
  });
  snap->setObjectName(QStringLiteral("snapAction"));
  view_menu->addActions({zoom_in, zoom_out, actual, fit});
  QAction* show_stats = makeAction(this, tr("Show Node &Statistics"), {});
  show_stats->setObjectName(QStringLiteral("showNodeStatsAction"));
  show_stats->setCheckable(true);
  show_stats->setChecked(true);
  connect(show_stats, &QAction::toggled, node_stats_layer_, &widgets::NodeStatsLayer::setShown);
  view_menu->addSeparator();
  view_menu->addActions({snap, show_stats});
  QMenu* theme_menu = view_menu->addMenu(widgets::icon(QStringLiteral("theme")), tr("&Theme"));
  auto* themes = new QActionGroup(this);
  for (const auto& [mode, text] : {std::pair{widgets::ThemeMode::System, tr("Follow &System")},
                                   std::pair{widgets::ThemeMode::Light, tr("&Light")},
                                   std::pair{widgets::ThemeMode::Dark, tr("&Dark")}}) {
    QAction* a = theme_menu->addAction(text);
    a->setCheckable(true);
    a->setChecked(widgets::ThemeManager::instance().mode() == mode);
    themes->addAction(a);
    connect(a, &QAction::triggered, this, [mode = mode] {
      widgets::ThemeManager::instance().setMode(mode);
      QSettings().setValue(QStringLiteral("theme"), widgets::toString(mode));
    });
  }
  QMenu* panels = view_menu->addMenu(tr("&Panels"));
  for (QDockWidget* d : findChildren<QDockWidget*>()) panels->addAction(d->toggleViewAction());

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Plexus"), this, [this] {
    QMessageBox::about(this, tr("About Plexus"),
                       tr("<h3>Plexus %1</h3><p>Design a neural network by wiring layers together, "
                          "then train it on the CPU or a CUDA GPU.</p>")
                           .arg(QApplication::applicationVersion()));
  });

  QToolBar* bar = addToolBar(tr("Main"));
  bar->setObjectName(QStringLiteral("mainToolbar"));
  bar->addActions({new_action, open, save_action});
  bar->addSeparator();
  bar->addActions({undo_action, redo_action});
  bar->addSeparator();
  bar->addActions({layout, zoom_out, zoom_in, fit});
  panels->addAction(bar->toggleViewAction());

  createRunActions();
  panels->addAction(findChild<QToolBar*>(QStringLiteral("trainingToolbar"))->toggleViewAction());
}

void MainWindow::createExperimentActions(QMenu* run) {
  ExperimentsPage* page = experiments_;
  run->addActions({page->startAction(), page->stopAction(), page->resumeAction(), page->openAction()});
  connect(page->startAction(), &QAction::triggered, this, [this] {
    if (!checkTrainable()) return;
    if (const QString why = experiments_->start(newSweepDirectory(), projectDirectory()); !why.isEmpty())
      showError(tr("Cannot start the sweep"), why);
    else
      showExperiments();
  });
  connect(page->openAction(), &QAction::triggered, this, [this] {
    const QString folder = chooseRunFolder(tr("Open a sweep folder"));
    if (folder.isEmpty()) return;
    QString why;
    if (experiments_->open(folder, &why))
      showExperiments();
    else
      showError(tr("Cannot open the sweep folder"), why);
  });
  connect(page, &ExperimentsPage::message, this, [this](const QString& text) { statusBar()->showMessage(text, 8000); });
  connect(page, &ExperimentsPage::ended, this, [this](const QString& text, bool failed) {
    if (failed)
      showError(tr("Sweep"), text);
    else
      statusBar()->showMessage(text, 8000);
  });
}

QString MainWindow::newSweepDirectory() const {
  const QFileInfo run(newRunDirectory());  // <runs>/<date-time>: the sweep is <runs>/sweeps/<date-time>
  return run.absolutePath() + QStringLiteral("/sweeps/") + run.fileName();
}

void MainWindow::createRunActions() {
  auto* run = new QMenu(tr("&Run"), this);
  menuBar()->insertMenu(menuBar()->actions().constLast(), run);  // before Help
  train_action_ = makeAction(this, tr("&Train"), QStringLiteral("train"), {QKeySequence(Qt::Key_F5)});
  train_action_->setObjectName(QStringLiteral("trainAction"));
  connect(train_action_, &QAction::triggered, this, [this] {
    if (startTraining({}, {}, attached_weights_)) attached_weights_.clear();  // the next training only
  });
  pause_action_ = makeAction(this, tr("&Pause"), QStringLiteral("pause"), {QKeySequence(Qt::Key_F6)});
  pause_action_->setCheckable(true);
  connect(pause_action_, &QAction::triggered, this, &MainWindow::setPaused);
  stop_action_ = makeAction(this, tr("&Stop"), QStringLiteral("stop"), {QKeySequence(tr("Shift+F5"))});
  stop_action_->setObjectName(QStringLiteral("stopAction"));
  connect(stop_action_, &QAction::triggered, this, &MainWindow::stopRun);
  processes_action_ = makeAction(this, tr("Train with N &Processes…"), {});
  processes_action_->setObjectName(QStringLiteral("trainProcessesAction"));
  processes_action_->setToolTip(tr("Train the project in several processes with mpirun (plexus-cli), on this machine "
                                   "or the hosts of a hostfile, and follow the run here"));
  connect(processes_action_, &QAction::triggered, this, [this] {
    if (isRunActive() || !checkTrainable()) return;
    // The command the dialog shows names the very folder the run will go to.
    const QString run_dir = newRunDirectory();
    ProcessPlan plan;
    plan.project = run_dir + QLatin1Char('/') + QLatin1String(session::kLaunchProjectFile);
    plan.runDir = run_dir;
    plan.workingDir = projectDirectory();
    auto* dialog = new TrainProcessesDialog(plan, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] { trainWithProcesses(dialog->plan()); });
    dialog->open();  // window-modal, without a nested event loop
  });
  follow_action_ = makeAction(this, tr("&Follow Run Folder…"), {});
  follow_action_->setObjectName(QStringLiteral("followAction"));
  follow_action_->setToolTip(tr("Show a run that another process is writing (plexus-cli, a cluster job) live, from "
                                "its run folder"));
  connect(follow_action_, &QAction::triggered, this, [this] {
    const QString folder = chooseRunFolder(tr("Follow a run folder"));
    if (!folder.isEmpty()) followRunFolder(folder);
  });
  QAction* resume_from = makeAction(this, tr("Train from &Checkpoint…"), {});
  connect(resume_from, &QAction::triggered, this, [this] {
    const QString path = chooseCheckpoint(tr("Continue training from a checkpoint"));
    if (!path.isEmpty()) startTraining(path);
  });
  QAction* init_from = makeAction(this, tr("Train from Checkpoint (&Matching Nodes)…"), {});
  init_from->setObjectName(QStringLiteral("initFromAction"));
  init_from->setToolTip(tr("Start a new run from the weights of every node whose id and parameter shapes match a "
                           "checkpoint or weights file; the other nodes start as initialised"));
  connect(init_from, &QAction::triggered, this, [this] {
    const QString path = chooseCheckpoint(tr("Train from the matching nodes of a checkpoint or weights file"));
    if (!path.isEmpty()) startTraining({}, {}, path);
  });
  QAction* load_weights = makeAction(this, tr("&Load Weights…"), {});
  load_weights->setObjectName(QStringLiteral("loadWeightsAction"));
  load_weights->setToolTip(tr("Match the tensors of a weights file named otherwise (a PyTorch state_dict saved as "
                              "safetensors) to this project's, by name, then by order and shape, and start the next "
                              "training from them"));
  connect(load_weights, &QAction::triggered, this, [this] {
    const QString path = chooseCheckpoint(tr("Load weights (a PyTorch state_dict saved as safetensors)"));
    if (!path.isEmpty()) loadWeights(path);
  });
  export_action_ = makeAction(this, tr("&Export Weights…"), QStringLiteral("save-as"));
  connect(export_action_, &QAction::triggered, this, [this] {
    const QString path = chooseWeightsPath(tr("Export the trained weights"));
    if (path.isEmpty()) return;
    const QString error = training_->exportWeights(path);
    if (!error.isEmpty())
      showError(tr("Cannot export weights"), error);
    else
      statusBar()->showMessage(tr("Exported weights to %1").arg(QDir::toNativeSeparators(path)), 6000);
  });
  QAction* evaluate = makeAction(this, tr("Evaluate on &Test Set…"), {});
  evaluate->setObjectName(QStringLiteral("evaluateAction"));
  connect(evaluate, &QAction::triggered, this, [this] {
    const QString path = chooseCheckpoint(tr("Evaluate a checkpoint on the test set"));
    if (path.isEmpty()) return;
    dashboard_->evaluateCheckpoint(document_->graph(), projectDirectory(), path);
    showDashboard();
  });
  QAction* editor = makeAction(this, tr("Show &Editor"), {}, {QKeySequence(tr("Alt+1"))});
  connect(editor, &QAction::triggered, this, &MainWindow::showEditor);
  QAction* dashboard = makeAction(this, tr("Show Training &Dashboard"), {}, {QKeySequence(tr("Alt+2"))});
  connect(dashboard, &QAction::triggered, this, &MainWindow::showDashboard);
  QAction* try_it = makeAction(this, tr("Show T&ry It"), {}, {QKeySequence(tr("Alt+3"))});
  connect(try_it, &QAction::triggered, this, &MainWindow::showTryIt);
  lr_finder_action_ = makeAction(this, tr("Find &Learning Rate…"), {});
  lr_finder_action_->setObjectName(QStringLiteral("lrFinderAction"));
  lr_finder_action_->setToolTip(tr("Train a fresh copy of the model for a few hundred batches while the learning rate "
                                   "grows, plot the loss, and suggest a rate"));
  connect(lr_finder_action_, &QAction::triggered, this, &MainWindow::findLearningRate);
  run->addActions({train_action_, pause_action_, stop_action_, processes_action_, lr_finder_action_});
  run->addSeparator();
  createExperimentActions(run);
  run->addSeparator();
  widgets::RunList* runs = dashboard_->runs();
  connect(runs, &widgets::RunList::continueRequested, this, &MainWindow::continueRun);
  connect(runs, &widgets::RunList::resumeRequested, this, &MainWindow::resumeRun);
  connect(dashboard_, &Dashboard::resumeRequested, this, &MainWindow::resumeRun);
  connect(runs, &widgets::RunList::deleteRequested, this, &MainWindow::deleteRun);
  connect(runs, &widgets::RunList::openRequested, this, &MainWindow::openRunFolder);
  connect(dashboard_, &Dashboard::comparisonShown, this, &MainWindow::tabChanged);
  connect(dashboard_, &Dashboard::comparisonClosed, this, &MainWindow::tabChanged);
  connect(dashboard_, &Dashboard::runOpenFailed, this,
          [this](const QString& message) { showError(tr("Cannot open the run folder"), message); });
  connect(dashboard_, &Dashboard::runDeleted, this, [this](const QString& folder, const QString& error, bool kept) {
    const QString where = QDir::toNativeSeparators(folder);
    if (!error.isEmpty())
      showError(tr("Cannot delete the run"), error);
    else
      statusBar()->showMessage(kept ? tr("Deleted the run's files; %1 holds other files and was kept").arg(where)
                                    : tr("Deleted the run %1").arg(where),
                               8000);
  });
  run->addActions({resume_from, init_from, load_weights, evaluate, export_action_});
  run->addSeparator();
  run->addActions({runs->openAction(), follow_action_, runs->resumeAction(), runs->continueAction(), runs->compareAction(),
                   runs->deleteAction()});
  run->addSeparator();
  run->addActions({editor, dashboard, try_it});

  QToolBar* bar = addToolBar(tr("Training"));
  bar->setObjectName(QStringLiteral("trainingToolbar"));
  bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  bar->addActions({train_action_, pause_action_, stop_action_});
  updateRunActions();
}

// One run at a time fills the dashboard: while one trains here, trains in processes started
// here or is followed, no other starts.
void MainWindow::updateRunActions() {
  const bool running = training_->isRunning();
  const bool active = isRunActive();
  train_action_->setEnabled(!active);
  processes_action_->setEnabled(!active);
  lr_finder_action_->setEnabled(!active);  // one thing trains at a time on a small machine
  follow_action_->setEnabled(!active);
  pause_action_->setEnabled(running);
  pause_action_->setChecked(training_->isPaused());
  pause_action_->setText(training_->isPaused() ? tr("&Resume") : tr("&Pause"));
  stop_action_->setEnabled(active);
  // Only following: the run goes on where it runs.
  stop_action_->setText(active && !running && !processes_->isRunning() ? tr("Stop &Following") : tr("&Stop"));
  export_action_->setEnabled(!running);
  training_panel_->setLocked(running);
}

bool MainWindow::isRunActive() const {
  return training_->isRunning() || processes_->isRunning() || follower_->isFollowing();
}

void MainWindow::restoreSettings() {
  QSettings settings;
  has_saved_geometry_ = restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
  first_layout_pending_ = !restoreState(settings.value(QStringLiteral("windowState")).toByteArray());
  if (findChild<QAction*>(QStringLiteral("snapAction")))
    findChild<QAction*>(QStringLiteral("snapAction"))->setChecked(settings.value(QStringLiteral("snapToGrid"), true).toBool());
}

// ---- status --------------------------------------------------------------------------------

void MainWindow::updateTitle() {
  if (isStartPageShown()) {
    setWindowTitle(tr("Plexus"));
    setWindowModified(false);
    return;
  }
  setWindowTitle(tr("%1[*] — Plexus").arg(document_->displayName()));
  setWindowModified(document_->isModified());
}

void MainWindow::updateStatus() {
  int errors = 0, warnings = 0;
  for (const graph::Problem& p : document_->validation().problems)
    (p.severity == graph::Severity::Error ? errors : warnings) += 1;
  if (errors + warnings == 0)
    validity_label_->setText(document_->graph().nodes.empty() ? tr("Empty graph") : tr("✔ Valid"));
  else
    validity_label_->setText(tr("%n error(s)", "", errors) + (warnings ? tr(", %n warning(s)", "", warnings) : QString()));
  const QString dataset = document_->datasetStatus();
  dataset_label_->setText(dataset_label_->fontMetrics().elidedText(dataset, Qt::ElideMiddle, dataset_label_->maximumWidth()));
  dataset_label_->setToolTip(dataset);
  if (auto* dock = findChild<QDockWidget*>(QStringLiteral("problemsDock")))
    dock->setWindowTitle(errors + warnings ? tr("Problems (%1)").arg(errors + warnings) : tr("Problems"));
}

// ---- files ---------------------------------------------------------------------------------

bool MainWindow::maybeSave() {
  if (!document_->isModified()) return true;
  const auto answer = ask(tr("Unsaved changes"),
                          tr("Save the changes to %1 first?").arg(document_->displayName()),
                          QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
  if (answer == QMessageBox::Save) return save();
  return answer == QMessageBox::Discard;
}

void MainWindow::newProject() {
  if (!maybeSave()) return;
  document_->reset(graph::Graph{}, QString());
  statusBar()->showMessage(tr("New project"), 4000);
}

bool MainWindow::newFromTemplate(const QString& name) {
  if (!maybeSave()) return false;
  graph::Graph graph;
  try {
    graph = newProjectFromTemplate(name);
  } catch (const std::exception& e) {
    showError(tr("Cannot make a new project"), qstr(e.what()));
    return false;
  }
  document_->reset(std::move(graph), QString());  // untitled: Save asks where
  view_->showGraph();
  statusBar()->showMessage(tr("New project: save it to keep it"), 4000);
  return true;
}

bool MainWindow::isStartPageShown() const { return central_->currentWidget() == start_page_; }

bool MainWindow::showStartPage() {
  if (isRunActive()) {
    statusBar()->showMessage(tr("A run is active: stop it before closing the project"), 8000);
    return false;
  }
  if (!maybeSave()) return false;
  document_->reset(graph::Graph{}, QString());
  start_page_->setRecentFiles(recentFiles());
  start_page_->setTemplates(startTemplates());
  start_page_->setExamples(startExamples(examples()));
  if (!isStartPageShown()) {
    layout_before_start_ = saveState();  // the panels as they were, which tab of each group on top
    for (QDockWidget* dock : findChildren<QDockWidget*>()) dock->hide();
    central_->setCurrentWidget(start_page_);
  }
  for (QLabel* label : {validity_label_, dataset_label_, zoom_label_}) label->hide();  // of no project
  updateTitle();
  return true;
}

void MainWindow::leaveStartPage() {
  if (!isStartPageShown()) return;
  central_->setCurrentWidget(tabs_);
  restoreState(layout_before_start_);
  for (QLabel* label : {validity_label_, dataset_label_, zoom_label_}) label->show();
  tabs_->setCurrentWidget(view_);
  layout()->activate();  // the canvas at its size now: what is opened is fitted to it
  updateTitle();
}

bool MainWindow::openFile(const QString& path) {
  if (path.isEmpty() || !maybeSave()) return false;
  if (path.endsWith(QStringLiteral(".onnx"), Qt::CaseInsensitive)) return importModel(path);
  try {
    document_->load(path);  // throws before changing anything
  } catch (const std::exception& e) {
    showError(tr("Cannot open project"), qstr(e.what()));
    return false;
  }
  if (document_->graph().view.empty())
    view_->showGraph();
  else
    view_->restoreViewState(qstr(document_->graph().view));
  rememberRecent(document_->filePath());
  dashboard_->showProjectRuns(document_->filePath());
  statusBar()->showMessage(tr("Opened %1").arg(QDir::toNativeSeparators(document_->filePath())), 4000);
  return true;
}

// An ONNX model opens as a new, unsaved project (export/onnx_import.h); its weights are written
// beside the model, <model>.safetensors, for Run > Train from Checkpoint. A model that cannot be
// imported is reported, and the open project stays as it was.
bool MainWindow::importModel(const QString& path) {
  const QFileInfo model(path);
  const QString weights = model.dir().filePath(model.completeBaseName() + QStringLiteral(".safetensors"));
  exporter::ImportedModel m;
  try {
    m = exporter::import_onnx(path.toStdString());
    exporter::save_imported_weights(m, weights.toStdString());
  } catch (const std::exception& e) {
    showError(tr("Cannot import model"), qstr(e.what()));
    return false;
  }
  document_->reset(std::move(m.graph), QString(), /*modified=*/true);
  view_->showGraph();
  statusBar()->showMessage(tr("Imported %1; its weights are in %2: bind a dataset, then Run > Train from Checkpoint")
                               .arg(QDir::toNativeSeparators(path), QDir::toNativeSeparators(weights)));
  return true;
}

bool MainWindow::save() {
  if (document_->filePath().isEmpty()) return saveAs(chooseSavePath(tr("Save project as")));
  saveViewState();
  try {
    document_->save(document_->filePath());
  } catch (const std::exception& e) {
    showError(tr("Cannot save project"), qstr(e.what()));
    return false;
  }
  statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(document_->filePath())), 4000);
  return true;
}

bool MainWindow::saveAs(const QString& chosen) {
  if (chosen.isEmpty()) return false;
  QString path = chosen;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".plexus");
  saveViewState();
  try {
    document_->save(path);
  } catch (const std::exception& e) {
    showError(tr("Cannot save project"), qstr(e.what()));
    return false;
  }
  rememberRecent(document_->filePath());
  statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(document_->filePath())), 4000);
  return true;
}

void MainWindow::saveViewState() { document_->setViewState(view_->viewState().toStdString()); }

QStringList MainWindow::recentFiles() { return QSettings().value(kRecentKey).toStringList(); }

void MainWindow::rememberRecent(const QString& path) {
  QStringList files = recentFiles();
  files.removeAll(path);
  files.prepend(path);
  while (files.size() > kMaxRecent) files.removeLast();
  QSettings().setValue(kRecentKey, files);
}

void MainWindow::fillRecentMenu() {
  recent_menu_->clear();
  const QStringList files = recentFiles();
  for (const QString& path : files) {
    QAction* a = recent_menu_->addAction(QFileInfo(path).fileName(), this, [this, path] {
      if (!QFileInfo::exists(path)) {  // gone since: forget it
        QStringList left = recentFiles();
        left.removeAll(path);
        QSettings().setValue(kRecentKey, left);
      }
      openFile(path);
    });
    a->setToolTip(QDir::toNativeSeparators(path));
    a->setStatusTip(QDir::toNativeSeparators(path));
  }
  if (files.isEmpty()) recent_menu_->addAction(tr("No recent projects"))->setEnabled(false);
  recent_menu_->addSeparator();
  recent_menu_->addAction(tr("Clear Recent"), this, [] { QSettings().remove(kRecentKey); })->setEnabled(!files.isEmpty());
}

QStringList MainWindow::examples() {
  // Installed (share/plexus/examples next to bin/) before the source tree the binary was built
  // from, which an installed binary would otherwise list wherever that tree is still present.
  const QString app_dir = QCoreApplication::applicationDirPath();
  for (const QString& dir : {app_dir + QStringLiteral("/../share/plexus/examples"), QStringLiteral(PLEXUS_EXAMPLES_DIR),
                             app_dir + QStringLiteral("/../../examples")}) {
    const QDir d(dir);
    const QStringList names = d.entryList({QStringLiteral("*.plexus")}, QDir::Files, QDir::Name);
    if (!names.isEmpty()) {
      QStringList out;
      for (const QString& n : names) out << QDir::cleanPath(d.absoluteFilePath(n));
      return out;
    }
  }
  return {};
}

void MainWindow::fillExamplesMenu() {
  examples_menu_->clear();
  for (const QString& path : examples())
    examples_menu_->addAction(QFileInfo(path).completeBaseName(), this, [this, path] { openFile(path); })
        ->setStatusTip(QDir::toNativeSeparators(path));
  if (examples_menu_->isEmpty()) examples_menu_->addAction(tr("No examples found"))->setEnabled(false);
}

int MainWindow::offerRecovery() {
  int recovered = 0;
  for (const RecoveryEntry& entry : Autosaver::orphans(Autosaver::defaultDirectory())) {
    const QString what = entry.original.isEmpty() ? tr("an untitled project")
                                                  : QDir::toNativeSeparators(entry.original);
    const auto answer = ask(tr("Recover unsaved work"),
                            tr("Plexus closed unexpectedly while %1 had unsaved changes.\n"
                               "Recover the version autosaved at %2?")
                                .arg(what, QLocale().toString(entry.saved, QLocale::ShortFormat)),
                            QMessageBox::Yes | QMessageBox::No);
    if (answer != QMessageBox::Yes) {
      Autosaver::remove(entry.file);
      continue;
    }
    graph::Graph graph;
    try {
      graph = graph::load_project(entry.file.toStdString());
    } catch (const std::exception& e) {
      showError(tr("Cannot recover"), qstr(e.what()));
      continue;  // keep the file: it may be readable by a later version
    }
    const bool here = document_->graph().nodes.empty() && document_->filePath().isEmpty() && !document_->isModified();
    MainWindow* target = this;
    if (!here) {
      target = new MainWindow;
      target->setAttribute(Qt::WA_DeleteOnClose);
      target->show();
    }
    target->document()->reset(std::move(graph), entry.original, /*modified=*/true);
    target->view()->showGraph();
    Autosaver::remove(entry.file);
    target->autosaver()->saveNow();  // from now on this window's own recovery file holds it
    ++recovered;
  }
  return recovered;
}

void MainWindow::addNodeAtCentre(const QString& type) {
  const QSizeF size = widgets::NodeScene::nodeSize(graph::Node{{}, type.toStdString(), {}, {}, {}});
  const QPointF centre = view_->mapToScene(view_->viewport()->rect().center());
  const QString id = document_->addNode(type, centre - QPointF(size.width() / 2, size.height() / 2));
  if (!id.isEmpty()) scene_->selectNodes({id});
}

// ---- training ------------------------------------------------------------------------------

bool MainWindow::checkTrainable() {
  const graph::Validation& validation = document_->validation();
  if (validation.ok() && !document_->graph().nodes.empty()) return true;
  if (auto* dock = findChild<QDockWidget*>(QStringLiteral("problemsDock"))) {
    dock->show();
    dock->raise();
  }
  showEditor();
  statusBar()->showMessage(document_->graph().nodes.empty() ? tr("Nothing to train: add layers first")
                                                            : tr("Cannot train: fix the problems listed first"),
                           10000);
  return false;
}

bool MainWindow::startTraining(const QString& resume_from, const QString& continue_from, const QString& init_from) {
  if (isRunActive() || !checkTrainable()) return false;
  const QString project_dir = projectDirectory();
  const QString project_file =
      document_->filePath().isEmpty() ? QString() : QFileInfo(document_->filePath()).absoluteFilePath();
  TrainingRequest request{document_->graph(), project_dir, newRunDirectory(), resume_from, continue_from, project_file,
                          init_from};
  dashboard_->beginRun(request);
  try_it_->beginRun(request.graph);
  node_stats_->clear();
  training_->start(request);
  showDashboard();
  statusBar()->showMessage(tr("Training: checkpoints go to %1").arg(QDir::toNativeSeparators(request.runDir)), 8000);
  return true;
}

LrFinderDialog* MainWindow::findLearningRate() {
  if (isRunActive() || !checkTrainable()) return nullptr;
  auto* dialog = new LrFinderDialog(document_, projectDirectory(), attached_weights_, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->open();  // window-modal: no run starts and nothing is edited while it is open
  return dialog;
}

LoadWeightsDialog* MainWindow::loadWeights(const QString& weights) {
  LoadWeightsDialog* dialog = nullptr;
  try {
    dialog = new LoadWeightsDialog(document_->graph(), projectDirectory(), weights, this);
  } catch (const std::exception& e) {
    showError(tr("Cannot load weights"), QString::fromUtf8(e.what()));
    return nullptr;
  }
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QDialog::accepted, this, [this, dialog, weights] {
    const QFileInfo source(weights);
    const QString out = source.absolutePath() + QLatin1Char('/') + source.completeBaseName() + ".plexus.safetensors";
    const QString error = dialog->save(out);
    if (!error.isEmpty()) {
      showError(tr("Cannot write the imported weights"), error);
      return;
    }
    attached_weights_ = out;
    try_it_->loadCheckpoint(out);
    statusBar()->showMessage(tr("Loaded %1 tensors from %2 into %3: the next training starts from them")
                                 .arg(dialog->matched())
                                 .arg(source.fileName(), QDir::toNativeSeparators(out)),
                             10000);
  });
  dialog->open();  // window-modal, without a nested event loop
  return dialog;
}

void MainWindow::setPaused(bool paused) {
  if (paused) {
    training_->pause();
    return;
  }
  const QString refused = training_->resume(document_->graph());
  if (!refused.isEmpty()) {
    updateRunActions();  // still paused
    showError(tr("Cannot resume with these changes"), refused);
  }
}

bool MainWindow::continueRun(int run) {
  const widgets::TrainingPlots::RunInfo info = dashboard_->plots()->runInfo(run);
  if (!info.origin.continuable) return false;
  return startTraining({}, info.origin.folder);
}

bool MainWindow::resumeRun(int run) {
  const widgets::TrainingPlots::RunInfo info = dashboard_->plots()->runInfo(run);
  if (isRunActive() || !info.origin.resumable) return false;
  const std::filesystem::path folder = info.origin.folder.toStdString();
  // The dashboard's name for its curves and settings; the worker builds the run from the folder.
  TrainingRequest request{{}, {}, info.origin.folder, {}};
  request.resumeRun = info.origin.folder;
  try {
    const session::RunHeader header = session::read_run_header(folder);
    request.graph = graph::load_project(folder / session::kRunProjectFile);
    request.graph.training = header.settings;
    request.projectFile = qstr(header.project);
    if (!header.project.empty()) request.projectDir = QFileInfo(qstr(header.project)).absolutePath();
  } catch (const std::exception& e) {
    showError(tr("Cannot resume the run"), qstr(e.what()));
    return false;
  }
  if (!dashboard_->beginResumedRun(run, request)) return false;
  try_it_->beginRun(request.graph);
  node_stats_->clear();
  training_->start(request);
  showDashboard();
  statusBar()->showMessage(tr("Resuming the run in %1").arg(QDir::toNativeSeparators(info.origin.folder)), 8000);
  return true;
}

void MainWindow::deleteRun(int run) {
  const widgets::TrainingPlots::RunInfo info = dashboard_->plots()->runInfo(run);
  if (info.origin.folder.isEmpty() || info.active) return;
  if (confirm(tr("Delete run"),
              tr("Delete “%1” from the disk?\n\n%2\n\nIts checkpoints, metrics and project copy go; this cannot be "
                 "undone.")
                  .arg(info.name, QDir::toNativeSeparators(info.origin.folder)),
              tr("Delete")))
    dashboard_->deleteRun(run);
}

void MainWindow::openRunFolder() {
  const QString folder = chooseRunFolder(tr("Open a run folder"));
  if (!folder.isEmpty()) dashboard_->openRunFolder(folder);
}

bool MainWindow::followRunFolder(const QString& chosen) {
  if (isRunActive()) {
    statusBar()->showMessage(tr("A run is active: stop it before following another"), 8000);
    return false;
  }
  const QString folder = QFileInfo(chosen).absoluteFilePath();
  const std::filesystem::path path = folder.toStdString();
  TrainingRequest request{{}, {}, folder, {}};
  try {
    const session::RunHeader header = session::read_run_header(path);
    request.graph = graph::load_project(path / session::kRunProjectFile);
    // A relative dataset path is the project's, which the header names.
    if (!header.project.empty()) request.projectDir = QFileInfo(qstr(header.project)).absolutePath();
  } catch (const std::exception& e) {
    showError(tr("Cannot follow the run folder"), qstr(e.what()));
    return false;
  }
  follow(request, QFileInfo(folder).fileName());
  statusBar()->showMessage(tr("Following %1").arg(QDir::toNativeSeparators(folder)), 8000);
  return true;
}

void MainWindow::follow(const TrainingRequest& request, const QString& name) {
  dashboard_->beginFollowedRun(request, name);
  follower_->follow(request.runDir);
  showDashboard();
}

bool MainWindow::trainWithProcesses(const ProcessPlan& plan) {
  if (isRunActive() || !checkTrainable()) return false;
  // plexus-cli finds a relative dataset path next to the project file it is given, which is
  // in the run folder: it gets the path this window's runs would use.
  graph::Graph launched = document_->graph();
  launched.view.clear();
  if (const graph::DatasetLocation at = graph::locate_dataset(launched.dataset.path, projectDirectory().toStdString());
      at.found)
    launched.dataset.path = std::filesystem::absolute(at.path).lexically_normal().string();
  try {
    std::filesystem::create_directories(plan.runDir.toStdString());
    graph::save_project(plan.project.toStdString(), launched);
  } catch (const std::exception& e) {
    showError(tr("Cannot start the training processes"), qstr(e.what()));
    return false;
  }
  if (const QString why = processes_->start(plan); !why.isEmpty()) {
    QFile::remove(plan.project);
    QDir().rmdir(plan.runDir);  // only when nothing else is in it
    showError(tr("Cannot start the training processes"), why);
    return false;
  }
  const QString project_file =
      document_->filePath().isEmpty() ? QString() : QFileInfo(document_->filePath()).absoluteFilePath();
  follow(TrainingRequest{document_->graph(), projectDirectory(), plan.runDir, {}, {}, project_file}, {});
  updateRunActions();
  statusBar()->showMessage(tr("Training in %n process(es): the run goes to %1", nullptr, plan.processes)
                               .arg(QDir::toNativeSeparators(plan.runDir)),
                           8000);
  return true;
}

void MainWindow::stopRun() {
  if (training_->isRunning()) {
    training_->stop();
  } else if (processes_->isRunning()) {
    processes_->stop();
    statusBar()->showMessage(tr("Stopping the training processes…"), 8000);
  } else {
    follower_->stop();
  }
}

// The log says how the run ended when it got that far; otherwise this does (the follower reads
// what the processes wrote last first).
void MainWindow::processesEnded(int exit_code, bool crashed) {
  const bool failed = crashed || exit_code != 0;
  QString failure;
  if (!processes_->stopRequested()) {
    failure = failed ? tr("The training processes failed (mpirun %1).")
                           .arg(crashed ? tr("did not exit by itself") : tr("exited with status %1").arg(exit_code))
                     : tr("The training processes ended without ending the run's log.");
    if (const QString tail = processes_->outputTail(12); !tail.isEmpty())
      failure += QLatin1Char('\n') + tr("Their last lines:") + QLatin1Char('\n') + tail;
  }
  if (follower_->isFollowing())
    follower_->writerEnded(failure);
  else if (failed && !processes_->stopRequested())
    statusBar()->showMessage(tr("The training processes ended with status %1 after the run").arg(exit_code), 15000);
  updateRunActions();
}

QString MainWindow::projectDirectory() const {
  return document_->filePath().isEmpty() ? QString() : QFileInfo(document_->filePath()).absolutePath();
}

QString MainWindow::newRunDirectory() const {
  const QString project = document_->filePath().isEmpty() ? QString() : QFileInfo(document_->filePath()).absoluteFilePath();
  const QString unsaved = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/runs");
  return QString::fromStdString(session::new_run_folder(project.toStdString(), unsaved.toStdString()).string());
}

QString MainWindow::latestRunDirectory() const {
  const std::vector<std::filesystem::path> runs = session::list_runs(document_->filePath().toStdString());  // newest first
  return runs.empty() ? projectDirectory() : qstr(runs.front().string());
}

QFuture<QString> MainWindow::exportOnnx(const QString& checkpoint, const QString& out) {
  return exportModel(checkpoint, out, tr("Cannot export ONNX"),
                     [](const session::TrainedModel& model, const std::string& path, const std::string& name) {
                       const exporter::OnnxSummary s = exporter::export_onnx(model, path, {name});
                       return qstr(s.input + " -> " + s.output);
                     });
}

QFuture<QString> MainWindow::exportPytorch(const QString& checkpoint, const QString& out) {
  return exportModel(checkpoint, out, tr("Cannot export PyTorch code"),
                     [](const session::TrainedModel& model, const std::string& path, const std::string& name) {
                       const exporter::CodeSummary s = exporter::export_pytorch(model, path, {name});
                       return tr("class %1, %2 lines").arg(qstr(s.class_name)).arg(s.lines);
                     });
}

QFuture<QString> MainWindow::exportCpp(const QString& checkpoint, const QString& out) {
  return exportModel(checkpoint, out, tr("Cannot export C++ code"),
                     [](const session::TrainedModel& model, const std::string& path, const std::string& name) {
                       const exporter::CodeSummary s = exporter::export_cpp(model, path, {name});
                       return tr("class %1, %2 lines").arg(qstr(s.class_name)).arg(s.lines);
                     });
}

QString MainWindow::nextToProject(const QString& suffix) const {
  const QFileInfo project(document_->filePath());
  return project.fileName().isEmpty() ? QString() : project.absolutePath() + "/" + project.completeBaseName() + suffix;
}

QFuture<QString> MainWindow::exportModel(const QString& checkpoint, const QString& out, const QString& failure,
                                         const ModelWriter& write) {
  statusBar()->showMessage(tr("Exporting %1…").arg(QDir::toNativeSeparators(out)));
  // Loading the weights and writing the model take a while for a large model: off the UI thread.
  struct Result {
    QString error, interface;
  };
  QFuture<Result> done = QtConcurrent::run([graph = document_->graph(), dir = projectDirectory(),
                                            name = QFileInfo(document_->filePath()).completeBaseName(), checkpoint,
                                            out, write]() -> Result {
    try {
      const session::TrainedModel model = session::load_trained_model(graph, checkpoint.toStdString(), {dir.toStdString()});
      return {{}, write(model, out.toStdString(), name.toStdString())};
    } catch (const std::exception& e) {
      return {qstr(e.what()), {}};
    }
  });
  return done.then(this, [this, out, failure](const Result& r) {
    statusBar()->clearMessage();
    if (!r.error.isEmpty())
      showError(failure, r.error);
    else
      statusBar()->showMessage(tr("Exported %1 (%2)").arg(QDir::toNativeSeparators(out), r.interface), 10000);
    return r.error;
  });
}

void MainWindow::showEditor() {
  leaveStartPage();
  tabs_->setCurrentWidget(view_);
}

// The dashboard and the Try It page need the room the editing panels take; they come back with
// the editor. Two runs compared are not the open project's: its settings make room for them too.
void MainWindow::tabChanged() {
  const bool editing = tabs_->currentWidget() == view_;
  // A comparison and the experiments want the window's width: the panels make way.
  const bool comparing = (tabs_->currentWidget() == dashboard_ && dashboard_->isComparing()) ||
                         tabs_->currentWidget() == experiments_;
  for (const char* name :
       {"paletteDock", "problemsDock", "nodeStatsDock", "propertiesDock", "trainingDock", "featureMapsDock"}) {
    auto* dock = findChild<QDockWidget*>(QLatin1String(name));
    // The node statistics and feature maps are about the canvas's selection: editing panels too.
    const bool editing_panel = QLatin1String(name) == "paletteDock" || QLatin1String(name) == "problemsDock" ||
                               QLatin1String(name) == "nodeStatsDock" || QLatin1String(name) == "featureMapsDock";
    const bool hide = !editing && (comparing || editing_panel);
    if (hide && dock->isVisible()) {
      hidden_for_pages_.insert(dock);
      dock->hide();
    } else if (!hide && hidden_for_pages_.remove(dock)) {
      dock->show();
    }
  }
  if (tabs_->currentWidget() != dashboard_) return;
  findChild<QDockWidget*>(QStringLiteral("trainingDock"))->raise();
  // The samples are worth seeing before any run; they are read in the background.
  dashboard_->previewDataset(document_->graph(),
                             projectDirectory());
}
void MainWindow::showDashboard() {
  leaveStartPage();
  tabs_->setCurrentWidget(dashboard_);
}
void MainWindow::showExperiments() {
  leaveStartPage();
  tabs_->setCurrentWidget(experiments_);
}
void MainWindow::showTryIt() {
  leaveStartPage();
  tabs_->setCurrentWidget(try_it_);
}
void MainWindow::showProjector() {
  leaveStartPage();
  tabs_->setCurrentWidget(projector_);
}

// First-run proportions, once the window has its size (docks sized before that are squeezed to
// their minimum when the window first lays out): the palette as wide as its longest entry, the
// canvas gets the rest. A saved layout replaces these.
void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  if (!first_layout_pending_) return;
  first_layout_pending_ = false;
  auto* layers = findChild<QDockWidget*>(QStringLiteral("paletteDock"));
  auto* props = findChild<QDockWidget*>(QStringLiteral("propertiesDock"));
  resizeDocks({layers, props}, {palette_->sizeHint().width(), 300}, Qt::Horizontal);
  resizeDocks({findChild<QDockWidget*>(QStringLiteral("problemsDock"))}, {110}, Qt::Vertical);
}

// ---- window events -------------------------------------------------------------------------

void MainWindow::closeEvent(QCloseEvent* event) {
  if (processes_->isRunning()) {
    const auto answer = ask(tr("Training processes are running"),
                            tr("Stop the training processes and close? The window closes once they have stopped."),
                            QMessageBox::Yes | QMessageBox::Cancel);
    if (answer == QMessageBox::Yes) {
      connect(processes_, &ProcessRun::ended, this, &QWidget::close,
              Qt::ConnectionType(Qt::QueuedConnection | Qt::UniqueConnection));
      processes_->stop();
    }
    event->ignore();
    return;
  }
  if (training_->isRunning()) {
    const auto answer = ask(tr("Training is running"), tr("Stop the training and close?"),
                            QMessageBox::Yes | QMessageBox::Cancel);
    if (answer != QMessageBox::Yes) {
      event->ignore();
      return;
    }
    training_->stop();
    training_->waitForFinished(-1);  // within one batch: the worker checks between batches
  }
  if (!maybeSave()) {
    event->ignore();
    return;
  }
  showEditor();  // the layout to remember is the editor's
  QSettings settings;
  settings.setValue(QStringLiteral("geometry"), saveGeometry());
  settings.setValue(QStringLiteral("windowState"), saveState());
  autosaver_->discard();
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.size() == 1 && isProjectFile(urls.first())) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.size() != 1 || !isProjectFile(urls.first())) return;
  event->acceptProposedAction();
  openFile(urls.first().toLocalFile());
}

}  // namespace plexus::app
