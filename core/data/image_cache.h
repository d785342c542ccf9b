#pragma once
// Decoded pictures kept in memory between epochs, so an image-folder dataset decodes each file
// once while it fits and its memory stays bounded when it does not.
//
// Entries are prepared images (data/image_file.h: 8-bit, a model's size), keyed by an owner (one
// per dataset: the same file prepared for another format is another entry) and the file's index.
// Bounded by bytes: the pixels plus kEntryOverhead per entry; inserting past the capacity evicts
// the least recently used entries first. Entries are shared pointers, so one evicted while a
// reader still holds it lives on until that reader lets go.
//
// Thread-safe: one mutex guards the table and the list, held only to look up, insert or evict
// (never while decoding; two threads missing the same file both decode it and the second insert
// replaces the first). One mutex is plenty: lookups measured at about 25 million a second from
// 1 thread and from 4 at once (2 cores), while training asks for some 20 000 pictures a second.
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "data/image_file.h"

namespace plexus::data {

class DecodedImageCache {
 public:
  // The bytes counted per entry besides its pixels: the list and table nodes, the shared
  // pointer's control block and the Image itself.
  static constexpr int64_t kEntryOverhead = 192;

  // capacity_bytes 0: a quarter of the physical memory (default_capacity()).
  explicit DecodedImageCache(int64_t capacity_bytes = 0);
  DecodedImageCache(const DecodedImageCache&) = delete;
  DecodedImageCache& operator=(const DecodedImageCache&) = delete;

  // A key's owner part no other caller has been given (thread-safe; never 0).
  static uint64_t new_owner();
  // A quarter of the physical memory (sysconf), or 1 GiB where the system does not say.
  static int64_t default_capacity();

  // The entry, marked most recently used, or null (counted as a hit or a miss).
  std::shared_ptr<const Image> find(uint64_t owner, int64_t index);
  // Adds or replaces the entry, evicting least recently used ones to stay within the capacity;
  // an image larger than the whole capacity is not kept.
  void insert(uint64_t owner, int64_t index, std::shared_ptr<const Image> image);

  int64_t capacity() const { return capacity_; }
  int64_t bytes() const;    // counted as above, never more than capacity()
  int64_t entries() const;
  int64_t hits() const;
  int64_t misses() const;

 private:
  struct Key {
    uint64_t owner;
    int64_t index;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct Entry {
    Key key;
    std::shared_ptr<const Image> image;
    int64_t bytes;
  };
  using Lru = std::list<Entry>;  // most recently used first

  void erase(Lru::iterator it);  // with mutex_ held

  const int64_t capacity_;
  mutable std::mutex mutex_;
  Lru lru_;
  std::unordered_map<Key, Lru::iterator, KeyHash> table_;
  int64_t bytes_ = 0, hits_ = 0, misses_ = 0;
};

}  // namespace plexus::data
