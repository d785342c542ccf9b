#pragma once
// Shared by the libFuzzer targets in this folder (see scripts/fuzz).
//
// The readers under test take a path, so each input is handed over as an anonymous
// in-memory file (memfd) opened again through /proc/self/fd: nothing touches the disk and
// the reader sees a regular file, as it would in use.
//
// What counts as a finding: a crash or sanitizer report, an exception other than the one
// the reader documents for bad input, and any broken invariant (`require`), which aborts so
// that libFuzzer saves the input.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace plexus::fuzz {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

inline void require(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

class MemoryFile {
 public:
  explicit MemoryFile(std::string_view bytes) : fd_(::memfd_create("plexus-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) fail("memfd_create failed");
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n <= 0) fail("cannot write the in-memory file");
      done += size_t(n);
    }
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile() { ::close(fd_); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

// What the target made of the last input, for the replay driver (replay_main.cpp), which checks
// that the seeds meant to be valid are accepted and those meant to be bad are refused. The
// targets set it and still return 0 either way, so libFuzzer sees nothing of it.
enum class Outcome { NotRead, Rejected, Accepted };
inline Outcome outcome = Outcome::NotRead;
inline std::string rejection;  // the reader's message, when it refused the input

inline void accepted() { outcome = Outcome::Accepted; }
inline void rejected(const std::string& message) {
  outcome = Outcome::Rejected;
  rejection = message;
}

// A reader's error must say which file it is about.
inline void require_names(const std::string& message, const std::string& path) {
  require(message.find(path) != std::string::npos, "the error does not name the file: " + message);
}

}  // namespace plexus::fuzz
