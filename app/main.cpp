// plexus: the Plexus desktop application. Opens the project given on the command line (or an
// empty one) and offers back work a crash left unsaved. For docs and checks it can also start
// training by itself, render itself to a PNG (of the editor, of the dashboard after a given
// epoch, or of the dashboard with the project's past runs) and report how a run ended.
#include <QApplication>
#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>

#include <cstdio>
#include <memory>

#include "common/icons.h"
#include "common/theme.h"
#include "dashboard.h"
#include "dashboard/training_plots.h"
#include "editor/node_scene.h"
#include "editor/node_view.h"
#include "main_window.h"
#include "training_controller.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("Plexus"));
  QApplication::setApplicationName(QStringLiteral("Plexus"));
  QApplication::setApplicationVersion(QStringLiteral(PLEXUS_VERSION));
  QApplication::setWindowIcon(plexus::widgets::appIcon());

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
                                  QStringLiteral("With --train and --screenshot: take it after epoch <n>, then stop."),
                                  QStringLiteral("n"));
  QCommandLineOption done_option(QStringLiteral("until-done"),
                                 QStringLiteral("With --train: print how the run ended and quit (status 0 when it completed)."));
  QCommandLineOption dashboard_option(
      QStringLiteral("dashboard"),
      QStringLiteral("Show the training dashboard; with --screenshot, take it once the project's past runs are read."));
  for (QCommandLineOption* o : {&screenshot_option, &size_option, &select_option, &train_option, &epoch_option, &done_option,
                                &dashboard_option}) {
    o->setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(*o);
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
  if (screenshot) {  // a fixed, settings-independent layout
    const QStringList wh = parser.value(size_option).split(QLatin1Char('x'));
    window.resize(wh.size() == 2 ? wh[0].toInt() : 1440, wh.size() == 2 ? wh[1].toInt() : 900);
  } else if (window.size().width() < 400) {
    window.resize(1280, 800);
  }
  window.show();

  const QStringList args = parser.positionalArguments();
  if (!args.isEmpty() && !window.openFile(args.first()) && screenshot) return 1;
  const bool dashboard = parser.isSet(dashboard_option);
  if (dashboard) window.showDashboard();
  const bool train = parser.isSet(train_option);
  if (!screenshot && !train) QTimer::singleShot(0, &window, [&window] { window.offerRecovery(); });

  // Leaves without questions: the project is not to be saved by an automated run.
  const auto quit = [&window](int status) {
    window.training()->stop();
    window.training()->waitForFinished(-1);
    window.document()->reset({}, QString());
    QCoreApplication::exit(status);
  };
  const auto shoot = [&window, quit](const QString& file) {
    const bool saved = window.grab().save(file, "PNG");
    if (!saved) std::fprintf(stderr, "plexus: could not write screenshot %s\n", qPrintable(file));
    quit(saved ? 0 : 1);
  };
  if (train) {
    QTimer::singleShot(0, &window, [&window, quit] {
      if (!window.startTraining()) {
        std::fprintf(stderr, "plexus: cannot train: %s\n", qPrintable(window.statusBar()->currentMessage()));
        quit(1);
      }
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

  if (screenshot) {
    const QString file = parser.value(screenshot_option);
    if (train && parser.isSet(epoch_option)) {  // the dashboard, mid-training
      const int epoch = parser.value(epoch_option).toInt();
      QObject::connect(window.training(), &TrainingController::epochEnded, &window,
                       [&window, epoch, file, shoot](const plexus::train::EpochEnd& e) {
                         if (e.epoch == epoch) QTimer::singleShot(400, &window, [file, shoot] { shoot(file); });
                       });
      QObject::connect(window.training(), &TrainingController::failed, &window, [quit](const QString& message) {
        std::fprintf(stderr, "plexus: %s\n", qPrintable(message));
        quit(1);
      });
    } else if (dashboard) {  // the past runs are read in the background
      QObject::connect(window.dashboard(), &plexus::app::Dashboard::runsLoaded, &window, [&window, file, shoot] {
        window.dashboard()->plots()->fit();
        QTimer::singleShot(400, &window, [file, shoot] { shoot(file); });
      });
    } else {
      const QString select = parser.value(select_option);
      QTimer::singleShot(100, &window, [&window, file, select, shoot] {
        window.view()->fitAll();
        if (!select.isEmpty()) window.scene()->selectNodes({select});
        QTimer::singleShot(100, &window, [file, shoot] { shoot(file); });
      });
    }
  }
  return QApplication::exec();
}
