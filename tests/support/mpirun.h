#pragma once
// What the suites that start `mpirun` (Qt's QProcess) share: mpirun's own flags, and the ranks'
// environment.
#include <unistd.h>

#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace plexus::testing {

// -np `ranks`, ranks beyond this machine's 2 cores allowed, and root allowed (CI runs as root).
inline QStringList mpirun_flags(int ranks) {
  QStringList flags{"-np", QString::number(ranks), "--oversubscribe"};
  if (geteuid() == 0) flags << "--allow-run-as-root";
  return flags;
}

// Open MPI does not free all it allocates (nor keep its plugins loaded for LeakSanitizer to
// name them), so under AddressSanitizer the ranks' leak check would only report Open MPI: the
// ranks run without it; every single-process run, and every other suite, keeps it.
inline QProcessEnvironment rank_environment() {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  const QString asan = env.value("ASAN_OPTIONS");
  env.insert("ASAN_OPTIONS", asan.isEmpty() ? "detect_leaks=0" : asan + ":detect_leaks=0");
  return env;
}

}  // namespace plexus::testing
