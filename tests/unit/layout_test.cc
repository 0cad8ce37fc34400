// SymmetricLayout::Compute: regions in order, 4 KiB aligned, non-overlapping, arena last, documented sizes; sizes
// that overflow size_t are CONFIG_ERROR naming the variable (issue 12), never a wrapped-around small layout.
#include "core/layout.h"

#include <gtest/gtest.h>

#include "documented_defaults.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/status.h"
#include "store/hash_table.h"

namespace smc {
namespace {

shmemcache_config_t Config() { return DocumentedDefaults(); }

SymmetricLayout LayoutOf(const shmemcache_config_t& c, int n_pes) {
  SymmetricLayout l;
  EXPECT_EQ(SymmetricLayout::Compute(c, n_pes, &l), SHMEMCACHE_OK) << LastError();
  return l;
}

void CheckLayout(const shmemcache_config_t& c, int n_pes) {
  SCOPED_TRACE(testing::Message() << "servers " << c.num_servers << " pes " << n_pes << " sets " << c.hash_sets
                                  << " ways " << c.hash_ways << " mem " << c.server_memory_bytes);
  SymmetricLayout l = LayoutOf(c, n_pes);
  size_t clients = static_cast<size_t>(n_pes - c.num_servers);

  // Documented sizes.
  EXPECT_EQ(l.peers, std::max<size_t>(clients, static_cast<size_t>(c.num_servers)));
  EXPECT_EQ(l.ready_words, (clients + 63) / 64);
  EXPECT_GE(l.ready_words * 64, clients);
  EXPECT_EQ(l.table_bytes, c.hash_sets * c.hash_ways * 16);
  EXPECT_EQ(l.table_bytes, HashTable::BytesFor(c.hash_sets, c.hash_ways));
  EXPECT_EQ(l.inbox_bytes, l.peers * c.chunks_per_peer * c.chunk_bytes);
  EXPECT_GE(l.arena_bytes, c.server_memory_bytes);
  EXPECT_LT(l.arena_bytes, c.server_memory_bytes + 8);
  EXPECT_EQ(l.arena_bytes % 8, 0u);
  bool landing = c.large_value_threshold != 0 && c.large_value_threshold <= c.max_value_len;
  EXPECT_EQ(l.landing_slot_bytes, landing ? SymmetricLayout::Align(c.max_value_len, 64) : 0u);
  EXPECT_EQ(l.landing_bytes, l.landing_slot_bytes * clients);

  // Control words inside the control region, on separate cache lines.
  EXPECT_LT(SymmetricLayout::kDoorbellOffset + 8, SymmetricLayout::kControlBytes);
  EXPECT_LT(SymmetricLayout::kEpochOffset + 8, SymmetricLayout::kControlBytes);
  EXPECT_LT(SymmetricLayout::kExpirationBarOffset + 8, SymmetricLayout::kControlBytes);
  EXPECT_LT(SymmetricLayout::kDeparturesOffset + 8, SymmetricLayout::kControlBytes);
  EXPECT_GE(SymmetricLayout::kEpochOffset - SymmetricLayout::kDoorbellOffset, 64u);
  EXPECT_GE(SymmetricLayout::kExpirationBarOffset - SymmetricLayout::kEpochOffset, 64u);
  EXPECT_GE(SymmetricLayout::kDeparturesOffset - SymmetricLayout::kExpirationBarOffset, 64u);

  // Alignment.
  for (size_t off : {l.mailbox_offset, l.ready_offset, l.table_offset, l.inbox_offset, l.landing_offset,
                     l.arena_offset})
    EXPECT_EQ(off % 4096, 0u) << off;

  // Order and non-overlap: control, mailboxes, ready, table, inbox, arena; the arena is last and ends the
  // allocation.
  std::vector<std::pair<size_t, size_t>> regions = {
      {0, SymmetricLayout::kControlBytes},
      {l.mailbox_offset, l.mailbox_offset + static_cast<size_t>(c.num_servers) * 8},
      {l.ready_offset, l.ready_offset + l.ready_words * 8},
      {l.table_offset, l.table_offset + l.table_bytes},
      {l.inbox_offset, l.inbox_offset + l.inbox_bytes},
      {l.landing_offset, l.landing_offset + l.landing_bytes},
      {l.arena_offset, l.arena_offset + l.arena_bytes},
  };
  for (size_t i = 1; i < regions.size(); ++i) {
    EXPECT_LE(regions[i - 1].second, regions[i].first) << "region " << i - 1 << " overlaps region " << i;
    EXPECT_LE(regions[i - 1].first, regions[i].first);
  }
  EXPECT_EQ(l.total_bytes, l.arena_offset + l.arena_bytes);
  for (auto& r : regions) EXPECT_LE(r.second, l.total_bytes);
  // No region is padded by more than one page.
  EXPECT_LT(l.ready_offset - (l.mailbox_offset + static_cast<size_t>(c.num_servers) * 8), 4096u);
  EXPECT_LT(l.table_offset - (l.ready_offset + l.ready_words * 8), 4096u);
  EXPECT_LT(l.inbox_offset - (l.table_offset + l.table_bytes), 4096u);
  EXPECT_LT(l.landing_offset - (l.inbox_offset + l.inbox_bytes), 4096u);
  EXPECT_LT(l.arena_offset - (l.landing_offset + l.landing_bytes), 4096u);
}

TEST(Layout, DefaultsTwoPes) {
  shmemcache_config_t c = Config();
  ResolveAutoSettings(&c, 2);  // as init does: the table sized from server memory, 64 MiB / 64 B = 1 Mi ways
  ASSERT_EQ(c.hash_sets, 131072u);
  ASSERT_EQ(c.chunks_per_peer, 32u);  // the ring sized from max_outstanding (64), at most 32 chunks
  CheckLayout(c, 2);
  SymmetricLayout l = LayoutOf(c, 2);
  EXPECT_EQ(l.mailbox_offset, 4096u);
  EXPECT_EQ(l.ready_offset, 8192u);
  EXPECT_EQ(l.ready_words, 1u);
  EXPECT_EQ(l.table_offset, 12288u);
  EXPECT_EQ(l.table_bytes, 131072u * 8 * 16);
  EXPECT_EQ(l.inbox_offset, 12288u + 131072u * 8 * 16);
  EXPECT_EQ(l.inbox_bytes, 1u * 32 * 4352);
  EXPECT_EQ(l.landing_offset, l.inbox_offset + 32 * 4352);  // 34 pages
  EXPECT_EQ(l.landing_slot_bytes, 1u << 20);  // one client, max_value_len
  EXPECT_EQ(l.arena_offset, l.landing_offset + (1u << 20));
  EXPECT_EQ(l.arena_bytes, 64u << 20);
}

TEST(Layout, NoLandingSlotsWithoutLargeValues) {
  shmemcache_config_t c = Config();
  c.large_value_threshold = 0;
  SymmetricLayout l = LayoutOf(c, 5);
  EXPECT_EQ(l.landing_bytes, 0u);
  EXPECT_EQ(l.arena_offset, l.inbox_offset + l.inbox_bytes);
  CheckLayout(c, 5);
  c.large_value_threshold = c.max_value_len + 1;  // no value is ever that large
  EXPECT_EQ(LayoutOf(c, 5).landing_bytes, 0u);
}

TEST(Layout, ManyShapes) {
  for (int servers : {1, 2, 7}) {
    for (int clients : {1, 3, 47, 63, 64, 65, 200}) {  // 47 peers * 3 * 320 B ends 64 B past a page
      for (size_t sets : {size_t{1}, size_t{3}, size_t{4096}}) {
        for (unsigned ways : {1u, 3u, 8u}) {
          for (size_t mem : {size_t{1} << 20, (size_t{1} << 20) + 3}) {
            shmemcache_config_t c = Config();
            c.num_servers = servers;
            c.hash_sets = sets;
            c.hash_ways = ways;
            c.server_memory_bytes = mem;
            c.chunk_bytes = 320;
            c.chunks_per_peer = 3;
            c.max_value_len = mem / 8 + 5;  // landing slots padded to 64 B
            CheckLayout(c, servers + clients);
          }
        }
      }
    }
  }
}

TEST(Layout, MoreServersThanClientsSizesInboxByServers) {
  shmemcache_config_t c = Config();
  c.num_servers = 5;
  SymmetricLayout l = LayoutOf(c, 7);  // 2 clients
  EXPECT_EQ(l.peers, 5u);
  EXPECT_EQ(l.ready_words, 1u);
  EXPECT_EQ(l.inbox_bytes, 5u * c.chunks_per_peer * c.chunk_bytes);
  CheckLayout(c, 7);
}

TEST(Layout, SameConfigSameLayout) {
  shmemcache_config_t c = Config();
  SymmetricLayout a = LayoutOf(c, 9), b = LayoutOf(c, 9);
  EXPECT_EQ(a.ready_offset, b.ready_offset);
  EXPECT_EQ(a.table_offset, b.table_offset);
  EXPECT_EQ(a.inbox_offset, b.inbox_offset);
  EXPECT_EQ(a.arena_offset, b.arena_offset);
  EXPECT_EQ(a.total_bytes, b.total_bytes);
}

// Issue 12's absurd but parseable sizes: each is CONFIG_ERROR naming the variable to lower, and the layout
// passed in is left alone.
void ExpectTooLarge(const shmemcache_config_t& c, int n_pes, const char* variable) {
  SCOPED_TRACE(variable);
  SymmetricLayout l;
  l.total_bytes = 12345;
  ClearLastError();
  EXPECT_EQ(SymmetricLayout::Compute(c, n_pes, &l), SHMEMCACHE_CONFIG_ERROR);
  EXPECT_NE(std::string(LastError()).find(variable), std::string::npos) << LastError();
  EXPECT_EQ(l.total_bytes, 12345u);
}

TEST(Layout, HashSetsThatOverflowTheTable) {
  shmemcache_config_t c = Config();
  c.hash_sets = 134217728ull << 30;  // SHMEMCACHE_HASH_SETS=134217728G: x 8 ways x 16 B = 2^64, wraps to 0
  ExpectTooLarge(c, 4, "SHMEMCACHE_HASH_SETS");
  c.hash_sets = (SIZE_MAX - 4096) / 128;  // fits as a product, but not once placed after the control regions
  ExpectTooLarge(c, 4, "SHMEMCACHE_HASH_SETS");
}

TEST(Layout, ServerMemoryThatOverflowsTheTotal) {
  shmemcache_config_t c = Config();
  c.server_memory_bytes = 18446744073709551608ull;  // aligned already; arena_offset + it wraps
  ExpectTooLarge(c, 4, "SHMEMCACHE_SERVER_MEMORY_BYTES");
  c.server_memory_bytes = 18446744073709551615ull;  // rounding up to 8 wraps to 0
  ExpectTooLarge(c, 4, "SHMEMCACHE_SERVER_MEMORY_BYTES");
  c.server_memory_bytes = SIZE_MAX - 4096;  // rounding up fits; adding the regions before it does not
  ExpectTooLarge(c, 4, "SHMEMCACHE_SERVER_MEMORY_BYTES");
}

TEST(Layout, RingsThatOverflow) {
  shmemcache_config_t c = Config();
  c.chunk_bytes = size_t{1} << 40;  // beyond ValidateConfig's range, to exercise the check itself
  c.chunks_per_peer = 1u << 24;
  ExpectTooLarge(c, 4, "SHMEMCACHE_CHUNK_BYTES");
}

TEST(Layout, LargestSizesThatFitAreComputedExactly) {
  shmemcache_config_t c = Config();
  c.server_memory_bytes = SIZE_MAX / 2;
  SymmetricLayout l = LayoutOf(c, 4);
  EXPECT_EQ(l.arena_bytes, SymmetricLayout::Align(SIZE_MAX / 2, 8));
  EXPECT_EQ(l.total_bytes, l.arena_offset + l.arena_bytes);
  EXPECT_GT(l.total_bytes, c.server_memory_bytes);
}

TEST(CheckedArithmetic, MulAddAlign) {
  size_t r = 0;
  EXPECT_TRUE(CheckedMul(size_t{1} << 31, size_t{1} << 32, &r));
  EXPECT_EQ(r, size_t{1} << 63);
  EXPECT_FALSE(CheckedMul(size_t{1} << 32, size_t{1} << 32, &r));
  EXPECT_TRUE(CheckedMul(0, SIZE_MAX, &r));
  EXPECT_EQ(r, 0u);
  EXPECT_TRUE(CheckedAdd(SIZE_MAX - 1, 1, &r));
  EXPECT_EQ(r, SIZE_MAX);
  EXPECT_FALSE(CheckedAdd(SIZE_MAX, 1, &r));
  EXPECT_TRUE(CheckedAlignUp(SIZE_MAX - 7, 8, &r));
  EXPECT_EQ(r, SIZE_MAX - 7);
  EXPECT_FALSE(CheckedAlignUp(SIZE_MAX - 6, 8, &r));
  EXPECT_FALSE(CheckedAlignUp(SIZE_MAX, 8, &r));
  EXPECT_TRUE(CheckedAlignUp(13, 8, &r));
  EXPECT_EQ(r, 16u);
  EXPECT_TRUE(CheckedAlignUp(0, 4096, &r));
  EXPECT_EQ(r, 0u);
}

TEST(Layout, AlignHelper) {
  EXPECT_EQ(SymmetricLayout::Align(0, 4096), 0u);
  EXPECT_EQ(SymmetricLayout::Align(1, 4096), 4096u);
  EXPECT_EQ(SymmetricLayout::Align(4096, 4096), 4096u);
  EXPECT_EQ(SymmetricLayout::Align(4097, 4096), 8192u);
  EXPECT_EQ(SymmetricLayout::Align(13, 8), 16u);
}

}  // namespace
}  // namespace smc
