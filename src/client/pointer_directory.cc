#include "client/pointer_directory.h"

namespace smc {

PointerDirectory::PointerDirectory(size_t sets, unsigned ways, const std::vector<uint64_t>* bars)
    : sets_(sets), ways_(ways), set_index_(sets), entries_(sets * ways), hashes_(sets * ways), bars_(bars) {}

DirectoryEntry* PointerDirectory::Lookup(const KeyLocation& loc) {
  DirectoryEntry* e = Find(loc);
  if (e != nullptr && Expired(*e)) {
    ++stats_.expired;
    e = nullptr;
  }
  if (e != nullptr) ++stats_.hits;
  else ++stats_.misses;
  return e;
}

DirectoryEntry* PointerDirectory::FindOrInstall(const KeyLocation& loc) {
  DirectoryEntry* e = Find(loc);
  if (e != nullptr) return e;
  const size_t first = first_of_set(loc);
  DirectoryEntry* set = &entries_[first];
  for (unsigned w = 0; w < ways_ && e == nullptr; ++w)
    if (!set[w].valid()) e = &set[w];
  for (unsigned w = 0; w < ways_ && e == nullptr; ++w)
    if (Expired(set[w])) {
      e = &set[w];
      ++stats_.expired_dropped;
    }
  if (e == nullptr) {  // full: least recency first, then least access count
    e = &set[0];
    for (unsigned w = 1; w < ways_; ++w) {
      const DirectoryEntry& c = set[w];
      if (RecencyBefore(c.recency, e->recency) || (c.recency == e->recency && c.access_count < e->access_count))
        e = &set[w];
    }
    ++stats_.evictions;
  }
  *e = DirectoryEntry{};
  e->server = loc.server;
  hashes_[e - entries_.data()] = loc.hash;
  return e;  // valid once the caller gives it a block
}

void PointerDirectory::Remove(const KeyLocation& loc) {
  DirectoryEntry* e = Find(loc);
  if (e != nullptr) {
    e->block_bytes = 0;
    ++stats_.invalidations;
  }
}

size_t PointerDirectory::size() const {
  size_t n = 0;
  for (const DirectoryEntry& e : entries_) n += e.valid();
  return n;
}

}  // namespace smc
