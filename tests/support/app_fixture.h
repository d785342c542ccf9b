#pragma once
// What the app's suites (tests/app/) share: the app kept apart from the user's settings,
// autosaves and runs (isolate_app, in initTestCase, before any window), the main window answering
// its dialogs without a person (TestWindow, or a Window of the suite's own deriving from it), and
// the example project a user would have, on data of the suite's own (save_example_mlp).
#include <QAction>
#include <QMessageBox>
#include <QSettings>
#include <QSize>
#include <QStandardPaths>
#include <QString>
#include <QStringList>
#include <QTest>
#include <QToolBar>

#include <cstdint>
#include <string>

#include "graph/project.h"
#include "main_window.h"
#include "training_controller.h"

namespace plexus::testing {

// Settings of the suite's own (QStandardPaths' test mode, cleared), autosaves in `recovery`, and
// runs next to their project file (no PLEXUS_RUNS_DIR from the environment).
inline void isolate_app(const QString& recovery) {
  QStandardPaths::setTestModeEnabled(true);
  QSettings().clear();
  qunsetenv("PLEXUS_RUNS_DIR");
  qputenv("PLEXUS_RECOVERY_DIR", recovery.toUtf8());
}

// The main window with its questions answered Discard, the errors it shows recorded in `errors`
// (and printed), a size that fits its panels, and no run left behind when it closes, whatever a
// failed check skipped.
struct TestWindow : app::MainWindow {
  QStringList errors;

  explicit TestWindow(QSize size = {1400, 900}) {
    ask = [](const QString&, const QString&, QMessageBox::StandardButtons) { return QMessageBox::Discard; };
    showError = [this](const QString& title, const QString& text) {
      qWarning("error shown: %s: %s", qPrintable(title), qPrintable(text));
      errors << text;
    };
    resize(size);
  }
  ~TestWindow() override {
    training()->stop();
    training()->waitForFinished(-1);
  }

  // Clicks the toolbar button of `action`, as a user does.
  void click(QAction* action) {
    for (QToolBar* bar : findChildren<QToolBar*>())
      if (QWidget* button = bar->widgetForAction(action)) {
        QTest::mouseClick(button, Qt::LeftButton);
        return;
      }
    QFAIL("no toolbar button for the action");
  }
};

// The shipped MNIST MLP example (examples/mnist_mlp.plexus) on the dataset folder `data`, a
// path relative to the project (next to it), for `epochs` epochs in batches of `batch_size`,
// saved as `file`. Returns `file`.
inline QString save_example_mlp(const QString& file, const std::string& data, int64_t epochs, int64_t batch_size) {
  graph::Graph g = graph::load_project(PLEXUS_SOURCE_DIR "/examples/mnist_mlp.plexus");
  g.dataset.path = data;
  g.training.epochs = epochs;
  g.training.batch_size = batch_size;
  graph::save_project(file.toStdString(), g);
  return file;
}

}  // namespace plexus::testing
