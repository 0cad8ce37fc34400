// Consistency stress for Direct operations (DESIGN.md invariants 1-3). Roles: PE 0 serves; the first
// `writers` clients write, the rest read, a dozen hot keys. Writers mix Direct SETs (values that fit the
// block) with values of other sizes that force Active SETs (moves to another slab class), and now and then
// delete a key. Every value is self-verifying (key id, writer, per-writer sequence, length, pattern seeded by
// all of them). Readers check that no read returns a torn value or another key's value, and that for one
// reader, one key and one writer the sequence never goes backwards. Prints retry and CAS-failure counts.
// Both Direct paths at once: odd client ranks run with local_access=0 (one-sided get/put only), even ranks with
// the default (through the mapping where shmem_ptr maps the server, i.e. on shared memory; over tcp nobody
// maps, and every client is remote). On shared memory the job checks that both paths really ran, and that remote
// readers met blocks written through the mapping (no checksum: store/block.h) and confirmed them by the target
// word (unchecked_copies). Where the job agreed on CPU atomics for block words (stats cpu_word_atomics 1: shared
// memory with UCX's atomics on the CPU, store/block.h) the even ranks and the server lock and publish with CPU
// atomics while the odd ranks use UCX's, on the same words; the totals count the PEs on that way.
// evict = 1: the server gets 2 MiB and writers also store cold 6 KiB pairs, so batch eviction (and the stale
// pointers it leaves) runs all along; the server checks that it evicted.
// batch = 1: readers read every hot key with one shmemcache_mget (keys in a rotating order), each item checked as
// a single read is: the batch's Direct reads (on shared memory, seqlock reads in place through the mapping,
// straight into the items' buffers) under the same writers and eviction.
// large = 1: values of 64 KiB and more (mostly 66000..75000 bytes, one slab class, rewritten in place; else
// 100000..120000 or 270000..300000, moves), so remote readers take the one-copy GET with its value-length hint
// (client/direct_ops.h) while the length changes under them; over UCX tcp, where that form reads with blocking
// gets, from 256 KiB of value on only (kBlockingOneCopyMinBytes), the 270000..300000-byte values take it.
// Args: [seconds] [writers] [evict] [batch] [large] (defaults 5, 2, 0, 0, 0)
#include <shmem.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr int kKeys = 12;

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 5.0;
  int writers = argc > 2 ? std::atoi(argv[2]) : 2;
  const bool evict = argc > 3 && std::atoi(argv[3]) != 0;
  const bool batch = argc > 4 && std::atoi(argv[4]) != 0;
  const bool large = argc > 5 && std::atoi(argv[5]) != 0;
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  const bool mapped = pe_test::MapsServer();
  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  const int client_rank = shmem_my_pe() - cfg.num_servers;  // as shmemcache_client_rank will say
  if (client_rank >= 0 && client_rank % 2 == 1) cfg.local_access = 0;
  if (evict) cfg.server_memory_bytes = 2u << 20;
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  shmemcache_stats_t st{};
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
    shmemcache_stats_t server_st{};  // st stays zero: the totals below are the clients'
    shmemcache_get_stats(c, &server_st);
    std::printf("server: items=%llu evictions=%llu cpu_word_atomics=%llu\n", (unsigned long long)server_st.items,
                (unsigned long long)server_st.evictions, (unsigned long long)server_st.cpu_word_atomics);
    st.cpu_word_atomics = server_st.cpu_word_atomics;  // counted in the totals
    if (evict) PE_CHECK(server_st.evictions > 0);
  } else {
    int rank = shmemcache_client_rank(c);
    bool writer = rank < writers;
    pe_test::Rng rng(rank * 13 + 5);
    std::vector<uint8_t> value(large ? 524288 : 16384), got(large ? 524288 : 16384);
    uint64_t cold = 0;
    std::map<std::pair<int, uint32_t>, uint64_t> last_seen;
    uint64_t seq = 0, reads = 0, found = 0, writes = 0, deletes = 0, bad = 0, regressions = 0;
    // One read's answer for key k: counted and checked.
    auto check_read = [&](int k, shmemcache_status_t s, const uint8_t* data, size_t len) {
      ++reads;
      if (s == SHMEMCACHE_NOT_FOUND) return;
      ++found;
      pe_test::VerifiableHeader h{};
      if (s != SHMEMCACHE_OK || !pe_test::ReadVerifiable(data, len, static_cast<uint32_t>(k), &h)) {
        ++bad;
        return;
      }
      uint64_t& last = last_seen[{k, h.writer}];
      if (h.seq < last) ++regressions;
      if (h.seq > last) last = h.seq;
    };
    std::vector<std::string> hot_keys(kKeys);
    for (int k = 0; k < kKeys; ++k) hot_keys[k] = "hot-" + std::to_string(k);
    std::vector<std::vector<uint8_t>> batch_bufs(batch ? kKeys : 0, std::vector<uint8_t>(16384));
    std::vector<shmemcache_mget_item_t> items(kKeys);
    uint64_t end = pe_test::NowNanos() + static_cast<uint64_t>(seconds * 1e9);
    while (pe_test::NowNanos() < end) {
      int k = static_cast<int>(rng.Uniform(kKeys));
      std::string key = "hot-" + std::to_string(k);
      if (writer) {
        uint64_t r = rng.Uniform(100);
        if (evict && r >= 90) {  // a cold pair: fills the server, so eviction keeps running
          std::string cold_key = "cold-" + std::to_string(rank) + "-" + std::to_string(++cold);
          shmemcache_status_t s = shmemcache_set(c, cold_key.data(), cold_key.size(), value.data(), 6144);
          PE_CHECK(s == SHMEMCACHE_OK || s == SHMEMCACHE_NO_SPACE);
          continue;
        }
        if (r < 2) {
          shmemcache_status_t s = shmemcache_delete(c, key.data(), key.size());
          PE_CHECK(s == SHMEMCACHE_OK || s == SHMEMCACHE_NOT_FOUND);
          ++deletes;
          continue;
        }
        // 80%: a length that stays in the 128-byte class range (Direct SET fits); 18%: another size (Active).
        size_t len = r < 82 ? 48 + rng.Uniform(40) : 200 + rng.Uniform(12000);
        if (large)
          len = r < 82 ? 66000 + rng.Uniform(9000) : r < 91 ? 100000 + rng.Uniform(20000) : 270000 + rng.Uniform(30000);
        pe_test::WriteVerifiable(value.data(), len, static_cast<uint32_t>(k), static_cast<uint32_t>(rank), ++seq);
        PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value.data(), len), SHMEMCACHE_OK);
        ++writes;
      } else if (batch) {  // every hot key, starting at k
        for (int i = 0; i < kKeys; ++i) {
          const int key_id = (k + i) % kKeys;
          items[i] = {hot_keys[key_id].data(), hot_keys[key_id].size(), batch_bufs[i].data(), batch_bufs[i].size(),
                      0, SHMEMCACHE_IO_ERROR};
        }
        PE_CHECK_STATUS(shmemcache_mget(c, items.data(), items.size()), SHMEMCACHE_OK);
        for (int i = 0; i < kKeys; ++i) check_read((k + i) % kKeys, items[i].status, batch_bufs[i].data(),
                                                   items[i].value_len);
      } else {
        size_t len = 0;
        shmemcache_status_t s = shmemcache_get(c, key.data(), key.size(), got.data(), got.size(), &len);
        check_read(k, s, got.data(), len);
      }
    }
    shmemcache_get_stats(c, &st);
    std::printf(
        "client %d (%s): reads=%llu found=%llu writes=%llu deletes=%llu bad=%llu regressions=%llu | "
        "direct_gets=%llu active_gets=%llu direct_sets=%llu active_sets=%llu read_retries=%llu "
        "lock_retries=%llu cas_lock_busy=%llu cas_tag_mismatch=%llu cas_version_mismatch=%llu fallbacks=%llu "
        "local_gets=%llu local_sets=%llu unchecked_copies=%llu cpu_word_atomics=%llu\n",
        rank, writer ? "writer" : "reader", (unsigned long long)reads, (unsigned long long)found,
        (unsigned long long)writes, (unsigned long long)deletes, (unsigned long long)bad,
        (unsigned long long)regressions, (unsigned long long)st.direct_gets, (unsigned long long)st.active_gets,
        (unsigned long long)st.direct_sets, (unsigned long long)st.active_sets,
        (unsigned long long)st.read_retries, (unsigned long long)st.lock_retries,
        (unsigned long long)st.cas_lock_busy, (unsigned long long)st.cas_tag_mismatch,
        (unsigned long long)st.cas_version_mismatch, (unsigned long long)st.direct_fallbacks,
        (unsigned long long)st.local_gets, (unsigned long long)st.local_sets,
        (unsigned long long)st.unchecked_copies, (unsigned long long)st.cpu_word_atomics);
    std::fflush(stdout);
    PE_CHECK(bad == 0);
    PE_CHECK(regressions == 0);
    if (writer) PE_CHECK(writes > 0 && st.direct_sets > 0 && st.active_sets > 0);
    else PE_CHECK(found > 0 && st.direct_gets > 0);
    const bool local = mapped && cfg.local_access != 0;  // the path this client's Direct operations take
    if (local) PE_CHECK(st.unchecked_copies == 0);  // its reads go through the mapping: the seqlock there
    PE_CHECK(st.cpu_word_atomics == 2 || (local && st.cpu_word_atomics == 1));  // never without the mapping
    if (!local) PE_CHECK(st.local_gets == 0 && st.local_sets == 0);
    else if (writer) PE_CHECK(st.local_sets == st.direct_sets);
    else PE_CHECK(st.local_gets == st.direct_gets + st.large_gets_pulled);  // pulls of large values read it too
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  // Totals over all PEs, so the log shows how hard the protocol was exercised.
  static long psync[SHMEM_REDUCE_SYNC_SIZE];
  static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
  static long src[7], dst[7];
  for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) psync[i] = SHMEM_SYNC_VALUE;
  src[0] = static_cast<long>(st.read_retries);
  src[1] = static_cast<long>(st.lock_retries);
  src[2] = static_cast<long>(st.cas_version_mismatch);
  src[3] = static_cast<long>(st.local_gets + st.local_sets);
  src[4] = static_cast<long>(st.direct_gets + st.direct_sets) - src[3];  // Direct operations over one-sided ops
  src[5] = static_cast<long>(st.unchecked_copies);
  src[6] = st.cpu_word_atomics == 1 ? 1 : 0;  // the server's too
  shmem_barrier_all();
  shmem_long_sum_to_all(dst, src, 7, 0, 0, shmem_n_pes(), pwrk, psync);
  shmem_barrier_all();
  if (shmem_my_pe() == 0) {
    std::printf("totals: read_retries=%ld lock_retries=%ld cas_version_mismatch=%ld local_ops=%ld remote_ops=%ld "
                "unchecked_copies=%ld cpu_word_atomics_pes=%ld\n",
                dst[0], dst[1], dst[2], dst[3], dst[4], dst[5], dst[6]);
    PE_CHECK(dst[4] > 0);                         // the one-sided path ran
    if (mapped) PE_CHECK(dst[3] > 0);             // and, where it exists, the mapping path at the same time
    if (mapped) PE_CHECK(dst[5] > 0);             // and remote readers confirmed blocks the mapping path wrote
  }
  int rc = pe_test::Finish("pe_direct_stress");
  shmem_finalize();
  return rc;
}
