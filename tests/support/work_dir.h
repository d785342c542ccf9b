#pragma once
// The work folder of a suite that runs plexus-cli on files of its own: a temporary folder the
// files are written to and read from, removed with the suite, and at(), a path as an argument.
#include <QString>
#include <QTemporaryDir>

#include <filesystem>

namespace plexus::testing {

// A path as a command-line argument.
inline QString at(const std::filesystem::path& path) { return QString::fromStdString(path.string()); }

class WorkDir {
 public:
  WorkDir() : path_(dir_.path().toStdString()) {}
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;

  bool isValid() const { return dir_.isValid(); }  // for initTestCase to check
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::filesystem::path& name) const { return path_ / name; }

 private:
  QTemporaryDir dir_;
  std::filesystem::path path_;
};

}  // namespace plexus::testing
