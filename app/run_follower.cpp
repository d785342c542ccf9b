#include "run_follower.h"

#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <exception>
#include <string_view>
#include <utility>
#include <variant>

#include "common/qt_text.h"
#include "session/run_log.h"
#include "training_controller.h"

namespace plexus::app {

using widgets::qstr;

namespace {

// What the dashboard's progress needs from a run it did not start: the header's account, and
// how long the run had gone on by the log's last write (for a log that has ended, its length).
RunInfo describe(const session::RunHeader& h, const QDateTime& last_write) {
  RunInfo info;
  info.device = qstr(h.device);
  info.epochs = int(h.settings.epochs);
  info.classification = h.classification;
  const QDateTime began = QDateTime::fromString(qstr(h.started), Qt::ISODateWithMs);
  if (began.isValid() && last_write.isValid()) info.elapsed = std::max<qint64>(0, began.msecsTo(last_write)) / 1000.0;
  return info;
}

}  // namespace

RunFollower::RunFollower(QObject* parent) : QObject(parent) {
  timer_.setInterval(kPollMs);
  connect(&timer_, &QTimer::timeout, this, &RunFollower::poll);
}

RunFollower::~RunFollower() = default;

QString RunFollower::path(const char* file) const { return folder_ + QLatin1Char('/') + QLatin1String(file); }

void RunFollower::follow(const QString& folder) {
  if (following_) return;
  folder_ = folder;
  reader_ = std::make_unique<session::RunLogReader>(path(session::kRunLogFile).toStdString());
  offset_ = 0;
  header_.clear();
  best_saved_ = {};
  silent_ = false;
  writer_ended_ = false;
  writer_failure_.clear();
  since_line_.start();
  following_ = true;
  timer_.start();
  emit stateChanged();
  poll();
}

void RunFollower::poll() {
  if (!following_) return;
  const bool more = readNew();
  if (!following_) return;  // the log ended (or could not be read on), or a slot stopped following
  checkBest();
  if (!following_) return;
  if (more) {
    QTimer::singleShot(0, this, &RunFollower::poll);  // the rest of a long log, after the events queued meanwhile
    return;
  }
  if (writer_ended_) {  // all it wrote is read, and it has no end line
    if (writer_failure_.isEmpty())
      endWith(train::Finished{true, std::max(0, reader_->last_epoch()), 0});
    else
      endWith(train::Failed{writer_failure_.toStdString()});
    return;
  }
  if (since_line_.elapsed() >= stale_after_ms_) {
    silent_ = true;
    emit silent(double(since_line_.elapsed()) / 1000.0);
  }
}

bool RunFollower::readNew() {
  QFile file(path(session::kRunLogFile));
  if (!file.open(QIODevice::ReadOnly)) return false;  // not written yet
  const qint64 size = file.size();
  if (size < offset_ || (!header_.isEmpty() && file.read(header_.size()) != header_)) {
    lose(tr("%1 was truncated or replaced by another log: following stopped").arg(QLatin1String(session::kRunLogFile)));
    return false;
  }
  if (size == offset_) return false;
  file.seek(offset_);
  const QByteArray bytes = file.read(std::min(size - offset_, kMaxRead));
  offset_ += bytes.size();
  const bool had_header = reader_->header().has_value();
  const int64_t lines = reader_->lines();
  std::vector<train::Event> events;
  QString error;
  try {
    reader_->feed(std::string_view(bytes.constData(), size_t(bytes.size())),
                  [&events](train::Event e) { events.push_back(std::move(e)); });
  } catch (const std::exception& e) {
    error = qstr(e.what());
  }
  if (reader_->lines() > lines) {
    since_line_.restart();
    if (std::exchange(silent_, false)) emit silent(0);
  }
  if (!had_header && reader_->header()) {
    file.seek(0);
    header_ = file.readLine();
    emit started(describe(*reader_->header(), QFileInfo(file).lastModified()));
  }
  report(events);
  if (!error.isEmpty() && following_) lose(error);
  return following_ && offset_ < size;
}

void RunFollower::report(const std::vector<train::Event>& events) {
  // Consecutive batches come as one batches(), as the controller's ticks deliver them.
  std::vector<train::BatchEnd> run;
  const auto flush = [&] {
    if (!run.empty()) emit batches(std::exchange(run, {}));
  };
  for (const train::Event& event : events) {
    if (!following_) return;
    if (const auto* b = std::get_if<train::BatchEnd>(&event)) {
      run.push_back(*b);
      continue;
    }
    flush();
    if (!following_) return;
    if (const auto* e = std::get_if<train::EpochEnd>(&event)) {
      emit epochEnded(*e);
    } else if (const auto* t = std::get_if<train::TestEnd>(&event)) {
      emit tested(*t);
    } else if (const auto* n = std::get_if<train::Notice>(&event)) {
      emit notice(qstr(n->text));
    } else if (const auto* edit = std::get_if<train::GraphEdit>(&event)) {
      emit graphEdited(*edit);
    } else if (std::holds_alternative<train::Finished>(event) || std::holds_alternative<train::Failed>(event)) {
      endWith(event);
    }
    // Node statistics are not followed: they belong on the canvas of the graph that trains,
    // which need not be the open one.
  }
  flush();
}

// best.safetensors is saved after its epoch's line is written: reported when its time changes.
void RunFollower::checkBest() {
  const QFileInfo best(path("best.safetensors"));
  const QDateTime saved = best.exists() ? best.lastModified() : QDateTime();
  if (!saved.isValid() || saved == best_saved_) return;
  best_saved_ = saved;
  emit checkpointSaved(best.filePath(), QStringLiteral("best"));
}

void RunFollower::writerEnded(const QString& failure) {
  if (!following_) return;
  writer_ended_ = true;
  writer_failure_ = failure;
  poll();
}

void RunFollower::stop() {
  if (following_) lose(tr("Stopped following; the run goes on in %1").arg(folder_));
}

void RunFollower::quit() {
  following_ = false;
  timer_.stop();
}

void RunFollower::lose(const QString& why) {
  quit();
  emit lost(why);
  emit stateChanged();
}

void RunFollower::endWith(const train::Event& end) {
  quit();
  if (const auto* f = std::get_if<train::Finished>(&end)) {
    // A log that says it finished has its final checkpoint (session::finish_run writes it first).
    if (const QString final_checkpoint = path("final.safetensors"); QFileInfo::exists(final_checkpoint))
      emit checkpointSaved(final_checkpoint, QStringLiteral("final"));
    emit finished(*f);
  } else {
    emit failed(qstr(std::get<train::Failed>(end).message));
  }
  emit stateChanged();
}

}  // namespace plexus::app
