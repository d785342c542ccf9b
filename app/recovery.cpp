#include "recovery.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QStandardPaths>
#include <QUndoStack>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <exception>

#include "editor/model/graph_document.h"
#include "graph/project.h"

namespace plexus::app {
namespace {

QString sidecar(const QString& file) { return file + QStringLiteral(".json"); }

// File names are autosave-<pid>-<n>.plexus, so the writer of a file can be identified.
bool writerIsRunning(const QString& file) {
  const QStringList parts = QFileInfo(file).completeBaseName().split(QLatin1Char('-'));
  bool ok = false;
  const qint64 pid = parts.size() == 3 ? parts[1].toLongLong(&ok) : 0;
  if (!ok || pid <= 0) return false;
  if (pid == QCoreApplication::applicationPid()) return true;
  return ::kill(pid_t(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

QString Autosaver::defaultDirectory() {
  const QString forced = qEnvironmentVariable("PLEXUS_RECOVERY_DIR");
  if (!forced.isEmpty()) return forced;
  return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/recovery");
}

std::vector<RecoveryEntry> Autosaver::orphans(const QString& directory) {
  std::vector<RecoveryEntry> out;
  const QDir dir(directory);
  for (const QFileInfo& info : dir.entryInfoList({QStringLiteral("autosave-*.plexus")}, QDir::Files)) {
    if (writerIsRunning(info.filePath())) continue;
    RecoveryEntry entry{info.filePath(), {}, info.lastModified()};
    QFile meta(sidecar(info.filePath()));
    if (meta.open(QIODevice::ReadOnly)) {
      const QJsonObject o = QJsonDocument::fromJson(meta.readAll()).object();
      entry.original = o.value(QStringLiteral("original")).toString();
      const QDateTime saved = QDateTime::fromString(o.value(QStringLiteral("saved")).toString(), Qt::ISODate);
      if (saved.isValid()) entry.saved = saved;
    }
    out.push_back(entry);
  }
  std::sort(out.begin(), out.end(), [](const RecoveryEntry& a, const RecoveryEntry& b) { return a.saved > b.saved; });
  return out;
}

void Autosaver::remove(const QString& file) {
  QFile::remove(file);
  QFile::remove(sidecar(file));
}

Autosaver::Autosaver(widgets::GraphDocument* document, const QString& directory, int interval_ms, QObject* parent)
    : QObject(parent), document_(document) {
  static std::atomic<int> serial{0};
  file_ = QDir(directory).filePath(
      QStringLiteral("autosave-%1-%2.plexus").arg(QCoreApplication::applicationPid()).arg(++serial));
  const auto changed = [this] { pending_ = true; };
  connect(document_->undoStack(), &QUndoStack::indexChanged, this, changed);
  connect(document_, &widgets::GraphDocument::graphReset, this, changed);
  connect(document_, &widgets::GraphDocument::filePathChanged, this, changed);
  // A save (or undoing back to the saved state) leaves nothing to recover.
  connect(document_, &widgets::GraphDocument::modifiedChanged, this, [this](bool modified) {
    if (!modified) discard();
  });
  connect(&timer_, &QTimer::timeout, this, &Autosaver::saveNow);
  timer_.start(interval_ms);
}

Autosaver::~Autosaver() { discard(); }

bool Autosaver::saveNow() {
  if (!document_->isModified()) {
    discard();
    return true;
  }
  if (!pending_ && QFile::exists(file_)) return true;
  try {
    QDir().mkpath(QFileInfo(file_).absolutePath());
    graph::save_project(file_.toStdString(), document_->graph());
    QSaveFile meta(sidecar(file_));
    const QJsonObject o{{QStringLiteral("original"), document_->filePath()},
                        {QStringLiteral("saved"), QDateTime::currentDateTime().toString(Qt::ISODate)}};
    if (!meta.open(QIODevice::WriteOnly) || meta.write(QJsonDocument(o).toJson()) < 0 || !meta.commit())
      throw std::runtime_error("cannot write " + sidecar(file_).toStdString());
  } catch (const std::exception& e) {
    error_ = QString::fromStdString(e.what());
    return false;
  }
  pending_ = false;
  error_.clear();
  return true;
}

void Autosaver::discard() {
  remove(file_);
  pending_ = true;  // the next change is written afresh
}

}  // namespace plexus::app
