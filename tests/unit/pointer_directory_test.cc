// The client pointer directory: lookup/update/remove, replacement by least recency then least count, lazy
// invalidation below the expiration bar, and identity by the full key hash (two keys that share a set and a
// 24-bit tag must never share a sub-entry: a Direct SET trusts the entry to name its key's block).
#include "client/pointer_directory.h"

#include <gtest/gtest.h>

#include <vector>

namespace smc {
namespace {

KeyLocation Loc(uint64_t hash, int server = 0) { return KeyLocation{hash, server, TagOf(hash)}; }

TEST(PointerDirectory, UpdateThenLookup) {
  std::vector<uint64_t> bars(2, 0);
  PointerDirectory d(16, 4, &bars);
  KeyLocation a = Loc(0x1234567890abcdefull);
  EXPECT_EQ(d.Lookup(a), nullptr);
  d.Update(a, 4096, 128, 7, 1, 1);
  DirectoryEntry* e = d.Lookup(a);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->offset, 4096u);
  EXPECT_EQ(e->block_bytes, 128u);
  EXPECT_EQ(e->version, 7u);
  EXPECT_EQ(e->access_count, 1u);
  d.Update(a, 4096, 128, 8, 2, 2);
  EXPECT_EQ(d.Lookup(a)->access_count, 2u);
  EXPECT_EQ(d.stats().hits, 2u);
  EXPECT_EQ(d.stats().misses, 1u);
  d.Remove(a);
  EXPECT_EQ(d.Lookup(a), nullptr);
}

// Peek is Lookup without counting (the flattened on-node GET, Client::GetMapped): the same entry, an expired one
// withheld; the caller that uses it counts the hit with CountHit.
// The value-length hint: each Update replaces it (unknown when the caller knows none), a new sub-entry starts
// without one, and Remove forgets it.
TEST(PointerDirectory, UpdateKeepsTheValueLengthHintItWasGiven) {
  std::vector<uint64_t> bars(1, 0);
  PointerDirectory d(4, 2, &bars);
  const KeyLocation a = Loc(0x1111222233334444ull);
  d.Update(a, 64, 4096, 1, 1, 1);
  ASSERT_NE(d.Lookup(a), nullptr);
  EXPECT_EQ(d.Lookup(a)->value_len, DirectoryEntry::kUnknownValueLen);
  d.Update(a, 64, 4096, 2, 1, 1, d.Lookup(a), 70000);
  EXPECT_EQ(d.Lookup(a)->value_len, 70000u);
  d.Update(a, 64, 4096, 3, 1, 1, nullptr, 65600);  // shrink, found by search
  EXPECT_EQ(d.Lookup(a)->value_len, 65600u);
  d.Update(a, 128, 8192, 4, 1, 1);  // moved, length unknown (an Active reply without one)
  EXPECT_EQ(d.Lookup(a)->value_len, DirectoryEntry::kUnknownValueLen);
  d.Update(a, 128, 8192, 5, 1, 1, nullptr, 0);  // an empty value is a length like any other
  EXPECT_EQ(d.Lookup(a)->value_len, 0u);
  d.Remove(a);
  d.Update(a, 64, 4096, 6, 1, 1);
  EXPECT_EQ(d.Lookup(a)->value_len, DirectoryEntry::kUnknownValueLen);
}

TEST(PointerDirectory, PeekFindsWithoutCountingAndCountHitCounts) {
  std::vector<uint64_t> bars(1, 0);
  PointerDirectory d(16, 4, &bars);
  KeyLocation a = Loc(0x1234567890abcdefull);
  EXPECT_EQ(d.Peek(a), nullptr);
  d.Update(a, 4096, 128, 7, 1, /*server_recency=*/5);
  DirectoryEntry* e = d.Peek(a);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e, d.Lookup(a));
  EXPECT_EQ(d.stats().hits, 1u);  // the Lookup's
  EXPECT_EQ(d.stats().misses, 0u);
  d.CountHit();
  EXPECT_EQ(d.stats().hits, 2u);
  bars[0] = 6;  // below the bar: withheld, not counted
  EXPECT_EQ(d.Peek(a), nullptr);
  EXPECT_EQ(d.stats().expired, 0u);
  EXPECT_EQ(d.stats().hits + d.stats().misses, 2u);
}

