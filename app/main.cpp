// plexus: the Plexus desktop application. Opens the project given on the command line (or an
// empty one) and offers back work a crash left unsaved. For docs and checks it can also start
// training by itself or follow a run folder that another process writes, render itself to a PNG
// (of the editor, of the editor with live node statistics at a given step, of the dashboard after
// a given epoch, of the dashboard with the project's past runs, of two runs compared, of its
// dataset preview showing the augmented training images, of the Train with N Processes
// dialog, or of a node's feature maps for a drawn digit) and report how a run ended.
#include <QApplication>
#include <QCheckBox>
#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QLineEdit>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <utility>

#include "common/icons.h"
#include "common/theme.h"
#include "dashboard.h"
#include "projector_page.h"
#include "dashboard/training_plots.h"
#include "dataset/dataset_preview.h"
#include "editor/node_scene.h"
#include "editor/node_view.h"
#include "experiment/experiment_view.h"
#include "experiment/parallel_coordinates.h"
#include "experiment/trial_table.h"
#include "experiments_page.h"
#include "featuremaps/feature_map_view.h"
#include "feature_maps.h"
#include "explain_shot.h"
#include "lr_finder_dialog.h"
#include "main_window.h"
#include "run_follower.h"
#include "train_processes_dialog.h"
#include "training_controller.h"
#include "tryit/digit_canvas.h"
#include "tryit/text_prompt.h"
#include "tryit/tryit_panel.h"
#include "predictor.h"
#include "tryit_page.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("Plexus"));
  QApplication::setApplicationName(QStringLiteral("Plexus"));
  QApplication::setApplicationVersion(QStringLiteral(PLEXUS_VERSION));
  QApplication::setWindowIcon(plexus::widgets::appIcon());
  // Names the installed desktop entry (plexus.desktop), whose icon Wayland desktops show for it.
  QGuiApplication::setDesktopFileName(QStringLiteral("plexus"));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Design and train neural networks."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("project"), QStringLiteral("A .plexus project file to open."),
                               QStringLiteral("[project]"));
  const QCommandLineOption theme_option(QStringLiteral("theme"), QStringLiteral("Colour theme: system, light or dark."),
                                        QStringLiteral("theme"));
  parser.addOption(theme_option);
  // For docs and tests: render the main window to <file> once it is shown, then quit.
  QCommandLineOption screenshot_option(QStringLiteral("screenshot"),
                                       QStringLiteral("Save a PNG of the main window to <file> and quit."),
                                       QStringLiteral("file"));
  QCommandLineOption size_option(QStringLiteral("size"), QStringLiteral("Window size WxH."), QStringLiteral("size"));
  QCommandLineOption select_option(QStringLiteral("select"), QStringLiteral("Select the node <id>."),
                                   QStringLiteral("id"));
  QCommandLineOption train_option(QStringLiteral("train"), QStringLiteral("Start training once the project is open."));
  QCommandLineOption epoch_option(QStringLiteral("at-epoch"),
                                  QStringLiteral("With --train and --screenshot: take it after epoch <n>, then stop (without "
                                                 "it: once the run has ended)."),
                                  QStringLiteral("n"));
  QCommandLineOption step_option(
      QStringLiteral("at-step"),
      QStringLiteral("With --train and --screenshot: take it of the editor once node statistics of step <n> or later "
                     "have come (with --select, that node's in the Node Statistics panel), then stop."),
      QStringLiteral("n"));
  QCommandLineOption done_option(QStringLiteral("until-done"),
                                 QStringLiteral("With --train: print how the run ended and quit (status 0 when it completed)."));
  QCommandLineOption dashboard_option(
      QStringLiteral("dashboard"),
      QStringLiteral("Show the training dashboard; with --screenshot, take it once the project's past runs are read."));
  QCommandLineOption augmented_option(
      QStringLiteral("preview-augmented"),
      QStringLiteral("Show the dashboard's dataset preview on its Training tab with Show augmented on; with "
                     "--screenshot, take a PNG of the preview once that page is shown."));
  QCommandLineOption try_option(QStringLiteral("try-it"), QStringLiteral("Show the Try It page (with --train: once it runs)."));
  QCommandLineOption prompt_option(QStringLiteral("prompt"),
                                   QStringLiteral("With --try-it, --train and --screenshot on a text project: the text the "
                                                  "model continues (default: it begins names itself); on a labelled-texts "
                                                  "project: the text typed for the model to classify."),
                                   QStringLiteral("text"));
  QCommandLineOption compare_option(
      QStringLiteral("compare"),
      QStringLiteral("Show the dashboard comparing run folder <a> with run folder B, the last argument "
                     "(--compare A B; with --screenshot: take it once both are read)."),
      QStringLiteral("a"));
  QCommandLineOption follow_option(
      QStringLiteral("follow"),
      QStringLiteral("Follow the run being written into run folder <dir> on the dashboard (with --screenshot: take it "
                     "after epoch --at-epoch, else once the run has ended)."),
      QStringLiteral("dir"));
  QCommandLineOption processes_option(
      QStringLiteral("processes-dialog"),
      QStringLiteral("Open Run > Train with N Processes on the project; with --screenshot, take a PNG of the dialog."));
  QCommandLineOption lr_finder_option(
      QStringLiteral("lr-finder"),
      QStringLiteral("Open Run > Find Learning Rate on the project and start it; with --screenshot, take a PNG of the "
                     "dialog once it has ended."));
  QCommandLineOption draw_option(QStringLiteral("draw"),
                                 QStringLiteral("Draw on the Try It canvas: strokes separated by ';', each a list of "
                                                "points 'x,y' separated by spaces, in 0..1 of the sheet."),
                                 QStringLiteral("strokes"));
  QCommandLineOption dock_option(QStringLiteral("dock"),
                                 QStringLiteral("Bring the dock <name> to the front of its tab group: paletteDock, "
                                                "propertiesDock, trainingDock, nodeStatsDock, featureMapsDock or problemsDock."),
                                 QStringLiteral("name"));
  QCommandLineOption sweep_option(
      QStringLiteral("sweep"),
      QStringLiteral("Show the sweep in folder <dir> on the Experiments page, its three best trials selected (with "
                     "--screenshot: take it once they are drawn)."),
      QStringLiteral("dir"));
  QCommandLineOption projector_option(
      QStringLiteral("projector"),
      QStringLiteral("Load checkpoint <file> in Try It and map it on the Projector page (t-SNE of 5,000 validation "
                     "examples); with --screenshot: take it once drawn, a point hovered."),
      QStringLiteral("file"));
  QCommandLineOption checkpoint_option(
      QStringLiteral("checkpoint"),
      QStringLiteral("Load checkpoint <file> of the project in Try It; with --select and --screenshot: take it of the "
                     "editor once the Feature Maps panel shows that node for the --draw input (with --try-it and "
                     "--explain: of Try It's heat map or attention maps)."),
      QStringLiteral("file"));
  QCommandLineOption channel_option(
      QStringLiteral("channel"),
      QStringLiteral("With --checkpoint: click channel <n> in the Feature Maps panel, and take the screenshot once its "
                     "gallery of top examples is shown."),
      QStringLiteral("n"));
  for (QCommandLineOption* o : {&screenshot_option, &size_option, &select_option, &train_option, &epoch_option,
                                &step_option, &done_option, &dashboard_option, &augmented_option, &try_option, &draw_option,
                                &prompt_option, &compare_option, &follow_option, &processes_option, &lr_finder_option,
                                &dock_option, &sweep_option, &projector_option, &checkpoint_option,
                                &channel_option}) {
    o->setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(*o);
  }
  // Try It's explanations, for the docs' pictures: a picture to try (with --checkpoint), the heat map's method.
  const QCommandLineOption image_option(QStringLiteral("image"),
                                        QStringLiteral("With --try-it: open image <file> in Try It."), QStringLiteral("file"));
  const QCommandLineOption explain_option(
      QStringLiteral("explain"),
      QStringLiteral("With --try-it, --checkpoint and --screenshot: the heat map's method (plexus-cli explain's --method "
                     "names; on a text project the prompt's attention maps); take it once it is shown."),
      QStringLiteral("method"));
  for (const QCommandLineOption* o : {&image_option, &explain_option}) {
    QCommandLineOption hidden = *o;
    hidden.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(hidden);
  }
  parser.process(app);

  using plexus::app::TrainingController;
  using plexus::widgets::ThemeManager;
  const QString theme_text =
      parser.isSet(theme_option) ? parser.value(theme_option) : QSettings().value(QStringLiteral("theme")).toString();
  const auto mode = plexus::widgets::themeModeFromString(theme_text.isEmpty() ? QStringLiteral("system") : theme_text);
  if (!mode) {
    std::fprintf(stderr, "plexus: unknown theme '%s' (use system, light or dark)\n", qPrintable(theme_text));
    return 2;
  }
  ThemeManager::instance().setMode(*mode);

  const bool screenshot = parser.isSet(screenshot_option);
  plexus::app::MainWindow window;
  if (screenshot)  // no one is there to close a message box
    window.showError = [](const QString& title, const QString& text) {
      std::fprintf(stderr, "plexus: %s: %s\n", qPrintable(title), qPrintable(text));
    };
  if (screenshot) {  // a fixed, settings-independent layout
    const QStringList wh = parser.value(size_option).split(QLatin1Char('x'));
    window.resize(wh.size() == 2 ? wh[0].toInt() : 1440, wh.size() == 2 ? wh[1].toInt() : 900);
  } else if (!window.hasSavedGeometry()) {
    // First run: 80 % of the screen, at least 1280x800 (the layout's design size) where the
    // screen has room for it, so a large screen gets room for the canvas and a small one a window
    // that fits.
    QSize first(1280, 800);
    if (const QScreen* screen = window.screen()) {
      const QSize room = screen->availableGeometry().size();
      first = first.expandedTo(room * 0.8).boundedTo(room);
    }
    window.resize(first);
  }
  window.show();

  QStringList args = parser.positionalArguments();
  const bool compare = parser.isSet(compare_option);
  if (compare && args.isEmpty()) {
    std::fprintf(stderr, "plexus: --compare needs two run folders\n");
    return 2;
  }
  const QString compare_with = compare ? args.takeLast() : QString();  // --compare A B: B lands among the positionals
  if (!args.isEmpty() && !window.openFile(args.first()) && screenshot) return 1;
  // Without a project to open, a window shows the start page: a newcomer's first sight.
  const bool automated = compare || parser.isSet(train_option) || parser.isSet(follow_option) ||
                         parser.isSet(dashboard_option) || parser.isSet(augmented_option) || parser.isSet(try_option) ||
                         parser.isSet(processes_option) || parser.isSet(lr_finder_option) ||
                         parser.isSet(sweep_option) || parser.isSet(projector_option);
  if (args.isEmpty() && !automated) window.showStartPage();
  if (parser.isSet(dock_option)) {
    auto* dock = window.findChild<QDockWidget*>(parser.value(dock_option));
    if (!dock) {
      std::fprintf(stderr, "plexus: no dock '%s'\n", qPrintable(parser.value(dock_option)));
      return 2;
    }
    dock->raise();
  }
  const bool dashboard = parser.isSet(dashboard_option), augmented = parser.isSet(augmented_option);
  plexus::widgets::DatasetPreview* preview = window.dashboard()->preview();
  // Once the splits are read (showing the dashboard starts that). Connected first, so a screenshot's
  // handler of the same signal finds the augmented page asked for.
  if (augmented) {
    QObject::connect(
        window.dashboard(), &plexus::app::Dashboard::previewLoaded, &window,
        [preview] {
          preview->showSplit(0);
          preview->augmentedBox()->setChecked(true);
        },
        Qt::SingleShotConnection);
  }
  if (dashboard || augmented) window.showDashboard();
  const bool train = parser.isSet(train_option), try_it = parser.isSet(try_option);
  for (const QString& stroke : parser.value(draw_option).split(QLatin1Char(';'), Qt::SkipEmptyParts)) {
    QPolygonF points;
    for (const QString& point : stroke.split(QLatin1Char(' '), Qt::SkipEmptyParts))
      points << QPointF(point.section(QLatin1Char(','), 0, 0).toDouble(), point.section(QLatin1Char(','), 1, 1).toDouble());
    window.tryIt()->panel()->canvas()->addStroke(points);
  }
  if (try_it && !train) window.showTryIt();
  if (parser.isSet(checkpoint_option)) window.tryIt()->loadCheckpoint(parser.value(checkpoint_option));
  if (try_it && parser.isSet(image_option) && !window.tryIt()->panel()->openImage(parser.value(image_option)) && screenshot)
    return 1;
  if (parser.isSet(prompt_option) && window.tryIt()->panel()->textInput())  // classified once a model comes
    window.tryIt()->panel()->textField()->setText(parser.value(prompt_option));
  if (parser.isSet(processes_option))
    QTimer::singleShot(0, &window, [&window] { window.trainProcessesAction()->trigger(); });
  if (parser.isSet(lr_finder_option))
    QTimer::singleShot(0, &window, [&window] {
      if (plexus::app::LrFinderDialog* dialog = window.findLearningRate()) dialog->find();
    });
  if (compare) {
    window.showDashboard();
    window.dashboard()->compareRunFolders(parser.value(compare_option), compare_with);
  }
  const bool sweep = parser.isSet(sweep_option);
  if (sweep) {
    QString why;
    if (!window.experiments()->open(parser.value(sweep_option), &why)) {
      std::fprintf(stderr, "plexus: %s\n", qPrintable(why));
      return 1;
    }
    window.showExperiments();
    plexus::widgets::ExperimentView* view = window.experiments()->view();
    std::vector<plexus::widgets::Trial> ranked = view->model()->trials();
    const plexus::widgets::TrialMetric metric = view->parallel()->trialMetric();
    std::erase_if(ranked, [metric](const plexus::widgets::Trial& t) { return !metricOf(t, metric); });
    std::sort(ranked.begin(), ranked.end(), [metric](const plexus::widgets::Trial& a, const plexus::widgets::Trial& b) {
      return better(metric, *metricOf(a, metric), *metricOf(b, metric));
    });
    QList<int> shown;
    for (size_t i = 0; i < ranked.size() && i < 3; ++i) shown << ranked[i].index;
    view->selectTrials(shown);
  }
  const bool follow = parser.isSet(follow_option);
  if (follow) {  // once the screenshot's handlers below are connected: the first read reports at once
    QTimer::singleShot(0, &window, [&window, folder = parser.value(follow_option), screenshot] {
      if (!window.followRunFolder(folder) && screenshot) QCoreApplication::exit(1);
    });
  }
  if (!screenshot && !train && !follow) QTimer::singleShot(0, &window, [&window] { window.offerRecovery(); });

  // Leaves without questions: the project is not to be saved by an automated run.
  const auto quit = [&window](int status) {
    window.training()->stop();
    window.training()->waitForFinished(-1);
    window.document()->reset({}, QString());
    QCoreApplication::exit(status);
  };
  const auto shootWidget = [quit](QWidget* widget, const QString& file) {
    const bool saved = widget->grab().save(file, "PNG");
    if (!saved) std::fprintf(stderr, "plexus: could not write screenshot %s\n", qPrintable(file));
    quit(saved ? 0 : 1);
  };
  const auto shoot = [&window, shootWidget](const QString& file) { shootWidget(&window, file); };
  if (train) {
    QTimer::singleShot(0, &window, [&window, quit, try_it] {
      if (!window.startTraining()) {
        std::fprintf(stderr, "plexus: cannot train: %s\n", qPrintable(window.statusBar()->currentMessage()));
        quit(1);
      }
      if (try_it) window.showTryIt();
    });
  }
  if (train && parser.isSet(done_option)) {
    auto last = std::make_shared<plexus::train::EpochEnd>();
    QObject::connect(window.training(), &TrainingController::epochEnded, &window,
                     [last](const plexus::train::EpochEnd& e) { *last = e; });
    QObject::connect(window.training(), &TrainingController::finished, &window,
                     [&window, last, quit](const plexus::train::Finished& f) {
                       std::printf("plexus: %s after %d epochs, validation accuracy %.2f%%\n",
                                   f.cancelled ? "stopped" : "completed", f.epochs_completed, 100 * last->eval_accuracy);
                       // What the dashboard shows of the test split, word for word.
                       const QString test = window.dashboard()->testText();
                       if (!test.isEmpty()) std::printf("plexus: dashboard: %s\n", qPrintable(test));
                       quit(f.cancelled ? 1 : 0);
                     });
    QObject::connect(window.training(), &TrainingController::failed, &window, [quit](const QString& message) {
      std::printf("plexus: %s\n", qPrintable(message));
      quit(1);
    });
  }

  if (parser.isSet(projector_option)) {  // once Try It has the checkpoint's model, the map
    plexus::app::ProjectorPage* projector = window.projector();
    window.tryIt()->loadCheckpoint(parser.value(projector_option));
    window.showProjector();
    QObject::connect(
        window.tryIt()->predictor(), &plexus::app::Predictor::modelChanged, projector,
        [projector] { QTimer::singleShot(0, projector, [projector] { projector->compute(); }); },
        Qt::SingleShotConnection);
    QObject::connect(projector, &plexus::app::ProjectorPage::failed, &window, [quit, screenshot](const QString& message) {
      std::fprintf(stderr, "plexus: %s\n", qPrintable(message));
      if (screenshot) quit(1);
    });
  }
  const bool explained = screenshot && try_it && parser.isSet(checkpoint_option) && parser.isSet(explain_option);
  if (explained)
    plexus::app::whenExplanationsShown(
        window, parser.value(explain_option) == QLatin1String("attention") ? QString() : parser.value(explain_option),
        parser.value(prompt_option), [shoot, file = parser.value(screenshot_option)] { shoot(file); },
        [quit](const QString& why) {
          std::fprintf(stderr, "plexus: %s\n", qPrintable(why));
          quit(1);
        });
  if (screenshot && !explained) {
    const QString file = parser.value(screenshot_option);
    if (train && parser.isSet(step_option)) {  // the editor with live node statistics, mid-training
      const int64_t step = parser.value(step_option).toLongLong();
      const QString select = parser.value(select_option);
      auto taken = std::make_shared<bool>(false);
      QObject::connect(window.training(), &TrainingController::nodeStats, &window,
                       [&window, step, select, file, shoot, taken](const plexus::train::NodeStats& s) {
                         if (*taken || s.step < step) return;
                         *taken = true;
                         window.training()->pause();  // the picture shows about this sample
                         window.showEditor();
                         window.view()->showGraph();
                         if (!select.isEmpty()) {
                           window.view()->setZoom(0.8);  // close enough to read the strips
                           window.view()->centerOnNode(select);  // selects it too
                           window.findChild<QDockWidget*>(QStringLiteral("nodeStatsDock"))->raise();
                         }
                         QTimer::singleShot(400, &window, [file, shoot] { shoot(file); });
                       });
      const auto missed = [quit, taken](const QString& why) {
        if (*taken) return;
        std::fprintf(stderr, "plexus: no node statistics of that step: %s\n", qPrintable(why));
        quit(1);
      };
      QObject::connect(window.training(), &TrainingController::failed, &window, missed);
      QObject::connect(window.training(), &TrainingController::finished, &window,
                       [missed] { missed(QStringLiteral("the run ended before it")); });
    } else if (train && parser.isSet(epoch_option)) {  // the dashboard or the Try It page, mid-training
      const int epoch = parser.value(epoch_option).toInt();
      const QString prompt = parser.value(prompt_option);
      QObject::connect(window.training(), &TrainingController::epochEnded, &window,
                       [&window, epoch, file, shoot, try_it, prompt](const plexus::train::EpochEnd& e) {
                         if (e.epoch != epoch) return;
                         if (!try_it) return QTimer::singleShot(400, &window, [file, shoot] { shoot(file); });
                         plexus::app::TryItPage* page = window.tryIt();
                         if (page->textPrompt()->isVisibleTo(page)) {
                           // A text project's page: once live weights have come, the prompt is
                           // typed and Generate pressed, and the picture waits for the text.
                           QObject::connect(page, &plexus::app::TryItPage::textGenerated, &window,
                                            [file, shoot] { shoot(file); }, Qt::SingleShotConnection);
                           auto* wait = new QTimer(&window);
                           QObject::connect(wait, &QTimer::timeout, &window, [page, prompt, wait] {
                             auto* generate = page->textPrompt()->findChild<QPushButton*>("textGenerate");
                             if (!generate || !generate->isEnabled()) return;
                             wait->stop();
                             page->textPrompt()->findChild<QLineEdit*>("textPrompt")->setText(prompt);
                             generate->click();
                           });
                           return wait->start(100);
                         }
                         // Once the panel shows what the weights of this epoch (or later) make of its input.
                         QObject::connect(window.tryIt(), &plexus::app::TryItPage::predictionShown, &window,
                                          [file, shoot] { shoot(file); }, Qt::SingleShotConnection);
                       });
      QObject::connect(window.training(), &TrainingController::failed, &window, [quit](const QString& message) {
        std::fprintf(stderr, "plexus: %s\n", qPrintable(message));
        quit(1);
      });
    } else if (train) {  // the dashboard once the run has ended, with the final model's test report
      QObject::connect(window.training(), &TrainingController::finished, &window, [&window, file, shoot] {
        window.dashboard()->plots()->fit();
        QTimer::singleShot(400, &window, [file, shoot] { shoot(file); });
      });
      QObject::connect(window.training(), &TrainingController::failed, &window, [quit](const QString& message) {
        std::fprintf(stderr, "plexus: %s\n", qPrintable(message));
        quit(1);
      });
    } else if (follow) {  // after the followed run's epoch --at-epoch, else once it has ended
      const int epoch = parser.isSet(epoch_option) ? parser.value(epoch_option).toInt() : 0;
      auto taken = std::make_shared<bool>(false);
      const auto shootOnce = [&window, file, shoot, taken] {
        if (std::exchange(*taken, true)) return;
        window.dashboard()->plots()->fit();
        QTimer::singleShot(400, &window, [file, shoot] { shoot(file); });
      };
      plexus::app::RunFollower* follower = window.follower();
      QObject::connect(follower, &plexus::app::RunFollower::epochEnded, &window,
                       [epoch, shootOnce](const plexus::train::EpochEnd& e) {
                         if (e.epoch == epoch) shootOnce();
                       });
      QObject::connect(follower, &plexus::app::RunFollower::stateChanged, &window, [follower, shootOnce] {
        if (!follower->isFollowing()) shootOnce();
      });
    } else if (parser.isSet(processes_option)) {  // the dialog alone, once it is drawn
      QTimer::singleShot(400, &window, [&window, file, shootWidget] {
        auto* dialog = window.findChild<plexus::app::TrainProcessesDialog*>();
        if (!dialog) {
          std::fprintf(stderr, "plexus: no dialog: %s\n", qPrintable(window.statusBar()->currentMessage()));
          return QCoreApplication::exit(1);
        }
        shootWidget(dialog, file);
      });
    } else if (parser.isSet(lr_finder_option)) {  // the dialog alone, once the finder has ended and it is drawn
      auto* poll = new QTimer(&window);
      QObject::connect(poll, &QTimer::timeout, &window, [&window, poll, file, shootWidget] {
        auto* dialog = window.findChild<plexus::app::LrFinderDialog*>();
        if (!dialog) {
          std::fprintf(stderr, "plexus: no dialog: %s\n", qPrintable(window.statusBar()->currentMessage()));
          return QCoreApplication::exit(1);
        }
        if (dialog->isRunning()) return;
        poll->stop();
        QTimer::singleShot(400, &window, [dialog, file, shootWidget] { shootWidget(dialog, file); });
      });
      poll->start(200);
    } else if (parser.isSet(projector_option)) {  // once the map is drawn, its middlemost point hovered
      plexus::app::ProjectorPage* projector = window.projector();
      QObject::connect(projector, &plexus::app::ProjectorPage::computed, &window, [projector, file, shoot] {
        plexus::widgets::ProjectorPlot* plot = projector->plot();
        const QPointF aim(plot->width() * 0.4, plot->height() * 0.5);
        int nearest = -1;
        for (int i = 0; i < plot->count(); ++i)
          if (nearest < 0 || QLineF(plot->screenPosition(i), aim).length() <
                                 QLineF(plot->screenPosition(nearest), aim).length())
            nearest = i;
        plot->hover(nearest);
        QTimer::singleShot(400, projector, [file, shoot] { shoot(file); });
      });
    } else if (augmented) {  // once the augmented page is drawn, in the background too
      QObject::connect(
          window.dashboard(), &plexus::app::Dashboard::previewLoaded, &window,
          [&window, preview, file, shootWidget] {
            const auto shootPreview = [&window, preview, file, shootWidget] {
              QTimer::singleShot(400, &window, [preview, file, shootWidget] { shootWidget(preview, file); });
            };
            if (!preview->isLoading()) return shootPreview();
            QObject::connect(preview, &plexus::widgets::DatasetPreview::pageShown, &window, shootPreview,
                             Qt::SingleShotConnection);
          },
          Qt::SingleShotConnection);
    } else if (compare) {  // once both runs are read and drawn
      QObject::connect(window.dashboard(), &plexus::app::Dashboard::comparisonShown, &window,
                       [&window, file, shoot] { QTimer::singleShot(400, &window, [file, shoot] { shoot(file); }); });
      QObject::connect(window.dashboard(), &plexus::app::Dashboard::runOpenFailed, &window, [quit](const QString& message) {
        std::fprintf(stderr, "plexus: %s\n", qPrintable(message));
        quit(1);
      });
    } else if (parser.isSet(checkpoint_option)) {  // the feature maps of the selected node, and a channel's gallery
      const QString select = parser.value(select_option);
      const int channel = parser.isSet(channel_option) ? parser.value(channel_option).toInt() : -1;
      window.view()->showGraph();
      window.view()->centerOnNode(select);  // selects it too
      plexus::widgets::FeatureMapView* view = window.featureMapView();
      const auto shootSoon = [&window, file, shoot] { QTimer::singleShot(400, &window, [file, shoot] { shoot(file); }); };
      auto taken = std::make_shared<bool>(false);
      QObject::connect(window.featureMaps(), &plexus::app::FeatureMaps::outputShown, &window,
                       [&window, view, channel, shootSoon, taken] {
                         if (view->showsHint() || std::exchange(*taken, true)) return;
                         // Wide enough for the channels, the gallery and the filters together at 1280 x 800
                         // (once the window has laid out its first proportions).
                         window.resizeDocks({window.findChild<QDockWidget*>(QStringLiteral("featureMapsDock"))}, {600},
                                            Qt::Horizontal);
                         if (channel < 0) return shootSoon();
                         view->selectChannel(channel);
                       });
      QObject::connect(window.featureMaps(), &plexus::app::FeatureMaps::galleryShown, &window, shootSoon);
    } else if (sweep) {  // read at once; drawn once shown
      QTimer::singleShot(600, &window, [file, shoot] { shoot(file); });
    } else if (dashboard) {  // the past runs are read in the background
      QObject::connect(window.dashboard(), &plexus::app::Dashboard::runsLoaded, &window, [&window, file, shoot] {
        window.dashboard()->plots()->fit();
        QTimer::singleShot(400, &window, [file, shoot] { shoot(file); });
      });
    } else {
      const QString select = parser.value(select_option);
      QTimer::singleShot(100, &window, [&window, file, select, shoot] {
        window.view()->showGraph();
        if (!select.isEmpty()) window.scene()->selectNodes({select});
        QTimer::singleShot(100, &window, [file, shoot] { shoot(file); });
      });
    }
  }
  return QApplication::exec();
}
