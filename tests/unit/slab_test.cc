// SlabAllocator: class sizes, class choice, free-list reuse, exhaustion, non-overlap and accounting.
#include "store/slab.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

namespace smc {
namespace {

size_t RoundUp8(size_t n) { return (n + 7) & ~size_t{7}; }
// Header + 250-byte key + 1 MiB value + target word, the default configuration's largest block.
size_t BlockBytesForDefaults() { return RoundUp8(44 + 250 + (1u << 20) + 8); }

TEST(SlabClasses, GrowthFactorRespected) {
  for (double factor : {1.05, 1.25, 1.5, 2.0, 4.0}) {
    for (size_t max_block : {size_t{64}, size_t{72}, size_t{1000}, size_t{4096}, size_t{(1u << 20) + 290}}) {
      SCOPED_TRACE(testing::Message() << "factor " << factor << " max " << max_block);
      SlabAllocator s(16 << 20, 1 << 20, factor, max_block);
      ASSERT_GE(s.num_classes(), 1);
      EXPECT_EQ(s.class_bytes(0), kMinBlockBytes);
      for (int c = 0; c < s.num_classes(); ++c) EXPECT_EQ(s.class_bytes(c) % 8, 0u) << "class " << c;
      for (int c = 1; c + 1 < s.num_classes(); ++c) {
        size_t want = RoundUp8(static_cast<size_t>(std::ceil(s.class_bytes(c - 1) * factor)));
        EXPECT_GE(s.class_bytes(c), want) << "class " << c;
        EXPECT_GT(s.class_bytes(c), s.class_bytes(c - 1)) << "class " << c;
      }
      // The last class is exactly the largest block (rounded to 8), and strictly larger than the one before.
      EXPECT_EQ(s.class_bytes(s.num_classes() - 1), std::max(kMinBlockBytes, RoundUp8(max_block)));
      if (s.num_classes() > 1)
        EXPECT_GT(s.class_bytes(s.num_classes() - 1), s.class_bytes(s.num_classes() - 2));
    }
  }
}

TEST(SlabClasses, DefaultFactorSequence) {
  SlabAllocator s(1 << 20, 4096, 1.25, 1000);
  std::vector<size_t> want = {64, 80, 104, 136, 176, 224, 280, 352, 440, 552, 696, 872, 1000};
  ASSERT_EQ(s.num_classes(), static_cast<int>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(s.class_bytes(static_cast<int>(i)), want[i]) << i;
}

TEST(SlabClasses, SlabClassSizesMatchesAllocator) {
  // The allocator's classes (which a server publishes to its clients) are exactly SlabClassSizes.
  for (double factor : {1.01, 1.08, 1.25, 2.0}) {
    for (size_t max_block : {size_t{40}, size_t{64}, size_t{1001}, BlockBytesForDefaults()}) {
      SlabAllocator s(1 << 20, 4096, factor, max_block);
      std::vector<size_t> sizes = SlabClassSizes(factor, max_block);
      ASSERT_EQ(sizes.size(), static_cast<size_t>(s.num_classes())) << factor << " " << max_block;
      for (int c = 0; c < s.num_classes(); ++c) EXPECT_EQ(sizes[c], s.class_bytes(c)) << c;
    }
  }
}

TEST(SlabClasses, ClassForPicksSmallestFit) {
  SlabAllocator s(1 << 20, 4096, 1.25, 1000);
  EXPECT_EQ(s.ClassFor(1), 0);
  EXPECT_EQ(s.ClassFor(64), 0);
  EXPECT_EQ(s.ClassFor(65), 1);
  EXPECT_EQ(s.ClassFor(1000), s.num_classes() - 1);
  EXPECT_EQ(s.ClassFor(1001), -1);
  for (size_t b = 1; b <= 1000; ++b) {
    int c = s.ClassFor(b);
    ASSERT_GE(c, 0) << b;
    EXPECT_GE(s.class_bytes(c), b) << b;
    if (c > 0) EXPECT_LT(s.class_bytes(c - 1), b) << b;
    for (int k = 0; k < s.num_classes(); ++k) EXPECT_EQ(s.IsClassFor(k, b), k == c) << b << " " << k;
  }
}

// ClassFor's table (sizes up to kClassTableBytes) and its search beyond agree with the smallest fitting class at
// every size, across the table's end, for a largest block inside the table and one far past it.
TEST(SlabClasses, ClassForTableMatchesSearch) {
  for (size_t max_block : {size_t{1000}, size_t{5000}, size_t{1} << 20}) {
    SlabAllocator s(64u << 20, 1u << 20, 1.25, max_block);
    const size_t top = std::min<size_t>(SlabAllocator::kClassTableBytes * 3, max_block + 64);
    for (size_t b = 0; b <= top; ++b) {
      int want = -1;
      for (int k = 0; k < s.num_classes(); ++k)
        if (s.class_bytes(k) >= b) {
          want = k;
          break;
        }
      ASSERT_EQ(s.ClassFor(b), want) << max_block << " " << b;
    }
    EXPECT_EQ(s.ClassFor(s.class_bytes(s.num_classes() - 1) + 1), -1);
  }
}

// Issue 12: pages no longer grow to the largest block; they shrink to 1/256 of a small arena instead.
TEST(SlabClasses, PageSizedToArenaNotToLargestBlock) {
  EXPECT_EQ(SlabAllocator::PageBytesFor(8u << 20, 1u << 20), 32u * 1024);
  EXPECT_EQ(SlabAllocator::PageBytesFor(256u << 20, 1u << 20), 1u << 20);
  EXPECT_EQ(SlabAllocator::PageBytesFor(1u << 30, 1u << 20), 1u << 20);
  EXPECT_EQ(SlabAllocator::PageBytesFor(1u << 20, 1u << 20), 4096u);  // never below 4 KiB
  EXPECT_EQ(SlabAllocator::PageBytesFor(10u << 20, 4096), 4096u);       // a smaller page asked for is kept
  EXPECT_EQ(SlabAllocator::PageBytesFor(10u << 20, 100001), 40960u);    // 10 MiB / 256, down to 4 KiB
  EXPECT_EQ(SlabAllocator::PageBytesFor(1u << 30, 100001), 100000u);    // rounded down to 8 bytes

  SlabAllocator s(10 << 20, 4096, 1.25, 100000);
  EXPECT_EQ(s.page_bytes(), 4096u);
  EXPECT_EQ(s.pages_total(), (10u << 20) / 4096u);
  int big = s.num_classes() - 1;
  EXPECT_EQ(s.slab_pages(big), 25u);  // 102400 bytes: one block, 2.3% left over
  for (int c = 0; c < s.num_classes(); ++c) {
    SCOPED_TRACE(c);
    size_t slab = s.slab_bytes(c);
    EXPECT_GE(slab, s.class_bytes(c));
    if (s.class_bytes(c) <= s.page_bytes()) {
      EXPECT_EQ(s.slab_pages(c), 1u);
    } else {
      EXPECT_LE(slab % s.class_bytes(c), slab / SlabAllocator::kMaxTailWaste);
      // and no fewer pages would do
      size_t fewer = slab - s.page_bytes();
      EXPECT_TRUE(fewer < s.class_bytes(c) || fewer % s.class_bytes(c) > fewer / SlabAllocator::kMaxTailWaste);
    }
  }
  // The default configuration in 8 MiB: 256 pages of 32 KiB; a 1 MiB block takes a run of them.
  SlabAllocator d(8 << 20, 1 << 20, 1.25, BlockBytesForDefaults());
  EXPECT_EQ(d.pages_total(), 256u);
  EXPECT_EQ(d.slab_pages(d.num_classes() - 1), 33u);
  EXPECT_EQ(d.slab_pages(d.ClassFor(4096 + 40)), 1u);
}

// A slab of several pages: contiguous, every page names its class, all pages go back together, and page
// rebalancing picks the run of pages that is cheapest to empty.
TEST(SlabAlloc, MultiPageSlabs) {
  SlabAllocator s(16 * 4096, 4096, 1.25, 10000);
  int big = s.num_classes() - 1;
  ASSERT_EQ(s.class_bytes(big), 10000u);
  ASSERT_EQ(s.slab_pages(big), 5u);  // 20480 bytes: two blocks, 480 left over
  uint64_t b, c;
  ASSERT_TRUE(s.Allocate(big, &b));
  ASSERT_TRUE(s.Allocate(big, &c));
  EXPECT_EQ(b, 0u);
  EXPECT_EQ(c, 10000u);
  for (uint64_t off = 0; off < 5 * 4096; off += 4096) EXPECT_EQ(s.ClassOf(off), big) << off;
  EXPECT_EQ(s.pages_of(big), 5u);
  // Small blocks take the other 11 pages.
  std::vector<std::vector<uint64_t>> on_page(16);
  uint64_t off;
  while (s.Allocate(0, &off)) on_page[off / 4096].push_back(off);
  EXPECT_EQ(s.pages_free(), 0u);
  EXPECT_TRUE(s.CheckConsistency());
  // Free pages 7 and 9..12: 5 free pages, but no run of 5.
  for (int page : {7, 9, 10, 11, 12})
    for (uint64_t o : on_page[page]) s.Free(0, o);
  EXPECT_EQ(s.pages_free(), 5u);
  EXPECT_FALSE(s.CanAllocate(big));
  EXPECT_FALSE(s.Allocate(big, &off));
  EXPECT_TRUE(s.CheckConsistency());
  // The cheapest run of 5 pages to empty: 7..11 (lowest of those costing one small page: page 8), never the
  // big slab (20000 bytes in use).
  std::vector<uint64_t> victims;
  ASSERT_TRUE(s.CheapestRun(big, &victims));
  ASSERT_EQ(victims.size(), 1u);
  EXPECT_EQ(victims[0], 8u * 4096);
  std::vector<uint64_t> carved;
  s.CarvedBlocks(victims[0], &carved);
  EXPECT_EQ(carved, on_page[8]);
  for (uint64_t o : carved) s.Free(0, o);
  ASSERT_TRUE(s.Allocate(big, &off));
  EXPECT_EQ(off, 7u * 4096);
  EXPECT_EQ(s.pages_of(big), 10u);
  EXPECT_TRUE(s.CheckConsistency());
  // Freeing a slab's blocks returns all five pages at once.
  size_t free_before = s.pages_free();
  s.Free(big, b);
  EXPECT_EQ(s.pages_free(), free_before);
  s.Free(big, c);
  EXPECT_EQ(s.pages_free(), free_before + 5);
  EXPECT_EQ(s.pages_of(big), 5u);
  EXPECT_TRUE(s.CheckConsistency());
}

TEST(SlabAlloc, FreeThenAllocateReusesLifo) {
  SlabAllocator s(1 << 20, 4096, 1.25, 1000);
  int cls = s.ClassFor(100);
  uint64_t a, b, c;
  ASSERT_TRUE(s.Allocate(cls, &a));
  ASSERT_TRUE(s.Allocate(cls, &b));
  ASSERT_TRUE(s.Allocate(cls, &c));
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  s.Free(cls, a);
  s.Free(cls, c);
  uint64_t x, y;
  ASSERT_TRUE(s.Allocate(cls, &x));
  EXPECT_EQ(x, c);  // last freed, first reused
  ASSERT_TRUE(s.Allocate(cls, &y));
  EXPECT_EQ(y, a);
  s.Free(cls, b);
  uint64_t z;
  ASSERT_TRUE(s.Allocate(cls, &z));
  EXPECT_EQ(z, b);
  EXPECT_TRUE(s.CheckConsistency());
}

TEST(SlabAlloc, FreshPageHandsOutAscendingAddresses) {
  SlabAllocator s(1 << 20, 4096, 1.25, 1000);
  EXPECT_EQ(s.pages_free(), 256u);
  int cls = 0;
  uint64_t prev, cur;
  ASSERT_TRUE(s.Allocate(cls, &prev));
  EXPECT_EQ(prev, 0u);  // page 0 is handed out first
  EXPECT_EQ(s.ClassOf(prev), cls);
  for (int i = 1; i < 4096 / 64; ++i) {
    ASSERT_TRUE(s.Allocate(cls, &cur));
    EXPECT_EQ(cur, prev + 64);
    prev = cur;
  }
  EXPECT_EQ(s.pages_of(cls), 1u);
  EXPECT_EQ(s.pages_free(), 255u);
  ASSERT_TRUE(s.Allocate(cls, &cur));
  EXPECT_EQ(s.pages_of(cls), 2u);
  EXPECT_EQ(cur, 4096u);
  EXPECT_EQ(s.ClassOf(cur), cls);
  EXPECT_TRUE(s.CheckConsistency());
}

TEST(SlabAlloc, ExhaustionAndRecovery) {
  // 4 pages of 4096 bytes; the class of 1000-byte blocks holds 4 per page.
  SlabAllocator s(4 * 4096, 4096, 1.25, 1000);
  int big = s.num_classes() - 1;
  ASSERT_EQ(s.class_bytes(big), 1000u);
  std::vector<uint64_t> got;
  uint64_t off;
  while (s.Allocate(big, &off)) {
    got.push_back(off);
    ASSERT_LE(got.size(), 100u);
  }
  EXPECT_EQ(got.size(), 16u);
  EXPECT_EQ(s.pages_of(big), 4u);
  EXPECT_EQ(s.pages_free(), 0u);
  EXPECT_FALSE(s.CanAllocate(big));
  EXPECT_FALSE(s.CanAllocate(0));
  // Another class cannot get a page either.
  EXPECT_FALSE(s.Allocate(0, &off));
  EXPECT_FALSE(s.Allocate(big, &off));
  EXPECT_TRUE(s.CheckConsistency());

  s.Free(big, got[5]);
  EXPECT_TRUE(s.CanAllocate(big));
  ASSERT_TRUE(s.Allocate(big, &off));
  EXPECT_EQ(off, got[5]);
  EXPECT_FALSE(s.Allocate(big, &off));
  // Freeing one block of a page that still holds others does not help another class.
  s.Free(big, got[7]);
  EXPECT_FALSE(s.CanAllocate(0));
  EXPECT_FALSE(s.Allocate(0, &off));
  EXPECT_TRUE(s.CheckConsistency());
}

TEST(SlabAlloc, EmptiedPageGoesToAnotherClass) {
  SlabAllocator s(2 * 4096, 4096, 1.25, 1000);
  int big = s.num_classes() - 1;
  std::vector<uint64_t> got;
  uint64_t off;
  while (s.Allocate(big, &off)) got.push_back(off);
  ASSERT_EQ(got.size(), 8u);
  EXPECT_EQ(s.pages_moved(), 0u);
  EXPECT_FALSE(s.Allocate(0, &off));
  // Free every block of page 1: the page returns to the pool and class 0 may take it.
  for (uint64_t o : got)
    if (o / 4096 == 1) s.Free(big, o);
  EXPECT_EQ(s.pages_free(), 1u);
  EXPECT_EQ(s.pages_of(big), 1u);
  EXPECT_TRUE(s.CheckConsistency());
  ASSERT_TRUE(s.CanAllocate(0));
  ASSERT_TRUE(s.Allocate(0, &off));
  EXPECT_EQ(off / 4096, 1u);
  EXPECT_EQ(s.ClassOf(off), 0);
  EXPECT_EQ(s.pages_of(0), 1u);
  EXPECT_EQ(s.pages_moved(), 1u);
  // The whole page is now carved in class-0 blocks.
  for (int i = 1; i < 4096 / 64; ++i) {
    uint64_t o;
    ASSERT_TRUE(s.Allocate(0, &o));
    EXPECT_EQ(o / 4096, 1u);
  }
  EXPECT_FALSE(s.Allocate(0, &off));
  EXPECT_TRUE(s.CheckConsistency());
}

TEST(SlabAlloc, ZeroPagesArena) {
  SlabAllocator s(1000, 4096, 1.25, 1000);
  EXPECT_EQ(s.pages_total(), 0u);
  uint64_t off;
  EXPECT_FALSE(s.CanAllocate(0));
  EXPECT_FALSE(s.Allocate(0, &off));
  EXPECT_TRUE(s.CheckConsistency());
}

TEST(SlabAlloc, AccountingCounters) {
  SlabAllocator s(1 << 20, 4096, 1.25, 1000);
  uint64_t a, b;
  ASSERT_TRUE(s.Allocate(0, &a));
  ASSERT_TRUE(s.Allocate(3, &b));
  EXPECT_EQ(s.blocks_in_use(), 2u);
  EXPECT_EQ(s.bytes_in_use(), s.class_bytes(0) + s.class_bytes(3));
  EXPECT_EQ(s.blocks_in_use(0), 1u);
  EXPECT_EQ(s.blocks_in_use(3), 1u);
  EXPECT_EQ(s.pages_of(0), 1u);
  EXPECT_EQ(s.pages_of(3), 1u);
  EXPECT_EQ(s.pages_free(), 254u);
  EXPECT_EQ(s.ClassOf(a), 0);
  EXPECT_EQ(s.ClassOf(b), 3);
  s.Free(0, a);
  s.Free(3, b);
  EXPECT_EQ(s.blocks_in_use(), 0u);
  EXPECT_EQ(s.bytes_in_use(), 0u);
  EXPECT_EQ(s.pages_free(), 256u);  // empty pages go back to the pool
  EXPECT_EQ(s.pages_of(0), 0u);
  EXPECT_TRUE(s.CheckConsistency());
}

// Random allocations and frees in every class; max_block above the page size gives multi-page slabs.
void CheckRandomBlocks(size_t max_block) {
  const size_t arena = 512 * 1024;
  SlabAllocator s(arena, 4096, 1.25, max_block);
  std::mt19937_64 rng(12345);
  std::vector<std::pair<uint64_t, int>> live;  // offset, class
  for (int step = 0; step < 20000; ++step) {
    // Alternate filling and draining phases so emptied pages change class.
    bool filling = (step / 2500) % 2 == 0;
    bool alloc = live.empty() || (rng() % 100) < (filling ? 75u : 25u);
    if (alloc) {
      int cls = static_cast<int>(rng() % s.num_classes());
      uint64_t off;
      if (s.Allocate(cls, &off)) {
        ASSERT_LE(off + s.class_bytes(cls), s.pages_total() * s.page_bytes());
        ASSERT_LE(off + s.class_bytes(cls), arena);
        ASSERT_EQ(off % 8, 0u);
        // A block never leaves its slab: every page it touches belongs to its class.
        ASSERT_EQ(s.ClassOf(off + s.class_bytes(cls) - 1), cls);
        if (s.class_bytes(cls) <= s.page_bytes())
          ASSERT_EQ(off / s.page_bytes(), (off + s.class_bytes(cls) - 1) / s.page_bytes());
        live.emplace_back(off, cls);
      }
    } else {
      size_t i = rng() % live.size();
      s.Free(live[i].second, live[i].first);
      live[i] = live.back();
      live.pop_back();
    }
    if (step % 997 == 0) {
      ASSERT_TRUE(s.CheckConsistency()) << step;
      std::vector<std::pair<uint64_t, uint64_t>> r;
      for (auto& l : live) r.emplace_back(l.first, l.first + s.class_bytes(l.second));
      std::sort(r.begin(), r.end());
      for (size_t i = 1; i < r.size(); ++i) ASSERT_LE(r[i - 1].second, r[i].first) << "overlap at step " << step;
    }
  }
  EXPECT_EQ(s.blocks_in_use(), live.size());
  EXPECT_GT(s.pages_moved(), 0u) << "the workload was meant to move pages between classes";
  for (auto& l : live) EXPECT_EQ(s.ClassOf(l.first), l.second);
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (auto& l : live) ranges.emplace_back(l.first, l.first + s.class_bytes(l.second));
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    EXPECT_LE(ranges[i - 1].second, ranges[i].first) << "blocks overlap at " << ranges[i].first;
  EXPECT_TRUE(s.CheckConsistency());
  for (auto& l : live) s.Free(l.second, l.first);
  EXPECT_EQ(s.blocks_in_use(), 0u);
  EXPECT_EQ(s.bytes_in_use(), 0u);
  EXPECT_EQ(s.pages_free(), s.pages_total());
  EXPECT_TRUE(s.CheckConsistency());
}

TEST(SlabAlloc, RandomBlocksNeverOverlapAndStayInArena) { CheckRandomBlocks(2000); }
TEST(SlabAlloc, RandomMultiPageBlocksNeverOverlapAndStayInArena) { CheckRandomBlocks(20000); }

TEST(SlabAlloc, FillEveryClassNoOverlap) {
  const size_t arena = 64 * 4096;
  SlabAllocator s(arena, 4096, 1.25, 4096);
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  uint64_t off;
  for (int round = 0; round < 1000; ++round) {
    bool any = false;
    for (int c = 0; c < s.num_classes(); ++c) {
      if (s.Allocate(c, &off)) {
        ranges.emplace_back(off, off + s.class_bytes(c));
        any = true;
      }
    }
    if (!any) break;
  }
  EXPECT_EQ(s.pages_free(), 0u);
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) ASSERT_LE(ranges[i - 1].second, ranges[i].first);
  ASSERT_FALSE(ranges.empty());
  EXPECT_LE(ranges.back().second, arena);
  EXPECT_TRUE(s.CheckConsistency());
}

}  // namespace
}  // namespace smc