// Peek(loc, bar) with the bar a batch read once for loc's server (BarOf, client/mapped_mget.cc) answers what Peek(loc)
// answers: on two servers with bars of their own, each sub-entry below, at and above its own server's bar (a
// sub-entry at the bar is usable: only epochs below it were evicted), the other server's bar never deciding.
TEST(PointerDirectory, PeekWithItsServersBarIsPeek) {
  std::vector<uint64_t> bars(2, 0);
  PointerDirectory d(16, 4, &bars);
  const KeyLocation a = Loc(0x1234567890abcdefull, 0);
  const KeyLocation b = Loc(0x0fedcba987654321ull, 1);
  d.Update(a, 4096, 128, 7, 1, /*server_recency=*/5);
  d.Update(b, 8192, 128, 3, 1, /*server_recency=*/9);
  const uint64_t kBars[] = {0, 4, 5, 6, 8, 9, 10};
  for (uint64_t bar0 : kBars) {
    for (uint64_t bar1 : kBars) {
      bars[0] = bar0;
      bars[1] = bar1;
      EXPECT_EQ(d.BarOf(0), bar0);
      EXPECT_EQ(d.BarOf(1), bar1);
      for (const KeyLocation& loc : {a, b}) {
        const uint64_t recency = loc.server == 0 ? 5 : 9;
        const uint64_t bar = loc.server == 0 ? bar0 : bar1;
        DirectoryEntry* peeked = d.Peek(loc);
        EXPECT_EQ(d.Peek(loc, d.BarOf(loc.server)), peeked) << "server " << loc.server << " bars " << bar0 << ","
                                                            << bar1;
        EXPECT_EQ(peeked != nullptr, recency >= bar) << "server " << loc.server << " bars " << bar0 << "," << bar1;
      }
    }
  }
  EXPECT_EQ(d.stats().hits + d.stats().misses + d.stats().expired, 0u);  // neither Peek counts
}

// The pointer-keeping Refresh (a batch's read through the pointer a sub-entry holds, client/mapped_mget.cc) leaves
// the sub-entry as Refresh with its own offset and size does: version, recency, value length replaced, a lower
// server recency not taken, the access count saturating.
TEST(PointerDirectory, RefreshKeepingThePointerIsRefreshWithItsOwnPointer) {
  std::vector<uint64_t> bars(2, 0);
  PointerDirectory d(16, 4, &bars);
  const KeyLocation a = Loc(0x1234567890abcdefull, 1);
  d.Update(a, 448, 128, 7, 1, /*server_recency=*/3);
  DirectoryEntry* e = d.Peek(a);
  ASSERT_NE(e, nullptr);
  DirectoryEntry same = *e;
  d.Refresh(&same, same.offset, same.block_bytes, 9, 11, 2, 33);
  d.Refresh(e, 9, 11, 2, 33);
  EXPECT_EQ(e->offset, same.offset);
  EXPECT_EQ(e->block_bytes, same.block_bytes);
  EXPECT_EQ(e->server, same.server);
  EXPECT_EQ(e->access_count, same.access_count);
  EXPECT_EQ(e->version, same.version);
  EXPECT_EQ(e->recency, same.recency);
  EXPECT_EQ(e->value_len, same.value_len);
  EXPECT_EQ(e->server_recency, same.server_recency);
  EXPECT_EQ(e->offset, 448u);
  EXPECT_EQ(e->block_bytes, 128u);
  EXPECT_EQ(e->version, 9u);
  EXPECT_EQ(e->recency, 11u);
  EXPECT_EQ(e->value_len, 33u);
  EXPECT_EQ(e->server_recency, 3u);
  EXPECT_EQ(d.Peek(a), e);
  e->access_count = UINT32_MAX;
  d.Refresh(e, 10, 12, 8, 34);
  EXPECT_EQ(e->access_count, UINT32_MAX);  // saturates
  EXPECT_EQ(e->server_recency, 8u);
}

