// The value-length hint of a remote Direct GET (client/direct_ops.h): a client's pointer remembers the pair's
// last seen value length and its one-copy GET (values from 64 KiB) reads that many value bytes first; when the
// header names a longer value it reads the rest, and a shorter one is simply taken. 1 server and 2 clients (A =
// PE 1 holds the pointer, B = PE 2 changes the value under it with Active SETs, which rewrite the block in place
// while the value fits it). After each change A reads the key through its cached pointer and checks every byte:
//   - grow and shrink within the block's slab class (the block stays): the GET must stay Direct, with no read
//     retry and no fallback (a hint that is not corrected would fail the checksum, retry and fall back);
//   - grow and shrink across classes (the block moves, the pointer goes stale): exact bytes, then Direct again;
//   - a value that outgrows a buffer of exactly the hinted length: BUFFER_TOO_SMALL with the size, then exact.
// Sizes assume the default slab growth factor (1.25): 65600..76000-byte values share one class, 100000 and 120000
// the next but one.
// Last, a reader next to an idle client (issue 13: the gateway's `set big` + `get big` hung): A reads a value of
// 100000 bytes (its block's room fits A's buffer of 1 MiB) and one of nearly 1 MiB (more than the buffer can take
// of the room, less than the hint) through its cached pointers, 4 times each, while B makes no SHMEM call at all
// (as a gateway idle in its event loop). B waits for
// A's "done" file instead, at most kIdleLimitSeconds; a GET whose completion needs B's progress engine (over UCX
// tcp, a quiet with any get outstanding flushes every endpoint, and the endpoint A -> B, left unflushed by a
// fetching atomic, then waits for B) finishes only when B gives up waiting, and B reports that.
// Run over UCX tcp (tests.cmake); on shared memory with local_access off it takes the same paths.
#include <shmem.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr int kA = 1, kB = 2;  // PEs
const std::string kKey = "hint-key";

using pe_test::Signal;
using pe_test::WaitFor;

std::vector<unsigned char> ValueFor(int step, size_t len) {
  std::vector<unsigned char> v(len);
  for (size_t i = 0; i < len; ++i) v[i] = static_cast<unsigned char>(i * 31 + step * 7 + (i >> 8));
  return v;
}

shmemcache_stats_t Stats(shmemcache_t* c) {
  shmemcache_stats_t s;
  shmemcache_get_stats(c, &s);
  return s;
}

// The value lengths B sets, step by step; whether the block stays (same class as the step before).
struct Change {
  size_t len;
  bool same_block;
};
const Change kChanges[] = {
    {66000, false},   // first value (A inserts it)
    {70000, true},    // grow within the class
    {65600, true},    // shrink within the class
    {76000, true},    // grow to near the room
    {66001, true},    // shrink by nearly the whole difference
    {120000, false},  // grow across classes: the block moves
    {100000, true},   // shrink within the new class
    {119999, true},   // grow within it
    {66000, false},   // shrink across classes (moves, or stays: either way exact bytes)
    {70000, false},   // grow again (in place if the block stayed)
};
constexpr int kSteps = sizeof(kChanges) / sizeof(kChanges[0]);
constexpr size_t kGrownLen = 74000;  // last: grows past a buffer of the hinted length
// The reader next to an idle client: the values (the second is the gateway test's), the GETs of each, the steps
// it uses, B's limit.
const std::string kBigKeys[] = {"idle-100k", "idle-998k"};
constexpr size_t kBigLens[] = {100000, 998400};
constexpr int kBigReads = 4;
constexpr int kIdleStep = kSteps + 2, kIdleDoneStep = kSteps + 3;
constexpr int kIdleLimitSeconds = 60;

// A file both clients name alike (the PEs of a job on one node share their parent, oshrun): B's signal that
// needs no SHMEM progress on B.
std::string DoneFile() { return "/tmp/pe_length_hint_idle." + std::to_string(getppid()); }

// A reads the key and checks every byte; when the block stayed, the read must be one Direct GET without retries.
void CheckRead(shmemcache_t* c, int step, std::vector<unsigned char>* buf) {
  const std::vector<unsigned char> want = ValueFor(step, kChanges[step].len);
  std::memset(buf->data(), 0xEE, buf->size());
  shmemcache_stats_t s0 = Stats(c);
  size_t len = 0;
  PE_CHECK_STATUS(shmemcache_get(c, kKey.data(), kKey.size(), buf->data(), buf->size(), &len), SHMEMCACHE_OK);
  shmemcache_stats_t s1 = Stats(c);
  PE_CHECK(len == want.size());
  PE_CHECK(len == want.size() && std::memcmp(buf->data(), want.data(), len) == 0);
  if (kChanges[step].same_block) {
    PE_CHECK(s1.direct_gets == s0.direct_gets + 1);
    PE_CHECK(s1.read_retries == s0.read_retries);
    PE_CHECK(s1.direct_fallbacks == s0.direct_fallbacks);
  }
  // Once more: the pointer (re-learned if the block moved) and its hint are now current.
  std::memset(buf->data(), 0xEE, buf->size());
  s0 = Stats(c);
  PE_CHECK_STATUS(shmemcache_get(c, kKey.data(), kKey.size(), buf->data(), buf->size(), &len), SHMEMCACHE_OK);
  s1 = Stats(c);
  PE_CHECK(len == want.size() && std::memcmp(buf->data(), want.data(), len) == 0);
  PE_CHECK(s1.direct_gets == s0.direct_gets + 1);
}

