#include "process_run.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QStandardPaths>
#include <QThread>

#include <signal.h>
#include <unistd.h>

#include <algorithm>

namespace plexus::app {

namespace {

QString mpirunPath() { return QStandardPaths::findExecutable(QStringLiteral("mpirun")); }

}  // namespace

ProcessRun::ProcessRun(QObject* parent) : QObject(parent) {
  escalate_.setSingleShot(true);
  connect(&escalate_, &QTimer::timeout, this, [this] {
    if (!process_) return;
    if (terminated_) return process_->kill();
    terminated_ = true;
    process_->terminate();
    escalate_.start(kKillAfterMs);
  });
}

ProcessRun::~ProcessRun() {
  if (!process_) return;
  // The app is going: mpirun gets a moment to end its ranks before QProcess kills it.
  process_->disconnect(this);
  process_->terminate();
  process_->waitForFinished(kKillAfterMs);
}

int ProcessRun::defaultThreads(int processes) { return std::max(1, QThread::idealThreadCount() / std::max(1, processes)); }

QString ProcessRun::cliPath() {
  const QString set = qEnvironmentVariable("PLEXUS_CLI");
  return set.isEmpty() ? QCoreApplication::applicationDirPath() + QStringLiteral("/plexus-cli") : set;
}

QStringList ProcessRun::command(const ProcessPlan& plan) {
  const QString mpirun = mpirunPath();
  QStringList c{mpirun.isEmpty() ? QStringLiteral("mpirun") : mpirun, QStringLiteral("-np"), QString::number(plan.processes)};
  // Open MPI refuses more ranks than cores, and refuses root, unless told.
  if (plan.processes > QThread::idealThreadCount()) c << QStringLiteral("--oversubscribe");
  if (::geteuid() == 0) c << QStringLiteral("--allow-run-as-root");
  // Stop: mpirun passes SIGTERM to the ranks, which finish their step and rank 0 its final
  // checkpoint; Open MPI kills them 1 s later unless given longer.
  c << QStringLiteral("--mca") << QStringLiteral("odls_base_sigkill_timeout")
    << QString::number(kStopGraceMs / 1000 - 5);
  c << QProcess::splitCommand(plan.extra);
  c << cliPath() << QStringLiteral("train") << plan.project << QStringLiteral("--run-dir") << plan.runDir
    << QStringLiteral("--threads") << QString::number(plan.threads);
  return c;
}

QString ProcessRun::start(const ProcessPlan& plan) {
  if (process_) return tr("Training processes are running already.");
  if (mpirunPath().isEmpty())
    return tr("mpirun was not found on the PATH. Training with several processes needs MPI (Open MPI's mpirun).");
  if (const QString cli = cliPath(); !QFileInfo(cli).isExecutable())
    return tr("plexus-cli was not found at %1: it belongs next to the app (or set PLEXUS_CLI to it).").arg(cli);
  const QStringList c = command(plan);
  output_.clear();
  stop_requested_ = terminated_ = false;
  process_ = new QProcess(this);
  process_->setProcessChannelMode(QProcess::MergedChannels);
  if (!plan.workingDir.isEmpty()) process_->setWorkingDirectory(plan.workingDir);
  connect(process_, &QProcess::readyRead, this, &ProcessRun::collect);
  connect(process_, &QProcess::finished, this,
          [this](int code, QProcess::ExitStatus status) { finish(code, status == QProcess::CrashExit); });
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart) return;  // the others end with finished()
    output_ += process_->errorString().toUtf8() + '\n';
    finish(-1, true);
  });
  process_->start(c.front(), c.mid(1));
  return {};
}

void ProcessRun::stop() {
  if (!process_ || stop_requested_) return;
  stop_requested_ = true;
  if (const qint64 pid = process_->processId(); pid > 0) ::kill(pid_t(pid), SIGINT);
  escalate_.start(kStopGraceMs);
}

void ProcessRun::collect() {
  output_ += process_->readAll();
  if (output_.size() > kKeptOutput) output_.remove(0, output_.size() - kKeptOutput);
}

void ProcessRun::finish(int exit_code, bool crashed) {
  if (!process_) return;
  collect();
  escalate_.stop();
  process_->disconnect(this);
  process_->deleteLater();
  process_ = nullptr;
  emit ended(exit_code, crashed);
}

QString ProcessRun::outputTail(int lines) const {
  QStringList all = QString::fromUtf8(output_).split(QLatin1Char('\n'));
  while (!all.isEmpty() && all.back().trimmed().isEmpty()) all.pop_back();
  return all.mid(std::max<qsizetype>(0, all.size() - lines)).join(QLatin1Char('\n'));
}

}  // namespace plexus::app
