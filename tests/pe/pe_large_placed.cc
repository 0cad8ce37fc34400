// Large Active SETs placed by their client (issue 14, conduit/message.h kReserve / kCommit): the server reserves
// a block, the client writes the value into it through its mapping, the server publishes it without reading it.
// They race, on a few hot keys, a writer whose SETs of the key's current length go Direct, a second Active writer
// that stores with options (flags and ttl: placed, the commit decides them; REPLACE and CAS: not placed, since the
// server would reserve before it decides, so they land), fillers that make the server evict, and
// readers. Every value is self-verifying (key, writer, sequence), and the Active store writer's flags name its
// value's sequence, so a reader also catches flags that do not belong to the value they came with.
// Roles: PE 0 serves; client 0 writes Direct-sized SETs, client 1 writes Active SETs of other lengths and the
// fillers, client 2 writes Active stores with options, the others read (blocking fetches and windows of igets).
// Spares (conduit/message.h kReserveNext): client 1's placed SETs that fit the block its last commit had the server
// reserve next go as one message (fewer reserves than placed SETs).
// Args: [seconds] (default 3) [expect] "placed" (every unconditional large Active SET placed: the server copied
// none of their values; it copied at most the conditional stores') or "landed" (no mapping of the server: every
// one landed, none placed).
#include <shmem.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr int kHot = 4;
constexpr int kWindow = 4;        // igets a reader keeps in flight
constexpr int kMinFillers = 200;  // 200 x 128 KiB: more than the server's memory in the tests (16 MiB)
constexpr uint32_t kStoreWriter = 2;
// Symmetric: the conditional (REPLACE / CAS) large stores the store writer issued, added on PE 0 at its end.
unsigned long long g_conditional_stores = 0;

std::string HotKey(int k) { return "hot-" + std::to_string(k); }
size_t HotLen(int k) { return (64u << 10) + static_cast<size_t>(k) * (16u << 10); }
// The flags the store writer gives its value of sequence seq; every other writer's pairs have flags 0.
uint32_t StoreFlags(uint64_t seq) { return 0x10000u | static_cast<uint32_t>(seq & 0xffff); }

