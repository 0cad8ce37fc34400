// The messaging conduit (conduit/conduit.h) between two PEs of a loopback job: messages of every size cut into
// fragments and reassembled in order, a ring that fills and frees (flow control through acks and probes), the
// doorbell and the departure count, and every bounded wait ending in TIMEOUT: a torn fragment (its completion
// flag lost, or a payload byte changed after it landed) is never accepted.
#include "conduit/conduit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <deque>
#include <random>

#include "conduit/reply_room.h"
#include "core/bytes.h"
#include "core/clock.h"
#include "core/core_contention.h"
#include "transport/loopback_transport.h"

namespace smc {
namespace {

constexpr size_t kChunkBytes = 512;
constexpr unsigned kChunks = 4;
constexpr size_t kPayloadMax = kChunkBytes - kChunkHeaderBytes - kChunkTrailerBytes;

// One PE's conduit, on its own symmetric allocation: control words, ready bits, then the rings.
struct ConduitPe {
  static constexpr size_t kReadyOffset = 4096, kInboxOffset = 8192;
  uint8_t* base = nullptr;
  ConduitLayout layout;
  std::unique_ptr<Context> ctx;
  std::unique_ptr<Conduit> conduit;

  // PE 0 is the "server" (ring 0 holds PE 1's messages); PE 1 the "client" (ring 0 holds PE 0's replies).
  ConduitPe(LoopbackJob* job, int pe, uint64_t timeout_ms, bool in_place = false) {
    Transport* t = job->transport(pe);
    layout.chunk_bytes = kChunkBytes;
    layout.chunks = kChunks;
    layout.peers = 1;
    base = static_cast<uint8_t*>(t->SymmetricAlloc(kInboxOffset + kChunks * kChunkBytes));
    layout.inbox = base + kInboxOffset;
    layout.doorbell = reinterpret_cast<uint64_t*>(base + SymmetricLayout::kDoorbellOffset);
    layout.departures = reinterpret_cast<uint64_t*>(base + SymmetricLayout::kDeparturesOffset);
    layout.ready_bits = reinterpret_cast<uint64_t*>(base + kReadyOffset);
    layout.sleeping = reinterpret_cast<uint64_t*>(base + SymmetricLayout::kSleepingOffset);
    ctx = t->CreateContext(1);
    const int first_peer_pe = pe == 0 ? 1 : 0;
    // in_place: map_rings and cpu_atomics (the loopback transport's atomics are CPU atomics).
    conduit = std::make_unique<Conduit>(t, ctx.get(), layout, /*my_slot=*/0, first_peer_pe, timeout_ms, in_place,
                                        in_place);
  }
  uint8_t* chunk(uint64_t seq) const { return layout.inbox + ((seq - 1) % kChunks) * kChunkBytes; }
};

struct Pair {
  explicit Pair(uint64_t timeout_ms = 60000, bool in_place = false)
      : job(2), server(&job, 0, timeout_ms, in_place), client(&job, 1, timeout_ms, in_place) {}
  LoopbackJob job;
  ConduitPe server, client;
};

std::vector<uint8_t> Message(size_t len, uint64_t seed) {
  std::vector<uint8_t> m(len);
  for (size_t i = 0; i < len; ++i) m[i] = static_cast<uint8_t>((seed * 131 + i * 7) ^ (i >> 8));
  return m;
}

TEST(Conduit, ABurstOfPostedMessagesGoesOutWithOnePutAndOneDoorbell) {
  Pair p;
  Conduit& client = *p.client.conduit;
  Conduit& server = *p.server.conduit;
  // Three messages of a chunk each staged: nothing lands before the Flush.
  for (uint64_t i = 0; i < 3; ++i) {
    std::vector<uint8_t> m = Message(kPayloadMax, i);
    ASSERT_EQ(client.Post(0, m.data(), m.size(), true), SHMEMCACHE_OK);
  }
  std::vector<uint8_t> got;
  EXPECT_EQ(server.Poll(0, &got), SHMEMCACHE_IN_PROGRESS);
  EXPECT_EQ(*p.server.layout.doorbell, 0u);
  client.Flush(0);
  EXPECT_EQ(client.stats().puts, 1u);
  EXPECT_EQ(client.stats().doorbells, 1u);
  EXPECT_EQ(*p.server.layout.doorbell, 1u);
  std::vector<size_t> ready;
  ASSERT_TRUE(server.PollDoorbell(&ready));
  EXPECT_EQ(ready, std::vector<size_t>{0});
  for (uint64_t i = 0; i < 3; ++i) {
    ASSERT_EQ(server.Poll(0, &got), SHMEMCACHE_OK);
    EXPECT_EQ(got, Message(kPayloadMax, i));
  }
  // A reply tells the client (its piggybacked ack) that the three were consumed.
  std::vector<uint8_t> reply = Message(8, 99);
  ASSERT_EQ(server.Send(0, reply.data(), reply.size(), false), SHMEMCACHE_OK);
  ASSERT_EQ(client.Receive(0, &got), SHMEMCACHE_OK);
  // Sequences 4, 5, 6 sit in chunks 3, 0, 1: the ring wraps, two puts, still one doorbell.
  for (uint64_t i = 3; i < 6; ++i) {
    std::vector<uint8_t> m = Message(kPayloadMax, i);
    ASSERT_EQ(client.Post(0, m.data(), m.size(), true), SHMEMCACHE_OK);
  }
  client.Flush(0);
  EXPECT_EQ(client.stats().doorbells, 2u);
  EXPECT_EQ(client.stats().puts, 3u);
  EXPECT_EQ(client.stats().probes, 0u);
  for (uint64_t i = 3; i < 6; ++i) {
    ASSERT_EQ(server.Poll(0, &got), SHMEMCACHE_OK);
    EXPECT_EQ(got, Message(kPayloadMax, i));
  }
  client.Flush(0);  // nothing staged: no put, no doorbell
  EXPECT_EQ(client.stats().doorbells, 2u);
}

// Issue 14, in place: to a peer it maps, a sender writes fragments straight into the peer's ring (no put) and
// they stay invisible (use_flag 0) until Flush publishes them, marked instead of checksummed.
TEST(Conduit, FragmentsWrittenInPlaceStayUnpublishedUntilFlush) {
  Pair p(60000, /*in_place=*/true);
  Conduit& client = *p.client.conduit;
  Conduit& server = *p.server.conduit;
  std::vector<uint8_t> small = Message(40, 7), big = Message(kPayloadMax + 5, 8);
  ASSERT_EQ(client.Post(0, small.data(), small.size(), true), SHMEMCACHE_OK);
  ASSERT_EQ(client.Post(0, big.data(), big.size(), true), SHMEMCACHE_OK);
  // The packed chunk's record and the first fragment of the big one are in the server's ring, unpublished.
  EXPECT_EQ(std::memcmp(p.server.chunk(1) + kChunkHeaderBytes + fragment::kRecordHeaderBytes, small.data(),
                        small.size()),
            0);
  EXPECT_EQ(std::memcmp(p.server.chunk(2) + kChunkHeaderBytes, big.data(), kPayloadMax), 0);
  for (uint64_t seq = 1; seq <= 3; ++seq) EXPECT_EQ(LoadU64(p.server.chunk(seq) + fragment::kUseFlagOffset), 0u);
  std::vector<uint8_t> got;
  EXPECT_EQ(server.Poll(0, &got), SHMEMCACHE_IN_PROGRESS);
  client.Flush(0);
  EXPECT_EQ(client.stats().puts, 0u);
  EXPECT_EQ(client.stats().in_place, 3u);
  EXPECT_EQ(client.stats().doorbells, 1u);
  for (uint64_t seq = 1; seq <= 3; ++seq) {
    EXPECT_EQ(LoadU64(p.server.chunk(seq) + fragment::kUseFlagOffset), seq);
    EXPECT_EQ(LoadU64(p.server.chunk(seq) + fragment::kChecksumOffset), fragment::kInPlaceMark);
  }
  ASSERT_EQ(server.Poll(0, &got), SHMEMCACHE_OK);
  EXPECT_EQ(got, small);
  ASSERT_EQ(server.Poll(0, &got), SHMEMCACHE_OK);
  EXPECT_EQ(got, big);
}

// Issue 14, cpu_atomics: a Flush whose ready bit the server has not yet swapped out skips the doorbell add (the
// pass that swaps the bit reads this burst too); once the server swapped it, the next Flush rings again. Fails if
// a Flush skipped the add with its bit clear (the server would never see the second ring) or never skipped.
TEST(Conduit, AFlushWhoseReadyBitIsStillSetSkipsTheDoorbellAdd) {
  Pair p(60000, /*in_place=*/true);
  Conduit& client = *p.client.conduit;
  Conduit& server = *p.server.conduit;
  auto post = [&](uint64_t seed) {
    std::vector<uint8_t> m = Message(24, seed);
    ASSERT_EQ(client.Post(0, m.data(), m.size(), true), SHMEMCACHE_OK);
    client.Flush(0);
  };
  post(1);
  post(2);  // bit still set: no add
  EXPECT_EQ(*p.server.layout.doorbell, 1u);
  EXPECT_EQ(client.stats().doorbells, 1u);
  EXPECT_EQ(client.stats().rings_skipped, 1u);
  std::vector<size_t> ready;
  ASSERT_TRUE(server.PollDoorbell(&ready));
  EXPECT_EQ(ready, std::vector<size_t>{0});
  EXPECT_EQ(*p.server.layout.ready_bits, 0u);
  std::vector<uint8_t> got;
  for (uint64_t seed = 1; seed <= 2; ++seed) {  // both bursts, behind the one ring
    ASSERT_EQ(server.Poll(0, &got), SHMEMCACHE_OK);
    EXPECT_EQ(got, Message(24, seed));
  }
  EXPECT_FALSE(server.PollDoorbell(&ready));
  post(3);  // swapped out since: rings
  EXPECT_EQ(*p.server.layout.doorbell, 2u);
  EXPECT_EQ(client.stats().doorbells, 2u);
  ASSERT_TRUE(server.PollDoorbell(&ready));
  EXPECT_EQ(ready, std::vector<size_t>{0});
  ASSERT_EQ(server.Poll(0, &got), SHMEMCACHE_OK);
  EXPECT_EQ(got, Message(24, 3));
}

TEST(Conduit, SmallMessagesOfABurstSharePackedChunks) {
  Pair p;
  Conduit& client = *p.client.conduit;
  Conduit& server = *p.server.conduit;
  // 40-byte messages take 48-byte records: 9 to a chunk, so 30 fill the 4-chunk ring with one put.
  const size_t per_chunk = kPayloadMax / fragment::RecordBytes(40);
  ASSERT_EQ(per_chunk, 9u);
  for (uint64_t i = 0; i < 30; ++i) {
    std::vector<uint8_t> m = Message(40, i);
    ASSERT_EQ(client.Post(0, m.data(), m.size(), true), SHMEMCACHE_OK);
  }
  client.Flush(0);
  EXPECT_EQ(client.stats().puts, 1u);
  EXPECT_EQ(client.stats().doorbells, 1u);
  EXPECT_EQ(client.stats().fragments_sent, 4u);
  EXPECT_EQ(client.stats().messages_sent, 30u);
  std::vector<uint8_t> got;
  for (uint64_t i = 0; i < 30; ++i) {
    ASSERT_EQ(server.Poll(0, &got), SHMEMCACHE_OK) << i;
    EXPECT_EQ(got, Message(40, i));
  }
  EXPECT_EQ(server.Poll(0, &got), SHMEMCACHE_IN_PROGRESS);
  EXPECT_EQ(server.stats().messages_received, 30u);
}

TEST(Conduit, PackedAndFragmentedMessagesInterleaveInOrder) {
  Pair p;
  // Small (packed), large (fragments of its own), empty, a record that just fits, one just too big to pack.
  const std::vector<size_t> sizes = {1, 40, 3 * kPayloadMax, 0, 7, kPayloadMax - fragment::kRecordHeaderBytes,
                                     kPayloadMax - 3, 5, 2 * kChunks * kPayloadMax, 16};
  std::thread receiver([&] {
    std::vector<uint8_t> got;
    for (size_t i = 0; i < sizes.size(); ++i) {
      ASSERT_EQ(p.server.conduit->Receive(0, &got), SHMEMCACHE_OK);
      EXPECT_EQ(got, Message(sizes[i], i)) << "message " << i << " of " << sizes[i] << " bytes";
    }
  });
  for (size_t i = 0; i < sizes.size(); ++i) {  // staged together: flushed when the ring fills, and at the end
    std::vector<uint8_t> m = Message(sizes[i], i);
    ASSERT_EQ(p.client.conduit->Post(0, m.data(), m.size(), false), SHMEMCACHE_OK);
  }
  p.client.conduit->Flush(0);
  receiver.join();
  EXPECT_EQ(p.server.conduit->stats().messages_received, sizes.size());
}

// The reply room a client counts (conduit/reply_room.h) against a real sender's packing: the client admits
// requests while their largest replies fit its count; the server answers whole groups (request chunks) per
// pass, flushing after each pass, with replies of any length up to the largest, some of them (GETs read back
// from flash) sent after the pass on their own; the client takes a random number of replies at a time. The
// server, whose ring waits end in TIMEOUT, must never find the client's ring full of replies it has not read.
TEST(Conduit, RepliesAdmittedByTheReplyRoomNeverOverrunTheRing) {
  Pair p(/*timeout_ms=*/2000);
  Conduit& server = *p.server.conduit;
  Conduit& client = *p.client.conduit;
  ReplyRoom room(kChunks, kPayloadMax);
  struct Request {
    uint64_t group;
    size_t most;    // its largest reply
    unsigned alone; // charged on its own (may be answered after its pass)
    size_t len = 0; // the reply actually sent
  };
  std::mt19937_64 rng(14);
  auto coin = [&](unsigned in) { return rng() % in == 0; };
  auto largest = [&]() -> size_t {
    switch (rng() % 8) {
      case 0: return kPayloadMax - fragment::kRecordHeaderBytes - rng() % 16;  // records that (nearly) fill a chunk
      case 1: return kPayloadMax + rng() % (2 * kPayloadMax);                  // fragmented
      default: return rng() % 120;                                             // small
    }
  };
  std::deque<Request> unsent, unread;
  uint64_t group = 0;
  bool group_open = false;  // the client's request chunk still takes requests (not yet flushed)
  size_t replies = 0;
  for (int round = 0; round < 3000; ++round) {
    // The client posts requests while their replies fit; a request chunk is closed now and then.
    while (!coin(6)) {
      const size_t most = largest();
      const unsigned alone = coin(5) ? room.Cost(0, most) : 0;
      if (!room.Fits(room.Cost(0, most) + alone)) break;
      if (!group_open || coin(4)) {
        ++group;
        group_open = true;
      }
      room.Add(group, most);
      room.Charge(alone);
      unsent.push_back(Request{group, most, alone});
    }
    group_open = false;  // the client flushes before it waits: later requests start a new chunk
    // The server answers what was sent, whole groups per pass.
    while (!unsent.empty()) {
      std::vector<Request> later;
      for (unsigned groups = 1 + rng() % 3; groups > 0 && !unsent.empty(); --groups) {
        const uint64_t g = unsent.front().group;
        while (!unsent.empty() && unsent.front().group == g) {
          Request r = unsent.front();
          unsent.pop_front();
          r.len = coin(3) ? r.most : rng() % (r.most + 1);
          if (r.alone != 0 && coin(2)) {
            later.push_back(r);
            continue;
          }
          std::vector<uint8_t> m = Message(r.len, replies);
          ASSERT_EQ(server.Post(0, m.data(), m.size(), false), SHMEMCACHE_OK) << "round " << round;
          unread.push_back(r);
          ++replies;
        }
      }
      server.Flush(0);  // the end of the pass
      for (Request& r : later) {
        std::vector<uint8_t> m = Message(r.len, replies);
        ASSERT_EQ(server.Post(0, m.data(), m.size(), false), SHMEMCACHE_OK) << "round " << round;
        unread.push_back(r);
        ++replies;
      }
      server.Flush(0);
    }
    // The client takes some replies (each retires its request).
    for (size_t take = coin(3) ? unread.size() : rng() % (unread.size() + 1); take > 0; --take) {
      std::vector<uint8_t> got;
      ASSERT_EQ(client.Receive(0, &got), SHMEMCACHE_OK);
      ASSERT_EQ(got.size(), unread.front().len);
      room.Retire(unread.front().group);
      room.Release(unread.front().alone);
      unread.pop_front();
    }
  }
  EXPECT_GT(server.stats().probes, 0u);  // the ring did run full (acks come only through probes here)
  EXPECT_GT(replies, 3000u);
}

// Encoding in place: a message that packs is written straight into the staging (Reserve, PostParts) and
// arrives exactly as a posted one, in order with posted and fragmented messages; one that does not pack is not
// reserved (PostParts copies its parts straight into its fragments, a part spanning fragments and a fragment
// spanning parts); a full ring is flushed and waited for as by Post.
TEST(Conduit, MessagesWrittenInPlaceArriveLikePostedOnes) {
  Pair p;
  Conduit& client = *p.client.conduit;
  const std::vector<size_t> sizes = {0,  1,  40, kPayloadMax - fragment::kRecordHeaderBytes, kPayloadMax - 7, 3,
                                     2 * kChunks * kPayloadMax, 17, 9, 200, 200, 200, 200, 200, 200, 200, 5};
  std::thread receiver([&] {
    std::vector<uint8_t> got;
    for (size_t i = 0; i < sizes.size(); ++i) {
      ASSERT_EQ(p.server.conduit->Receive(0, &got), SHMEMCACHE_OK);
      EXPECT_EQ(got, Message(sizes[i], i)) << "message " << i << " of " << sizes[i] << " bytes";
    }
  });
  size_t reserved = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::vector<uint8_t> m = Message(sizes[i], i);
    if (i % 3 == 1) {  // some posted the old way between them
      ASSERT_EQ(client.Post(0, m.data(), m.size(), false), SHMEMCACHE_OK);
      continue;
    }
    Status s = SHMEMCACHE_INVALID_ARGUMENT;
    uint8_t* at = client.Reserve(0, m.size(), false, &s);
    ASSERT_EQ(s, SHMEMCACHE_OK);
    if (at == nullptr) {  // does not pack: in three parts (an empty one between), the last spanning fragments
      ASSERT_FALSE(fragment::Packs(m.size(), kPayloadMax));
      const size_t cut = kPayloadMax / 2 + 3;
      ASSERT_EQ(client.PostParts(0, {{m.data(), cut}, {nullptr, 0}, {m.data() + cut, m.size() - cut}}, false),
                SHMEMCACHE_OK);
      continue;
    }
    ASSERT_TRUE(fragment::Packs(m.size(), kPayloadMax));
    if (!m.empty()) std::memcpy(at, m.data(), m.size());
    ++reserved;
  }
  client.Flush(0);
  receiver.join();
  EXPECT_GE(reserved, 8u);
  EXPECT_EQ(client.stats().messages_sent, sizes.size());
}

// A reply reserved at its largest length and trimmed once written (Trim, the server's GET replies): it arrives
// at the trimmed length, its padding zero, and the records after it follow it in the same chunk; the trimmed
// record keeps the chunk it was reserved in (a reservation that did not fit the open chunk started a new one),
// in place and through puts alike.
TEST(Conduit, AReservedMessageTrimmedArrivesAtItsTrimmedLength) {
  for (bool in_place : {false, true}) {
    Pair p(60000, in_place);
    Conduit& client = *p.client.conduit;
    const std::vector<std::pair<size_t, size_t>> reserved_written = {
        {100, 37}, {kPayloadMax - fragment::kRecordHeaderBytes, 5}, {20, 20}, {200, 0}, {64, 9}};
    for (size_t i = 0; i < reserved_written.size(); ++i) {
      Status s = SHMEMCACHE_INVALID_ARGUMENT;
      uint8_t* at = client.Reserve(0, reserved_written[i].first, false, &s);
      ASSERT_EQ(s, SHMEMCACHE_OK);
      ASSERT_NE(at, nullptr);
      std::memset(at, 0xee, reserved_written[i].first);  // bytes past the trimmed length: never delivered
      const std::vector<uint8_t> m = Message(reserved_written[i].second, i);
      if (!m.empty()) std::memcpy(at, m.data(), m.size());
      client.Trim(0, m.size());
    }
    size_t written = 0;
    for (const auto& rw : reserved_written) written += rw.second;
    EXPECT_EQ(client.unflushed_bytes(0), written);  // counted at their trimmed lengths
    const uint64_t chunks_staged = client.last_staged(0);
    client.Flush(0);
    // The second reservation did not fit beside the first record and started chunk 2; trimmed, it leaves room
    // there for the three after it.
    EXPECT_EQ(chunks_staged, 2u) << "in_place " << in_place;
    for (size_t i = 0; i < reserved_written.size(); ++i) {
      MessageView got;
      ASSERT_EQ(p.server.conduit->PollInPlace(0, &got), SHMEMCACHE_OK) << "message " << i;
      const std::vector<uint8_t> m = Message(reserved_written[i].second, i);
      ASSERT_EQ(got.len, m.size()) << "message " << i << " in_place " << in_place;
      EXPECT_TRUE(std::equal(m.begin(), m.end(), got.data)) << "message " << i;
      for (size_t b = m.size(); b < ((m.size() + 7) & ~size_t{7}); ++b) EXPECT_EQ(got.data[b], 0) << "padding " << b;
    }
    p.server.conduit->Release(0);
    MessageView none;
    EXPECT_EQ(p.server.conduit->PollInPlace(0, &none), SHMEMCACHE_IN_PROGRESS);
  }
}

// PollInPlace hands out a held chunk's records inline (issue 14), and only while the peer has not failed: a
// peer given up on with records still held answers its failure, as Collect's path does, never a record.
TEST(Conduit, HeldRecordsOfAFailedPeerAreNotHandedOut) {
  Pair p;
  Conduit& client = *p.client.conduit;
  Conduit& server = *p.server.conduit;
  for (uint64_t i = 0; i < 3; ++i) {
    std::vector<uint8_t> m = Message(40, i);
    ASSERT_EQ(client.Post(0, m.data(), m.size(), true), SHMEMCACHE_OK);
  }
  client.Flush(0);
  MessageView view;
  ASSERT_EQ(server.PollInPlace(0, &view), SHMEMCACHE_OK);
  server.Release(0);
  ASSERT_TRUE(server.HoldsRecords(0));
  server.GiveUp(0, "test");
  EXPECT_EQ(server.PollInPlace(0, &view), SHMEMCACHE_TIMEOUT);
  EXPECT_EQ(server.stats().messages_received, 1u);
}

TEST(Conduit, NothingIsReservedForAFailedPeer) {
  Pair p;
  Conduit& client = *p.client.conduit;
  client.GiveUp(0, "test");
  Status s = SHMEMCACHE_OK;
  EXPECT_EQ(client.Reserve(0, 8, true, &s), nullptr);
  EXPECT_EQ(s, SHMEMCACHE_TIMEOUT);
  const uint8_t byte = 1;
  EXPECT_EQ(client.PostParts(0, {{&byte, 1}}, true), SHMEMCACHE_TIMEOUT);
  EXPECT_EQ(client.stats().messages_sent, 0u);
}

TEST(Conduit, PostingMoreThanTheRingHoldsFlushesAndWaitsAndRingsForEveryPart) {
  Pair p;
  const size_t big = 3 * kChunks * kPayloadMax + 17;
  std::thread receiver([&] {
    std::vector<uint8_t> got;
    ASSERT_EQ(p.server.conduit->Receive(0, &got), SHMEMCACHE_OK);
    EXPECT_EQ(got, Message(big, 1));
  });
  std::vector<uint8_t> m = Message(big, 1);
  ASSERT_EQ(p.client.conduit->Post(0, m.data(), m.size(), true), SHMEMCACHE_OK);
  p.client.conduit->Flush(0);  // the last part: its doorbell too
  receiver.join();
  EXPECT_GE(p.client.conduit->stats().doorbells, 4u);  // a ring's worth at a time, each with its doorbell
}

void EverySizeArrivesWholeAndInOrder(bool in_place) {
  Pair p(60000, in_place);
  const std::vector<size_t> sizes = {0, 1, kPayloadMax - 1, kPayloadMax, kPayloadMax + 1, 2 * kPayloadMax,
                                     kChunks * kPayloadMax, 3 * kChunks * kPayloadMax + 17};
  std::thread receiver([&] {
    std::vector<uint8_t> got;
    for (size_t i = 0; i < sizes.size(); ++i) {
      ASSERT_EQ(p.server.conduit->Receive(0, &got), SHMEMCACHE_OK);
      EXPECT_EQ(got, Message(sizes[i], i)) << "message " << i << " of " << sizes[i] << " bytes";
    }
  });
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<uint8_t> m = Message(sizes[i], i);
    ASSERT_EQ(p.client.conduit->Send(0, m.data(), m.size(), false), SHMEMCACHE_OK);
  }
  receiver.join();
  EXPECT_EQ(p.client.conduit->stats().messages_sent, sizes.size());
  EXPECT_EQ(p.server.conduit->stats().messages_received, sizes.size());
  // A message larger than the ring went through only because the receiver freed chunks meanwhile.
  EXPECT_GT(p.client.conduit->stats().probes, 0u);
  EXPECT_EQ(p.client.conduit->stats().in_place, in_place ? p.client.conduit->stats().fragments_sent : 0u);
}

