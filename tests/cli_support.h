#pragma once
// Runs plexus-cli (PLEXUS_CLI, set by CMake for the suites that drive it) and collects what it
// said: for the tests of commands end to end.
#include <QProcess>
#include <QString>
#include <QStringList>

namespace plexus::testing {

struct CliResult {
  int code = -1;  // -1: it did not finish in time or crashed
  QString out, err;
};

inline CliResult run_cli(const QStringList& args, int timeout_ms = 10 * 60 * 1000) {
  QProcess p;
  p.start(PLEXUS_CLI, args);
  const bool finished = p.waitForFinished(timeout_ms);
  return {finished && p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
          QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

}  // namespace plexus::testing
