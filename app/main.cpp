// plexus: the Plexus desktop application. Opens the project given on the command line (or an
// empty one), offers back work a crash left unsaved, and can render itself to a PNG for docs.
#include <QApplication>
#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QSettings>
#include <QTimer>

#include <cstdio>

#include "icons.h"
#include "main_window.h"
#include "node_scene.h"
#include "node_view.h"
#include "theme.h"

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
  screenshot_option.setFlags(QCommandLineOption::HiddenFromHelp);
  QCommandLineOption size_option(QStringLiteral("size"), QStringLiteral("Window size WxH."), QStringLiteral("size"));
  size_option.setFlags(QCommandLineOption::HiddenFromHelp);
  QCommandLineOption select_option(QStringLiteral("select"), QStringLiteral("Select the node <id>."),
                                   QStringLiteral("id"));
  select_option.setFlags(QCommandLineOption::HiddenFromHelp);
  parser.addOptions({screenshot_option, size_option, select_option});
  parser.process(app);

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
  if (!screenshot) QTimer::singleShot(0, &window, [&window] { window.offerRecovery(); });

  if (screenshot) {
    const QString file = parser.value(screenshot_option);
    const QString select = parser.value(select_option);
    QTimer::singleShot(100, &window, [&window, file, select] {
      window.view()->fitAll();
      if (!select.isEmpty()) window.scene()->selectNodes({select});
      QTimer::singleShot(100, &window, [&window, file] {
        const bool saved = window.grab().save(file, "PNG");
        if (!saved) std::fprintf(stderr, "plexus: could not write screenshot %s\n", qPrintable(file));
        window.document()->reset({}, QString());  // nothing to ask about on exit
        QCoreApplication::exit(saved ? 0 : 1);
      });
    });
  }
  return QApplication::exec();
}