TEST(Conduit, MessagesOfEverySizeArriveWholeAndInOrder) { EverySizeArrivesWholeAndInOrder(false); }
// The same written in place (issue 14): probes read the ring through the mapping, wraps need no second put.
TEST(Conduit, MessagesOfEverySizeWrittenInPlaceArriveWholeAndInOrder) { EverySizeArrivesWholeAndInOrder(true); }

TEST(Conduit, ARecordLentInPlaceKeepsItsChunkUntilReleasedAndIsNeverCopied) {
  Pair p;
  Conduit& client = *p.client.conduit;
  Conduit& server = *p.server.conduit;
  // Two packed chunks of 40-byte records (9 to a chunk), then a fragmented message of two chunks.
  const size_t per_chunk = kPayloadMax / fragment::RecordBytes(40);
  for (uint64_t i = 0; i < per_chunk + 1; ++i) {
    std::vector<uint8_t> m = Message(40, i);
    ASSERT_EQ(client.Post(0, m.data(), m.size(), true), SHMEMCACHE_OK);
    EXPECT_EQ(client.unflushed(0), i + 1);
    EXPECT_EQ(client.unflushed_bytes(0), 40 * (i + 1));  // the messages' bytes, framing not counted
  }
  const std::vector<uint8_t> big = Message(kPayloadMax + 10, 99);
  ASSERT_EQ(client.Post(0, big.data(), big.size(), true), SHMEMCACHE_OK);
  EXPECT_EQ(client.unflushed_bytes(0), 40 * (per_chunk + 1) + big.size());
  client.Flush(0);
  EXPECT_EQ(client.unflushed(0), 0u);
  EXPECT_EQ(client.unflushed_bytes(0), 0u);
  auto used = [&](uint64_t seq) { return LoadU64(p.server.chunk(seq) + fragment::kUseFlagOffset); };
  MessageView view;
  for (uint64_t i = 0; i < per_chunk; ++i) {
    ASSERT_EQ(server.PollInPlace(0, &view), SHMEMCACHE_OK) << i;
    // The bytes lie in the ring itself, in chunk 1, which stays taken while any of its records is lent.
    EXPECT_GE(view.data, p.server.chunk(1));
    EXPECT_LT(view.data, p.server.chunk(1) + kChunkBytes);
    EXPECT_EQ(std::vector<uint8_t>(view.data, view.data + view.len), Message(40, i));
    EXPECT_EQ(used(1), 1u) << i;
    EXPECT_EQ(server.HoldsRecords(0), i + 1 < per_chunk);
  }
  server.Release(0);  // the last record of chunk 1: the chunk is free, and acknowledged with the next reply
  EXPECT_EQ(used(1), 0u);
  EXPECT_EQ(used(2), 2u);
  ASSERT_EQ(server.PollInPlace(0, &view), SHMEMCACHE_OK);  // chunk 2's one record; releases nothing lent
  EXPECT_EQ(std::vector<uint8_t>(view.data, view.data + view.len), Message(40, per_chunk));
  EXPECT_EQ(used(2), 2u);
  ASSERT_EQ(server.PollInPlace(0, &view), SHMEMCACHE_OK);  // the next poll released chunk 2 first
  EXPECT_EQ(used(2), 0u);
  EXPECT_EQ(std::vector<uint8_t>(view.data, view.data + view.len), big);  // assembled: lent from the assembly
  server.Release(0);
  EXPECT_EQ(server.PollInPlace(0, &view), SHMEMCACHE_IN_PROGRESS);
  EXPECT_EQ(server.stats().messages_received, per_chunk + 2);
}

