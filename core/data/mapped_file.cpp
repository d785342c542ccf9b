#include "data/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "data/file_bytes.h"
#include "util/error.h"

namespace plexus::data {

MappedFile::MappedFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw DataError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  void* p = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    p = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // a mapping outlives its descriptor
  if (p != MAP_FAILED) {
    data_ = static_cast<const char*>(p);
    size_ = size_t(st.st_size);
    mapped_ = true;
    ::madvise(p, size_, MADV_SEQUENTIAL);  // read front to back first: read ahead, drop behind
    return;
  }
  owned_ = read_file_bytes(path);  // empty, or not a regular file
  data_ = owned_.data();
  size_ = owned_.size();
}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<char*>(data_), size_);
}

void MappedFile::release() const {
  if (mapped_) ::madvise(const_cast<char*>(data_), size_, MADV_DONTNEED);
}

}  // namespace plexus::data
