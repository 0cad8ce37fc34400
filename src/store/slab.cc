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

SlabAllocator::SlabAllocator(size_t arena_bytes, size_t page_bytes, double growth_factor,
                             size_t max_block_bytes) {
  for (size_t bytes : SlabClassSizes(growth_factor, max_block_bytes)) classes_.push_back(SlabClass{bytes, {}, 0, 0});
  page_bytes_ = std::max(page_bytes, classes_.back().block_bytes);
  size_t pages = arena_bytes / page_bytes_;
  pages_.resize(pages);
  last_class_.assign(pages, kNoClass);
  for (size_t i = pages; i-- > 0;) free_pages_.push_back(static_cast<uint32_t>(i));  // page 0 first
}

int SlabAllocator::ClassFor(size_t block_bytes) const {
  auto it = std::lower_bound(classes_.begin(), classes_.end(), block_bytes,
                             [](const SlabClass& c, size_t b) { return c.block_bytes < b; });
  return it == classes_.end() ? -1 : static_cast<int>(it - classes_.begin());
}

void SlabAllocator::AddPartial(uint32_t page) {
  Page& p = pages_[page];
  std::vector<uint32_t>& list = classes_[p.cls].partial;
  p.partial_index = list.size();
  list.push_back(page);
}

void SlabAllocator::RemovePartial(uint32_t page) {
  Page& p = pages_[page];
  std::vector<uint32_t>& list = classes_[p.cls].partial;
  uint32_t moved = list.back();
  list[p.partial_index] = moved;
  pages_[moved].partial_index = p.partial_index;
  list.pop_back();
  p.partial_index = SIZE_MAX;
}

bool SlabAllocator::Allocate(int cls, uint64_t* offset, bool* first_use) {
  SlabClass& c = classes_[cls];
  if (c.partial.empty()) {
    if (free_pages_.empty()) return false;
    uint32_t page = free_pages_.back();
    free_pages_.pop_back();
    Page& p = pages_[page];
    p = Page{};
    p.cls = cls;
    p.capacity = static_cast<uint32_t>(page_bytes_ / c.block_bytes);
    if (last_class_[page] != kNoClass && last_class_[page] != cls) ++pages_moved_;
    last_class_[page] = cls;
    ++c.pages;
    AddPartial(page);
  }
  uint32_t page = c.partial.back();
  Page& p = pages_[page];
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
  if (!PageHasRoom(p)) RemovePartial(page);
  *offset = static_cast<uint64_t>(page) * page_bytes_ + static_cast<uint64_t>(slot) * c.block_bytes;
  ++c.in_use;
  ++blocks_in_use_;
  bytes_in_use_ += c.block_bytes;
  return true;
}

void SlabAllocator::Free(int cls, uint64_t offset) {
  SlabClass& c = classes_[cls];
  uint32_t page = static_cast<uint32_t>(offset / page_bytes_);
  Page& p = pages_[page];
  uint32_t slot = static_cast<uint32_t>((offset % page_bytes_) / c.block_bytes);
  bool had_room = PageHasRoom(p);
  p.free_slots.push_back(slot);
  --p.in_use;
  --c.in_use;
  --blocks_in_use_;
  bytes_in_use_ -= c.block_bytes;
  if (p.in_use == 0) {  // the whole page is free: back to the pool, any class may take it
    if (had_room) RemovePartial(page);
    --c.pages;
    p = Page{};
    free_pages_.push_back(page);
    return;
  }
  if (!had_room) AddPartial(page);
}

bool SlabAllocator::EmptiestPage(uint32_t* page) const {
  // By bytes in use, not blocks: a page of small blocks with holes costs less to empty than a full page of
  // large blocks, even though it holds more pairs.
  bool found = false;
  uint64_t best = 0;
  for (uint32_t i = 0; i < pages_.size(); ++i) {
    const Page& p = pages_[i];
    if (p.cls == kNoClass) continue;
    uint64_t bytes = static_cast<uint64_t>(p.in_use) * classes_[p.cls].block_bytes;
    if (!found || bytes < best) {
      found = true;
      best = bytes;
      *page = i;
    }
  }
  return found;
}

void SlabAllocator::CarvedBlocks(uint32_t page, std::vector<uint64_t>* offsets) const {
  const Page& p = pages_[page];
  if (p.cls == kNoClass) return;
  size_t bytes = classes_[p.cls].block_bytes;
  for (uint32_t slot = 0; slot < p.carved; ++slot)
    offsets->push_back(static_cast<uint64_t>(page) * page_bytes_ + static_cast<uint64_t>(slot) * bytes);
}

bool SlabAllocator::CheckConsistency() const {
  uint64_t in_use = 0;
  std::vector<size_t> class_in_use(classes_.size(), 0), class_pages(classes_.size(), 0);
  size_t used_pages = 0;
  for (size_t i = 0; i < pages_.size(); ++i) {
    const Page& p = pages_[i];
    if (p.cls == kNoClass) continue;
    ++used_pages;
    if (p.carved < p.in_use || p.carved - p.in_use != p.free_slots.size()) return false;
    if (p.in_use == 0) return false;  // empty pages must be back in the pool
    bool listed = p.partial_index != SIZE_MAX;
    if (listed != PageHasRoom(p)) return false;
    class_in_use[p.cls] += p.in_use;
    ++class_pages[p.cls];
    in_use += p.in_use;
  }
  for (size_t k = 0; k < classes_.size(); ++k)
    if (class_in_use[k] != classes_[k].in_use || class_pages[k] != classes_[k].pages) return false;
  return in_use == blocks_in_use_ && used_pages + free_pages_.size() == pages_.size();
}

}  // namespace smc
