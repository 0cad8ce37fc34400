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
// straight into the items' buffers: the batched read of client/mapped_mget.cc, stats mget_local_items, and the
// windows' reads for what it leaves) under the same writers and eviction.
// large = 1: values of 64 KiB and more (mostly 66000..75000 bytes, one slab class, rewritten in place; else
// 100000..120000 or 270000..300000, moves), so remote readers take the one-copy GET with its value-length hint
// (client/direct_ops.h) while the length changes under them; over UCX tcp, where reads are blocking gets, the
// values whose block has at least kBlockingSlackMinBytes of room beyond them (most of 100000..120000 and
// 270000..300000) are read as header + value in one get and the target word in another, with the same hint.
// options = 1 (issue 15, Direct stores with options): writers mix, on the same hot keys, plain SETs with
// shmemcache_store in mode SET with flags (and now and then a ttl far beyond the run), cas stores (token read by
// shmemcache_fetch, mode SET or REPLACE) and REPLACEs; values of other sizes make any of them Active. A value's
// sequence number says how it was written (its low 2 bits: OptionsKind) and its flags derive from key, writer and
// sequence (ExpectedFlags; 0 for a plain SET), so a reader, with shmemcache_fetch, checks that value and flags
// belong to one store, that tokens of a key never go back and that one token never names two values. A store
// that failed (cas: EXISTS or NOT_FOUND; replace: NOT_STORED) burns its sequence: no PE may ever read it (the
// writer checks its own fetches at once; at the end every reader checks what it saw against every writer's
// burned list, read from symmetric memory). No cas token may win twice for a key (every writer lists its winning
// tokens, up to kMaxWins). Each writer also increments a counter key by cas (flags 7, a touch now and then in
// between, which keeps the token): the value's count must equal the wins of its generation (eviction takes the
// counter often on shared memory; a writer then starts a new generation with an add). On shared memory every
// writer must have done at least 1000 stores with options on the Direct path, over tcp at least one (a writer short
// of them when the time is up tops up with such stores alone, bounded, so the check does not depend on the
// machine's speed) (stats direct_sets around each store: exactly one of direct_sets / active_sets grows; an EXISTS decided under the lock counts as a Direct SET
// that wrote nothing, so local_sets + those == direct_sets for a writer through the mapping).
// options = 1 also runs appends and prepends (Direct when the combined value fits the block, client/contract_ops.cc
// TryDirectCombine) on kCatKeys more hot keys whose values are made of 16-byte self-verifying chunks (CatChunk):
// one base chunk (a generation: writer and number, set with flags that derive from them) with prepended chunks
// before it and appended ones after it. Writers append or prepend 1-3 chunks with flags and a 1 ms ttl that must
// be ignored (the pair keeps its own), and start a new generation when the key is absent (NOT_STORED) or long.
// Every fetch of such a key (readers and writers) checks that each chunk is whole and this key's, that the base
// is unique with only prepends before and appends after it, the flags the base's, each writer's chunks in its
// order with consecutive numbers (a lost or doubled write leaves a gap or a repeat), that the value this PE read
// before in the same generation is a contiguous part of this one (history: only appends and prepends happened in
// between), and that tokens never go back and one token never names two values. The stats prove the path of every
// append / prepend (exactly one of direct_sets / active_sets grows); writers must have done some Direct.
// Args: [seconds] [writers] [evict] [batch] [large] [options] (defaults 5, 2, 0, 0, 0, 0)
#include <shmem.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr int kKeys = 12;

// options = 1: how a value was written, in the low 2 bits of its sequence number.
enum OptionsKind : uint64_t { kPlainSet = 0, kFlagsSet = 1, kCasStore = 2, kReplace = 3 };
// The flags a store of (key, writer, seq) carries: 0 for a plain SET (which resets them), else a mix of all three.
uint32_t ExpectedFlags(int key_id, uint32_t writer, uint64_t seq) {
  if ((seq & 3) == kPlainSet) return 0;
  const uint64_t m = (seq * 0x9e3779b97f4a7c15ull) ^ (static_cast<uint64_t>(key_id) << 40) ^
                     (static_cast<uint64_t>(writer) << 56);
  return static_cast<uint32_t>(m >> 29) | 1u;
}
// Burned sequence numbers (failed stores) per writer PE, symmetric: [0] the count, then the numbers.
constexpr size_t kMaxBurned = 1 << 17;
constexpr int kMaxWriters = 8;
uint64_t* burned_sym = nullptr;
// Winning cas stores per writer PE, symmetric: [0] the count, then token * 16 + key id (kKeys: the counter). No
// two may be equal over all writers: one token, one winner.
constexpr size_t kMaxWins = 1 << 17;
uint64_t* wins_sym = nullptr;