TEST(Conduit, AcksRideOnRepliesSoARequestReplyExchangeNeedsNoProbes) {
  Pair p;
  const int rounds = 10 * kChunks;
  std::thread server([&] {
    std::vector<uint8_t> request;
    for (int i = 0; i < rounds; ++i) {
      ASSERT_EQ(p.server.conduit->Receive(0, &request), SHMEMCACHE_OK);
      ASSERT_EQ(p.server.conduit->Send(0, request.data(), request.size(), false), SHMEMCACHE_OK);
    }
  });
  std::vector<uint8_t> reply;
  for (int i = 0; i < rounds; ++i) {
    std::vector<uint8_t> m = Message(100, static_cast<uint64_t>(i));
    ASSERT_EQ(p.client.conduit->Send(0, m.data(), m.size(), false), SHMEMCACHE_OK);
    ASSERT_EQ(p.client.conduit->Receive(0, &reply), SHMEMCACHE_OK);
    EXPECT_EQ(reply, m);
  }
  server.join();
  EXPECT_EQ(p.client.conduit->stats().probes, 0u);
  EXPECT_EQ(p.server.conduit->stats().probes, 0u);
}

TEST(Conduit, PollNeverBlocksAndAssemblesAcrossCalls) {
  Pair p;
  std::vector<uint8_t> got;
  EXPECT_EQ(p.server.conduit->Poll(0, &got), SHMEMCACHE_IN_PROGRESS);
  std::vector<uint8_t> m = Message(2 * kPayloadMax + 5, 3);  // three fragments
  ASSERT_EQ(p.client.conduit->Send(0, m.data(), m.size(), false), SHMEMCACHE_OK);
  ASSERT_EQ(p.server.conduit->Poll(0, &got), SHMEMCACHE_OK);
  EXPECT_EQ(got, m);
  EXPECT_EQ(p.server.conduit->Poll(0, &got), SHMEMCACHE_IN_PROGRESS);
}