// A value read for key k with flags: whole, of key k, and with the flags its writer stored with it.
bool Verified(const uint8_t* buf, size_t len, int k, uint32_t flags) {
  pe_test::VerifiableHeader h{};
  if (!pe_test::ReadVerifiable(buf, len, static_cast<uint32_t>(k), &h)) return false;
  return h.writer == kStoreWriter ? flags == StoreFlags(h.seq) : flags == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  const std::string expect = argc > 2 ? argv[2] : "placed";
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  const int clients = shmem_n_pes() - cfg.num_servers;
  auto client = [&](shmemcache_t* c, int rank) {
    shmemcache_stats_t st{};
    pe_test::ClientBarrier(cfg.num_servers, clients);
    pe_test::Rng rng(rank * 31 + 7);
    uint64_t seq = 0, writes = 0, fillers = 0, reads = 0, found = 0, bad = 0, refused = 0, conditional = 0;
    std::vector<uint8_t> value(cfg.max_value_len);
    std::vector<std::vector<uint8_t>> bufs(kWindow, std::vector<uint8_t>(cfg.max_value_len));
    pe_test::HotIgetWindow window(HotKey, kHot, &bufs);
    const uint64_t end = pe_test::NowNanos() + static_cast<uint64_t>(seconds * 1e9);
    while (pe_test::NowNanos() < end || (rank == 1 && fillers < kMinFillers)) {
      const int k = static_cast<int>(rng.Uniform(kHot));
      const std::string key = HotKey(k);
      if (rank == 0) {  // the key's own length: a Direct SET whenever its block is the one it knows
        pe_test::WriteVerifiable(value.data(), HotLen(k), static_cast<uint32_t>(k), 0, ++seq);
        PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value.data(), HotLen(k)), SHMEMCACHE_OK);
        ++writes;
      } else if (rank == 1) {  // other lengths: the block moves (Active), and a filler that makes room
        const size_t len = HotLen(k) + (24u << 10) + rng.Uniform(256u << 10);
        pe_test::WriteVerifiable(value.data(), len, static_cast<uint32_t>(k), 1, ++seq);
        PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value.data(), len), SHMEMCACHE_OK);
        ++writes;
        const std::string filler = "fill-" + std::to_string(fillers++);
        pe_test::WriteVerifiable(value.data(), 128u << 10, 999, 1, fillers);
        PE_CHECK_STATUS(shmemcache_set(c, filler.data(), filler.size(), value.data(), 128u << 10), SHMEMCACHE_OK);
      } else if (rank == 2) {  // stores with options, decided by the commit
        const size_t len = HotLen(k) + (300u << 10) + rng.Uniform(128u << 10);
        ++seq;
        pe_test::WriteVerifiable(value.data(), len, static_cast<uint32_t>(k), kStoreWriter, seq);
        shmemcache_store_options_t o{};
        o.flags = StoreFlags(seq);
        o.ttl_ms = 60000;
        uint32_t kind = static_cast<uint32_t>(rng.Uniform(3));
        if (kind == 1) o.mode = SHMEMCACHE_MODE_REPLACE;
        if (kind != 0) ++conditional;
        if (kind == 2) {  // a CAS with the token just fetched: OK, or EXISTS when another writer came between
          uint32_t flags = 0;
          size_t got = 0;
          shmemcache_status_t s = shmemcache_fetch(c, key.data(), key.size(), bufs[0].data(), bufs[0].size(), &got,
                                                   &flags, &o.cas);
          if (s == SHMEMCACHE_OK && !Verified(bufs[0].data(), got, k, flags)) ++bad;
          if (s != SHMEMCACHE_OK) o.cas = 0;
        }
        uint64_t token = 0;
        shmemcache_status_t s = shmemcache_store(c, key.data(), key.size(), value.data(), len, &o, &token);
        if (s == SHMEMCACHE_OK) {
          ++writes;
          if (token == 0) ++bad;
        } else if (s == SHMEMCACHE_EXISTS || s == SHMEMCACHE_NOT_STORED || s == SHMEMCACHE_NOT_FOUND) {
          ++refused;  // the key changed or went (evicted) since the fetch: nothing stored
        } else {
          PE_CHECK_STATUS(s, SHMEMCACHE_OK);
        }
      } else if (rng.Uniform(2) == 0) {  // a blocking fetch: value and flags together
        uint32_t flags = 0;
        size_t got = 0;
        shmemcache_status_t s =
            shmemcache_fetch(c, key.data(), key.size(), bufs[0].data(), bufs[0].size(), &got, &flags, nullptr);
        ++reads;
        if (s == SHMEMCACHE_OK) {
          ++found;
          if (!Verified(bufs[0].data(), got, k, flags)) ++bad;
        } else if (s != SHMEMCACHE_NOT_FOUND) {
          ++bad;
        }
      } else {  // a window of igets
        window.Issue(c, &rng);
        window.Collect(c, &reads, &found, &bad);
      }
    }
    // Last writes, then every client reads every hot key once more.
    pe_test::ClientBarrier(cfg.num_servers, clients);
    for (int k = 0; k < kHot; ++k) {
      const std::string key = HotKey(k);
      uint32_t flags = 0;
      size_t got = 0;
      shmemcache_status_t s =
          shmemcache_fetch(c, key.data(), key.size(), bufs[0].data(), bufs[0].size(), &got, &flags, nullptr);
      if (s == SHMEMCACHE_OK ? !Verified(bufs[0].data(), got, k, flags) : s != SHMEMCACHE_NOT_FOUND) ++bad;
    }
    shmemcache_get_stats(c, &st);
    std::printf("client %d: writes=%llu refused=%llu fillers=%llu reads=%llu found=%llu bad=%llu | placed=%llu "
                "landed=%llu direct_sets=%llu active_sets=%llu pulled=%llu\n",
                rank, (unsigned long long)writes, (unsigned long long)refused, (unsigned long long)fillers,
                (unsigned long long)reads, (unsigned long long)found, (unsigned long long)bad,
                (unsigned long long)st.large_sets_placed, (unsigned long long)st.large_sets_landed,
                (unsigned long long)st.direct_sets, (unsigned long long)st.active_sets,
                (unsigned long long)st.large_gets_pulled);
    std::fflush(stdout);
    PE_CHECK(bad == 0);
    if (rank == 2) {
      shmem_ulonglong_atomic_add(&g_conditional_stores, conditional, 0);
      shmem_quiet();  // on PE 0 before this client finalizes, so before the server's serve returns
    }
    if (rank == 0) PE_CHECK(st.direct_sets > 0);
    if (rank == 1 || rank == 2) PE_CHECK(writes > 0 && st.active_sets > 0);
    if (rank >= 3) PE_CHECK(found > 0);
    if (expect == "placed") {
      if (rank != 2) PE_CHECK(st.large_sets_landed == 0);  // the store writer's REPLACE / CAS stores land
      if (rank == 1 || rank == 2) PE_CHECK(st.large_sets_placed > 0);
      // Client 1 sends only SETs, all placed: one message each, plus one per reserve (and per NO_SPACE resend).
      // Without spares (conduit/message.h kReserveNext) every placed SET reserves; with them, those that fit the
      // spare the last commit left (its fillers' and hot values' sizes overlap) go as their commit alone.
      if (rank == 1) {
        const uint64_t reserves = st.messages_sent - st.active_sets;
        std::printf("client 1: reserves=%llu of placed=%llu\n", (unsigned long long)reserves,
                    (unsigned long long)st.large_sets_placed);
        PE_CHECK(reserves < st.large_sets_placed);
      }
    } else {
      PE_CHECK(st.large_sets_placed == 0);
      if (rank == 1) PE_CHECK(st.large_sets_landed > 0);
    }
  };
  auto server = [&](shmemcache_t* c) {
    const shmemcache_stats_t st = pe_test::ServedStats(c);
    // The server never copied a large value where clients place them; where they land, it copied each one.
    const uint64_t conditional = shmem_ulonglong_atomic_fetch(&g_conditional_stores, shmem_my_pe());
    std::printf("server: conditional large stores issued=%llu\n", (unsigned long long)conditional);
    if (expect == "placed") PE_CHECK(st.large_value_copies <= conditional);
    else PE_CHECK(st.large_value_copies > 0);
  };
  return pe_test::ServeOrRun("pe_large_placed", cfg, client, server);
}
