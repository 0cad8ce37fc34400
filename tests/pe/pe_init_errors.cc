// Init fails together (issue 12): whatever makes one PE reject the configuration, every PE returns
// SHMEMCACHE_CONFIG_ERROR from shmemcache_init (nobody is left waiting in a collective), the PE that rejected
// says why, the others name it, and when PEs pass different configurations every PE names the first field that
// differs. After failed inits the library still works in the same job.
//
//   pe_init_errors together
//       per-PE configurations built by the program: one PE with hash_ways = 0, one PE with a different
//       hash_sets, a SHMEMCACHE_* variable set on one PE only (a variable that was not forwarded), one PE whose
//       variable does not parse, two PEs that reject; then a good init and a few operations.
//   pe_init_errors env EXPECTED [VAR...]
//       the configuration comes from the environment (the ctest sets an absurd but parseable size); every PE
//       must get CONFIG_ERROR, the clients' text must contain EXPECTED (a server may instead name the clients
//       that rejected); then VAR... are unset and a good init and a few operations follow.
//
// The program starts OpenSHMEM itself, so the library never finalizes it between attempts (OpenMPI cannot
// initialise again after shmem_finalize).
#include <shmem.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "common/pe_test.h"

namespace {

bool Mentions(const std::string& needle) { return std::strstr(shmemcache_last_error(), needle.c_str()) != nullptr; }

shmemcache_config_t Defaults() {
  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  return cfg;
}

// Every PE calls this with its own configuration (nullptr: defaults + environment); every PE must fail.
void ExpectInitFails(const shmemcache_config_t* cfg, const char* what) {
  shmemcache_t* c = reinterpret_cast<shmemcache_t*>(0x1);
  PE_CHECK_STATUS(shmemcache_init(cfg, &c), SHMEMCACHE_CONFIG_ERROR);
  PE_CHECK(c == nullptr);
  std::printf("PE %d, %s: %s\n", shmem_my_pe(), what, shmemcache_last_error());
  std::fflush(stdout);
}

// A good init and a few operations: the failed attempts left nothing behind.
void Session(const shmemcache_config_t* cfg) {
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) return;
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
  } else {
    const std::string key = "after-failed-inits-" + std::to_string(shmemcache_client_rank(c));
    char buf[16];
    size_t len = 0;
    PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), "ok", 2), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), buf, sizeof(buf), &len), SHMEMCACHE_OK);
    PE_CHECK(len == 2 && std::memcmp(buf, "ok", 2) == 0);
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
}

void Together() {
  const int me = shmem_my_pe(), last = shmem_n_pes() - 1;
  const std::string last_pe = "PE " + std::to_string(last);

  // One PE's own check fails (hash_ways = 0): everyone fails, nobody hangs in the agreement.
  shmemcache_config_t cfg = Defaults();
  if (me == last) cfg.hash_ways = 0;
  ExpectInitFails(&cfg, "hash_ways=0 on the last PE");
  if (me == last) PE_CHECK(Mentions("hash_ways"));
  else PE_CHECK(Mentions(last_pe + " rejected the configuration"));
  PE_CHECK(Mentions("first field that differs is hash_ways (SHMEMCACHE_HASH_WAYS"));

  // Two PEs reject: the others list both.
  cfg = Defaults();
  if (me == 0 || me == last) cfg.max_key_len = 0;
  ExpectInitFails(&cfg, "max_key_len=0 on PE 0 and the last PE");
  if (me == 0 || me == last) PE_CHECK(Mentions("max_key_len"));
  else PE_CHECK(Mentions("PEs 0, " + std::to_string(last) + " rejected the configuration"));

  // Valid but different configurations: every PE names the field.
  cfg = Defaults();
  if (me == 1) cfg.hash_sets = 8192;
  ExpectInitFails(&cfg, "hash_sets differs on PE 1");
  PE_CHECK(Mentions("different configurations") && Mentions("hash_sets (SHMEMCACHE_HASH_SETS"));
  PE_CHECK(Mentions(me == 1 ? "this PE has 8192" : "this PE has 0"));

  // A SHMEMCACHE_* variable that reached one PE only (not forwarded by the launcher).
  if (me == 1) setenv("SHMEMCACHE_CHUNKS_PER_PEER", "16", 1);
  ExpectInitFails(nullptr, "SHMEMCACHE_CHUNKS_PER_PEER on PE 1 only");
  PE_CHECK(Mentions("chunks_per_peer (SHMEMCACHE_CHUNKS_PER_PEER"));
  PE_CHECK(Mentions("not forwarded"));
  if (me == 1) unsetenv("SHMEMCACHE_CHUNKS_PER_PEER");

  // A variable that does not parse on one PE: that PE rejects (before it could even compare).
  if (me == 0) setenv("SHMEMCACHE_HASH_WAYS", "eight", 1);
  ExpectInitFails(nullptr, "SHMEMCACHE_HASH_WAYS=eight on PE 0");
  if (me == 0) PE_CHECK(Mentions("SHMEMCACHE_HASH_WAYS") && Mentions("does not parse"));
  else PE_CHECK(Mentions("PE 0 rejected the configuration"));
  if (me == 0) unsetenv("SHMEMCACHE_HASH_WAYS");

  cfg = Defaults();
  Session(&cfg);
}

void FromEnvironment(const char* expected, char** vars, int n_vars) {
  shmemcache_config_t cfg;
  shmemcache_status_t parsed = shmemcache_config_defaults(&cfg);  // absurd sizes parse: init must refuse them
  PE_CHECK_STATUS(parsed, SHMEMCACHE_OK);
  ExpectInitFails(nullptr, expected);
  if (shmem_my_pe() >= cfg.num_servers) PE_CHECK(Mentions(expected));
  else PE_CHECK(Mentions(expected) || Mentions("rejected the configuration"));
  for (int i = 0; i < n_vars; ++i) unsetenv(vars[i]);
  Session(nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "together" && !(mode == "env" && argc > 2)) {
    std::fprintf(stderr, "usage: pe_init_errors together | env EXPECTED [VAR...]\n");
    return 2;
  }
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  if (mode == "together") Together();
  else FromEnvironment(argv[2], argv + 3, argc - 3);
  int rc = pe_test::Finish(("pe_init_errors " + mode).c_str());
  shmem_finalize();
  return rc;
}
