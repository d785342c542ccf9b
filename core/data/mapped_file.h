#pragma once
// A file mapped read-only into memory (mmap), for the CSV readers: the kernel pages its bytes in
// as they are read and may drop them again, so a file larger than memory can be read, and one
// read twice costs no second copy. Files that cannot be mapped (a pipe) are read into memory.
#include <cstdint>
#include <string>
#include <string_view>

namespace plexus::data {

class MappedFile {
 public:
  // DataError "PATH: cannot open: <reason>" (read_file_bytes' errors for a file read instead).
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view text() const { return {data_, size_}; }
  // Lets go of the pages this process has read: they stay in the page cache (the kernel's to
  // keep or drop) instead of counting towards this process's memory. The text stays readable.
  void release() const;

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  std::string owned_;  // the bytes of a file that could not be mapped
};

}  // namespace plexus::data
