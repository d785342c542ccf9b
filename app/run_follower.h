#pragma once
// RunFollower: a run that another process writes (plexus-cli under mpirun, started by Run ▸
// Train with N Processes, or a job on a cluster whose shared file system this machine
// mounts), followed live from its run folder. It reads the folder's metrics.jsonl as it grows
// (session::RunLogReader: only whole lines; a last line without its newline waits for it) and
// reports what it finds with the signals TrainingController reports a run of its own with, in
// the same order, so the dashboard shows both alike:
//
//   started -> (batches | epochEnded | checkpointSaved "best" | notice | graphEdited)* -> tested? ->
//   (checkpointSaved "final" -> finished) | failed | lost
//
// It polls (every kPollMs) instead of watching: file system notifications do not cross a
// network file system. Each poll opens the file afresh (so NFS revalidates what it caches),
// reads what was appended since the last one, at most kMaxRead bytes (a long log already
// written is caught up over a few polls, the UI thread never waits for it all) and closes it.
// A log that shrank, or whose header changed, was truncated or replaced: following stops with
// lost(). So it does at a malformed line. With no new line for staleAfter(), silent() says so
// at each poll, and silent(0) once lines come again.
#include <QElapsedTimer>
#include <QDateTime>
#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>
#include <vector>

#include "train/events.h"

namespace plexus::session {
class RunLogReader;
}

namespace plexus::app {

struct RunInfo;

class RunFollower : public QObject {
  Q_OBJECT

 public:
  static constexpr int kPollMs = 400;
  static constexpr qint64 kMaxRead = 4 << 20;
  static constexpr int kStaleAfterMs = 2 * 60 * 1000;

  explicit RunFollower(QObject* parent = nullptr);
  ~RunFollower() override;

  // Starts following `folder` from the start of its log (which need not exist yet: a run
  // starting writes it in a moment); the first poll comes at once. Ignored while following.
  void follow(const QString& folder);
  // Reads what was appended since the last poll and reports it. The timer calls it; call it to
  // read at once.
  void poll();
  // The processes writing the folder have ended: what they wrote last is read, and a log that
  // still has no end line ends here, as stopped (`failure` empty: they were asked to stop) or
  // failed(`failure`).
  void writerEnded(const QString& failure);
  // Stops following without an end: the run goes on where it runs (lost("…")).
  void stop();

  bool isFollowing() const { return following_; }
  QString folder() const { return folder_; }
  void setStaleAfter(int ms) { stale_after_ms_ = ms; }
  int staleAfter() const { return stale_after_ms_; }

 signals:
  void started(const plexus::app::RunInfo& info);
  void batches(const std::vector<plexus::train::BatchEnd>& batches);
  void epochEnded(const plexus::train::EpochEnd& epoch);
  void tested(const plexus::train::TestEnd& test);
  void checkpointSaved(const QString& path, const QString& kind);  // "best" when it changed, "final" at the end
  void notice(const QString& text);
  void graphEdited(const plexus::train::GraphEdit& edit);
  void finished(const plexus::train::Finished& result);
  void failed(const QString& message);
  // Following stopped before the run's end: why ("metrics.jsonl was truncated", …).
  void lost(const QString& why);
  void silent(double seconds);  // no new line for that long (past staleAfter()); 0: lines again
  void stateChanged();          // following began or ended

 private:
  bool readNew();  // reads and reports what was appended; true when more waits than one poll reads
  void report(const std::vector<train::Event>& events);
  void checkBest();
  void quit();                            // following ends, without a word
  void lose(const QString& why);          // following ends before the run does
  void endWith(const train::Event& end);  // the run's end: Finished or Failed
  QString path(const char* file) const;

  QTimer timer_{this};
  QString folder_;
  bool following_ = false;
  std::unique_ptr<session::RunLogReader> reader_;
  qint64 offset_ = 0;     // bytes of the log read
  QByteArray header_;     // its first line as read, to tell a log replaced by another
  QDateTime best_saved_;  // best.safetensors's time when last reported
  QElapsedTimer since_line_;
  bool silent_ = false;
  int stale_after_ms_ = kStaleAfterMs;
  bool writer_ended_ = false;  // writerEnded() came: the log ends once it is all read
  QString writer_failure_;
};

}  // namespace plexus::app
