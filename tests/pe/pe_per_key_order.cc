// Issue 17: a client's request in flight to a server holds back only its operations that could touch the same key
// (client/issuer_in_flight.h). 1 server, the other PEs clients, each on keys of its own:
//   - with a non-blocking SET of a new key A in flight (Active), a non-blocking GET of a known key B of the same
//     server goes Direct (direct_gets, not active_gets) and leaves A's SET in flight; so does a blocking GET of B.
//     Two keys may share the gate's hash bucket (then B waits, correctly): of 40 distinct A keys, at least half
//     must let B go Direct (before issue 17, none did);
//   - A itself stays in issue order: with A's pointer known, a non-blocking SET that moves A (too large for its
//     block) then one that would fit the old block: a GET (blocking and non-blocking) returns the last value;
//   - a multi-get message in flight (mget_policy message: its keys are not looked at) holds a blocking SET of its
//     key, which may go Direct, until it is answered: the multi-get returns the value before the SET.
// Over shared memory and UCX tcp (policy auto: Direct GETs, Active SETs there).
#include <shmem.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

shmemcache_stats_t Stats(shmemcache_t* c) {
  shmemcache_stats_t st;
  PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
  return st;
}

std::string GetValue(shmemcache_t* c, const std::string& key) {
  std::vector<char> buf(8192);
  size_t len = 0;
  shmemcache_status_t s = shmemcache_get(c, key.data(), key.size(), buf.data(), buf.size(), &len);
  PE_CHECK_STATUS(s, SHMEMCACHE_OK);
  return s == SHMEMCACHE_OK ? std::string(buf.data(), len) : std::string();
}

void OtherKeysStayDirect(shmemcache_t* c, int rank) {
  const std::string b = "pk-b-" + std::to_string(rank), bee = "bee-" + std::to_string(rank);
  PE_CHECK_STATUS(shmemcache_set(c, b.data(), b.size(), bee.data(), bee.size()), SHMEMCACHE_OK);
  PE_CHECK(GetValue(c, b) == bee);  // b's pointer is known
  const int rounds = 40;
  int direct_igets = 0, direct_gets = 0;
  for (int i = 0; i < rounds; ++i) {
    const std::string a = "pk-a-" + std::to_string(rank) + "-" + std::to_string(i);
    const std::string alpha = "alpha-" + std::to_string(i);
    shmemcache_request_t* set_a = nullptr;  // a new key: Active
    PE_CHECK_STATUS(shmemcache_iset(c, a.data(), a.size(), alpha.data(), alpha.size(), &set_a), SHMEMCACHE_OK);
    const shmemcache_stats_t s0 = Stats(c);
    char buf[64];
    size_t len = 0;
    shmemcache_request_t* get_b = nullptr;
    PE_CHECK_STATUS(shmemcache_iget(c, b.data(), b.size(), buf, sizeof buf, &len, &get_b), SHMEMCACHE_OK);
    const shmemcache_stats_t s1 = Stats(c);
    PE_CHECK(s1.direct_gets + s1.active_gets == s0.direct_gets + s0.active_gets + 1);
    if (s1.direct_gets == s0.direct_gets + 1) ++direct_igets;
    PE_CHECK_STATUS(shmemcache_wait(c, get_b), SHMEMCACHE_OK);
    PE_CHECK(std::string(buf, len) == bee);
    PE_CHECK(GetValue(c, b) == bee);
    const shmemcache_stats_t s2 = Stats(c);
    if (s2.direct_gets == s1.direct_gets + 1) ++direct_gets;
    PE_CHECK(GetValue(c, a) == alpha);  // a's own GET follows its SET
    PE_CHECK_STATUS(shmemcache_wait(c, set_a), SHMEMCACHE_OK);
  }
  std::printf("client %d: with a SET of another key in flight, %d of %d igets and %d of %d gets went Direct\n", rank,
              direct_igets, rounds, direct_gets, rounds);
  PE_CHECK(direct_igets >= rounds / 2);
  PE_CHECK(direct_gets >= rounds / 2);
}

void SameKeyKeepsIssueOrder(shmemcache_t* c, int rank) {
  for (int round = 0; round < 20; ++round) {
    const std::string a = "pk-order-" + std::to_string(rank) + "-" + std::to_string(round % 4);
    const std::string one = "one-" + std::to_string(round), two = "two-" + std::to_string(round);
    PE_CHECK_STATUS(shmemcache_set(c, a.data(), a.size(), one.data(), one.size()), SHMEMCACHE_OK);
    PE_CHECK(GetValue(c, a) == one);  // a's pointer names the block of `one`
    const std::string big(3000 + round, 'B');  // does not fit: Active, the server moves the pair
    shmemcache_request_t *set_big = nullptr, *set_two = nullptr, *get_a = nullptr;
    PE_CHECK_STATUS(shmemcache_iset(c, a.data(), a.size(), big.data(), big.size(), &set_big), SHMEMCACHE_OK);
    // Through the old pointer a Direct GET would read `one`, a Direct SET would land before `big`.
    std::vector<char> buf(8192);
    size_t len = 0;
    PE_CHECK_STATUS(shmemcache_iget(c, a.data(), a.size(), buf.data(), buf.size(), &len, &get_a), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_iset(c, a.data(), a.size(), two.data(), two.size(), &set_two), SHMEMCACHE_OK);
    PE_CHECK(GetValue(c, a) == two);
    PE_CHECK_STATUS(shmemcache_wait(c, get_a), SHMEMCACHE_OK);
    PE_CHECK(std::string(buf.data(), len) == big);
    PE_CHECK_STATUS(shmemcache_wait(c, set_big), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_wait(c, set_two), SHMEMCACHE_OK);
    PE_CHECK(GetValue(c, a) == two);
  }
}

void MultiGetHoldsItsKeys(shmemcache_t* c, int rank) {
  for (int round = 0; round < 20; ++round) {
    const std::string a = "pk-mget-" + std::to_string(rank) + "-" + std::to_string(round % 4);
    const std::string one = "one-" + std::to_string(round), two = "two-" + std::to_string(round);
    PE_CHECK_STATUS(shmemcache_set(c, a.data(), a.size(), one.data(), one.size()), SHMEMCACHE_OK);
    PE_CHECK(GetValue(c, a) == one);
    char abuf[64];
    shmemcache_mget_item_t item{a.data(), a.size(), abuf, sizeof abuf, 0, SHMEMCACHE_IN_PROGRESS};
    shmemcache_request_t* batch = nullptr;
    PE_CHECK_STATUS(shmemcache_imget(c, &item, 1, &batch), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_set(c, a.data(), a.size(), two.data(), two.size()), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_wait(c, batch), SHMEMCACHE_OK);
    PE_CHECK_STATUS(item.status, SHMEMCACHE_OK);
    PE_CHECK(std::string(abuf, item.value_len) == one);
    PE_CHECK(GetValue(c, a) == two);
  }
}

}  // namespace

int main() {
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  cfg.num_servers = 1;
  cfg.mget_policy = SHMEMCACHE_MGET_MESSAGE;
  return pe_test::ServeOrRun("pe_per_key_order", cfg, [](shmemcache_t* c, int rank) {
    OtherKeysStayDirect(c, rank);
    SameKeyKeepsIssueOrder(c, rank);
    MultiGetHoldsItsKeys(c, rank);
  });
}
