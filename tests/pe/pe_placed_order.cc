// Per-key issue order of non-blocking SETs placed by their client (conduit/message.h kReserve / kCommit): a placed
// iset takes effect at its commit, which is posted when its reservation's reply comes, so two isets of one key in
// flight at once must have their commits posted in issue order, whatever completes replies in between.
//   order      iset(k, A), iset(k, B), then n igets (4 KiB buffers, keys never set) that fill the reply ring, so
//              that posting them completes the reservations' replies and posting a commit waits for room; then
//              an iget of k issued last; wait all: that iget and a later get read B (A won 40 of 95 rounds when
//              a reserve did not wait for the earlier one's commit). Also three isets of k, the last one short.
//   imget      iset(k, C) then a one-item imget and a two-item imget of k: both read C.
//   slots      a window of kSlotsWindow isets of new keys (4 KiB, below large_value_threshold) issued before any
//              wait: each holds a reservation slot of its own (kPlaceSlots), so every one is placed (the
//              large_sets_placed count grows by kSlotsWindow; with one reservation at a time only the first would
//              be, the rest going in the ring) and none lands.
// Args: [expect] "placed" (the client maps the server: isets placed) or "inline" (over tcp: none placed).
#include <shmem.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr size_t kGetBuffer = 4096;
constexpr int kMostGets = 40;
constexpr int kSlotsWindow = 16;  // 16 x 4 KiB: within any client's budget (requests.cc, MayPlace)

uint64_t Placed(shmemcache_t* c) {
  shmemcache_stats_t st{};
  PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
  return st.large_sets_placed;
}

uint64_t Landed(shmemcache_t* c) {
  shmemcache_stats_t st{};
  PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
  return st.large_sets_landed;
}

// Whether buf[0, len) is the value written with seq for key_id.
bool Is(const uint8_t* buf, size_t len, uint32_t key_id, uint64_t seq) {
  pe_test::VerifiableHeader h{};
  return pe_test::ReadVerifiable(buf, len, key_id, &h) && h.seq == seq;
}

// isets of `lens` values to one key, then n igets of missing keys, then an iget of the key; every one waited for;
// the last iget and a blocking get must read the last iset's value. Returns the bad answers.
int OrderRound(shmemcache_t* c, int rank, uint32_t key_id, const std::vector<size_t>& lens, int n, uint64_t* seq) {
  int bad = 0;
  const std::string key = "order-" + std::to_string(rank) + "-" + std::to_string(key_id);
  std::vector<std::vector<uint8_t>> values(lens.size());
  std::vector<shmemcache_request_t*> sets(lens.size());
  uint64_t last = 0;
  for (size_t i = 0; i < lens.size(); ++i) {
    values[i].resize(lens[i]);
    last = ++*seq;
    pe_test::WriteVerifiable(values[i].data(), lens[i], key_id, static_cast<uint32_t>(rank), last);
    PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), values[i].data(), lens[i], &sets[i]), SHMEMCACHE_OK);
  }
  std::vector<std::vector<uint8_t>> bufs(n, std::vector<uint8_t>(kGetBuffer));
  std::vector<size_t> got(n);
  std::vector<shmemcache_request_t*> gets(n);
  for (int i = 0; i < n; ++i) {
    const std::string missing = "order-missing-" + std::to_string(rank) + "-" + std::to_string(i);
    PE_CHECK_STATUS(shmemcache_iget(c, missing.data(), missing.size(), bufs[i].data(), kGetBuffer, &got[i], &gets[i]),
                    SHMEMCACHE_OK);
  }
  std::vector<uint8_t> mine(8192), after(8192);
  size_t mine_len = 0, after_len = 0;
  shmemcache_request_t* get = nullptr;
  PE_CHECK_STATUS(shmemcache_iget(c, key.data(), key.size(), mine.data(), mine.size(), &mine_len, &get),
                  SHMEMCACHE_OK);
  for (size_t i = 0; i < sets.size(); ++i) {
    const shmemcache_status_t s = shmemcache_wait(c, sets[i]);
    if (s != SHMEMCACHE_OK) {
      std::fprintf(stderr, "PE %d: order: iset %zu of %s: %s\n", pe_test::my_pe, i, key.c_str(), shmemcache_strerror(s));
      ++bad;
    }
  }
  for (int i = 0; i < n; ++i) {
    if (shmemcache_wait(c, gets[i]) != SHMEMCACHE_NOT_FOUND) ++bad;
  }
  const shmemcache_status_t s = shmemcache_wait(c, get);
  if (s != SHMEMCACHE_OK || !Is(mine.data(), mine_len, key_id, last)) {
    std::fprintf(stderr, "PE %d: order: iget of %s after %zu isets and %d igets: %s, %zu B (the last iset: %zu B)\n",
                 pe_test::my_pe, key.c_str(), lens.size(), n, shmemcache_strerror(s), mine_len, lens.back());
    ++bad;
  }
  const shmemcache_status_t g = shmemcache_get(c, key.data(), key.size(), after.data(), after.size(), &after_len);
  if (g != SHMEMCACHE_OK || !Is(after.data(), after_len, key_id, last)) {
    std::fprintf(stderr, "PE %d: order: get of %s after %zu isets and %d igets: %s, %zu B (the last iset: %zu B)\n",
                 pe_test::my_pe, key.c_str(), lens.size(), n, shmemcache_strerror(g), after_len, lens.back());
    ++bad;
  }
  return bad;
}