void ClientA(shmemcache_t* c) {
  std::vector<unsigned char> buf(1 << 20);  // holds any block's room: the one-copy form
  const std::vector<unsigned char> first = ValueFor(0, kChanges[0].len);
  PE_CHECK_STATUS(shmemcache_set(c, kKey.data(), kKey.size(), first.data(), first.size()), SHMEMCACHE_OK);
  CheckRead(c, 0, &buf);
  for (int step = 1; step < kSteps; ++step) {
    Signal(kB, step);
    WaitFor(step);
    CheckRead(c, step, &buf);
  }
  // The value outgrows a buffer that holds the hinted length exactly: BUFFER_TOO_SMALL with the size needed (the
  // hint's bytes may have landed), then the whole value with room enough.
  const size_t hinted = kChanges[kSteps - 1].len;
  Signal(kB, kSteps);
  WaitFor(kSteps);
  std::vector<unsigned char> exact(hinted);
  size_t len = 0;
  PE_CHECK_STATUS(shmemcache_get(c, kKey.data(), kKey.size(), exact.data(), exact.size(), &len),
                  SHMEMCACHE_BUFFER_TOO_SMALL);
  PE_CHECK(len == kGrownLen);
  const std::vector<unsigned char> want = ValueFor(kSteps, kGrownLen);
  PE_CHECK_STATUS(shmemcache_get(c, kKey.data(), kKey.size(), buf.data(), buf.size(), &len), SHMEMCACHE_OK);
  PE_CHECK(len == want.size() && std::memcmp(buf.data(), want.data(), len) == 0);
  Signal(kB, kSteps + 1);

  // The reader next to an idle client. Each SET's reply gives A the pointer and the hint.
  std::vector<std::vector<unsigned char>> bigs;
  for (int v = 0; v < 2; ++v) {
    bigs.push_back(ValueFor(kIdleStep + v, kBigLens[v]));
    PE_CHECK_STATUS(shmemcache_set(c, kBigKeys[v].data(), kBigKeys[v].size(), bigs[v].data(), bigs[v].size()),
                    SHMEMCACHE_OK);
  }
  std::remove(DoneFile().c_str());  // a stale one (an earlier job of the same parent id) would pass B at once
  // A fetching atomic wakes B (in its wait, progressing): it completes without a quiet, so it leaves the endpoint
  // A -> B as it is (unflushed), as a gateway's endpoints to its peers are after the job's start-up.
  pe_test::SignalFetching(kB, kIdleStep);
  const shmemcache_stats_t s0 = Stats(c);
  for (int i = 0; i < 2 * kBigReads; ++i) {
    const int v = i % 2;
    std::memset(buf.data(), 0xEE, buf.size());
    PE_CHECK_STATUS(shmemcache_get(c, kBigKeys[v].data(), kBigKeys[v].size(), buf.data(), buf.size(), &len),
                    SHMEMCACHE_OK);
    PE_CHECK(len == bigs[v].size() && std::memcmp(buf.data(), bigs[v].data(), len) == 0);
  }
  const shmemcache_stats_t s1 = Stats(c);
  PE_CHECK(s1.direct_gets == s0.direct_gets + 2 * kBigReads);
  std::FILE* done = std::fopen(DoneFile().c_str(), "w");
  PE_CHECK(done != nullptr);
  if (done != nullptr) std::fclose(done);
  WaitFor(kIdleDoneStep);
  std::remove(DoneFile().c_str());
}

void ClientB(shmemcache_t* c) {
  for (int step = 1; step < kSteps; ++step) {
    WaitFor(step);
    const std::vector<unsigned char> v = ValueFor(step, kChanges[step].len);
    PE_CHECK_STATUS(shmemcache_set(c, kKey.data(), kKey.size(), v.data(), v.size()), SHMEMCACHE_OK);
    Signal(kA, step);
  }
  WaitFor(kSteps);
  const std::vector<unsigned char> v = ValueFor(kSteps, kGrownLen);
  PE_CHECK_STATUS(shmemcache_set(c, kKey.data(), kKey.size(), v.data(), v.size()), SHMEMCACHE_OK);
  Signal(kA, kSteps);
  WaitFor(kSteps + 1);

  // Idle, outside SHMEM, until A's GETs are done (or the limit: then they waited for this PE).
  WaitFor(kIdleStep);
  const uint64_t start = pe_test::NowNanos();
  bool a_done = false;
  while (!a_done && pe_test::NowNanos() - start < uint64_t{kIdleLimitSeconds} * 1000000000) {
    a_done = access(DoneFile().c_str(), F_OK) == 0;
    if (!a_done) pe_test::SleepMs(2);
  }
  if (!a_done) std::fprintf(stderr, "PE %d: the reader's GETs did not finish while this PE made no SHMEM call\n", kB);
  PE_CHECK(a_done);
  Signal(kA, kIdleDoneStep);
}

}  // namespace

int main() { return pe_test::RunTwoClientScript("pe_length_hint", 32, ClientA, ClientB); }