TEST(Conduit, DoorbellNamesTheReadyRingAndDeparturesAreCounted) {
  Pair p;
  std::vector<size_t> ready;
  EXPECT_FALSE(p.server.conduit->PollDoorbell(&ready));
  EXPECT_TRUE(ready.empty());
  std::vector<uint8_t> m = Message(10, 1);
  ASSERT_EQ(p.client.conduit->Send(0, m.data(), m.size(), true), SHMEMCACHE_OK);
  ASSERT_TRUE(p.server.conduit->PollDoorbell(&ready));
  EXPECT_EQ(ready, std::vector<size_t>{0});
  EXPECT_EQ(*p.server.layout.ready_bits, 0u);  // taken
  EXPECT_EQ(p.server.conduit->departures(), 0u);
  p.client.conduit->Depart(0);
  p.server.conduit->WaitDoorbell(&ready);  // the departure rang it
  EXPECT_TRUE(ready.empty());
  EXPECT_EQ(p.server.conduit->departures(), 1u);
}

TEST(Conduit, NoMessageWithinTheTimeoutIsTimeoutAndTheRingIsFailedForGood) {
  Pair p(/*timeout_ms=*/200);
  std::vector<uint8_t> got;
  EXPECT_EQ(p.client.conduit->Receive(0, &got), SHMEMCACHE_TIMEOUT);
  std::string error = LastError();
  EXPECT_NE(error.find("no message from PE 0 within op_timeout_ms (200 ms)"), std::string::npos) << error;
  EXPECT_TRUE(p.client.conduit->failed(0));
  // A late message is never read: every call about the peer answers TIMEOUT at once.
  std::vector<uint8_t> m = Message(10, 1);
  ASSERT_EQ(p.server.conduit->Send(0, m.data(), m.size(), false), SHMEMCACHE_OK);
  EXPECT_EQ(p.client.conduit->Poll(0, &got), SHMEMCACHE_TIMEOUT);
  EXPECT_EQ(p.client.conduit->Send(0, m.data(), m.size(), false), SHMEMCACHE_TIMEOUT);
}

