#include "io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <random>
#include <streambuf>
#include <string>
#include <system_error>
#include <vector>

#include "util/error.h"

namespace plexus::io {

namespace fs = std::filesystem;

namespace {

std::string errno_text(int e) { return std::generic_category().message(e); }

[[noreturn]] void fail(const fs::path& path, const std::string& step, int e) {
  throw IoError("cannot write '" + path.string() + "': " + step + ": " + errno_text(e));
}

// fail_next_write_step: step + 1 and the errno, or 0; taken by the first write to reach it.
std::atomic<int> g_injected_step{0}, g_injected_error{0};

// An output stream buffer over a file descriptor that remembers the first write error.
class FdStreambuf : public std::streambuf {
 public:
  explicit FdStreambuf(int fd) : fd_(fd), buf_(size_t(1) << 16) { reset(); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return drain() ? 0 : -1; }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n < std::streamsize(buf_.size())) return std::streambuf::xsputn(s, n);
    // Large blocks (tensor data) go straight to the file.
    if (!drain() || !write_all(s, size_t(n))) return 0;
    return n;
  }

 private:
  void reset() { setp(buf_.data(), buf_.data() + buf_.size()); }
  bool drain() {
    const auto n = pptr() - pbase();
    if (n > 0 && !write_all(pbase(), size_t(n))) return false;
    reset();
    return true;
  }
  bool write_all(const char* p, size_t n) {
    if (error_) return false;
    if (const int e = take_injected_failure(WriteStep::Write)) {
      error_ = e;
      return false;
    }
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, std::min(n, size_t(1) << 30));
      if (w < 0) {
        if (errno == EINTR) continue;
        error_ = errno;
        return false;
      }
      if (w == 0) {  // should not happen for regular files; avoid spinning
        error_ = EIO;
        return false;
      }
      p += w;
      n -= size_t(w);
    }
    return true;
  }

  int fd_;
  std::vector<char> buf_;
  int error_ = 0;
};

// A fresh name in `dir` that nobody else is using: ".<name>.tmp-<pid>-<counter>-<random>".
std::string temp_name(const fs::path& target) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char suffix[80];
  std::snprintf(suffix, sizeof suffix, ".tmp-%ld-%llu-%016llx", long(::getpid()),
                static_cast<unsigned long long>(counter.fetch_add(1)), static_cast<unsigned long long>(rng()));
  std::string name = ".";  // (built step by step: GCC 12 warns falsely on a + chain here)
  name += target.filename().string();
  name += suffix;
  return name;
}

// Owns the temporary file until it has been renamed into place.
class TempFile {
 public:
  TempFile(const fs::path& target, const fs::path& dir) : target_(target) {
    for (int attempt = 0;; ++attempt) {
      path_ = dir / temp_name(target);
      const int forced = take_injected_failure(WriteStep::Create);
      fd_ = forced ? -1 : ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ >= 0) break;
      const int e = forced ? forced : errno;
      if (e == EINTR || (e == EEXIST && attempt < 100)) continue;
      fail(target, "cannot create a temporary file in '" + dir.string() + "'", e);
    }
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!renamed_) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  int fd() const { return fd_; }
  const fs::path& path() const { return path_; }

  void close() {
    const int fd = fd_;
    fd_ = -1;
    // close() may report a deferred write error (NFS); EINTR still releases the descriptor.
    if (::close(fd) != 0 && errno != EINTR) fail(target_, "closing the temporary file failed", errno);
  }
  void rename_over_target() {
    const int forced = take_injected_failure(WriteStep::Rename);
    if (forced || ::rename(path_.c_str(), target_.c_str()) != 0)
      fail(target_, "cannot rename the temporary file '" + path_.filename().string() + "' over it",
           forced ? forced : errno);
    renamed_ = true;
  }

 private:
  fs::path target_;
  fs::path path_;
  int fd_ = -1;
  bool renamed_ = false;
};

// A save killed mid-write (SIGKILL, a crash, a power cut) leaves its temporary behind. Each
// successful save of a file removes the temporaries of that file whose writer process is gone;
// those of a live process (another Plexus saving the same file right now) are left alone.
// Best effort: the new file is already in place, so a failure here is not the save's.
void remove_orphaned_temporaries(const fs::path& target, const fs::path& dir) {
  std::string prefix = ".";
  prefix += target.filename().string();
  prefix += ".tmp-";
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    char* rest = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &rest, 10);
    if (pid <= 0 || *rest != '-' || pid == long(::getpid())) continue;
    if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    ::unlink(it->path().c_str());
  }
}

void sync_directory(const fs::path& target, const fs::path& dir) {
  int fd;
  do fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) fail(target, "written, but cannot open directory '" + dir.string() + "' to sync it", errno);
  const int rc = ::fsync(fd);
  const int e = errno;
  ::close(fd);
  // Some file systems do not support fsync on directories (EINVAL); nothing more to do there.
  if (rc != 0 && e != EINVAL) fail(target, "written, but syncing directory '" + dir.string() + "' failed", e);
}

}  // namespace

void write_file_atomically(const fs::path& path, const std::function<void(std::ostream&)>& write) {
  if (path.empty() || !path.has_filename())
    throw IoError("cannot write '" + path.string() + "': not a file path");
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");

  TempFile tmp(path, dir);  // removes the temporary file on every exit but success

  // Keep the permissions of a file being replaced (a new one gets 0666 & ~umask from open).
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::fchmod(tmp.fd(), st.st_mode & 07777) != 0)
    fail(path, "cannot set the permissions of the temporary file", errno);

  {
    FdStreambuf buf(tmp.fd());
    std::ostream os(&buf);
    write(os);
    os.flush();
    if (buf.error()) fail(path, "writing the temporary file failed", buf.error());
    if (!os) fail(path, "the output stream failed while writing", EIO);
  }
  int rc;
  do rc = ::fsync(tmp.fd());
  while (rc != 0 && errno == EINTR);
  if (const int e = rc != 0 ? errno : take_injected_failure(WriteStep::Fsync)) fail(path, "fsync of the temporary file failed", e);
  tmp.close();
  tmp.rename_over_target();
  remove_orphaned_temporaries(path, dir);
  sync_directory(path, dir);  // also makes the removals durable
}

int take_injected_failure(WriteStep step) {
  int want = int(step) + 1;
  return g_injected_step.compare_exchange_strong(want, 0) ? g_injected_error.load() : 0;
}

void fail_next_write_step(WriteStep step, int error) {
  g_injected_error.store(error);
  g_injected_step.store(int(step) + 1);
}

void write_file_atomically(const fs::path& path, std::string_view bytes) {
  write_file_atomically(path, [bytes](std::ostream& os) { os.write(bytes.data(), std::streamsize(bytes.size())); });
}

}  // namespace plexus::io
