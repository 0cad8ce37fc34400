#include "store/slab.h"

#include <algorithm>
#include <cmath>

namespace smc {

std::vector<size_t> SlabClassSizes(double growth_factor, size_t max_block_bytes) {
  max_block_bytes = std::max<size_t>((max_block_bytes + 7) & ~size_t{7}, kMinBlockBytes);
  std::vector<size_t> sizes;
  size_t size = kMinBlockBytes;
  while (size < max_block_bytes && sizes.size() + 1 < kMaxSlabClasses) {
    sizes.push_back(size);
    size_t next = static_cast<size_t>(std::ceil(static_cast<double>(size) * growth_factor));
    next = (next + 7) & ~size_t{7};
    size = std::max(next, size + 8);
  }
  sizes.push_back(max_block_bytes);
  return sizes;
}

size_t SlabAllocator::PageBytesFor(size_t arena_bytes, size_t page_bytes) {
  constexpr size_t kGrain = 4096;
  size_t small_arena_page = std::max(arena_bytes / kMinPages / kGrain * kGrain, kGrain);
  return std::max<size_t>(std::min(page_bytes, small_arena_page) & ~size_t{7}, 8);
}

SlabAllocator::SlabAllocator(size_t arena_bytes, size_t page_bytes, double growth_factor,
                             size_t max_block_bytes)
    : page_bytes_(PageBytesFor(arena_bytes, page_bytes)) {
  for (size_t bytes : SlabClassSizes(growth_factor, max_block_bytes)) {
    // A block larger than a page gets the fewest pages that leave at most 1/kMaxTailWaste of the slab unused
    // at its end (always reached: once a slab holds kMaxTailWaste blocks, the tail, less than a block, is
    // small enough). A page holds the blocks that fit one.
    size_t n = (bytes + page_bytes_ - 1) / page_bytes_;
    while (n > 1 && (n * page_bytes_) % bytes > n * page_bytes_ / kMaxTailWaste) ++n;
    classes_.push_back(SlabClass{bytes, static_cast<uint32_t>(n), {}, 0, 0});
  }
  class_table_.resize(kClassTableBytes / 8 + 1);
  for (size_t i = 0; i < class_table_.size(); ++i) class_table_[i] = static_cast<int16_t>(SearchClassFor(8 * i));
  size_t pages = arena_bytes / page_bytes_;
  pages_.resize(pages);
  last_class_.assign(pages, kNoClass);
  for (size_t i = 0; i < pages; ++i) free_pages_.insert(free_pages_.end(), static_cast<uint32_t>(i));
}

int SlabAllocator::SearchClassFor(size_t block_bytes) const {
  auto it = std::lower_bound(classes_.begin(), classes_.end(), block_bytes,
                             [](const SlabClass& c, size_t b) { return c.block_bytes < b; });
  return it == classes_.end() ? -1 : static_cast<int>(it - classes_.begin());
}

void SlabAllocator::AddPartial(uint32_t first) {
  Page& p = pages_[first];
  std::vector<uint32_t>& list = classes_[p.cls].partial;
  p.partial_index = list.size();
  list.push_back(first);
}

void SlabAllocator::RemovePartial(uint32_t first) {
  Page& p = pages_[first];
  std::vector<uint32_t>& list = classes_[p.cls].partial;
  uint32_t moved = list.back();
  list[p.partial_index] = moved;
  pages_[moved].partial_index = p.partial_index;
  list.pop_back();
  p.partial_index = SIZE_MAX;
}

bool SlabAllocator::FindFreeRun(uint32_t n, uint32_t* first) const {
  uint32_t run = 0, start = 0, prev = 0;
  for (uint32_t page : free_pages_) {
    if (run == 0 || page != prev + 1) {
      run = 0;
      start = page;
    }
    prev = page;
    if (++run == n) {
      *first = start;
      return true;
    }
  }
  return false;
}

bool SlabAllocator::CanAllocate(int cls) const {
  uint32_t first;
  return !classes_[cls].partial.empty() || FindFreeRun(classes_[cls].slab_pages, &first);
}

bool SlabAllocator::Allocate(int cls, uint64_t* offset, bool* first_use) {
  SlabClass& c = classes_[cls];
  if (c.partial.empty()) {
    uint32_t first;
    if (!FindFreeRun(c.slab_pages, &first)) return false;
    for (uint32_t i = first; i < first + c.slab_pages; ++i) {
      free_pages_.erase(i);
      pages_[i] = Page{};
      pages_[i].cls = cls;
      pages_[i].first = first;
      if (last_class_[i] != kNoClass && last_class_[i] != cls) ++pages_moved_;
      last_class_[i] = cls;
    }
    pages_[first].capacity = static_cast<uint32_t>(c.slab_pages * page_bytes_ / c.block_bytes);
    c.pages += c.slab_pages;
    AddPartial(first);
  }
  uint32_t first = c.partial.back();
  Page& p = pages_[first];
  uint32_t slot;
  if (!p.free_slots.empty()) {
    slot = p.free_slots.back();
    p.free_slots.pop_back();
    if (first_use) *first_use = false;
  } else {
    slot = p.carved++;
    if (first_use) *first_use = true;
  }
  ++p.in_use;
  if (!SlabHasRoom(p)) RemovePartial(first);
  *offset = static_cast<uint64_t>(first) * page_bytes_ + static_cast<uint64_t>(slot) * c.block_bytes;
  ++c.in_use;
  ++blocks_in_use_;
  bytes_in_use_ += c.block_bytes;
  return true;
}

void SlabAllocator::Free(int cls, uint64_t offset) {
  SlabClass& c = classes_[cls];
  uint32_t first = pages_[offset / page_bytes_].first;
  Page& p = pages_[first];
  uint32_t slot = static_cast<uint32_t>((offset - static_cast<uint64_t>(first) * page_bytes_) / c.block_bytes);
  bool had_room = SlabHasRoom(p);
  p.free_slots.push_back(slot);
  --p.in_use;
  --c.in_use;
  --blocks_in_use_;
  bytes_in_use_ -= c.block_bytes;
  if (p.in_use == 0) {  // the whole slab is free: its pages go back to the pool, any class may take them
    if (had_room) RemovePartial(first);
    c.pages -= c.slab_pages;
    for (uint32_t i = first; i < first + c.slab_pages; ++i) {
      pages_[i] = Page{};
      free_pages_.insert(i);
    }
    return;
  }
  if (!had_room) AddPartial(first);
}

uint64_t SlabAllocator::RunCost(uint32_t first, uint32_t n, std::vector<uint32_t>* slabs) const {
  uint64_t bytes = 0;
  for (uint32_t i = first; i < first + n;) {
    const Page& p = pages_[i];
    if (p.cls == kNoClass) {
      ++i;
      continue;
    }
    const Page& head = pages_[p.first];
    if (head.pinned != 0) return UINT64_MAX;  // holds a reservation: not a run to empty
    bytes += uint64_t{head.in_use} * classes_[p.cls].block_bytes;
    if (slabs != nullptr) slabs->push_back(p.first);
    i = p.first + classes_[p.cls].slab_pages;
  }
  return bytes;
}

bool SlabAllocator::CheapestRun(int cls, std::vector<uint64_t>* slabs) const {
  // By bytes in use, not blocks: a slab of small blocks with holes costs less to empty than a full slab of
  // large blocks, even though it holds more pairs.
  uint32_t n = classes_[cls].slab_pages;
  if (pages_.size() < n) return false;
  bool found = false;
  uint64_t best = 0;
  uint32_t best_first = 0;
  for (uint32_t first = 0; first + n <= pages_.size(); ++first) {
    uint64_t cost = RunCost(first, n, nullptr);
    if (!found || cost < best) {
      found = true;
      best = cost;
      best_first = first;
    }
  }
  if (!found || best == UINT64_MAX) return false;  // every run holds a reservation
  std::vector<uint32_t> firsts;
  RunCost(best_first, n, &firsts);
  if (firsts.empty()) return false;  // an all-free run: Allocate would have found it, nothing to empty
  for (uint32_t f : firsts) slabs->push_back(static_cast<uint64_t>(f) * page_bytes_);
  return true;
}

void SlabAllocator::CarvedBlocks(uint64_t slab_offset, std::vector<uint64_t>* offsets) const {
  uint32_t first = static_cast<uint32_t>(slab_offset / page_bytes_);
  const Page& p = pages_[first];
  if (p.cls == kNoClass || p.first != first) return;
  size_t bytes = classes_[p.cls].block_bytes;
  for (uint32_t slot = 0; slot < p.carved; ++slot)
    offsets->push_back(slab_offset + static_cast<uint64_t>(slot) * bytes);
}

bool SlabAllocator::CheckConsistency() const {
  uint64_t in_use = 0, bytes = 0;
  std::vector<size_t> class_in_use(classes_.size(), 0), class_pages(classes_.size(), 0);
  std::vector<size_t> class_partial(classes_.size(), 0);
  size_t used_pages = 0;
  for (uint32_t i = 0; i < pages_.size();) {
    const Page& p = pages_[i];
    if (p.cls == kNoClass) {
      if (free_pages_.count(i) == 0) return false;
      ++i;
      continue;
    }
    if (p.first != i || free_pages_.count(i) != 0) return false;  // a slab starts at its first page
    const SlabClass& c = classes_[p.cls];
    if (i + c.slab_pages > pages_.size()) return false;
    for (uint32_t j = i + 1; j < i + c.slab_pages; ++j)
      if (pages_[j].cls != p.cls || pages_[j].first != i || free_pages_.count(j) != 0) return false;
    if (p.capacity != c.slab_pages * page_bytes_ / c.block_bytes) return false;
    if (p.carved > p.capacity || p.carved < p.in_use || p.carved - p.in_use != p.free_slots.size()) return false;
    if (p.in_use == 0) return false;  // empty slabs must be back in the pool
    bool listed = p.partial_index != SIZE_MAX;
    if (listed != SlabHasRoom(p)) return false;
    if (listed && (p.partial_index >= c.partial.size() || c.partial[p.partial_index] != i)) return false;
    class_partial[p.cls] += listed;
    class_in_use[p.cls] += p.in_use;
    class_pages[p.cls] += c.slab_pages;
    in_use += p.in_use;
    bytes += uint64_t{p.in_use} * c.block_bytes;
    used_pages += c.slab_pages;
    i += c.slab_pages;
  }
  for (size_t k = 0; k < classes_.size(); ++k) {
    if (class_in_use[k] != classes_[k].in_use || class_pages[k] != classes_[k].pages) return false;
    if (class_partial[k] != classes_[k].partial.size()) return false;
  }
  return in_use == blocks_in_use_ && bytes == bytes_in_use_ && used_pages + free_pages_.size() == pages_.size();
}

}  // namespace smc