TEST(Conduit, ARingThatStaysFullIsTimeout) {
  Pair p(/*timeout_ms=*/200);
  std::vector<uint8_t> m = Message(kChunks * kPayloadMax + 1, 1);  // one fragment more than the ring holds
  EXPECT_EQ(p.client.conduit->Send(0, m.data(), m.size(), false), SHMEMCACHE_TIMEOUT);
  std::string error = LastError();
  EXPECT_NE(error.find("stayed full"), std::string::npos) << error;
  EXPECT_NE(error.find("has not consumed sequence 1"), std::string::npos) << error;
}

TEST(Conduit, AFragmentWhoseCompletionFlagNeverLandsIsNeverAccepted) {
  Pair p(/*timeout_ms=*/200);
  // The put of the client's first fragment loses its last 8 bytes: the completion flag.
  p.job.faults().on_put = [](int from, int to, size_t offset, size_t* bytes) {
    if (from == 1 && to == 0 && offset == ConduitPe::kInboxOffset) *bytes -= kChunkTrailerBytes;
  };
  std::vector<uint8_t> m = Message(300, 1);
  ASSERT_EQ(p.client.conduit->Send(0, m.data(), m.size(), false), SHMEMCACHE_OK);
  std::vector<uint8_t> got;
  EXPECT_EQ(p.server.conduit->Receive(0, &got), SHMEMCACHE_TIMEOUT);
  EXPECT_TRUE(got.empty());
  std::string error = LastError();
  EXPECT_NE(error.find("was flagged but did not complete"), std::string::npos) << error;
  EXPECT_NE(error.find("use=1"), std::string::npos) << error;
  EXPECT_GT(p.server.conduit->stats().torn_waits, 0u);
}

