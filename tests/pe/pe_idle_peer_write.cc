// Direct writes next to an idle client (the write-side twin of pe_length_hint's idle reader): over UCX tcp a
// quiet with any operation outstanding flushes every endpoint of the worker, and an endpoint that sent since its
// last flush then waits for its peer's answer, which only the peer's progress engine sends
// (tests/platform/large_get_quiet.c). A Direct SET used to complete its unlock with such a quiet, so it waited
// for as long as an unrelated client stayed out of SHMEM (an application computing, a gateway in its event loop).
// 1 server and 2 clients: A = PE 1 writes, B = PE 2 idles. Run with direct_policy=always (tests.cmake), over
// tcp (the case above) and over shared memory with local_access off (the same paths, no wait to find).
// Each phase: A wakes B; B leaves SHMEM (it makes no SHMEM call at all) and says so with an "idle" file; A then
// puts a word into B's memory without a quiet (an application's own put to a peer that then computes: over tcp
// the put's acknowledgement is sent by B's progress engine, so the endpoint A -> B stays unflushed) and does
// kWrites Direct writes to the server (phase 1: SETs; phase 2: incrs; phase 3: an mset of kBatchKeys pairs, then
// an mget of them, whose reads are one-sided under mget_policy=single), checks each was Direct and that the
// pairs hold the last values, and writes a "done" file. B waits for it at most kIdleLimitSeconds: a write whose
// completion needs B's progress finishes only when B gives up waiting and calls SHMEM again, and B reports that.
#include <shmem.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "common/pe_test.h"

