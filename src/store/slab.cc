#include "store/slab.h"

#include <algorithm>
#include <cmath>

namespace smc {

std::vector<size_t> SlabClassSizes(double growth_factor, size_t max_block_bytes) {
  max_block_bytes = std::max<size_t>((max_block_bytes + 7) & ~size_t{7}, kMinBlockBytes);
  std::vector<size_t> sizes;
  size_t size = kMinBlockBytes;
  while (size < max_block_bytes) {
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
  max_block_bytes = classes_.back().block_bytes;
  page_bytes_ = std::max(page_bytes, max_block_bytes);
  pages_total_ = arena_bytes / page_bytes_;
}

int SlabAllocator::ClassFor(size_t block_bytes) const {
  auto it = std::lower_bound(classes_.begin(), classes_.end(), block_bytes,
                             [](const SlabClass& c, size_t b) { return c.block_bytes < b; });
  return it == classes_.end() ? -1 : static_cast<int>(it - classes_.begin());
}

bool SlabAllocator::GrowClass(int cls) {
  if (next_page_ >= pages_total_) return false;
  SlabClass& c = classes_[cls];
  uint64_t base = static_cast<uint64_t>(next_page_) * page_bytes_;
  size_t count = page_bytes_ / c.block_bytes;
  ++next_page_;
  // Push in reverse so blocks are handed out in ascending address order.
  for (size_t i = count; i-- > 0;) c.free_list.push_back(base + i * c.block_bytes);
  c.carved += count;
  return true;
}

bool SlabAllocator::Allocate(int cls, uint64_t* offset) {
  SlabClass& c = classes_[cls];
  if (c.free_list.empty() && !GrowClass(cls)) return false;
  *offset = c.free_list.back();
  c.free_list.pop_back();
  ++c.in_use;
  ++blocks_in_use_;
  bytes_in_use_ += c.block_bytes;
  return true;
}

void SlabAllocator::Free(int cls, uint64_t offset) {
  SlabClass& c = classes_[cls];
  c.free_list.push_back(offset);
  --c.in_use;
  --blocks_in_use_;
  bytes_in_use_ -= c.block_bytes;
}

bool SlabAllocator::CheckConsistency() const {
  uint64_t in_use = 0;
  for (const SlabClass& c : classes_) {
    if (c.carved != c.free_list.size() + c.in_use) return false;
    in_use += c.in_use;
  }
  return in_use == blocks_in_use_;
}

}  // namespace smc