TEST(Conduit, AFragmentWhosePayloadChangedFailsItsChecksum) {
  Pair p(/*timeout_ms=*/200);
  std::vector<uint8_t> m = Message(300, 1);
  ASSERT_EQ(p.client.conduit->Send(0, m.data(), m.size(), false), SHMEMCACHE_OK);
  // Both flags are there, but a payload byte differs from what the sender hashed: a torn or foreign payload.
  uint8_t* c = p.server.chunk(1);
  c[kChunkHeaderBytes + 100] ^= 0x40;
  std::vector<uint8_t> got;
  EXPECT_EQ(p.server.conduit->Poll(0, &got), SHMEMCACHE_TIMEOUT);
  std::string error = LastError();
  EXPECT_NE(error.find("did not complete"), std::string::npos) << error;
  EXPECT_NE(error.find("computed="), std::string::npos) << error;
  EXPECT_TRUE(p.server.conduit->failed(0));
}

TEST(Conduit, AFragmentStillLandingIsWaitedForNotRejected) {
  Pair p;
  std::vector<uint8_t> m = Message(300, 1);
  // Deliver the fragment in two steps: everything but the completion flag now, the flag a moment later (the
  // order in which a DMA or a receiver-side copy may land bytes).
  p.job.faults().on_put = [&](int from, int to, size_t offset, size_t* bytes) {
    if (from == 1 && to == 0 && offset == ConduitPe::kInboxOffset) *bytes -= kChunkTrailerBytes;
  };
  ASSERT_EQ(p.client.conduit->Send(0, m.data(), m.size(), false), SHMEMCACHE_OK);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    __atomic_store_n(reinterpret_cast<uint64_t*>(p.server.chunk(1) + fragment::CompFlagOffset(fragment::RecordBytes(300))), uint64_t{1},
                     __ATOMIC_RELEASE);
  });
  std::vector<uint8_t> got;
  EXPECT_EQ(p.server.conduit->Receive(0, &got), SHMEMCACHE_OK);
  late.join();
  EXPECT_EQ(got, m);
}


