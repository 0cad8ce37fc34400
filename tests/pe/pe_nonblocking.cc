// The non-blocking API (paper 000 §IV) with 2 servers: buffer reuse after bset/bget; thousands of requests
// outstanding, completed through a mix of test and wait; the ordering rule (same key: issue order; a GET
// after a SET of the same client sees it); blocking and non-blocking calls mixed; every error path.
// Args: [requests] (default 4000)
#include <shmem.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

std::string Key(int rank, int i) { return "nb-" + std::to_string(rank) + "-" + std::to_string(i); }

std::string ValueFor(int rank, int i, int version) {
  std::string v = "value:" + std::to_string(rank) + ":" + std::to_string(i) + ":" + std::to_string(version) + ":";
  v.append(static_cast<size_t>(i % 97), static_cast<char>('a' + i % 26));
  return v;
}

void BufferReuse(shmemcache_t* c, int rank) {
  char key[64], value[256];
  std::vector<shmemcache_request_t*> reqs;
  for (int i = 0; i < 200; ++i) {
    std::snprintf(key, sizeof(key), "reuse-%d-%d", rank, i);
    std::string v = ValueFor(rank, i, 1);
    std::memcpy(value, v.data(), v.size());
    shmemcache_request_t* r = nullptr;
    PE_CHECK_STATUS(shmemcache_bset(c, key, std::strlen(key), value, v.size(), &r), SHMEMCACHE_OK);
    std::memset(key, 'Z', sizeof(key));    // reuse both buffers at once
    std::memset(value, 'Q', sizeof(value));
    reqs.push_back(r);
  }
  for (auto* r : reqs) PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
  std::vector<std::vector<char>> bufs(200, std::vector<char>(256));
  std::vector<size_t> lens(200);
  reqs.clear();
  for (int i = 0; i < 200; ++i) {
    std::snprintf(key, sizeof(key), "reuse-%d-%d", rank, i);
    shmemcache_request_t* r = nullptr;
    PE_CHECK_STATUS(shmemcache_bget(c, key, std::strlen(key), bufs[i].data(), 256, &lens[i], &r), SHMEMCACHE_OK);
    std::memset(key, 'Z', sizeof(key));
    reqs.push_back(r);
  }
  for (int i = 0; i < 200; ++i) {
    PE_CHECK_STATUS(shmemcache_wait(c, reqs[i]), SHMEMCACHE_OK);
    std::string want = ValueFor(rank, i, 1);
    PE_CHECK(lens[i] == want.size() && std::memcmp(bufs[i].data(), want.data(), want.size()) == 0);
  }
}

void ManyOutstanding(shmemcache_t* c, int rank, int n) {
  std::vector<std::string> keys(n), values(n);
  std::vector<shmemcache_request_t*> reqs(n);
  for (int i = 0; i < n; ++i) {
    keys[i] = Key(rank, i);
    values[i] = ValueFor(rank, i, 2);
    PE_CHECK_STATUS(shmemcache_iset(c, keys[i].data(), keys[i].size(), values[i].data(), values[i].size(), &reqs[i]),
                    SHMEMCACHE_OK);
  }
  // Complete odd ones by polling with test (then release with wait), even ones with wait directly.
  int polls = 0;
  for (int i = 1; i < n; i += 2) {
    shmemcache_status_t s;
    while ((s = shmemcache_test(c, reqs[i])) == SHMEMCACHE_IN_PROGRESS) ++polls;
    PE_CHECK_STATUS(s, SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_test(c, reqs[i]), SHMEMCACHE_OK);  // test does not release
    PE_CHECK_STATUS(shmemcache_wait(c, reqs[i]), SHMEMCACHE_OK);
  }
  for (int i = 0; i < n; i += 2) PE_CHECK_STATUS(shmemcache_wait(c, reqs[i]), SHMEMCACHE_OK);
  // Read everything back with igets in flight together.
  std::vector<std::vector<char>> bufs(n, std::vector<char>(256));
  std::vector<size_t> lens(n);
  for (int i = 0; i < n; ++i)
    PE_CHECK_STATUS(shmemcache_iget(c, keys[i].data(), keys[i].size(), bufs[i].data(), 256, &lens[i], &reqs[i]),
                    SHMEMCACHE_OK);
  int wrong = 0;
  for (int i = n - 1; i >= 0; --i) {  // complete in reverse: later requests wait for earlier ones internally
    shmemcache_status_t s = shmemcache_wait(c, reqs[i]);
    if (s != SHMEMCACHE_OK || lens[i] != values[i].size() ||
        std::memcmp(bufs[i].data(), values[i].data(), lens[i]) != 0)
      ++wrong;
  }
  PE_CHECK(wrong == 0);
  std::printf("client %d: %d requests issued before any wait (at most max_outstanding in flight), %d test polls, %d wrong\n", rank, n, polls, wrong);
}