// iset(k, C), then imgets of k (one item; k and a missing key) issued before the iset is waited for: both read C.
int ImgetAfterIset(shmemcache_t* c, int rank, uint32_t key_id, uint64_t* seq) {
  int bad = 0;
  const std::string key = "order-imget-" + std::to_string(rank) + "-" + std::to_string(key_id);
  const std::string missing = "order-imget-missing-" + std::to_string(rank);
  std::vector<uint8_t> value(6000), one(8192), two(8192), none(64);
  const uint64_t mine = ++*seq;
  pe_test::WriteVerifiable(value.data(), value.size(), key_id, static_cast<uint32_t>(rank), mine);
  shmemcache_request_t *set = nullptr, *a = nullptr, *b = nullptr;
  PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), value.data(), value.size(), &set), SHMEMCACHE_OK);
  shmemcache_mget_item_t single[1] = {};
  single[0] = shmemcache_mget_item_t{key.data(), key.size(), one.data(), one.size(), 0, SHMEMCACHE_IN_PROGRESS};
  PE_CHECK_STATUS(shmemcache_imget(c, single, 1, &a), SHMEMCACHE_OK);
  shmemcache_mget_item_t pair[2] = {};
  pair[0] = shmemcache_mget_item_t{missing.data(), missing.size(), none.data(), none.size(), 0, SHMEMCACHE_IN_PROGRESS};
  pair[1] = shmemcache_mget_item_t{key.data(), key.size(), two.data(), two.size(), 0, SHMEMCACHE_IN_PROGRESS};
  PE_CHECK_STATUS(shmemcache_imget(c, pair, 2, &b), SHMEMCACHE_OK);
  if (shmemcache_wait(c, set) != SHMEMCACHE_OK) ++bad;
  if (a == nullptr || shmemcache_wait(c, a) != SHMEMCACHE_OK) ++bad;
  if (b == nullptr || shmemcache_wait(c, b) != SHMEMCACHE_OK) ++bad;
  if (single[0].status != SHMEMCACHE_OK || !Is(one.data(), single[0].value_len, key_id, mine)) ++bad;
  if (pair[0].status != SHMEMCACHE_NOT_FOUND) ++bad;
  if (pair[1].status != SHMEMCACHE_OK || !Is(two.data(), pair[1].value_len, key_id, mine)) ++bad;
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string expect = argc > 1 ? argv[1] : "placed";
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  return pe_test::ServeOrRun("pe_placed_order", cfg, [&](shmemcache_t* c, int rank) {
    uint64_t seq = 0;
    uint32_t key_id = 0;
    int bad = 0, rounds = 0;
    const uint64_t placed_before = Placed(c);
    for (int n = 20; n <= kMostGets; ++n) {
      for (int rep = 0; rep < 4; ++rep, ++rounds) {
        bad += OrderRound(c, rank, ++key_id, {4096, 5000}, n, &seq);
        bad += OrderRound(c, rank, ++key_id, {5000, 4096 + static_cast<size_t>(rep) * 100}, n, &seq);
        bad += OrderRound(c, rank, ++key_id, {4096, 7000, 4500}, n, &seq);
      }
    }
    const uint64_t placed_by_order = Placed(c) - placed_before;
    for (int i = 0; i < 20; ++i) bad += ImgetAfterIset(c, rank, ++key_id, &seq);
    // Several reservations at once: a window of isets of new keys, none waited for until all are issued.
    uint64_t placed_window = 0, landed_window = 0;
    for (int round = 0; round < 4; ++round) {
      std::vector<std::vector<uint8_t>> values(kSlotsWindow, std::vector<uint8_t>(4096));
      shmemcache_request_t* sets[kSlotsWindow];
      const uint64_t placed0 = Placed(c), landed0 = Landed(c);
      for (int i = 0; i < kSlotsWindow; ++i) {
        const std::string key = "order-slots-" + std::to_string(rank) + "-" + std::to_string(round) + "-" +
                                std::to_string(i);
        pe_test::WriteVerifiable(values[i].data(), values[i].size(), ++key_id, static_cast<uint32_t>(rank), ++seq);
        PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), values[i].data(), values[i].size(), &sets[i]),
                        SHMEMCACHE_OK);
      }
      for (int i = 0; i < kSlotsWindow; ++i) PE_CHECK_STATUS(shmemcache_wait(c, sets[i]), SHMEMCACHE_OK);
      placed_window = Placed(c) - placed0;
      landed_window = Landed(c) - landed0;
      if (expect == "placed") PE_CHECK(placed_window == kSlotsWindow);
      else PE_CHECK(placed_window == 0);
      PE_CHECK(landed_window == 0);
    }
    std::printf("client %d: %d order rounds, bad=%d | placed by the order rounds=%llu, by the last window of %d: %llu "
                "(landed %llu)\n",
                rank, rounds, bad, (unsigned long long)placed_by_order, kSlotsWindow,
                (unsigned long long)placed_window, (unsigned long long)landed_window);
    std::fflush(stdout);
    PE_CHECK(bad == 0);
    if (expect == "placed") PE_CHECK(placed_by_order > 0);
    else PE_CHECK(placed_by_order == 0);
  });
}
