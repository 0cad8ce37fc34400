// Pipelined Active requests (issue 14): windows of non-blocking SETs and GETs larger than the ring and than
// max_outstanding, values of mixed sizes (empty, small records that share a chunk, up to a chunk, fragmented
// over several chunks, and large ones that bypass the ring), completed in a shuffled order that mixes test and
// wait, from every client at once. Every value is self-checking (pattern seeded by client, round and key), so a
// reply given to the wrong request, a torn record or a chunk reused too early shows as a wrong length or
// pattern. All operations are Active (direct_ops 0): the requests and replies all travel through the rings.
// Args: [rounds] (default 40) [largest window] (default 96)
#include <shmem.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

std::string Key(int rank, int i) { return "pipe-" + std::to_string(rank) + "-" + std::to_string(i); }
uint64_t Seed(int rank, int round, int i) {
  return (static_cast<uint64_t>(rank) << 40) | (static_cast<uint64_t>(round) << 20) | static_cast<uint64_t>(i);
}

// A value length: a third small (0..200 B, many records to a chunk), a third up to a chunk (4 KiB), a sixth
// fragmented (4 KiB .. 8 KiB - 1), a sixth large (8 .. 24 KiB: the landing/pull path at the default threshold).
size_t LengthFor(pe_test::Rng& rng) {
  switch (rng.Uniform(6)) {
    case 0: case 1: return rng.Uniform(201);
    case 2: case 3: return 200 + rng.Uniform(4096 - 200 + 1);
    case 4: return 4097 + rng.Uniform(8191 - 4097 + 1);
    default: return 8192 + rng.Uniform(16 * 1024 + 1);
  }
}

// Completes every request of reqs in a shuffled order: about half by polling with test (then releasing with
// wait), the rest by wait directly. Returns the statuses by index.
std::vector<shmemcache_status_t> CompleteShuffled(shmemcache_t* c, std::vector<shmemcache_request_t*>& reqs,
                                                  pe_test::Rng& rng) {
  std::vector<size_t> order(reqs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.Uniform(i)]);
  std::vector<shmemcache_status_t> status(reqs.size(), SHMEMCACHE_IN_PROGRESS);
  for (size_t i : order) {
    if (rng.Uniform(2) == 0) {
      shmemcache_status_t s;
      while ((s = shmemcache_test(c, reqs[i])) == SHMEMCACHE_IN_PROGRESS) {
      }
      PE_CHECK_STATUS(shmemcache_wait(c, reqs[i]), s);  // wait reports what test did, and releases
      status[i] = s;
    } else {
      status[i] = shmemcache_wait(c, reqs[i]);
    }
  }
  return status;
}

void Rounds(shmemcache_t* c, int rank, int rounds, int largest_window) {
  pe_test::Rng rng(1000 + static_cast<uint64_t>(rank));
  std::vector<size_t> len_of(static_cast<size_t>(largest_window));
  std::vector<std::vector<uint8_t>> values(len_of.size()), bufs(len_of.size(), std::vector<uint8_t>(32 * 1024));
  std::vector<size_t> got(len_of.size());
  std::vector<shmemcache_request_t*> reqs;
  int wrong = 0, ops = 0;
  for (int round = 0; round < rounds; ++round) {
    const int window = 1 + static_cast<int>(rng.Uniform(static_cast<uint64_t>(largest_window)));
    // A window of SETs: each value freshly written for this round.
    reqs.assign(static_cast<size_t>(window), nullptr);
    for (int i = 0; i < window; ++i) {
      len_of[i] = LengthFor(rng);
      values[i].resize(len_of[i]);
      pe_test::FillPattern(values[i].data(), len_of[i], Seed(rank, round, i));
      std::string k = Key(rank, i);
      // Half bsets, whose buffer is free again on return (overwritten at once), half isets, whose value stays
      // untouched until the request completes (shmemcache.h: an iset of 4 KiB or more may be placed, its value
      // read when the server's reservation comes).
      if (i % 2 == 0) {
        PE_CHECK_STATUS(shmemcache_bset(c, k.data(), k.size(), values[i].data(), len_of[i], &reqs[i]), SHMEMCACHE_OK);
        std::memset(values[i].data(), 0xEE, len_of[i]);
      } else {
        PE_CHECK_STATUS(shmemcache_iset(c, k.data(), k.size(), values[i].data(), len_of[i], &reqs[i]), SHMEMCACHE_OK);
      }
    }
    for (shmemcache_status_t s : CompleteShuffled(c, reqs, rng)) wrong += s != SHMEMCACHE_OK;
    for (int i = 1; i < window; i += 2) std::memset(values[i].data(), 0xEE, len_of[i]);  // the isets' are free now
    // A window of GETs of the same keys, in a new random order, each into its own buffer.
    std::vector<int> keys(static_cast<size_t>(window));
    for (int i = 0; i < window; ++i) keys[i] = i;
    for (size_t i = keys.size(); i > 1; --i) std::swap(keys[i - 1], keys[rng.Uniform(i)]);
    for (int j = 0; j < window; ++j) {
      std::string k = Key(rank, keys[j]);
      std::memset(bufs[j].data(), 0, bufs[j].size());
      got[j] = SIZE_MAX;
      PE_CHECK_STATUS(shmemcache_iget(c, k.data(), k.size(), bufs[j].data(), bufs[j].size(), &got[j], &reqs[j]),
                      SHMEMCACHE_OK);
    }
    std::vector<shmemcache_status_t> status = CompleteShuffled(c, reqs, rng);
    for (int j = 0; j < window; ++j) {
      const int i = keys[j];
      if (status[j] != SHMEMCACHE_OK || got[j] != len_of[i] ||
          !pe_test::CheckPattern(bufs[j].data(), got[j], Seed(rank, round, i))) {
        if (wrong < 5)
          std::fprintf(stderr, "PE %d: round %d key %d: status %s, length %zu (want %zu)\n", pe_test::my_pe, round,
                       i, shmemcache_strerror(status[j]), got[j], len_of[i]);
        ++wrong;
      }
    }
    ops += 2 * window;
  }
  PE_CHECK(wrong == 0);
  std::printf("client %d: %d rounds, %d pipelined operations, %d wrong\n", rank, rounds, ops, wrong);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 40;
  const int largest_window = argc > 2 ? std::atoi(argv[2]) : 96;
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);  // SHMEMCACHE_NUM_SERVERS, _CHUNKS_PER_PEER, ... from the test's environment
  cfg.direct_ops = 0;
  cfg.max_outstanding = 64;  // windows up to 96: issuing waits for the oldest past 64
  return pe_test::ServeOrRun("pe_pipeline", cfg, [&](shmemcache_t* c, int rank) {
    Rounds(c, rank, rounds, largest_window);
  });
}
