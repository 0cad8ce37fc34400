// Slab allocator over a server's KV arena (memcached's slabs.c, reduced to what shmemcache needs).
//
// Block sizes come in classes: the smallest is kMinBlockBytes, each next class is the previous one times the
// growth factor (rounded up to 8 bytes), and the last class is exactly the largest block the configuration
// allows (header + max key + max value + target word). A pair goes in the smallest class that fits it.
//
// The arena is cut into pages; a class takes memory a slab at a time, a slab being one page or a run of
// contiguous pages, carved into blocks of that class. Each slab keeps its own free list. When a slab's last
// block is freed its pages go back to the global pool, so memory follows the workload: after the value sizes
// shift (say from 100 B to 10 KiB), evicting old pairs empties old slabs and the class that now needs memory
// takes their pages (memcached moves pages with its slab rebalancer; here an emptied slab moves at once).
//
// Page size (issue 12). Pages are page_bytes, but never more than 1/kMinPages of the arena (rounded down to
// 4 KiB, at least 4 KiB). Every class in use holds a partly filled slab, and pages used to be raised to the
// largest block: an 8 MiB arena with 1 MiB values had 7 pages for ~20 classes in play, so most SETs found their
// class without a page, eviction had to empty a whole page of a global recency order, and the cache collapsed
// to a handful of pairs. Now a page does not depend on the largest block: a block that fits a page lives in a
// one-page slab, and a larger block in a slab of the fewest contiguous pages that hold it with at most
// 1/kMaxTailWaste of the slab unused at its end (a 16 MiB arena: 1 MiB blocks in slabs of 17 pages of 64 KiB).
//
// Invariants: for every slab, carved == free + in use and in use > 0 (an empty slab is back in the pool);
// every page is either free or belongs to exactly one slab, whose pages are contiguous and all name its first
// page and its class; blocks in use over all classes == the caller's item count. Offsets, never pointers, name
// blocks (they cross PEs); a block never crosses its slab's end. Not thread-safe: owned by the server.
#ifndef SHMEMCACHE_STORE_SLAB_H_
#define SHMEMCACHE_STORE_SLAB_H_

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

namespace smc {

constexpr size_t kMinBlockBytes = 64;
// Class numbers travel in 8 bits (hash-table ways, pointers): at most this many classes. A growth factor so
// small that it would need more simply jumps to the largest class at the end.
constexpr size_t kMaxSlabClasses = 255;

// The block size of every class for this configuration, smallest first. A server publishes its table in its
// control region (core/layout.h) so that a hash-table way's class number gives clients the block size to
// fetch; nobody else computes it.
std::vector<size_t> SlabClassSizes(double growth_factor, size_t max_block_bytes);

class SlabAllocator {
 public:
  // An arena holds at least this many pages when page_bytes allows (see "Page size" above).
  static constexpr size_t kMinPages = 256;
  // A slab of several pages leaves at most 1/kMaxTailWaste of its bytes unused after its last block.
  static constexpr size_t kMaxTailWaste = 8;
  // The page size an arena of arena_bytes gets when page_bytes is asked for.
  static size_t PageBytesFor(size_t arena_bytes, size_t page_bytes);

  SlabAllocator(size_t arena_bytes, size_t page_bytes, double growth_factor, size_t max_block_bytes);
  SlabAllocator(const SlabAllocator&) = delete;
  SlabAllocator& operator=(const SlabAllocator&) = delete;

  int num_classes() const { return static_cast<int>(classes_.size()); }
  size_t class_bytes(int cls) const { return classes_[cls].block_bytes; }
  // Pages in one slab of this class, and the slab's bytes.
  size_t slab_pages(int cls) const { return classes_[cls].slab_pages; }
  size_t slab_bytes(int cls) const { return classes_[cls].slab_pages * page_bytes_; }
  // The smallest class whose blocks hold block_bytes, or -1 if none does. Up to kClassTableBytes a table lookup
  // (issue 14: the binary search was ~75 instructions of a server's new-key SET), beyond a search.
  int ClassFor(size_t block_bytes) const {
    return block_bytes <= kClassTableBytes ? class_table_[(block_bytes + 7) / 8] : SearchClassFor(block_bytes);
  }
  static constexpr size_t kClassTableBytes = 16384;
  // Whether cls is ClassFor(block_bytes), in two compares (classes grow with their index): a rewrite that keeps
  // its class skips the search.
  bool IsClassFor(int cls, size_t block_bytes) const {
    return block_bytes <= classes_[cls].block_bytes && (cls == 0 || block_bytes > classes_[cls - 1].block_bytes);
  }

