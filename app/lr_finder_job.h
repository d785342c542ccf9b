#pragma once
// LrFinderJob: one run of the learning-rate finder (session/lr_finder.h) on a thread of its
// own, so the UI thread never waits for it. Each step arrives as pointAdded, then exactly one of
// finished (the result, cancelled or not) or failed (the error's text), all on the UI thread.
// cancel() only sets a flag the finder checks between steps. Destroying the job mid-run cancels
// it without waiting: the thread finishes its step, posts nothing more and deletes itself.
#include <QObject>
#include <QString>
#include <memory>

#include "graph/graph.h"
#include "session/lr_finder.h"

namespace plexus::app {

class LrFinderJob : public QObject {
  Q_OBJECT

 public:
  explicit LrFinderJob(QObject* parent = nullptr);
  ~LrFinderJob() override;

  // Starts the finder on `project` (its dataset looked up from `project_dir` first). False when
  // one is already running.
  bool start(const graph::Graph& project, const QString& project_dir, const session::LrFinderOptions& options);
  void cancel();
  bool isRunning() const { return running_; }

 signals:
  void pointAdded(const plexus::session::LrPoint& point, qint64 step, qint64 steps);
  void finished(const plexus::session::LrFinderResult& result);
  void failed(const QString& error);

 private:
  struct Shared;  // what the thread and the job share: the cancel flag, and whether the job lives
  std::shared_ptr<Shared> shared_;
  bool running_ = false;
};

}  // namespace plexus::app