// ---- Idle servers sleep on their doorbell (conduit/doorbell_sleep.h) ------------------------------------------

// The server sleeps after a 1 us spin and its client wakes it, thousands of times, with the ring landing at every
// point of the server's way into its sleep (random pauses; every fourth ring finds it asleep): no wake-up is
// lost. A lost one would leave the server in a nap of kNap (its only other way out), so a round that took that
// long is one; none may.
TEST(Conduit, ASleepingServerIsWokenByEveryRingAndNoWakeUpIsLost) {
  constexpr uint64_t kNap = 20000000000ull;  // 20 s
  constexpr int kRounds = 3000;
  Pair p;
  p.server.conduit->SleepWhenIdle(/*spin_ns=*/1000, kNap);
  std::atomic<int> served{0};
  std::atomic<int> slow_rounds{0};
  std::thread server([&] {
    std::vector<size_t> ready;
    std::vector<uint8_t> got;
    for (int i = 0; i < kRounds; ++i) {
      const uint64_t start = NowNanos();
      do {
        p.server.conduit->WaitDoorbell(&ready);
      } while (ready.empty());
      if (NowNanos() - start >= kNap) ++slow_rounds;
      ASSERT_EQ(p.server.conduit->Poll(0, &got), SHMEMCACHE_OK);
      ASSERT_EQ(got, Message(8, static_cast<uint64_t>(i)));
      served.store(i + 1, std::memory_order_release);
    }
  });
  std::mt19937 rng(7);
  for (int i = 0; i < kRounds; ++i) {
    if (i % 4 == 0) {  // rings a server certainly asleep (it stays so until woken: its nap is kNap)
      while (__atomic_load_n(p.server.layout.sleeping, __ATOMIC_ACQUIRE) == 0) std::this_thread::yield();
    } else {  // 0-40 us: before, during and after the server's spin and its way into the futex
      const uint64_t pause = rng() % 40000;
      for (const uint64_t until = NowNanos() + pause; NowNanos() < until;) {
      }
    }
    std::vector<uint8_t> m = Message(8, static_cast<uint64_t>(i));
    ASSERT_EQ(p.client.conduit->Send(0, m.data(), m.size(), true), SHMEMCACHE_OK);
    while (served.load(std::memory_order_acquire) != i + 1) std::this_thread::yield();
  }
  server.join();
  EXPECT_EQ(slow_rounds.load(), 0);
  shmemcache_stats_t server_stats{}, client_stats{};
  p.server.conduit->FillStats(&server_stats);
  p.client.conduit->FillStats(&client_stats);
  EXPECT_GT(server_stats.idle_sleeps, 0u);
  EXPECT_GT(client_stats.doorbell_wakes, 0u);
  EXPECT_EQ(client_stats.idle_sleeps, 0u);  // a client never sleeps on a doorbell
}

// A client that does not map the server (another node) cannot wake it: the server still sees its ring, and its
// departure, at the end of a nap.
TEST(Conduit, AServerNoClientCanWakeSeesTheRingAfterANap) {
  Pair p;
  p.client.layout.sleeping = nullptr;  // maps nothing of the server's: never wakes it
  p.client.conduit = std::make_unique<Conduit>(p.job.transport(1), p.client.ctx.get(), p.client.layout, 0, 0, 60000);
  p.server.conduit->SleepWhenIdle(/*spin_ns=*/1000, /*max_nap_ns=*/1000000);
  std::thread client([&] {
    while (__atomic_load_n(p.server.layout.sleeping, __ATOMIC_ACQUIRE) == 0) std::this_thread::yield();
    std::vector<uint8_t> m = Message(8, 1);
    ASSERT_EQ(p.client.conduit->Send(0, m.data(), m.size(), true), SHMEMCACHE_OK);
    p.client.conduit->Depart(0);
  });
  std::vector<size_t> ready;
  do {
    p.server.conduit->WaitDoorbell(&ready);
  } while (ready.empty());
  client.join();
  std::vector<uint8_t> got;
  EXPECT_EQ(p.server.conduit->Poll(0, &got), SHMEMCACHE_OK);
  while (p.server.conduit->departures() == 0) p.server.conduit->WaitDoorbell(&ready);
  shmemcache_stats_t server_stats{}, client_stats{};
  p.server.conduit->FillStats(&server_stats);
  p.client.conduit->FillStats(&client_stats);
  EXPECT_GT(server_stats.idle_sleeps, 0u);
  EXPECT_EQ(client_stats.doorbell_wakes, 0u);
}

