#pragma once
// The Projector page: the embedding projector. A node's outputs over the validation split (a
// seeded sample of it) mapped to 2-D with PCA or t-SNE (explain/features.h, projection.h) and
// shown as a scatter plot coloured by true class, the misclassified marked; hovering a point
// shows the example, clicking it opens it in Try It. The model is Try It's (live weights while a
// run trains, or a loaded checkpoint): Compute takes a copy of it through the Predictor (the job
// that owns the model) and maps on a thread of its own, with progress and Cancel, so the window
// stays responsive.
#include <QFutureWatcher>
#include <QPointer>
#include <QWidget>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "explain/features.h"
#include "projector/projector_plot.h"
#include "session/trained_model.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace plexus::widgets {
class GraphDocument;
}

namespace plexus::app {

class TryItPage;

class ProjectorPage : public QWidget {
  Q_OBJECT

 public:
  ProjectorPage(TryItPage* try_it, const widgets::GraphDocument* document, QWidget* parent = nullptr);
  ~ProjectorPage() override;  // cancels and waits for a computation in flight

  // Starts mapping `node` (empty: the one chosen) with the chosen method and count; false, with
  // the reason shown, when there is no model yet.
  bool compute();
  void cancel();
  bool busy() const;

  widgets::ProjectorPlot* plot() const { return plot_; }
  QComboBox* nodeChooser() const { return node_; }
  QComboBox* methodChooser() const { return method_; }
  QSpinBox* examplesBox() const { return examples_; }
  QString statusText() const;
  // The examples the plot shows, row by row: index in the split, true and predicted class.
  const explain::FeatureSet& features() const { return result_.features; }

 signals:
  void computed();              // the plot shows a new map
  void openInTryIt();           // a point was clicked: Try It shows its example
  void failed(const QString& message);

 private:
  struct Result {
    explain::FeatureSet features;
    std::vector<widgets::ProjectorPlot::Point> points;
    QString error;  // empty: done
    double seconds = 0;
  };
  void refreshNodes();
  void start(std::shared_ptr<const session::TrainedModel> model);
  void finish();
  void setBusy(bool busy);
  QImage preview(int row) const;
  void openExample(int row);

  TryItPage* try_it_;
  const widgets::GraphDocument* document_;
  QComboBox* node_;
  QComboBox* method_;
  QSpinBox* examples_;
  QPushButton* compute_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QLabel* status_;
  widgets::ProjectorPlot* plot_;
  QFutureWatcher<Result> watcher_;
  std::shared_ptr<std::atomic<bool>> cancelled_;
  Result result_;
  QString project_dir_;
  bool waiting_for_model_ = false;
};

}  // namespace plexus::app
