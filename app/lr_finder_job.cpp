#include "lr_finder_job.h"

#include <QThread>
#include <atomic>
#include <mutex>

namespace plexus::app {

struct LrFinderJob::Shared {
  std::atomic<bool> cancel{false};
  std::mutex mutex;
  LrFinderJob* job = nullptr;  // null once the job is gone: nothing more is posted

  // Calls f(job) on the job's (UI) thread, if the job still lives. Posting under the mutex keeps
  // the job from going away between the check and the post; a posted call dies with its receiver.
  template <class F>
  void post(F f) {
    std::lock_guard lock(mutex);
    if (job)
      QMetaObject::invokeMethod(
          job, [to = job, f = std::move(f)] { f(to); }, Qt::QueuedConnection);
  }
};

LrFinderJob::LrFinderJob(QObject* parent) : QObject(parent) {
  qRegisterMetaType<session::LrPoint>();
  qRegisterMetaType<session::LrFinderResult>();
}

LrFinderJob::~LrFinderJob() {
  if (!shared_) return;
  shared_->cancel = true;
  std::lock_guard lock(shared_->mutex);
  shared_->job = nullptr;
}

bool LrFinderJob::start(const graph::Graph& project, const QString& project_dir,
                        const session::LrFinderOptions& options) {
  if (running_) return false;
  if (shared_) {  // the last run's thread may still be posting nothing: give it its own
    std::lock_guard lock(shared_->mutex);
    shared_->job = nullptr;
  }
  shared_ = std::make_shared<Shared>();
  shared_->job = this;
  running_ = true;
  std::shared_ptr<Shared> shared = shared_;
  session::LrFinderOptions o = options;
  o.cancel = &shared->cancel;
  const std::string dir = project_dir.toStdString();
  QThread* thread = QThread::create([shared, project, dir, o] {
    try {
      session::LrFinderResult r = session::find_learning_rate(
          project, o, {.project_dir = dir}, [&shared](const session::LrPoint& p, int64_t step, int64_t steps) {
            shared->post([p, step, steps](LrFinderJob* job) { emit job->pointAdded(p, step, steps); });
          });
      shared->post([r = std::move(r)](LrFinderJob* job) {
        job->running_ = false;
        emit job->finished(r);
      });
    } catch (const std::exception& e) {
      shared->post([error = QString::fromUtf8(e.what())](LrFinderJob* job) {
        job->running_ = false;
        emit job->failed(error);
      });
    }
  });
  connect(thread, &QThread::finished, thread, &QObject::deleteLater);
  thread->start();
  return true;
}

void LrFinderJob::cancel() {
  if (shared_) shared_->cancel = true;
}

}  // namespace plexus::app
