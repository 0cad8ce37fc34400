// Slab allocator over a server's KV arena (memcached's slabs.c, reduced to what shmemcache needs).
//
// Block sizes come in classes: the smallest is kMinBlockBytes, each next class is the previous one times the
// growth factor (rounded up to 8 bytes), and the last class is exactly the largest block the configuration
// allows (header + max key + max value + target word). A pair goes in the smallest class that fits it.
//
// The arena is cut into pages of page_bytes (raised to the largest class when that is bigger). Pages are
// handed to classes on demand and carved into blocks of that class; each page keeps its own free list. When a
// page's last block is freed the page goes back to the global pool, so memory follows the workload: after the
// value sizes shift (say from 100 B to 10 KiB), evicting old pairs empties old pages and the class that now
// needs memory takes them (memcached moves pages with its slab rebalancer; here an emptied page moves at once).
//
// Invariants: for every page in use, carved == free + in use; blocks in use over all classes == the caller's
// item count. Offsets, never pointers, name blocks (they cross PEs). Not thread-safe: owned by the server.
#ifndef SHMEMCACHE_STORE_SLAB_H_
#define SHMEMCACHE_STORE_SLAB_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace smc {

constexpr size_t kMinBlockBytes = 64;
// Class numbers travel in 8 bits (hash-table ways, pointers): at most this many classes. A growth factor so
// small that it would need more simply jumps to the largest class at the end.
constexpr size_t kMaxSlabClasses = 255;

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

  // Takes a block of class cls from one of its pages, or from a fresh page. Returns false when the class has no
  // free block and no page is free (the caller evicts and tries again, or reports NO_SPACE).
  // *first_use (optional) is set when the block was carved fresh from a page: its bytes are whatever the page
  // held before (another class's blocks), and the caller must initialise its control words.
  bool Allocate(int cls, uint64_t* offset, bool* first_use = nullptr);
  // Returns a block (from Allocate(cls)). A page whose blocks are all free goes back to the global pool.
  void Free(int cls, uint64_t offset);
  // The class of the page holding this offset (the block must be in use).
  int ClassOf(uint64_t offset) const { return pages_[offset / page_bytes_].cls; }
  // Page rebalancing support: the page in use with the fewest bytes in use (false if no page is in use), and
  // the offsets of every block carved in a page (free ones included).
  bool EmptiestPage(uint32_t* page) const;
  void CarvedBlocks(uint32_t page, std::vector<uint64_t>* offsets) const;
  // True if Allocate(cls) would succeed now.
  bool CanAllocate(int cls) const { return !classes_[cls].partial.empty() || !free_pages_.empty(); }

  size_t page_bytes() const { return page_bytes_; }
  size_t pages_total() const { return pages_.size(); }
  size_t pages_free() const { return free_pages_.size(); }
  size_t pages_of(int cls) const { return classes_[cls].pages; }
  uint64_t blocks_in_use() const { return blocks_in_use_; }
  uint64_t bytes_in_use() const { return bytes_in_use_; }
  size_t blocks_in_use(int cls) const { return classes_[cls].in_use; }
  uint64_t pages_moved() const { return pages_moved_; }  // pages that changed class
  // Checks every page's and class's accounting; false means a bug.
  bool CheckConsistency() const;

 private:
  static constexpr int kNoClass = -1;
  struct Page {
    int cls = kNoClass;
    uint32_t carved = 0;              // blocks cut so far (bump pointer)
    uint32_t capacity = 0;            // blocks the page holds in its class
    uint32_t in_use = 0;
    std::vector<uint32_t> free_slots; // freed block indices, LIFO
    size_t partial_index = SIZE_MAX;  // position in its class's partial list, or SIZE_MAX
  };
  struct SlabClass {
    size_t block_bytes;
    std::vector<uint32_t> partial;    // pages of this class with a free or uncarved block
    size_t in_use = 0;
    size_t pages = 0;
  };
  bool PageHasRoom(const Page& p) const { return !p.free_slots.empty() || p.carved < p.capacity; }
  void AddPartial(uint32_t page);
  void RemovePartial(uint32_t page);

  std::vector<SlabClass> classes_;
  std::vector<Page> pages_;
  std::vector<uint32_t> free_pages_;  // LIFO
  std::vector<int> last_class_;       // class each page had last (to count moves)
  size_t page_bytes_;
  uint64_t blocks_in_use_ = 0;
  uint64_t bytes_in_use_ = 0;
  uint64_t pages_moved_ = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_STORE_SLAB_H_
