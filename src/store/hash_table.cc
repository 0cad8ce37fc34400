#include "store/hash_table.h"

namespace smc {

HashTable::HashTable(HashWay* ways_memory, size_t sets, unsigned ways)
    : ways_memory_(ways_memory), sets_(sets), ways_(ways), displaced_(sets, 0) {}

void HashTable::StoreWay(size_t set, unsigned w, const HashEntry* entry, bool in_alternate) {
  HashWay* hw = way(set, w);
  uint64_t keep = (w == 0) ? (hw->meta & kWaySetFlags) : 0;
  if (entry == nullptr) {
    __atomic_store_n(&hw->meta, keep, __ATOMIC_RELEASE);
    return;
  }
  __atomic_store_n(&hw->offset, entry->offset, __ATOMIC_RELAXED);
  __atomic_store_n(&hw->meta, WayMeta(*entry) | keep | (in_alternate ? kWayInAlternate : 0), __ATOMIC_RELEASE);
}

void HashTable::SetFlag(size_t set, uint64_t flag, bool on) {
  HashWay* hw = way(set, 0);
  uint64_t meta = hw->meta;
  __atomic_store_n(&hw->meta, on ? (meta | flag) : (meta & ~flag), __ATOMIC_RELEASE);
}

int HashTable::FreeWay(size_t set) const {
  for (unsigned w = 0; w < ways_; ++w)
    if (!WayValid(way(set, w)->meta)) return static_cast<int>(w);
  return -1;
}

bool HashTable::TagClash(size_t set, uint32_t tag, int skip) const {
  for (unsigned w = 0; w < ways_; ++w) {
    const uint64_t meta = way(set, w)->meta;
    if (static_cast<int>(w) != skip && WayValid(meta) && WayTag(meta) == tag) return true;
  }
  return false;
}

int HashTable::Room(size_t set, uint32_t tag) const { return Shadowed(set, tag) ? -1 : FreeWay(set); }

bool HashTable::Shadowed(size_t home, uint32_t tag, int skip) const {
  if (TagClash(home, tag, skip)) return true;
  if ((way(home, 0)->meta & kWayDisplaced) == 0) return false;
  const size_t alt = alternate(home, tag);
  for (unsigned w = 0; w < ways_; ++w) {
    const uint64_t meta = way(alt, w)->meta;
    if (WayValid(meta) && (meta & kWayInAlternate) && WayTag(meta) == tag) return true;  // its primary is home
  }
  return false;
}

void HashTable::Displace(size_t home, size_t set, unsigned w, const HashEntry& entry) {
  StoreWay(set, w, &entry, /*in_alternate=*/true);  // before the bit: a client that sees the bit finds the pair
  ++displaced_size_;
  if (displaced_[home]++ == 0) SetFlag(home, kWayDisplaced, true);
}

int HashTable::MakeRoom(size_t set, uint32_t tag, uint32_t* went_home) {
  if (Shadowed(set, tag)) return -1;
  for (unsigned w = 0; w < ways_; ++w) {
    const HashWay* hw = way(set, w);
    const HashEntry moving = Decode(*hw);
    if ((hw->meta & kWayInAlternate) == 0) {
      const size_t alt = alternate(set, moving.tag);
      const int free = alt != set ? Room(alt, moving.tag) : -1;
      if (free < 0) continue;
      Displace(set, alt, static_cast<unsigned>(free), moving);  // reachable there before it leaves this way
    } else {
      const size_t home = PrimarySetOf(set, moving.tag, sets_);
      const int free = TagClash(home, moving.tag) ? -1 : FreeWay(home);  // Room(home) would see this pair itself
      if (free < 0) continue;
      StoreWay(home, static_cast<unsigned>(free), &moving);  // back home before it leaves this way
      *went_home = moving.tag;
      --displaced_size_;
      if (--displaced_[home] == 0) SetFlag(home, kWayDisplaced, false);
    }
    return static_cast<int>(w);
  }
  return -1;
}

bool HashTable::Insert(size_t set, const HashEntry& entry, const InsertHint* hint) {
  // A hint of this table as it is now answers Shadowed's scans (InsertHint).
  const bool hinted = hint != nullptr && hint->generation == generation_;
  ++generation_;
  ++size_;
  // A pair with the same primary and tag in the ways already: a client stops at that pair's way (its primary's
  // first way with the tag, or the alternate's), so this one could not be reached wherever it went.
  const bool shadowed = hinted ? hint->shadowed : Shadowed(set, entry.tag);
  int w = shadowed ? -1 : FreeWay(set);
  if (w >= 0) {
    StoreWay(set, static_cast<unsigned>(w), &entry);
    return false;
  }
  const size_t alt = alternate(set, entry.tag);
  if (alt != set && !shadowed) {
    // The way MakeRoom frees still shows its old pair (now also in its other set) until this store replaces it.
    // A displaced pair it sent home no longer shadows its tag in the set it left: that set's overflow pairs with
    // the tag may go to their alternate (Settle, after the store: the freed way is the new pair's).
    uint32_t went_home = kFreeTag;
    if ((w = Room(alt, entry.tag)) >= 0 || (w = MakeRoom(alt, entry.tag, &went_home)) >= 0) {
      Displace(set, alt, static_cast<unsigned>(w), entry);
      if (went_home != kFreeTag && overflow_size_ > 0) Settle(alt, alternate(alt, went_home));
      return false;
    }
    if ((w = MakeRoom(set, entry.tag, &went_home)) >= 0) {
      StoreWay(set, static_cast<unsigned>(w), &entry);
      if (went_home != kFreeTag && overflow_size_ > 0) Settle(set, alternate(set, went_home));
      return false;
    }
  }
  overflow_[set].push_back(entry);
  ++overflow_size_;
  SetFlag(set, kWayOverflow, true);
  return true;
}

bool HashTable::TakeOverflow(size_t home, size_t set, int skip, HashEntry* taken) {
  auto it = overflow_.find(home);
  if (it == overflow_.end()) return false;
  std::vector<HashEntry>& list = it->second;
  for (size_t i = 0; i < list.size(); ++i) {
    const uint32_t tag = list[i].tag;
    if (set == home ? Shadowed(home, tag, skip)
                    : alternate(home, tag) != set || Shadowed(set, tag, skip) || Shadowed(home, tag))
      continue;
    *taken = list[i];
    list[i] = list.back();
    list.pop_back();
    --overflow_size_;
    if (list.empty()) {
      overflow_.erase(it);
      SetFlag(home, kWayOverflow, false);
    }
    return true;
  }
  return false;
}

void HashTable::Replace(const HashSlot& slot, const HashEntry& entry) {
  ++generation_;
  if (slot.way >= 0) {
    StoreWay(slot.set, static_cast<unsigned>(slot.way), &entry, slot.home != slot.set);
  } else {
    overflow_[slot.set][slot.overflow_index] = entry;
  }
}

void HashTable::Remove(const HashSlot& slot) {
  ++generation_;
  --size_;
  if (slot.way < 0) {
    auto it = overflow_.find(slot.set);
    std::vector<HashEntry>& list = it->second;
    list[slot.overflow_index] = list.back();
    list.pop_back();
    --overflow_size_;
    if (list.empty()) {
      overflow_.erase(it);
      SetFlag(slot.set, kWayOverflow, false);
    }
    return;
  }
  const unsigned freed = static_cast<unsigned>(slot.way);
  const bool displaced = slot.home != slot.set;
  const uint32_t tag = WayTag(way(slot.set, freed)->meta);
  // Emptied first (a client reading the set meanwhile misses and goes Active), then refilled from the overflow
  // lists so clients can reach those pairs directly again: pairs whose primary is this set, then (a displaced
  // pair's way) its primary's pairs that may now go home, then those that may go to this set as their alternate;
  // then those the removed tag shadowed (below); last any other primary's pairs whose alternate is this set.
  // Afterwards no overflow pair has unshadowed room in its primary or its alternate (CheckConsistency).
  StoreWay(slot.set, freed, nullptr);
  if (displaced) {
    --displaced_size_;
    if (--displaced_[slot.home] == 0) SetFlag(slot.home, kWayDisplaced, false);
  }
  if (overflow_size_ == 0) return;
  Settle(slot.set, slot.set);
  if (displaced) {
    Settle(slot.home, slot.home);
    Settle(slot.home, slot.set);
  }
  // The removed pair no longer shadows its tag (Shadowed) in this set, nor (displaced) in its primary: pairs with
  // that tag whose primary is one of them may go to their alternate, and pairs with that tag whose alternate is
  // the primary may go there (Room), where either has a free way.
  Settle(slot.set, alternate(slot.set, tag));
  if (displaced) Settle(PrimarySetOf(slot.home, tag, sets_), slot.home);
  // Pairs of other primaries whose alternate is this set. The overflow lists are normally empty or a few pairs,
  // so the walk over them is short.
  if (overflow_size_ == 0 || FreeWay(slot.set) < 0) return;
  for (auto it = overflow_.begin(); it != overflow_.end();) {
    const size_t home = it->first;
    ++it;  // Settle may erase home's list (only that element: `it` stays valid)
    if (home != slot.set) Settle(home, slot.set);
    if (FreeWay(slot.set) < 0) break;
  }
}

void HashTable::Settle(size_t home, size_t set) {
  int w;
  HashEntry taken;
  while ((w = FreeWay(set)) >= 0 && TakeOverflow(home, set, -1, &taken)) {
    if (set == home) {
      StoreWay(set, static_cast<unsigned>(w), &taken);
    } else {
      Displace(home, set, static_cast<unsigned>(w), taken);  // the way before the primary's displaced bit
    }
  }
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

bool HashTable::CheckConsistency() const {
  std::vector<uint32_t> displaced(sets_, 0);
  size_t entries = 0, in_alternate = 0;
  for (size_t s = 0; s < sets_; ++s) {
    for (unsigned w = 0; w < ways_; ++w) {
      const uint64_t meta = way(s, w)->meta;
      if (w != 0 && (meta & kWaySetFlags) != 0) return false;
      if (!WayValid(meta)) {
        if (meta & kWayInAlternate) return false;
        continue;
      }
      ++entries;
      if (TagClash(s, WayTag(meta), static_cast<int>(w))) return false;  // a client would reach only one of them
      if (meta & kWayInAlternate) {
        const size_t home = PrimarySetOf(s, WayTag(meta), sets_);
        if (home == s || alternate(home, WayTag(meta)) != s) return false;
        if (TagClash(home, WayTag(meta))) return false;  // a client would stop at that way of the primary
        ++displaced[home];
        ++in_alternate;
      }
    }
  }
  for (size_t s = 0; s < sets_; ++s) {
    const uint64_t flags = way(s, 0)->meta & kWaySetFlags;
    if (displaced[s] != displaced_[s] || ((flags & kWayDisplaced) != 0) != (displaced[s] != 0)) return false;
    auto it = overflow_.find(s);
    const bool has_overflow = it != overflow_.end() && !it->second.empty();
    if (((flags & kWayOverflow) != 0) != has_overflow) return false;
    // Overflow only what neither set could take: the primary and the alternate full, or a pair with the same
    // primary and tag in the ways, or (the alternate) a clash there (Room). Remove's refill and Insert keep this.
    if (has_overflow)
      for (const HashEntry& e : it->second) {
        if (Shadowed(s, e.tag)) continue;
        if (FreeWay(s) >= 0) return false;
        const size_t alt = alternate(s, e.tag);
        if (alt != s && Room(alt, e.tag) >= 0) return false;
      }
  }
  size_t overflow = 0;
  for (const auto& kv : overflow_) overflow += kv.second.size();
  return overflow == overflow_size_ && in_alternate == displaced_size_ && entries + overflow == size_;
}

}  // namespace smc
