// Writes next to an idle client (the write-side twin of pe_length_hint's idle reader): over UCX tcp a quiet with
// any operation outstanding flushes every endpoint of the worker, and an endpoint that sent since its last flush
// then waits for its peer's answer, which only the peer's progress engine sends (tests/platform/large_get_quiet.c).
// A Direct SET used to complete its unlock with such a quiet, so it waited for as long as an unrelated client
// stayed out of SHMEM (an application computing, a gateway in its event loop); so did an Active request that
// woke a sleeping server on its node (the doorbell add's quiet, conduit/doorbell_sleep.h) wherever the worker
// also has tcp endpoints (a multi-host job with UCX's default transports: tests/multihost).
// 1 server and 2 clients: A = PE 1 writes, B = PE 2 idles. Run with direct_policy=always (tests.cmake), over
// tcp (the case above), over shared memory with local_access off (the same paths, no wait to find), and across
// emulated hosts with the server and A on one host and B on another, UCX_TLS unset (tests/multihost).
// Each phase is an idle phase (pe_test::LeaveIdle / StayIdle: B leaves SHMEM, A leaves the endpoint A -> B
// unflushed) in which A does kWrites writes to the server (phase 0: Direct SETs; 1: Direct incrs; 2: an mset of
// kBatchKeys pairs, then an mget of them, whose reads are one-sided under mget_policy=single; 3: Active SETs of
// new keys, kActivePauseMs apart so that the server falls asleep between them, and at least one wake where A
// maps the server), checks each was Direct (Active) and that the pairs hold the last values. B waits for the end
// at most kIdleLimitSeconds: a write whose completion needs B's progress finishes only when B gives up waiting
// and calls SHMEM again, and B reports that.
#include <cstdio>
#include <cstring>
#include <string>

#include "common/pe_test.h"

namespace {

constexpr int kA = 1, kB = 2;  // PEs
constexpr int kWrites = 16;
constexpr int kIdleLimitSeconds = 20;
const std::string kKey = "idle-write-key", kCounter = "idle-write-counter";
constexpr int kPhases = 4;
constexpr int kBatchKeys = 4;
// Phase 3: the pause between Active SETs, longer than an idle server's auto spin (SHMEMCACHE_IDLE_SPIN_AUTO_US),
// and how many SETs at most while none woke the server.
constexpr uint64_t kActivePauseMs = 3;
constexpr int kMaxActiveSets = 200;
// Steps: per phase p, 3p + 1 to 3p + 3 (pe_test::LeaveIdle's).
constexpr int kSteps = 3 * kPhases + 2;
int WakeStep(int phase) { return 3 * phase + 1; }

const char* const kPhaseWrites[kPhases] = {"Direct SETs", "Direct incrs", "Direct mset + mget",
                                           "Active SETs (waking the server)"};

shmemcache_stats_t Stats(shmemcache_t* c) {
  shmemcache_stats_t s;
  shmemcache_get_stats(c, &s);
  return s;
}

std::string BatchKey(int k) { return "idle-write-batch-" + std::to_string(k); }
std::string ActiveKey(int n) { return "idle-write-active-" + std::to_string(n); }

std::string ValueFor(int i) { return "value-" + std::to_string(i) + std::string(200, static_cast<char>('a' + i % 26)); }

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

  const bool maps_server = pe_test::ScriptMaps(0);  // then it wakes the server when it sleeps
  for (int phase = 0; phase < kPhases; ++phase) {
    int active_sets = 0;
    pe_test::LeaveIdle(kB, WakeStep(phase), kIdleLimitSeconds);
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
      } else if (phase == 3) {
        if (i > 0) break;  // its own loop: kWrites SETs, and more while none woke the server where A maps it
        for (int n = 0; n < kMaxActiveSets &&
                        (n < kWrites || (maps_server && Stats(c).doorbell_wakes == s0.doorbell_wakes));
             ++n) {
          pe_test::SleepMs(kActivePauseMs);  // the server spins out and sleeps
          const std::string key = ActiveKey(n), v = ValueFor(300 + n);
          PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), v.data(), v.size()), SHMEMCACHE_OK);
          active_sets = n + 1;
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
    } else if (phase == 2) {
      PE_CHECK(s1.direct_sets == s0.direct_sets + kBatchKeys);
      PE_CHECK(s1.direct_gets == s0.direct_gets + kBatchKeys);
    } else {
      PE_CHECK(active_sets >= kWrites);
      PE_CHECK(s1.active_sets == s0.active_sets + static_cast<uint64_t>(active_sets));
      if (maps_server) PE_CHECK(s1.doorbell_wakes > s0.doorbell_wakes);
      const std::string key = ActiveKey(active_sets - 1), want = ValueFor(300 + active_sets - 1);
      std::string got(want.size() + 16, '\0');
      size_t len = 0;
      PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), &got[0], got.size(), &len), SHMEMCACHE_OK);
      PE_CHECK(len == want.size() && got.compare(0, len, want) == 0);
      std::printf("PE %d: phase %d: %d SETs, %llu woke the server (A %s it)\n", kA, phase, active_sets,
                  static_cast<unsigned long long>(s1.doorbell_wakes - s0.doorbell_wakes),
                  maps_server ? "maps" : "does not map");
    }
    std::printf("PE %d: phase %d: %s next to an idle client in %.1f ms\n", kA, phase, kPhaseWrites[phase], ms);
    std::printf("PE %d: phase %d: %.1f ms from the put into B to the end of the checks\n", kA, phase,
                (pe_test::NowNanos() - phase_start) / 1e6);
    std::fflush(stdout);
    pe_test::ReturnIdle(WakeStep(phase));
  }
}

void ClientB(shmemcache_t*) {
  for (int phase = 0; phase < kPhases; ++phase) {
    const std::string what = std::string("the writer's ") + kPhaseWrites[phase];
    pe_test::StayIdle(kA, WakeStep(phase), kIdleLimitSeconds, what.c_str());
  }
}

}  // namespace

int main() { return pe_test::RunTwoClientScript("pe_idle_peer_write", kSteps, ClientA, ClientB); }