  // Takes a block of class cls from one of its slabs, or from a fresh slab. Returns false when the class has no
  // free block and the pool has no run of free pages for a slab (the caller evicts and tries again, or reports
  // NO_SPACE). *first_use (optional) is set when the block was carved fresh from a slab: its bytes are whatever
  // the pages held before (another class's blocks), and the caller must initialise its control words.
  bool Allocate(int cls, uint64_t* offset, bool* first_use = nullptr);
  // Returns a block (from Allocate(cls)). A slab whose blocks are all free goes back to the pool.
  void Free(int cls, uint64_t offset);
  // Pins / unpins the slab holding a block in use (a reservation: store/kv_store.h ReserveBlock): a pinned slab
  // is never part of a run CheapestRun picks, since emptying it could not free the block a client is writing.
  void Pin(uint64_t offset) { ++pages_[pages_[offset / page_bytes_].first].pinned; }
  void Unpin(uint64_t offset) { --pages_[pages_[offset / page_bytes_].first].pinned; }
  // The class of the slab holding this offset (the block must be in use).
  int ClassOf(uint64_t offset) const { return pages_[offset / page_bytes_].cls; }
  // Slab rebalancing support. The slabs in use to empty so that a new slab of cls fits: those overlapping the
  // run of slab_pages(cls) contiguous pages with the fewest bytes in use, appended to *slabs (as the offset of
  // their first byte). False when no run has anything to empty (or the arena is smaller than one slab).
  bool CheapestRun(int cls, std::vector<uint64_t>* slabs) const;
  // The offsets of every block carved in the slab that starts at slab_offset (free ones included).
  void CarvedBlocks(uint64_t slab_offset, std::vector<uint64_t>* offsets) const;
  // True if Allocate(cls) would succeed now.
  bool CanAllocate(int cls) const;

  size_t page_bytes() const { return page_bytes_; }
  size_t pages_total() const { return pages_.size(); }
  size_t pages_free() const { return free_pages_.size(); }
  size_t pages_of(int cls) const { return classes_[cls].pages; }
  uint64_t blocks_in_use() const { return blocks_in_use_; }
  uint64_t bytes_in_use() const { return bytes_in_use_; }
  size_t blocks_in_use(int cls) const { return classes_[cls].in_use; }
  uint64_t pages_moved() const { return pages_moved_; }  // pages that changed class
  // Checks every page's, slab's and class's accounting; false means a bug.
  bool CheckConsistency() const;

 private:
  static constexpr int kNoClass = -1;
  // One per page. The slab's own fields (carved .. partial_index) are kept in its first page only.
  struct Page {
    int cls = kNoClass;
    uint32_t first = 0;               // first page of the slab this page belongs to
    uint32_t carved = 0;              // blocks cut so far (bump pointer)
    uint32_t capacity = 0;            // blocks the slab holds in its class
    uint32_t in_use = 0;
    uint32_t pinned = 0;              // reserved blocks in this slab (Pin): never emptied by CheapestRun
    std::vector<uint32_t> free_slots; // freed block indices, LIFO
    size_t partial_index = SIZE_MAX;  // position in its class's partial list, or SIZE_MAX
  };
  struct SlabClass {
    size_t block_bytes;
    uint32_t slab_pages;
    std::vector<uint32_t> partial;    // first pages of this class's slabs with a free or uncarved block
    size_t in_use = 0;
    size_t pages = 0;
  };
  int SearchClassFor(size_t block_bytes) const;  // ClassFor by binary search over classes_
  bool SlabHasRoom(const Page& p) const { return !p.free_slots.empty() || p.carved < p.capacity; }
  void AddPartial(uint32_t first);
  void RemovePartial(uint32_t first);
  // The first page of the lowest run of n free pages; false if there is none.
  bool FindFreeRun(uint32_t n, uint32_t* first) const;
  // Bytes in use in the slabs overlapping pages [first, first + n), each slab once; their first pages are
  // appended to *slabs if given. UINT64_MAX (slabs then incomplete) when one of them is pinned.
  uint64_t RunCost(uint32_t first, uint32_t n, std::vector<uint32_t>* slabs) const;

  std::vector<SlabClass> classes_;
  // ClassFor of every size up to kClassTableBytes in 8-byte steps: entry i for sizes 8 i - 7 .. 8 i (every class
  // size is a multiple of 8, so all of them share one class).
  std::vector<int16_t> class_table_;
  std::vector<Page> pages_;
  std::set<uint32_t> free_pages_;
  std::vector<int> last_class_;       // class each page had last (to count moves)
  size_t page_bytes_;
  uint64_t blocks_in_use_ = 0;
  uint64_t bytes_in_use_ = 0;
  uint64_t pages_moved_ = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_STORE_SLAB_H_
