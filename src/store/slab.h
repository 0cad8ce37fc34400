// Slab allocator over a server's KV arena (memcached's slabs.c, reduced to what shmemcache needs).
//
// Block sizes come in classes: the smallest is kMinBlockBytes, each next class is the previous one times the
// growth factor (rounded up to 8 bytes), and the last class is exactly the largest block the configuration
// allows (header + max key + max value + target word). A pair goes in the smallest class that fits it.
// The arena is cut into pages of page_bytes (raised to the largest class when that is bigger). A page is
// handed to a class the first time the class runs out of free blocks, then carved into blocks of that class;
// freed blocks go back on their class's free list. Offsets, never pointers, name blocks (they cross PEs).
//
// Invariant: for every class, blocks carved == blocks on the free list + blocks in use.
// Not thread-safe: owned by the single server thread.
#ifndef SHMEMCACHE_STORE_SLAB_H_
#define SHMEMCACHE_STORE_SLAB_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace smc {

constexpr size_t kMinBlockBytes = 64;

// The block size of every class for this configuration, smallest first. Clients compute the same table as
// their servers so a hash-table way's class number gives them the block size to fetch.
std::vector<size_t> SlabClassSizes(double growth_factor, size_t max_block_bytes);

class SlabAllocator {
 public:
  SlabAllocator(size_t arena_bytes, size_t page_bytes, double growth_factor, size_t max_block_bytes);
  SlabAllocator(const SlabAllocator&) = delete;
  SlabAllocator& operator=(const SlabAllocator&) = delete;

  int num_classes() const { return static_cast<int>(classes_.size()); }
  size_t class_bytes(int cls) const { return classes_[cls].block_bytes; }
  // The smallest class whose blocks hold block_bytes, or -1 if none does.
  int ClassFor(size_t block_bytes) const;

  // Takes a block of class cls: from its free list, else from a fresh page. Returns false when the class has
  // no free block and no page is left (the caller evicts or reports NO_SPACE).
  bool Allocate(int cls, uint64_t* offset);
  // Returns a block to its class's free list. The block must have come from Allocate(cls).
  void Free(int cls, uint64_t offset);

  size_t page_bytes() const { return page_bytes_; }
  size_t pages_total() const { return pages_total_; }
  size_t pages_used() const { return next_page_; }
  uint64_t blocks_in_use() const { return blocks_in_use_; }
  uint64_t bytes_in_use() const { return bytes_in_use_; }
  size_t free_blocks(int cls) const { return classes_[cls].free_list.size(); }
  size_t carved_blocks(int cls) const { return classes_[cls].carved; }
  size_t blocks_in_use(int cls) const { return classes_[cls].in_use; }
  // Checks the per-class invariant; false means an accounting bug.
  bool CheckConsistency() const;

 private:
  struct SlabClass {
    size_t block_bytes;
    std::vector<uint64_t> free_list;  // offsets of free blocks, LIFO (reuse warm blocks first)
    size_t carved = 0;                // blocks cut from pages so far
    size_t in_use = 0;
  };
  bool GrowClass(int cls);

  std::vector<SlabClass> classes_;
  size_t page_bytes_;
  size_t pages_total_;
  size_t next_page_ = 0;  // pages [0, next_page_) are handed out
  uint64_t blocks_in_use_ = 0;
  uint64_t bytes_in_use_ = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_STORE_SLAB_H_
