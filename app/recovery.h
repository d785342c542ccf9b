#pragma once
// Autosave and crash recovery. While a project has unsaved changes it is written every 30 s
// to a recovery file of its own (with a small sidecar naming the project it belongs to); a
// save, a clean close or discarding the changes removes it. A recovery file left behind by a
// process that no longer runs means Plexus crashed, and the next start offers it back.
#include <QDateTime>
#include <QObject>
#include <QString>
#include <QTimer>

#include <vector>

namespace plexus::widgets {
class GraphDocument;
}

namespace plexus::app {

struct RecoveryEntry {
  QString file;      // the recovered project (a .plexus file in the recovery folder)
  QString original;  // the project file it belongs to ("" = never saved)
  QDateTime saved;   // when it was written
};

class Autosaver : public QObject {
  Q_OBJECT

 public:
  static constexpr int kDefaultIntervalMs = 30'000;
  // $PLEXUS_RECOVERY_DIR if set (tests), else <app data>/recovery.
  static QString defaultDirectory();
  // Recovery files whose writer is gone, newest first.
  static std::vector<RecoveryEntry> orphans(const QString& directory);
  // Deletes a recovery file and its sidecar.
  static void remove(const QString& file);

  Autosaver(widgets::GraphDocument* document, const QString& directory, int interval_ms = kDefaultIntervalMs,
            QObject* parent = nullptr);
  ~Autosaver() override;

  // Writes the recovery file now if there are changes it does not hold yet; removes it when the
  // document is unmodified. Returns false (and keeps the old file) when writing fails.
  bool saveNow();
  void discard();  // the changes are saved or deliberately dropped: no recovery file
  QString file() const { return file_; }
  QString lastError() const { return error_; }

 private:
  widgets::GraphDocument* document_;
  QString file_;
  QTimer timer_;
  bool pending_ = false;  // the document changed since the last write
  QString error_;
};

}  // namespace plexus::app