// The tick a sleeping server is given (SleepWhenIdle; the server keeps its published epoch current with it) runs
// when a wait starts and after every nap, so at least once per max_nap_ns while no work comes: a client that
// never rings sees ticks go on while the server sleeps.
TEST(Conduit, ASleepingServerTicksAfterEveryNap) {
  Pair p;
  std::atomic<uint64_t> ticks{0};
  p.server.conduit->SleepWhenIdle(/*spin_ns=*/1000, /*max_nap_ns=*/200000, [&] { ticks.fetch_add(1); });
  uint64_t seen_while_asleep = 0;
  std::thread client([&] {
    while (__atomic_load_n(p.server.layout.sleeping, __ATOMIC_ACQUIRE) == 0) std::this_thread::yield();
    const uint64_t first = ticks.load();
    // Bounded: a server that stopped ticking in its sleep fails below instead of hanging the test.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (ticks.load() < first + 5 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    seen_while_asleep = ticks.load() - first;
    p.client.conduit->Depart(0);
  });
  std::vector<size_t> ready;
  while (p.server.conduit->departures() == 0) p.server.conduit->WaitDoorbell(&ready);
  client.join();
  shmemcache_stats_t server_stats{};
  p.server.conduit->FillStats(&server_stats);
  EXPECT_GE(seen_while_asleep, 5u);
  EXPECT_GT(server_stats.idle_sleeps, 0u);
  EXPECT_GE(ticks.load(), server_stats.idle_sleeps + 1);  // one per wait, one per nap
}

// Contended cores (DoorbellSleep::SpinLessWhenContended, the server's idle_spin_us adaptive), driven on one thread
// with the test's own count of involuntary switches (moving in every interval while `wanted`), so what the
// verdict does cannot depend on the machine's load or its kernel (CoreContention's own tests check the real
// count). The wait's tick (SleepWhenIdle: at every clock reading of the spin and after every nap) ends each wait
// with a ring once the wait napped (its spin was cut) or once its spin passed kFullSpinReadings clock readings
// (a cut spin ends within a few: it spins in full, 60 s).
class ContendedSpin {
 public:
  static constexpr uint64_t kSpin = 60000000000ull;  // 60 s
  static constexpr int kFullSpinReadings = 1000;

  explicit ContendedSpin(bool spin_less) {
    p_.server.conduit->SleepWhenIdle(kSpin, /*max_nap_ns=*/1000000, [this] { Tick(); });
    if (spin_less) p_.server.conduit->SpinLessWhenContended(20000, [this] { return wanted_ ? ++switches_ : switches_; });
  }
  void set_wanted(bool wanted) { wanted_ = wanted; }
  // One idle wait, ended by a ring: true when its spin was cut (it napped), false when it spun in full.
  bool WaitWasCut() {
    readings_ = 0;
    napped_ = spun_ = rung_ = false;
    naps_before_ = Naps();
    std::vector<size_t> ready;
    do {
      p_.server.conduit->WaitDoorbell(&ready);
    } while (ready.empty());
    std::vector<uint8_t> got;
    EXPECT_EQ(p_.server.conduit->Poll(0, &got), SHMEMCACHE_OK);
    EXPECT_NE(napped_, spun_);
    return napped_;
  }
  shmemcache_stats_t Stats() const {
    shmemcache_stats_t stats{};
    p_.server.conduit->FillStats(&stats);
    return stats;
  }

 private:
  uint64_t Naps() const { return Stats().idle_sleeps; }
  void Tick() {
    if (rung_) return;
    if (Naps() > naps_before_) {
      napped_ = true;
    } else if (++readings_ >= kFullSpinReadings) {
      spun_ = true;
    } else {
      return;
    }
    rung_ = true;
    std::vector<uint8_t> m = Message(8, 1);
    EXPECT_EQ(p_.client.conduit->Send(0, m.data(), m.size(), true), SHMEMCACHE_OK);
  }

  Pair p_;
  bool wanted_ = true;
  uint64_t switches_ = 0;
  int readings_ = 0;
  uint64_t naps_before_ = 0;
  bool napped_ = false, spun_ = false, rung_ = false;
};

TEST(Conduit, AServerWhoseCoreIsWantedCutsItsSpinAndOnceItIsFreeSpinsInFullAgain) {
  ContendedSpin s(/*spin_less=*/true);
  // The verdict starts uncontended; a window of CoreContention::kWindow intervals, each handed away, turns it.
  EXPECT_TRUE(s.WaitWasCut());
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(s.WaitWasCut());
  const uint64_t cut = s.Stats().idle_spins_contended;
  EXPECT_EQ(cut, 6u);
  // The core free: each cut spin still observes one interval, so within two windows of waits a spin is in full.
  s.set_wanted(false);
  int waits = 0;
  while (waits < 3 * static_cast<int>(CoreContention::kWindow) && s.WaitWasCut()) ++waits;
  EXPECT_LT(waits, 3 * static_cast<int>(CoreContention::kWindow));
  EXPECT_FALSE(s.WaitWasCut());  // and stays so
  EXPECT_EQ(s.Stats().idle_spins_contended, cut + static_cast<uint64_t>(waits));
}

TEST(Conduit, AServerThatDoesNotSpinLessSpinsInFullOnAWantedCore) {
  ContendedSpin s(/*spin_less=*/false);
  EXPECT_FALSE(s.WaitWasCut());
  EXPECT_FALSE(s.WaitWasCut());
  EXPECT_EQ(s.Stats().idle_spins_contended, 0u);
}

}  // namespace
}  // namespace smc
