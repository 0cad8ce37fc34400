#include "store/hash_table.h"

namespace smc {

HashTable::HashTable(HashWay* ways_memory, size_t sets, unsigned ways)
    : ways_memory_(ways_memory), sets_(sets), ways_(ways) {}

void HashTable::StoreWay(size_t set, unsigned w, const HashEntry* entry) {
  HashWay* hw = way(set, w);
  uint64_t keep = (w == 0) ? (hw->meta & kWayOverflow) : 0;
  if (entry == nullptr) {
    __atomic_store_n(&hw->meta, keep, __ATOMIC_RELEASE);
    return;
  }
  __atomic_store_n(&hw->offset, entry->offset, __ATOMIC_RELAXED);
  __atomic_store_n(&hw->meta, WayMeta(*entry) | keep, __ATOMIC_RELEASE);
}

void HashTable::SetOverflowFlag(size_t set, bool on) {
  HashWay* hw = way(set, 0);
  uint64_t meta = hw->meta;
  __atomic_store_n(&hw->meta, on ? (meta | kWayOverflow) : (meta & ~kWayOverflow), __ATOMIC_RELEASE);
}

bool HashTable::Insert(size_t set, const HashEntry& entry) {
  ++size_;
  for (unsigned w = 0; w < ways_; ++w) {
    if (!WayValid(way(set, w)->meta)) {
      StoreWay(set, w, &entry);
      return false;
    }
  }
  overflow_[set].push_back(entry);
  ++overflow_size_;
  SetOverflowFlag(set, true);
  return true;
}

void HashTable::Replace(const HashSlot& slot, const HashEntry& entry) {
  if (slot.way >= 0) {
    StoreWay(slot.set, static_cast<unsigned>(slot.way), &entry);
  } else {
    overflow_[slot.set][slot.overflow_index] = entry;
  }
}

void HashTable::Remove(const HashSlot& slot) {
  --size_;
  auto it = overflow_.find(slot.set);
  if (slot.way < 0) {
    std::vector<HashEntry>& list = it->second;
    list[slot.overflow_index] = list.back();
    list.pop_back();
    --overflow_size_;
    if (list.empty()) {
      overflow_.erase(it);
      SetOverflowFlag(slot.set, false);
    }
    return;
  }
  if (it != overflow_.end()) {
    // Promote an overflow entry into the freed way so clients can reach it directly again.
    HashEntry promoted = it->second.back();
    it->second.pop_back();
    --overflow_size_;
    StoreWay(slot.set, static_cast<unsigned>(slot.way), &promoted);
    if (it->second.empty()) {
      overflow_.erase(it);
      SetOverflowFlag(slot.set, false);
    }
    return;
  }
  StoreWay(slot.set, static_cast<unsigned>(slot.way), nullptr);
}

size_t HashTable::CollectSet(size_t set, std::vector<HashEntry>* out) const {
  for (unsigned w = 0; w < ways_; ++w)
    if (WayValid(way(set, w)->meta)) out->push_back(Decode(*way(set, w)));
  if ((way(set, 0)->meta & kWayOverflow) == 0) return ways_;
  auto it = overflow_.find(set);
  if (it == overflow_.end()) return ways_;
  out->insert(out->end(), it->second.begin(), it->second.end());
  return ways_ + it->second.size();
}

void HashTable::ForEach(const std::function<void(const HashEntry&)>& fn) const {
  for (size_t s = 0; s < sets_; ++s)
    for (unsigned w = 0; w < ways_; ++w)
      if (WayValid(way(s, w)->meta)) fn(Decode(*way(s, w)));
  for (const auto& kv : overflow_)
    for (const HashEntry& e : kv.second) fn(e);
}

}  // namespace smc