// options = 1: the append / prepend keys (above).
constexpr int kCatKeys = 4;
constexpr size_t kCatChunk = 16;
constexpr size_t kCatMaxBytes = 48 * kCatChunk;  // a writer starts a new generation past this length
enum CatKind : uint8_t { kCatBase = 'B', kCatAppend = 'A', kCatPrepend = 'P' };
uint64_t CatCheck(const uint8_t* c) {
  uint64_t x;
  std::memcpy(&x, c, 8);
  x ^= 0x243f6a8885a308d3ull;
  x *= 0x9e3779b97f4a7c15ull;
  return x ^ (x >> 29);
}
// kind, key id, writer, 0, u32 number (generation for a base, else the writer's count for this key), u64 check.
void CatChunk(uint8_t* out, CatKind kind, int key_id, uint32_t writer, uint32_t number) {
  out[0] = kind;
  out[1] = static_cast<uint8_t>(key_id);
  out[2] = static_cast<uint8_t>(writer);
  out[3] = 0;
  std::memcpy(out + 4, &number, 4);
  const uint64_t check = CatCheck(out);
  std::memcpy(out + 8, &check, 8);
}
uint32_t CatFlags(int key_id, uint32_t writer, uint32_t generation) {
  return (generation * 2654435761u) ^ (writer << 24) ^ (static_cast<uint32_t>(key_id) << 16) ^ 0x5a5a;
}
// What a reader keeps of the last value it read of a cat key.
struct CatSeen {
  uint64_t generation = 0;  // writer << 32 | number of the base; 0 = none
  std::string value;
  uint64_t token = 0;
};
// Checks a fetched cat value (status OK) as the header says; false when anything is wrong. *seen: this PE's last
// read of the key, updated.
bool CheckCatValue(int key_id, const uint8_t* data, size_t len, uint32_t flags, uint64_t token, CatSeen* seen,
                   const char** why) {
  if (len == 0 || len % kCatChunk != 0) return *why = "length", false;
  size_t base = len;
  std::map<uint32_t, std::vector<uint32_t>> appended, prepended;  // per writer, left to right
  for (size_t at = 0; at < len; at += kCatChunk) {
    const uint8_t* c = data + at;
    uint64_t check;
    std::memcpy(&check, c + 8, 8);
    if (check != CatCheck(c) || c[1] != key_id || c[3] != 0) return *why = "torn or foreign chunk", false;
    uint32_t number;
    std::memcpy(&number, c + 4, 4);
    if (c[0] == kCatBase) {
      if (base != len) return *why = "two bases", false;
      base = at;
    } else if (c[0] == kCatAppend) {
      if (base == len) return *why = "append before the base", false;
      appended[c[2]].push_back(number);
    } else if (c[0] == kCatPrepend) {
      if (base != len) return *why = "prepend after the base", false;
      prepended[c[2]].push_back(number);
    } else {
      return *why = "chunk kind", false;
    }
  }
  if (base == len) return *why = "no base", false;
  uint32_t gen_number;
  std::memcpy(&gen_number, data + base + 4, 4);
  const uint32_t gen_writer = data[base + 2];
  if (flags != CatFlags(key_id, gen_writer, gen_number)) return *why = "flags not the base's", false;
  // Each writer's chunks: appends increasing left to right, prepends decreasing, together one run of numbers.
  std::map<uint32_t, std::vector<uint32_t>> all;
  for (auto& [w, v] : appended) {
    for (size_t i = 1; i < v.size(); ++i)
      if (v[i] <= v[i - 1]) return *why = "appends out of order", false;
    all[w].insert(all[w].end(), v.begin(), v.end());
  }
  for (auto& [w, v] : prepended) {
    for (size_t i = 1; i < v.size(); ++i)
      if (v[i] >= v[i - 1]) return *why = "prepends out of order", false;
    all[w].insert(all[w].end(), v.begin(), v.end());
  }
  for (auto& [w, v] : all) {
    std::sort(v.begin(), v.end());
    for (size_t i = 1; i < v.size(); ++i)
      if (v[i] != v[i - 1] + 1) return *why = "a writer's chunks not consecutive (lost or doubled write)", false;
  }
  const std::string value(reinterpret_cast<const char*>(data), len);
  const uint64_t generation = (static_cast<uint64_t>(gen_writer) << 32) | gen_number;
  if (token == 0 || token < seen->token) return *why = "token went back", false;
  if (token == seen->token && value != seen->value) return *why = "one token, two values", false;
  if (generation == seen->generation && value.find(seen->value) == std::string::npos)
    return *why = "the earlier value of this generation is not part of this one", false;
  *seen = CatSeen{generation, value, token};
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 5.0;
  int writers = argc > 2 ? std::atoi(argv[2]) : 2;
  const bool evict = argc > 3 && std::atoi(argv[3]) != 0;
  const bool batch = argc > 4 && std::atoi(argv[4]) != 0;
  const bool large = argc > 5 && std::atoi(argv[5]) != 0;
  const bool options = argc > 6 && std::atoi(argv[6]) != 0;
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  if (options) {  // collective, before shmemcache_init: every PE has the same arguments
    pe_test::ClientBarrierInit();
    burned_sym = static_cast<uint64_t*>(shmem_calloc(kMaxBurned + 1, sizeof(uint64_t)));
    wins_sym = static_cast<uint64_t*>(shmem_calloc(kMaxWins + 1, sizeof(uint64_t)));
    PE_CHECK(writers <= kMaxWriters);
  }
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
    // options = 1: what one PE saw and did (the reader's checks run on the writers' fetches too).
    struct LastToken {
      uint64_t token = 0;
      uint32_t writer = 0;
      uint64_t seq = 0;
    };
    std::vector<LastToken> last_token(kKeys);
    std::unordered_set<uint64_t> seen_fallible;  // seq * kMaxWriters + writer, of values whose store could fail
    std::unordered_set<uint64_t> my_burned;
    uint64_t double_wins = 0, flag_mismatches = 0, token_regressions = 0, token_aliases = 0, burned_seen = 0;
    uint64_t opt_direct = 0, opt_active = 0, opt_ok = 0, cas_wins = 0, cas_exists = 0, cas_not_found = 0,
             cas_no_pair = 0, replace_not_stored = 0, ctr_wins = 0, ctr_conflicts = 0, ctr_lost = 0, fetches = 0,
             direct_exists = 0;  // EXISTS on the Direct path: counted in direct_sets, nothing written
    auto burn = [&](uint64_t s) {
      my_burned.insert(s);
      if (burned_sym[0] + 2 < kMaxBurned) burned_sym[1 + burned_sym[0]++] = s;  // the last 2: the counter's
    };
    auto record_win = [&](int key_id, uint64_t cas) {
      if (wins_sym[0] < kMaxWins) wins_sym[1 + wins_sym[0]++] = cas * 16 + static_cast<uint64_t>(key_id);
    };
    auto check_fetch = [&](int k, shmemcache_status_t s, const uint8_t* data, size_t len, uint32_t flags,
                           uint64_t token) {
      ++fetches;
      check_read(k, s, data, len);
      pe_test::VerifiableHeader h{};
      if (s != SHMEMCACHE_OK || !pe_test::ReadVerifiable(data, len, static_cast<uint32_t>(k), &h)) return;
      if (flags != ExpectedFlags(k, h.writer, h.seq)) ++flag_mismatches;
      LastToken& lt = last_token[k];
      if (token == 0 || token < lt.token) ++token_regressions;
      else if (token == lt.token && (lt.writer != h.writer || lt.seq != h.seq)) ++token_aliases;  // one token, 2 values
      else lt = {token, h.writer, h.seq};
      if ((h.seq & 3) >= kCasStore) {
        if (h.writer == static_cast<uint32_t>(rank) && my_burned.count(h.seq) != 0) ++burned_seen;
        seen_fallible.insert(h.seq * kMaxWriters + h.writer);
      }
    };
    // The cas counter's value is "generation:count". A generation starts at 0 with an add (one writer's wins),
    // named by its writer (rank << 32 | its own count): when eviction takes the counter, a new one starts. Each
    // writer counts its wins in the last generation it read; the final value's count must be their sum.
    const std::string ctr_key = "opt-ctr";
    uint64_t gens_started = 0, ctr_gen = 0, ctr_gen_wins = 0;
    auto start_counter = [&]() {
      const std::string v = std::to_string((static_cast<uint64_t>(rank) << 32) | ++gens_started) + ":0";
      shmemcache_store_options_t o{SHMEMCACHE_MODE_ADD, 7, 0, 0};
      shmemcache_status_t s = shmemcache_store(c, ctr_key.data(), ctr_key.size(), v.data(), v.size(), &o, nullptr);
      PE_CHECK(s == SHMEMCACHE_OK || s == SHMEMCACHE_EXISTS || s == SHMEMCACHE_NO_SPACE);
    };
    if (options && writer) start_counter();
    // options = 1: the append / prepend keys.
    std::vector<CatSeen> cat_seen(kCatKeys);
    std::vector<uint32_t> cat_numbers(kCatKeys, 0);  // this writer's chunks per key so far
    uint32_t cat_generations = 0;
    uint64_t cat_fetches = 0, cat_bad = 0, cat_direct = 0, cat_active = 0, cat_ok = 0, cat_not_stored = 0,
             cat_new_gens = 0, cat_max_len = 0;
    std::vector<uint8_t> cat_buf(kCatMaxBytes * 4);
    auto cat_key = [](int j) { return "cat-" + std::to_string(j); };
    auto cat_fetch = [&](int j) -> size_t {  // fetches and checks one cat key; its length (0: absent)
      const std::string key = cat_key(j);
      size_t len = 0;
      uint32_t flags = 0;
      uint64_t token = 0;
      const shmemcache_status_t s =
          shmemcache_fetch(c, key.data(), key.size(), cat_buf.data(), cat_buf.size(), &len, &flags, &token);
      ++cat_fetches;
      if (s == SHMEMCACHE_NOT_FOUND) return 0;
      const char* why = "status";
      if (s != SHMEMCACHE_OK || !CheckCatValue(j, cat_buf.data(), len, flags, token, &cat_seen[j], &why)) {
        if (++cat_bad <= 5) std::fprintf(stderr, "PE %d: cat-%d (%zu bytes): %s\n", shmem_my_pe(), j, len, why);
        return 0;
      }
      cat_max_len = std::max<uint64_t>(cat_max_len, len);
      return len;
    };
    // One shmemcache_store, checked (stats around it) to take exactly one path: *direct says whether it was the
    // Direct one.
    auto store_on_one_path = [&](const std::string& key, const void* v, size_t len,
                                 const shmemcache_store_options_t* o, uint64_t* token, bool* direct) {
      shmemcache_stats_t a{}, b{};
      shmemcache_get_stats(c, &a);
      const shmemcache_status_t s = shmemcache_store(c, key.data(), key.size(), v, len, o, token);
      shmemcache_get_stats(c, &b);
      PE_CHECK(b.sets == a.sets + 1);
      PE_CHECK((b.direct_sets - a.direct_sets) + (b.active_sets - a.active_sets) == 1);
      *direct = b.direct_sets != a.direct_sets;
      return s;
    };
    auto cat_new_generation = [&](int j) {  // a plain store in mode SET with the base's flags
      uint8_t chunk[kCatChunk];
      const uint32_t gen = ++cat_generations;
      CatChunk(chunk, kCatBase, j, static_cast<uint32_t>(rank), gen);
      shmemcache_store_options_t o{SHMEMCACHE_MODE_SET, CatFlags(j, static_cast<uint32_t>(rank), gen), 0, 0};
      const std::string key = cat_key(j);
      const shmemcache_status_t s = shmemcache_store(c, key.data(), key.size(), chunk, kCatChunk, &o, nullptr);
      PE_CHECK(s == SHMEMCACHE_OK || s == SHMEMCACHE_NO_SPACE);
      ++cat_new_gens;
    };
    auto cat_write = [&](int j) {  // one append or prepend of 1-3 chunks (or a new generation)
      const bool append = rng.Uniform(3) != 0;
      const uint32_t n = 1 + static_cast<uint32_t>(rng.Uniform(3));
      uint8_t chunks[3 * kCatChunk];
      // Appended chunks left to right in the writer's order; prepended ones so that the last lands in front.
      for (uint32_t i = 0; i < n; ++i)
        CatChunk(chunks + (append ? i : n - 1 - i) * kCatChunk, append ? kCatAppend : kCatPrepend, j,
                 static_cast<uint32_t>(rank), cat_numbers[j] + 1 + i);
      // Flags and a 1 ms ttl the pair must ignore (memcached): a reader would see other flags, or no pair.
      shmemcache_store_options_t o{append ? SHMEMCACHE_MODE_APPEND : SHMEMCACHE_MODE_PREPEND,
                                   static_cast<uint32_t>(rng.Next()), rng.Uniform(2), 0};
      bool direct = false;
      const shmemcache_status_t s = store_on_one_path(cat_key(j), chunks, n * kCatChunk, &o, nullptr, &direct);
      if (direct) ++cat_direct;
      else ++cat_active;
      if (s == SHMEMCACHE_OK) {
        cat_numbers[j] += n;
        ++cat_ok;
        if (cat_fetch(j) > kCatMaxBytes) cat_new_generation(j);
        return;
      }
      PE_CHECK(s == SHMEMCACHE_NOT_STORED || s == SHMEMCACHE_NO_SPACE);  // absent (deleted, evicted, never set)
      if (s == SHMEMCACHE_NOT_STORED) ++cat_not_stored;
      cat_new_generation(j);
    };
    std::vector<std::string> hot_keys(kKeys);
    for (int k = 0; k < kKeys; ++k) hot_keys[k] = "hot-" + std::to_string(k);
    // options = 1: one store of hot key k with `len` bytes, of a random OptionsKind (a plain SET now and then),
    // checked and counted as the stats say it ran (opt_direct / opt_active).
    auto store_with_options = [&](int k, size_t len) {
      const std::string& key = hot_keys[k];
      const uint64_t kind = rng.Uniform(4);
      const uint64_t my_seq = (++seq << 2) | kind;
      pe_test::WriteVerifiable(value.data(), len, static_cast<uint32_t>(k), static_cast<uint32_t>(rank), my_seq);
      if (kind == kPlainSet) {
        PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value.data(), len), SHMEMCACHE_OK);
        ++writes;
        return;
      }
      shmemcache_store_options_t o{SHMEMCACHE_MODE_SET, ExpectedFlags(k, rank, my_seq), 0, 0};
      if (kind == kFlagsSet && rng.Uniform(4) == 0) o.ttl_ms = 3600 * 1000;  // stamped, never reached
      if (kind == kReplace) o.mode = SHMEMCACHE_MODE_REPLACE;
      if (kind == kCasStore) {
        size_t glen = 0;
        uint32_t gflags = 0;
        uint64_t token = 0;
        shmemcache_status_t s = shmemcache_fetch(c, key.data(), key.size(), got.data(), got.size(), &glen,
                                                 &gflags, &token);
        check_fetch(k, s, got.data(), glen, gflags, token);
        if (s != SHMEMCACHE_OK) {
          ++cas_no_pair;
          return;
        }
        o.cas = token;
        if (rng.Uniform(2) == 0) o.mode = SHMEMCACHE_MODE_REPLACE;
      }
      uint64_t new_token = 0;
      bool direct = false;
      const shmemcache_status_t s = store_on_one_path(key, value.data(), len, &o, &new_token, &direct);
      if (direct) ++opt_direct;
      else ++opt_active;
      if (s == SHMEMCACHE_OK) {
        ++writes;
        ++opt_ok;
        PE_CHECK(new_token != 0 && new_token > o.cas);
        if (o.cas != 0) ++cas_wins, record_win(k, o.cas);
        return;
      }
      burn(my_seq);
      if (o.cas != 0) {  // cas is checked first, in every mode
        PE_CHECK(s == SHMEMCACHE_EXISTS || s == SHMEMCACHE_NOT_FOUND);
        if (s == SHMEMCACHE_EXISTS && direct) ++direct_exists;  // decided under the lock
        if (s == SHMEMCACHE_EXISTS) ++cas_exists;
        else ++cas_not_found;
      } else {
        PE_CHECK_STATUS(s, SHMEMCACHE_NOT_STORED);
        PE_CHECK(kind == kReplace);
        ++replace_not_stored;
      }
      // Nothing changed: this value never shows (checked here at once, and by everyone at the end).
      size_t glen = 0;
      uint32_t gflags = 0;
      uint64_t token = 0;
      const shmemcache_status_t gs = shmemcache_fetch(c, key.data(), key.size(), got.data(), got.size(), &glen,
                                                      &gflags, &token);
      check_fetch(k, gs, got.data(), glen, gflags, token);
    };
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
        if (options && r < 6) {  // one cas increment of the counter
          char buf[32];
          size_t len = 0;
          uint32_t flags = 0;
          uint64_t token = 0;
          shmemcache_status_t s = shmemcache_fetch(c, ctr_key.data(), ctr_key.size(), buf, sizeof buf - 1, &len,
                                                   &flags, &token);
          if (s == SHMEMCACHE_NOT_FOUND) {  // evicted: a new generation
            ++ctr_lost;
            start_counter();
            continue;
          }
          PE_CHECK_STATUS(s, SHMEMCACHE_OK);
          if (s != SHMEMCACHE_OK) continue;
          buf[len] = 0;
          PE_CHECK(flags == 7 && token != 0);
          char* colon = nullptr;
          const uint64_t gen = std::strtoull(buf, &colon, 10);
          PE_CHECK(*colon == ':');
          if (*colon != ':') continue;
          if (gen != ctr_gen) ctr_gen = gen, ctr_gen_wins = 0;
          const uint64_t count = std::strtoull(colon + 1, nullptr, 10);
          const std::string next = std::to_string(gen) + ":" + std::to_string(count + 1);
          if (rng.Uniform(2) == 0) {  // a touch (Active) in between keeps the token, and the pair's recency fresh
            s = shmemcache_touch(c, ctr_key.data(), ctr_key.size(), 0);
            PE_CHECK(s == SHMEMCACHE_OK || s == SHMEMCACHE_NOT_FOUND);
          }
          shmemcache_store_options_t o{SHMEMCACHE_MODE_SET, 7, 0, token};
          bool direct = false;
          s = store_on_one_path(ctr_key, next.data(), next.size(), &o, nullptr, &direct);
          PE_CHECK(s == SHMEMCACHE_OK || s == SHMEMCACHE_EXISTS || s == SHMEMCACHE_NOT_FOUND);
          if (s == SHMEMCACHE_OK) ++ctr_wins, ++ctr_gen_wins, record_win(kKeys, token);
          else if (s == SHMEMCACHE_EXISTS) ++ctr_conflicts;
          else ++ctr_lost;
          if (s == SHMEMCACHE_EXISTS && direct) ++direct_exists;
          continue;
        }
        if (options && r < 22) {  // an append or prepend on a cat key
          cat_write(static_cast<int>(rng.Uniform(kCatKeys)));
          continue;
        }
        // 80%: a length that stays in the 128-byte class range (Direct SET fits); 18%: another size (Active).
        size_t len = r < 82 ? 48 + rng.Uniform(40) : 200 + rng.Uniform(12000);
        if (large)
          len = r < 82 ? 66000 + rng.Uniform(9000) : r < 91 ? 100000 + rng.Uniform(20000) : 270000 + rng.Uniform(30000);
        if (!options) {
          pe_test::WriteVerifiable(value.data(), len, static_cast<uint32_t>(k), static_cast<uint32_t>(rank), ++seq);
          PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value.data(), len), SHMEMCACHE_OK);
          ++writes;
          continue;
        }
        store_with_options(k, len);
      } else if (batch) {  // every hot key, starting at k
        for (int i = 0; i < kKeys; ++i) {
          const int key_id = (k + i) % kKeys;
          items[i] = {hot_keys[key_id].data(), hot_keys[key_id].size(), batch_bufs[i].data(), batch_bufs[i].size(),
                      0, SHMEMCACHE_IO_ERROR};
        }
        PE_CHECK_STATUS(shmemcache_mget(c, items.data(), items.size()), SHMEMCACHE_OK);
        for (int i = 0; i < kKeys; ++i) check_read((k + i) % kKeys, items[i].status, batch_bufs[i].data(),
                                                   items[i].value_len);
      } else if (options && rng.Uniform(4) == 0) {
        cat_fetch(static_cast<int>(rng.Uniform(kCatKeys)));
      } else if (options) {
        size_t len = 0;
        uint32_t flags = 0;
        uint64_t token = 0;
        shmemcache_status_t s =
            shmemcache_fetch(c, key.data(), key.size(), got.data(), got.size(), &len, &flags, &token);
        check_fetch(k, s, got.data(), len, flags, token);
      } else {
        size_t len = 0;
        shmemcache_status_t s = shmemcache_get(c, key.data(), key.size(), got.data(), got.size(), &len);
        check_read(k, s, got.data(), len);
      }
    }
    // The server checks that eviction ran (evict), whatever the machine's speed: a writer whose cold pairs within
    // the time came to less than the server's memory (a loaded machine, or tcp) tops up with cold pairs alone, so
    // that the writers together overfill it. Bounded: server_memory_bytes / 6144 SETs.
    while (writer && evict && cold * 6144 < cfg.server_memory_bytes) {
      std::string cold_key = "cold-" + std::to_string(rank) + "-" + std::to_string(++cold);
      shmemcache_status_t s = shmemcache_set(c, cold_key.data(), cold_key.size(), value.data(), 6144);
      PE_CHECK(s == SHMEMCACHE_OK || s == SHMEMCACHE_NO_SPACE);
    }
    // The same for the option paths a writer checks below (options): a writer short of Direct stores with options
    // (opt_direct_needed) or of cas wins tops up with stores with options alone, of lengths a Direct store fits (the
    // loop's 80%), and one short of Direct appends / prepends with those, under the same checks. Bounded: 8 stores
    // per one missing + 64, and 64 appends / prepends; a path that never goes Direct still fails the checks.
    const uint64_t opt_direct_needed = mapped ? 1000 : 1;
    uint64_t opt_topped_up = 0, cat_topped_up = 0;
    for (const uint64_t bound = 8 * (opt_direct_needed - std::min(opt_direct, opt_direct_needed)) + 64;
         writer && options && (opt_direct < opt_direct_needed || cas_wins == 0) && opt_topped_up < bound;
         ++opt_topped_up)
      store_with_options(static_cast<int>(rng.Uniform(kKeys)),
                         large ? 66000 + rng.Uniform(9000) : 48 + rng.Uniform(40));
    for (; writer && options && (cat_ok == 0 || cat_direct == 0) && cat_topped_up < 64; ++cat_topped_up)
      cat_write(static_cast<int>(rng.Uniform(kCatKeys)));
    if (options) {
      // Every writer's burned list is final once all clients are here: no value this PE read may be on one.
      const int first_client = cfg.num_servers;
      const int clients = shmemcache_num_clients(c);
      burned_sym[kMaxBurned] = ctr_gen;  // (burn leaves the last 2 slots alone)
      burned_sym[kMaxBurned - 1] = ctr_gen_wins;
      pe_test::ClientBarrier(first_client, clients);
      uint64_t burned_total = 0;
      std::map<uint64_t, uint64_t> gen_wins;  // writers' wins in the last generation each read
      std::vector<uint64_t> list(kMaxBurned + 1);
      for (int w = 0; w < writers; ++w) {
        shmem_getmem(list.data(), burned_sym, list.size() * sizeof(uint64_t), first_client + w);
        burned_total += list[0];
        gen_wins[list[kMaxBurned]] += list[kMaxBurned - 1];
        for (uint64_t i = 0; i < list[0]; ++i)
          if (seen_fallible.count(list[1 + i] * kMaxWriters + static_cast<uint64_t>(w)) != 0) ++burned_seen;
      }
      if (rank == 0) {  // one winner per token; the counter: the sum of the wins, unless eviction took it
        std::unordered_set<uint64_t> won;
        uint64_t wins_listed = 0;
        std::vector<uint64_t> listed(kMaxWins + 1);
        for (int w = 0; w < writers; ++w) {
          shmem_getmem(listed.data(), wins_sym, listed.size() * sizeof(uint64_t), first_client + w);
          for (uint64_t i = 0; i < listed[0]; ++i) {
            ++wins_listed;
            if (!won.insert(listed[1 + i]).second) ++double_wins;
          }
        }
        std::printf("options: %llu cas wins listed, %llu tokens won twice\n", (unsigned long long)wins_listed,
                    (unsigned long long)double_wins);
        pe_test::Fetched f = pe_test::Fetch(c, ctr_key, 32);
        uint64_t gen = 0, count = 0, wins = 0;
        if (f.status == SHMEMCACHE_OK) {
          PE_CHECK(f.flags == 7);
          char* colon = nullptr;
          gen = std::strtoull(f.value.c_str(), &colon, 10);
          count = std::strtoull(colon + 1, nullptr, 10);
          wins = gen_wins[gen];
          PE_CHECK(*colon == ':' && count == wins);
        }
        std::printf("options: counter %s (generation's cas wins over writers %llu), burned over writers %llu\n",
                    f.status == SHMEMCACHE_OK ? f.value.c_str() : "evicted (not checked)", (unsigned long long)wins,
                    (unsigned long long)burned_total);
      }
      pe_test::ClientBarrier(first_client, clients);
      std::printf("client %d options: fetches=%llu stores_with_options direct=%llu active=%llu ok=%llu "
                  "cas wins=%llu exists=%llu (Direct EXISTS, counter too: %llu) not_found=%llu no_pair=%llu "
                  "replace_not_stored=%llu "
                  "counter wins=%llu conflicts=%llu lost=%llu | flag_mismatches=%llu token_regressions=%llu "
                  "token_aliases=%llu burned_seen=%llu topped_up=%llu+%llu\n",
                  rank, (unsigned long long)fetches, (unsigned long long)opt_direct, (unsigned long long)opt_active,
                  (unsigned long long)opt_ok, (unsigned long long)cas_wins, (unsigned long long)cas_exists,
                  (unsigned long long)direct_exists, (unsigned long long)cas_not_found, (unsigned long long)cas_no_pair,
                  (unsigned long long)replace_not_stored, (unsigned long long)ctr_wins,
                  (unsigned long long)ctr_conflicts, (unsigned long long)ctr_lost,
                  (unsigned long long)flag_mismatches, (unsigned long long)token_regressions,
                  (unsigned long long)token_aliases, (unsigned long long)burned_seen,
                  (unsigned long long)opt_topped_up, (unsigned long long)cat_topped_up);
      std::printf("client %d cat: fetches=%llu bad=%llu appends/prepends direct=%llu active=%llu ok=%llu "
                  "not_stored=%llu new_generations=%llu longest=%llu\n",
                  rank, (unsigned long long)cat_fetches, (unsigned long long)cat_bad, (unsigned long long)cat_direct,
                  (unsigned long long)cat_active, (unsigned long long)cat_ok, (unsigned long long)cat_not_stored,
                  (unsigned long long)cat_new_gens, (unsigned long long)cat_max_len);
      PE_CHECK(cat_bad == 0);
      if (writer) PE_CHECK(cat_ok > 0 && cat_direct > 0);  // the Direct path ran, proven by the stats
      else PE_CHECK(cat_fetches > 0);
      PE_CHECK(double_wins == 0 && flag_mismatches == 0 && token_regressions == 0 && token_aliases == 0);
      PE_CHECK(burned_seen == 0);
      PE_CHECK(fetches > 0);
      if (writer) {
        PE_CHECK(opt_ok > 0 && cas_wins > 0);
        PE_CHECK(opt_direct >= opt_direct_needed);  // the Direct path, proven by the stats
      }
    }
    shmemcache_get_stats(c, &st);
    std::printf(
        "client %d (%s): reads=%llu found=%llu writes=%llu deletes=%llu bad=%llu regressions=%llu | "
        "direct_gets=%llu active_gets=%llu direct_sets=%llu active_sets=%llu read_retries=%llu "
        "lock_retries=%llu cas_lock_busy=%llu cas_tag_mismatch=%llu cas_version_mismatch=%llu fallbacks=%llu "
        "local_gets=%llu local_sets=%llu unchecked_copies=%llu cpu_word_atomics=%llu expiry_asks=%llu "
        "remote_gets whole=%llu head_value=%llu split=%llu mget_local_items=%llu\n",
        rank, writer ? "writer" : "reader", (unsigned long long)reads, (unsigned long long)found,
        (unsigned long long)writes, (unsigned long long)deletes, (unsigned long long)bad,
        (unsigned long long)regressions, (unsigned long long)st.direct_gets, (unsigned long long)st.active_gets,
        (unsigned long long)st.direct_sets, (unsigned long long)st.active_sets,
        (unsigned long long)st.read_retries, (unsigned long long)st.lock_retries,
        (unsigned long long)st.cas_lock_busy, (unsigned long long)st.cas_tag_mismatch,
        (unsigned long long)st.cas_version_mismatch, (unsigned long long)st.direct_fallbacks,
        (unsigned long long)st.local_gets, (unsigned long long)st.local_sets,
        (unsigned long long)st.unchecked_copies, (unsigned long long)st.cpu_word_atomics,
        (unsigned long long)st.direct_expiry_asks, (unsigned long long)st.remote_gets_whole,
        (unsigned long long)st.remote_gets_head_value, (unsigned long long)st.remote_gets_split,
        (unsigned long long)st.mget_local_items);
    std::fflush(stdout);
    PE_CHECK(bad == 0);
    PE_CHECK(regressions == 0);
    if (writer) PE_CHECK(writes > 0 && st.direct_sets > 0 && st.active_sets > 0);
    else PE_CHECK(found > 0 && st.direct_gets > 0);
    const bool local = mapped && cfg.local_access != 0;  // the path this client's Direct operations take
    if (local) PE_CHECK(st.unchecked_copies == 0);  // its reads go through the mapping: the seqlock there
    PE_CHECK(st.cpu_word_atomics == 2 || (local && st.cpu_word_atomics == 1));  // never without the mapping
    if (!local) PE_CHECK(st.local_gets == 0 && st.local_sets == 0);
    else if (writer) PE_CHECK(st.local_sets + direct_exists == st.direct_sets);
    // Pulls of large values read through the mapping too, and so does a valid copy whose expiry only the server
    // could judge (a ttl store's pair read while this reader had no recent reply from the server).
    else PE_CHECK(st.local_gets == st.direct_gets + st.large_gets_pulled + st.direct_expiry_asks);
    // batch = 1: a reader through the mapping answers most of its mgets' items with the batched read
    // (client/mapped_mget.cc), whose seqlock reads are the ones checked above; a remote reader never does.
    if (batch && !writer) PE_CHECK(local ? st.mget_local_items > 0 : st.mget_local_items == 0);
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  // Totals over all PEs, so the log shows how hard the protocol was exercised.
  static long psync[SHMEM_REDUCE_SYNC_SIZE];
  static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
  static long src[11], dst[11];
  for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) psync[i] = SHMEM_SYNC_VALUE;
  src[0] = static_cast<long>(st.read_retries);
  src[1] = static_cast<long>(st.lock_retries);
  src[2] = static_cast<long>(st.cas_version_mismatch);
  src[3] = static_cast<long>(st.local_gets + st.local_sets);
  src[4] = static_cast<long>(st.direct_gets + st.direct_sets) - src[3];  // Direct operations over one-sided ops
  src[5] = static_cast<long>(st.unchecked_copies);
  src[6] = st.cpu_word_atomics == 1 ? 1 : 0;  // the server's too
  src[7] = static_cast<long>(st.remote_gets_whole);  // remote Direct GETs by form (client/direct_ops.h)
  src[8] = static_cast<long>(st.remote_gets_head_value);
  src[9] = static_cast<long>(st.remote_gets_split);
  src[10] = mapped ? 1 : 0;  // PE 0 (the server) maps nobody: the job is on shared memory where the clients map
  shmem_barrier_all();
  shmem_long_sum_to_all(dst, src, 11, 0, 0, shmem_n_pes(), pwrk, psync);
  shmem_barrier_all();
  if (shmem_my_pe() == 0) {
    std::printf("totals: read_retries=%ld lock_retries=%ld cas_version_mismatch=%ld local_ops=%ld remote_ops=%ld "
                "unchecked_copies=%ld cpu_word_atomics_pes=%ld remote_gets whole=%ld head_value=%ld split=%ld\n",
                dst[0], dst[1], dst[2], dst[3], dst[4], dst[5], dst[6], dst[7], dst[8], dst[9]);
    const bool shared_memory = dst[10] > 0;
    PE_CHECK(dst[4] > 0);                         // the one-sided path ran
    if (shared_memory) PE_CHECK(dst[3] > 0);  // and, where it exists, the mapping path at the same time
    if (shared_memory) PE_CHECK(dst[5] > 0);  // and remote readers confirmed blocks the mapping path wrote
    // The remote GET's forms (client/direct_ops.h): on shared memory (non-blocking gets) never header-and-value,
    // over tcp (blocking gets) never the three pieces. large = 1 reaches on shared memory the three pieces (values
    // of 64 KiB and more), over tcp both the whole block (66000..75000 bytes: little slack) and header-and-value
    // (most of 100000..120000 and 270000..300000); else every value is read with one get of the whole block.
    // (batch = 1: the readers' mgets read blocks their own way, not counted in these.)
    PE_CHECK(shared_memory ? dst[8] == 0 : dst[9] == 0);
    if (large) PE_CHECK(shared_memory ? dst[9] > 0 : dst[7] > 0 && dst[8] > 0);
    else if (!batch) PE_CHECK(dst[7] > 0);
  }
  int rc = pe_test::Finish("pe_direct_stress");
  shmem_finalize();
  return rc;
}
