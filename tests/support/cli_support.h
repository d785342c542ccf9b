#pragma once
// Runs plexus-cli and collects what it said: for the tests of commands end to end.
#include <QProcess>
#include <QString>
#include <QStringList>

namespace plexus::testing {

// plexus-cli's path: ctest puts it in PLEXUS_CLI for the suites that drive it
// (tests/CMakeLists.txt, plexus_test_uses_cli).
inline QString cli_path() {
  const QString path = qEnvironmentVariable("PLEXUS_CLI");
  if (path.isEmpty()) qFatal("PLEXUS_CLI is not set: run the suite through ctest, or set it to plexus-cli's path");
  return path;
}

struct CliResult {
  int code = -1;  // -1: it did not finish in time or crashed
  QString out, err;
};

// Runs plexus-cli with `args`, in `working_dir` when one is given (else this process's).
inline CliResult run_cli(const QStringList& args, int timeout_ms = 10 * 60 * 1000, const QString& working_dir = {}) {
  QProcess p;
  if (!working_dir.isEmpty()) p.setWorkingDirectory(working_dir);
  p.start(cli_path(), args);
  const bool finished = p.waitForFinished(timeout_ms);
  return {finished && p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
          QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

}  // namespace plexus::testing