namespace {

constexpr int kA = 1, kB = 2;  // PEs
constexpr int kWrites = 16;
constexpr int kIdleLimitSeconds = 20;
const std::string kKey = "idle-write-key", kCounter = "idle-write-counter";
constexpr int kPhases = 3;
constexpr int kBatchKeys = 4;
// Steps: per phase p, 3p + 1 wakes B, 3p + 2 is A's unflushed put into B (nobody waits for it), 3p + 3 tells A
// that B is back in SHMEM.
constexpr int kSteps = 3 * kPhases + 2;

const char* const kPhaseWrites[kPhases] = {"SETs", "incrs", "mset + mget"};

using pe_test::Signal;
using pe_test::WaitFor;

// Files both clients name alike (the PEs of a job on one node share their parent, oshrun): signals that need no
// SHMEM progress.
std::string DoneFile(int phase) {
  return "/tmp/pe_idle_peer_write." + std::to_string(getppid()) + ".done" + std::to_string(phase);
}
std::string IdleFile(int phase) {
  return "/tmp/pe_idle_peer_write." + std::to_string(getppid()) + ".idle" + std::to_string(phase);
}

bool WaitForFile(const std::string& name) {
  const uint64_t start = pe_test::NowNanos();
  while (pe_test::NowNanos() - start < uint64_t{kIdleLimitSeconds} * 1000000000) {
    if (access(name.c_str(), F_OK) == 0) return true;
    pe_test::SleepMs(2);
  }
  return false;
}

shmemcache_stats_t Stats(shmemcache_t* c) {
  shmemcache_stats_t s;
  shmemcache_get_stats(c, &s);
  return s;
}

std::string BatchKey(int k) { return "idle-write-batch-" + std::to_string(k); }

std::string ValueFor(int i) { return "value-" + std::to_string(i) + std::string(200, static_cast<char>('a' + i % 26)); }

void Touch(const std::string& name) {
  std::FILE* done = std::fopen(name.c_str(), "w");
  PE_CHECK(done != nullptr);
  if (done != nullptr) std::fclose(done);
}

void ClientA(shmemcache_t* c) {
  // The pairs exist and A holds pointers to them (the replies of its Active inserts; one Direct write each, to
  // check that the policy lets them be Direct here at all).
  for (int i = 0; i < 2; ++i) {
    const std::string v = ValueFor(i);
    PE_CHECK_STATUS(shmemcache_set(c, kKey.data(), kKey.size(), v.data(), v.size()), SHMEMCACHE_OK);
  }
  PE_CHECK_STATUS(shmemcache_set(c, kCounter.data(), kCounter.size(), "1000", 4), SHMEMCACHE_OK);
  uint64_t counter = 0;
  PE_CHECK_STATUS(shmemcache_incr(c, kCounter.data(), kCounter.size(), 1, &counter), SHMEMCACHE_OK);
  PE_CHECK(counter == 1001);
  for (int k = 0; k < kBatchKeys; ++k) {
    const std::string key = BatchKey(k), v = ValueFor(k);
    PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), v.data(), v.size()), SHMEMCACHE_OK);
  }
  const shmemcache_stats_t warm = Stats(c);
  PE_CHECK(warm.direct_sets >= 1);
  PE_CHECK(warm.direct_incrs == 1);

  for (int phase = 0; phase < kPhases; ++phase) {
    // Stale ones (an earlier job of the same parent id) would pass the waits at once.
    std::remove(DoneFile(phase).c_str());
    std::remove(IdleFile(phase).c_str());
    // A fetching atomic: complete on its own reply (a put's quiet could itself wait for B once B left SHMEM).
    pe_test::SignalFetching(kB, 3 * phase + 1);
    PE_CHECK(WaitForFile(IdleFile(phase)));
    pe_test::PutUnflushed(kB, 3 * phase + 2);
    const uint64_t phase_start = pe_test::NowNanos();
    const shmemcache_stats_t s0 = Stats(c);
    const uint64_t start = pe_test::NowNanos();
    for (int i = 0; i < kWrites; ++i) {
      if (phase == 0) {
        const std::string v = ValueFor(100 + i);
        PE_CHECK_STATUS(shmemcache_set(c, kKey.data(), kKey.size(), v.data(), v.size()), SHMEMCACHE_OK);
      } else if (phase == 2) {
        if (i > 0) break;  // one mset and one mget of kBatchKeys each
        std::string keys[kBatchKeys], values[kBatchKeys], got[kBatchKeys];
        shmemcache_mset_item_t sets[kBatchKeys];
        shmemcache_mget_item_t gets[kBatchKeys];
        for (int k = 0; k < kBatchKeys; ++k) {
          keys[k] = BatchKey(k);
          values[k] = ValueFor(200 + k);
          got[k].assign(values[k].size() + 16, '\0');
          sets[k] = shmemcache_mset_item_t{keys[k].data(), keys[k].size(), values[k].data(), values[k].size(),
                                           SHMEMCACHE_OK};
          gets[k] = shmemcache_mget_item_t{keys[k].data(), keys[k].size(), &got[k][0], got[k].size(), 0,
                                           SHMEMCACHE_OK};
        }
        PE_CHECK_STATUS(shmemcache_mset(c, sets, kBatchKeys), SHMEMCACHE_OK);
        PE_CHECK_STATUS(shmemcache_mget(c, gets, kBatchKeys), SHMEMCACHE_OK);
        for (int k = 0; k < kBatchKeys; ++k) {
          PE_CHECK_STATUS(sets[k].status, SHMEMCACHE_OK);
          PE_CHECK_STATUS(gets[k].status, SHMEMCACHE_OK);
          PE_CHECK(gets[k].value_len == values[k].size() && got[k].compare(0, values[k].size(), values[k]) == 0);
        }
      } else {
        PE_CHECK_STATUS(shmemcache_incr(c, kCounter.data(), kCounter.size(), 1, &counter), SHMEMCACHE_OK);
        PE_CHECK(counter == 1002 + static_cast<uint64_t>(i));
      }
    }
    const double ms = (pe_test::NowNanos() - start) / 1e6;
    const shmemcache_stats_t s1 = Stats(c);
    if (phase == 0) {
      PE_CHECK(s1.direct_sets == s0.direct_sets + kWrites);
      std::string want = ValueFor(100 + kWrites - 1), got(want.size() + 16, '\0');
      size_t len = 0;
      PE_CHECK_STATUS(shmemcache_get(c, kKey.data(), kKey.size(), &got[0], got.size(), &len), SHMEMCACHE_OK);
      PE_CHECK(len == want.size() && got.compare(0, len, want) == 0);
    } else if (phase == 1) {
      PE_CHECK(s1.direct_incrs == s0.direct_incrs + kWrites);
    } else {
      PE_CHECK(s1.direct_sets == s0.direct_sets + kBatchKeys);
      PE_CHECK(s1.direct_gets == s0.direct_gets + kBatchKeys);
    }
    std::printf("PE %d: phase %d: Direct %s next to an idle client in %.1f ms\n", kA, phase, kPhaseWrites[phase],
                ms);
    std::printf("PE %d: phase %d: %.1f ms from the put into B to the end of the checks\n", kA, phase,
                (pe_test::NowNanos() - phase_start) / 1e6);
    std::fflush(stdout);
    Touch(DoneFile(phase));
    WaitFor(3 * phase + 3);
    std::remove(DoneFile(phase).c_str());
    std::remove(IdleFile(phase).c_str());
  }
}

void ClientB(shmemcache_t*) {
  for (int phase = 0; phase < kPhases; ++phase) {
    WaitFor(3 * phase + 1);
    // Idle, outside SHMEM, until A's writes are done (or the limit: then they waited for this PE).
    Touch(IdleFile(phase));
    const bool a_done = WaitForFile(DoneFile(phase));
    if (!a_done)
      std::fprintf(stderr, "PE %d: phase %d: the writer's Direct %s did not finish while this PE made no SHMEM call\n",
                   kB, phase, kPhaseWrites[phase]);
    PE_CHECK(a_done);
    Signal(kA, 3 * phase + 3);
  }
}

}  // namespace

int main() { return pe_test::RunTwoClientScript("pe_idle_peer_write", kSteps, ClientA, ClientB); }