TEST(PointerDirectory, CountMissCountsWhatLookupWouldHave) {
  std::vector<uint64_t> bars(1, 0);
  PointerDirectory d(16, 4, &bars);
  KeyLocation a = Loc(0x1234567890abcdefull);
  EXPECT_EQ(d.Peek(a), nullptr);
  EXPECT_EQ(d.stats().misses, 0u);  // Peek counts nothing; the caller that answered without a pointer does
  d.CountMiss(a);
  EXPECT_EQ(d.stats().misses, 1u);
  EXPECT_EQ(d.stats().expired, 0u);
  EXPECT_EQ(d.stats().hits, 0u);
  EXPECT_EQ(d.size(), 0u);  // counting installs nothing
  d.Update(a, 4096, 128, 7, 1, /*server_recency=*/5);
  bars[0] = 6;  // below the bar: Peek withholds it, Lookup would count a miss and an expired lookup
  EXPECT_EQ(d.Peek(a), nullptr);
  d.CountMiss(a);
  EXPECT_EQ(d.stats().misses, 2u);
  EXPECT_EQ(d.stats().expired, 1u);
  EXPECT_EQ(d.Lookup(a), nullptr);  // the same counts as Lookup's
  EXPECT_EQ(d.stats().misses, 3u);
  EXPECT_EQ(d.stats().expired, 2u);
}

TEST(PointerDirectory, SameSetAndTagButAnotherKeyIsAMiss) {
  std::vector<uint64_t> bars(1, 0);
  PointerDirectory d(16, 4, &bars);
  // Same low 32 bits (set) and same bits 40..63 (tag); they differ only in bits 32..39.
  KeyLocation a = Loc(0xABCDEF0100000005ull);
  KeyLocation b = Loc(0xABCDEF0200000005ull);
  ASSERT_EQ(a.tag, b.tag);
  ASSERT_EQ(SetOf(a.hash, 16), SetOf(b.hash, 16));
  d.Update(a, 64, 128, 3, 1, 1);
  EXPECT_EQ(d.Lookup(b), nullptr);
  d.Update(b, 640, 256, 9, 1, 1);
  EXPECT_EQ(d.Lookup(a)->offset, 64u);
  EXPECT_EQ(d.Lookup(b)->offset, 640u);
}

TEST(PointerDirectory, ServerIsPartOfIdentity) {
  std::vector<uint64_t> bars(2, 0);
  PointerDirectory d(16, 4, &bars);
  d.Update(Loc(42, 0), 64, 128, 1, 1, 1);
  EXPECT_EQ(d.Lookup(Loc(42, 1)), nullptr);
  EXPECT_NE(d.Lookup(Loc(42, 0)), nullptr);
}

TEST(PointerDirectory, FullSetEvictsLeastRecentThenLeastCounted) {
  std::vector<uint64_t> bars(1, 0);
  PointerDirectory d(1, 3, &bars);
  KeyLocation a = Loc(1), b = Loc(2), c = Loc(3), n = Loc(4);
  d.Update(a, 64, 64, 1, /*recency=*/5, 1);
  d.Update(b, 128, 64, 1, 5, 1);
  d.Update(b, 128, 64, 1, 5, 1);  // b: count 2
  d.Update(c, 192, 64, 1, 6, 1);
  d.Update(n, 256, 64, 1, 7, 1);  // evicts a (recency 5, count 1) before b (recency 5, count 2)
  EXPECT_EQ(d.Lookup(a), nullptr);
  EXPECT_NE(d.Lookup(b), nullptr);
  EXPECT_NE(d.Lookup(c), nullptr);
  EXPECT_NE(d.Lookup(n), nullptr);
  EXPECT_EQ(d.stats().evictions, 1u);
}

TEST(PointerDirectory, ExpiredEntriesAreNotUsedAndAreReplacedFirst) {
  std::vector<uint64_t> bars(1, 0);
  PointerDirectory d(1, 2, &bars);
  KeyLocation old = Loc(10), fresh = Loc(11), next = Loc(12);
  d.Update(old, 64, 64, 1, /*recency=*/100, /*server_recency=*/3);
  d.Update(fresh, 128, 64, 1, 1, 9);
  bars[0] = 5;  // the server evicted epochs < 5
  EXPECT_EQ(d.Lookup(old), nullptr);
  EXPECT_EQ(d.stats().expired, 1u);
  EXPECT_NE(d.Lookup(fresh), nullptr);
  // The expired entry is the victim although its client-side recency is the highest.
  d.Update(next, 192, 64, 1, 1, 9);
  EXPECT_EQ(d.stats().expired_dropped, 1u);
  EXPECT_NE(d.Lookup(fresh), nullptr);
  EXPECT_NE(d.Lookup(next), nullptr);
}

