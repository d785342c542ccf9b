#pragma once
// Run ▸ Find Learning Rate…: the learning-rate finder (session/lr_finder.h) on the open project,
// on a worker thread (LrFinderJob): the ramp's range and steps, Find, a progress bar and Cancel,
// the loss-against-lr plot (widgets::LrFinderPlot) growing as steps come, the suggestion or why
// there is none, and Use This Rate, which sets the project's lr as one undo step. It trains a
// fresh copy of the project's model, started from the weights Load Weights attached for the next
// run when there are some: the model, any run, the weights file and the rest of the project stay
// as they are. The main window opens it only while no run is active, window-modal.
#include <QDialog>
#include <optional>

#include "session/lr_finder.h"

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace plexus::widgets {
class GraphDocument;
class LrFinderPlot;
}  // namespace plexus::widgets

namespace plexus::app {

class LrFinderJob;

class LrFinderDialog : public QDialog {
  Q_OBJECT

 public:
  // `weights`: a checkpoint or weights file the copy starts from (LrFinderOptions::init_from); "" = none.
  LrFinderDialog(widgets::GraphDocument* document, const QString& project_dir, const QString& weights = QString(),
                 QWidget* parent = nullptr);

  void find();     // as the Find button
  void cancel();   // as Cancel while it runs
  void useRate();  // as Use This Rate

  bool isRunning() const;
  std::optional<double> suggestion() const { return suggestion_; }
  widgets::LrFinderPlot* plot() const { return plot_; }
  QPushButton* findButton() const { return find_; }
  QPushButton* useButton() const { return use_; }
  QLabel* status() const { return status_; }

 private:
  void ended(const QString& message);
  void setRunning(bool running);

  widgets::GraphDocument* document_;
  QString project_dir_;
  QString weights_;
  LrFinderJob* job_;
  QLineEdit* start_;
  QLineEdit* end_;
  QSpinBox* steps_;
  widgets::LrFinderPlot* plot_;
  QProgressBar* progress_;
  QLabel* status_;
  QPushButton* find_;
  QPushButton* cancel_;
  QPushButton* use_;
  std::optional<double> suggestion_;
};

}  // namespace plexus::app