void Ordering(shmemcache_t* c, int rank) {
  for (int round = 0; round < 50; ++round) {
    std::string key = "order-" + std::to_string(rank) + "-" + std::to_string(round % 5);
    // Make the pointer hot first (Direct path available), then a chain of non-blocking ops on the key.
    std::string v0 = ValueFor(rank, round, 0);
    PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), v0.data(), v0.size()), SHMEMCACHE_OK);
    char buf[8192];
    size_t len = 0;
    PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), buf, sizeof(buf), &len), SHMEMCACHE_OK);
    std::string big(3000 + round, 'B');  // does not fit the block: an Active SET
    std::string v2 = ValueFor(rank, round, 2);
    shmemcache_request_t *r1, *r2, *r3, *r4;
    size_t len3 = 0, len4 = 0;
    char buf3[8192], buf4[8192];
    PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), big.data(), big.size(), &r1), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_iget(c, key.data(), key.size(), buf3, sizeof(buf3), &len3, &r3), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), v2.data(), v2.size(), &r2), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_iget(c, key.data(), key.size(), buf4, sizeof(buf4), &len4, &r4), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_wait(c, r4), SHMEMCACHE_OK);
    PE_CHECK(len4 == v2.size() && std::memcmp(buf4, v2.data(), len4) == 0);
    PE_CHECK_STATUS(shmemcache_wait(c, r3), SHMEMCACHE_OK);
    PE_CHECK(len3 == big.size() && std::memcmp(buf3, big.data(), len3) == 0);
    PE_CHECK_STATUS(shmemcache_wait(c, r1), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_wait(c, r2), SHMEMCACHE_OK);
    // Mixed: a non-blocking SET, then a blocking GET sees it; a blocking SET, then a non-blocking GET.
    std::string v5 = ValueFor(rank, round, 5), v6 = ValueFor(rank, round, 6);
    shmemcache_request_t* r5;
    PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), v5.data(), v5.size(), &r5), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), buf, sizeof(buf), &len), SHMEMCACHE_OK);
    PE_CHECK(len == v5.size() && std::memcmp(buf, v5.data(), len) == 0);
    PE_CHECK_STATUS(shmemcache_wait(c, r5), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), v6.data(), v6.size()), SHMEMCACHE_OK);
    shmemcache_request_t* r6;
    PE_CHECK_STATUS(shmemcache_iget(c, key.data(), key.size(), buf, sizeof(buf), &len, &r6), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_wait(c, r6), SHMEMCACHE_OK);
    PE_CHECK(len == v6.size() && std::memcmp(buf, v6.data(), len) == 0);
  }
}

void Errors(shmemcache_t* c, int rank) {
  shmemcache_request_t* r = reinterpret_cast<shmemcache_request_t*>(0x1);
  char buf[4];
  size_t len = 0;
  std::string key = "err-" + std::to_string(rank);
  PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), "v", 1, nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_iset(c, nullptr, 1, "v", 1, &r), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK(r == nullptr);
  std::string long_key(300, 'k');
  PE_CHECK_STATUS(shmemcache_bset(c, long_key.data(), long_key.size(), "v", 1, &r), SHMEMCACHE_KEY_TOO_LONG);
  PE_CHECK(r == nullptr);
  std::vector<char> huge((1u << 20) + 1);
  PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), huge.data(), huge.size(), &r),
                  SHMEMCACHE_VALUE_TOO_LARGE);
  PE_CHECK_STATUS(shmemcache_iget(c, key.data(), key.size(), buf, sizeof(buf), nullptr, &r),
                  SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_bget(c, key.data(), 0, buf, sizeof(buf), &len, &r), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_test(c, nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_wait(c, nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  // Buffer too small through a request; a missing key; a double wait.
  PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), "0123456789", 10, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_test(c, r), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_iget(c, key.data(), key.size(), buf, sizeof(buf), &len, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_BUFFER_TOO_SMALL);
  PE_CHECK(len == 10);
  std::string missing = "never-" + std::to_string(rank);
  PE_CHECK_STATUS(shmemcache_iget(c, missing.data(), missing.size(), buf, sizeof(buf), &len, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_NOT_FOUND);
  PE_CHECK(len == 0);
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 4000;
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  cfg.num_servers = 2;
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  shmemcache_request_t* r = nullptr;
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_iset(c, "k", 1, "v", 1, &r), SHMEMCACHE_WRONG_ROLE);
    PE_CHECK(r == nullptr);
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
  } else {
    int rank = shmemcache_client_rank(c);
    BufferReuse(c, rank);
    ManyOutstanding(c, rank, n);
    Ordering(c, rank);
    Errors(c, rank);
    // A request left in flight is completed by finalize.
    PE_CHECK_STATUS(shmemcache_iset(c, "left", 4, "in flight", 9, &r), SHMEMCACHE_OK);
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  size_t len;
  char b[4];
  PE_CHECK_STATUS(shmemcache_iget(c, "k", 1, b, sizeof(b), &len, &r), SHMEMCACHE_SHUT_DOWN);
  shmemcache_destroy(c);
  int rc = pe_test::Finish("pe_nonblocking");
  shmem_finalize();
  return rc;
}
