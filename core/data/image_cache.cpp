#include "data/image_cache.h"

#include <unistd.h>

#include <atomic>
#include <string>
#include <utility>

#include "util/error.h"

namespace plexus::data {

DecodedImageCache::DecodedImageCache(int64_t capacity_bytes)
    : capacity_(capacity_bytes == 0 ? default_capacity() : capacity_bytes) {
  if (capacity_bytes < 0)
    throw ValueError("DecodedImageCache: a capacity of " + std::to_string(capacity_bytes) +
                     " bytes; expected 0 (the default) or more");
}

uint64_t DecodedImageCache::new_owner() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

int64_t DecodedImageCache::default_capacity() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return int64_t(1) << 30;
  return int64_t(pages) * int64_t(page_size) / 4;
}

size_t DecodedImageCache::KeyHash::operator()(const Key& k) const {
  // splitmix64's finaliser over both parts: indices are small consecutive numbers.
  uint64_t x = k.owner * 0x9e3779b97f4a7c15ull ^ uint64_t(k.index);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return size_t(x ^ (x >> 31));
}

std::shared_ptr<const Image> DecodedImageCache::find(uint64_t owner, int64_t index) {
  std::lock_guard lock(mutex_);
  const auto found = table_.find(Key{owner, index});
  if (found == table_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, found->second);  // iterators stay valid
  return found->second->image;
}

void DecodedImageCache::insert(uint64_t owner, int64_t index, std::shared_ptr<const Image> image) {
  if (!image) throw ValueError("DecodedImageCache::insert: no image");
  const int64_t size = int64_t(image->pixels.size()) + kEntryOverhead;
  const Key key{owner, index};
  std::lock_guard lock(mutex_);
  if (const auto found = table_.find(key); found != table_.end()) erase(found->second);
  if (size > capacity_) return;
  while (bytes_ + size > capacity_) erase(std::prev(lru_.end()));
  lru_.push_front(Entry{key, std::move(image), size});
  table_.emplace(key, lru_.begin());
  bytes_ += size;
}

void DecodedImageCache::erase(Lru::iterator it) {
  bytes_ -= it->bytes;
  table_.erase(it->key);
  lru_.erase(it);
}

int64_t DecodedImageCache::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

int64_t DecodedImageCache::entries() const {
  std::lock_guard lock(mutex_);
  return int64_t(lru_.size());
}

int64_t DecodedImageCache::hits() const {
  std::lock_guard lock(mutex_);
  return hits_;
}

int64_t DecodedImageCache::misses() const {
  std::lock_guard lock(mutex_);
  return misses_;
}

}  // namespace plexus::data