// Update(found): the sub-entry Lookup returned spares a second search while it still names the key; a hint that
// was dropped or handed to another key since must be ignored (the update goes to the key's own sub-entry).
TEST(PointerDirectory, UpdateThroughTheSubEntryLookupFound) {
  std::vector<uint64_t> bars(1, 0);
  PointerDirectory d(1, 2, &bars);
  KeyLocation a = Loc(1), b = Loc(2), c = Loc(3);
  d.Update(a, 64, 64, 1, 1, 1);
  DirectoryEntry* found = d.Lookup(a);
  ASSERT_NE(found, nullptr);
  d.Update(a, 128, 256, 2, 3, 4, found);
  EXPECT_EQ(found->offset, 128u);
  EXPECT_EQ(found->block_bytes, 256u);
  EXPECT_EQ(found->version, 2u);
  EXPECT_EQ(found->access_count, 2u);
  EXPECT_EQ(found->recency, 3u);
  EXPECT_EQ(found->server_recency, 4u);
  EXPECT_EQ(d.size(), 1u);

  // The hint was removed, then its slot reused by b: updating a must not overwrite b's pointer.
  d.Remove(a);
  d.Update(b, 640, 64, 9, 5, 5);
  d.Update(c, 704, 64, 9, 6, 6);  // the set is full now (b, c)
  d.Update(a, 192, 64, 3, 7, 7, found);  // found names b or c now: ignored, a installed properly
  ASSERT_NE(d.Lookup(a), nullptr);
  EXPECT_EQ(d.Lookup(a)->offset, 192u);
  const DirectoryEntry* other = d.Peek(b) != nullptr ? d.Peek(b) : d.Peek(c);
  ASSERT_NE(other, nullptr);
  EXPECT_TRUE(other->offset == 640u || other->offset == 704u) << "the stale hint's new owner was overwritten";
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d.stats().evictions, 1u);

  // A hint of another key (same set) is ignored too.
  DirectoryEntry* of_a = d.Lookup(a);
  const KeyLocation survivor = d.Peek(b) != nullptr ? b : c;
  d.Update(survivor, 768, 64, 10, 8, 8, of_a);
  EXPECT_EQ(d.Lookup(a)->offset, 192u);
  EXPECT_EQ(d.Lookup(survivor)->offset, 768u);
}

// The sub-entry keeps the client's range modulo 2^32: a full set still evicts the least recent when the ranges
// of its sub-entries straddle the wrap.
TEST(PointerDirectory, LeastRecentAcrossTheWrapOfTheKeptRange) {
  std::vector<uint64_t> bars(1, 0);
  PointerDirectory d(1, 2, &bars);
  const uint64_t wrap = uint64_t{1} << 32;
  KeyLocation older = Loc(1), newer = Loc(2), next = Loc(3);
  d.Update(older, 64, 64, 1, /*recency=*/wrap - 2, 1);  // kept as 0xfffffffe
  d.Update(newer, 128, 64, 1, /*recency=*/wrap + 1, 1);  // kept as 1: later, although smaller
  d.Update(next, 192, 64, 1, wrap + 2, 1);
  EXPECT_EQ(d.Lookup(older), nullptr);
  EXPECT_NE(d.Lookup(newer), nullptr);
  EXPECT_NE(d.Lookup(next), nullptr);
}

// A pointer to a block of 0 bytes names nothing: it is not recorded (a sub-entry with block_bytes 0 is empty).
TEST(PointerDirectory, APointerToNoBlockIsIgnored) {
  std::vector<uint64_t> bars(1, 0);
  PointerDirectory d(4, 2, &bars);
  d.Update(Loc(5), 64, 0, 1, 1, 1);
  EXPECT_EQ(d.Lookup(Loc(5)), nullptr);
  EXPECT_EQ(d.size(), 0u);
  size_t bytes = 0;
  ASSERT_TRUE(PointerDirectory::BytesFor(8192, 8, &bytes));
  EXPECT_EQ(bytes, size_t{8192} * 8 * 56) << "the README's 3.5 MiB default";
  EXPECT_FALSE(PointerDirectory::BytesFor(~size_t{0} / 4, 8, &bytes));
}

}  // namespace
}  // namespace smc
