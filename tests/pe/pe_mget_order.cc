// Per-key issue order of a multi-get whose items the server sends back to be asked again (shmemcache.h,
// shmemcache_imget: "a later SET of one of its keys by this client takes effect after it"). A multi-get message's
// reply may leave items for the client to ask again: alone (kAskAlone: a value of large_value_threshold bytes or
// more, a key absent from RAM with an SSD tier) or in a new message (the reply budget ran out). Those GETs are
// posted when the reply is taken in, so a write of the key that this client issued meanwhile (non-blocking: it
// goes Active, behind the multi-get message) must not be overtaken by them: the imget still returns the value
// from before the write. 1 server, the other PEs clients, each on keys of its own; every key of a batch goes in
// multi-get messages (mget_policy message). Each round: a blocking SET of the old values, shmemcache_imget of the
// batch, then a non-blocking write of one of its keys (iset of a small value, iset of a large one, istore append,
// idelete; iincr where the values are numbers; a blocking set too, which completes the imget's parts on its key
// first), then the write's wait and the imget's: the item holds the old value, a GET after them the write's.
// Args: mode
//   large        default sizes: the written key holds 10 KiB (>= large_value_threshold: asked alone, then pulled).
//   budget       a reply ring of 4 chunks of 1 KiB (3936 payload bytes) and batches of 96 keys whose answers
//                (64 bytes each with its value) never fit in it: a reply answers what fits, the others are asked
//                again in a new message (at least 2 messages per batch: checked, so that this job keeps testing
//                that path). large_value_threshold 0: no value is asked alone for its size.
//   fit          large_value_threshold 0 (never large) and the default ring: a batch of 128 keys of 64-byte
//                values goes in one message (client/multi_get.cc reserves room for each value up to its buffer,
//                at most the ring), with buffers of the values' size and with buffers far larger.
//   spill DIR    an SSD tier in DIR: a key absent from RAM is asked alone (it may be on flash); a write that
//                creates it after the imget must not show in the imget's NOT_FOUND.
#include <shmem.h>
#include <sys/stat.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"
#include "common/spill_config.h"

namespace {

enum class Write { kSetSmall, kSetLarge, kAppend, kDelete, kIncr, kSetBlocking };
const char* Name(Write w) {
  switch (w) {
    case Write::kSetSmall: return "iset small";
    case Write::kSetLarge: return "iset large";
    case Write::kAppend: return "istore append";
    case Write::kDelete: return "idelete";
    case Write::kIncr: return "iincr";
    case Write::kSetBlocking: return "set (blocking)";
  }
  return "?";
}

shmemcache_stats_t Stats(shmemcache_t* c) {
  shmemcache_stats_t st;
  PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
  return st;
}

// Issues w on key (new_value: its value argument), returns the request (nullptr for a blocking call: its status
// in *status).
shmemcache_request_t* IssueWrite(shmemcache_t* c, Write w, const std::string& key, const std::string& new_value,
                                 shmemcache_status_t* status) {
  shmemcache_request_t* r = nullptr;
  switch (w) {
    case Write::kSetBlocking:
      *status = shmemcache_set(c, key.data(), key.size(), new_value.data(), new_value.size());
      break;
    case Write::kSetSmall: case Write::kSetLarge:
      PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), new_value.data(), new_value.size(), &r),
                      SHMEMCACHE_OK);
      break;
    case Write::kAppend: {
      shmemcache_store_options_t o{SHMEMCACHE_MODE_APPEND, 0, 0, 0};
      PE_CHECK_STATUS(shmemcache_istore(c, key.data(), key.size(), new_value.data(), new_value.size(), &o, nullptr,
                                        &r),
                      SHMEMCACHE_OK);
      break;
    }
    case Write::kDelete: PE_CHECK_STATUS(shmemcache_idelete(c, key.data(), key.size(), &r), SHMEMCACHE_OK); break;
    case Write::kIncr: PE_CHECK_STATUS(shmemcache_iincr(c, key.data(), key.size(), 5, nullptr, &r), SHMEMCACHE_OK);
      break;
  }
  return r;
}

// One round: keys[k] hold olds[k] (absent where olds[k] is null) before the imget; the write w of keys[target]
// is issued after it. The imget must answer every item from before the write.
void Round(shmemcache_t* c, const std::vector<std::string>& keys, const std::vector<const std::string*>& olds,
           size_t target, Write w, const std::string& new_value, size_t buffer_len) {
  for (size_t k = 0; k < keys.size(); ++k) {
    if (olds[k] != nullptr) {
      PE_CHECK_STATUS(shmemcache_set(c, keys[k].data(), keys[k].size(), olds[k]->data(), olds[k]->size()),
                      SHMEMCACHE_OK);
    } else {
      const shmemcache_status_t s = shmemcache_delete(c, keys[k].data(), keys[k].size());
      PE_CHECK(s == SHMEMCACHE_OK || s == SHMEMCACHE_NOT_FOUND);
    }
  }
  std::vector<std::vector<char>> buffers(keys.size(), std::vector<char>(buffer_len));
  std::vector<shmemcache_mget_item_t> items(keys.size());
  for (size_t k = 0; k < keys.size(); ++k)
    items[k] = {keys[k].data(), keys[k].size(), buffers[k].data(), buffer_len, 0, SHMEMCACHE_IN_PROGRESS};
  shmemcache_request_t* batch = nullptr;
  PE_CHECK_STATUS(shmemcache_imget(c, items.data(), items.size(), &batch), SHMEMCACHE_OK);
  shmemcache_status_t written = SHMEMCACHE_IN_PROGRESS;
  shmemcache_request_t* write = IssueWrite(c, w, keys[target], new_value, &written);
  if (write != nullptr) written = shmemcache_wait(c, write);
  PE_CHECK_STATUS(shmemcache_wait(c, batch), SHMEMCACHE_OK);
  for (size_t k = 0; k < keys.size(); ++k) {
    const shmemcache_status_t want = olds[k] != nullptr ? SHMEMCACHE_OK : SHMEMCACHE_NOT_FOUND;
    const std::string got(buffers[k].data(), items[k].status == SHMEMCACHE_OK ? items[k].value_len : 0);
    const bool ok = items[k].status == want && (olds[k] == nullptr || got == *olds[k]);
    PE_CHECK(ok);
    if (!ok)
      std::fprintf(stderr, "PE %d: %s of item %zu issued after the imget of %zu items: item %zu has %s, %zu bytes"
                   " '%.12s' (expected %s, the value from before the write)\n", pe_test::my_pe, Name(w), target,
                   keys.size(), k, shmemcache_strerror(items[k].status), items[k].value_len, got.c_str(),
                   shmemcache_strerror(want));
  }
  // The write itself took effect, after the imget.
  std::string expect;
  shmemcache_status_t expect_status = SHMEMCACHE_OK;
  const std::string* old = olds[target];
  switch (w) {
    case Write::kSetSmall: case Write::kSetLarge: case Write::kSetBlocking: expect = new_value; break;
    case Write::kAppend:
      if (old != nullptr) expect = *old + new_value;
      expect_status = old != nullptr ? SHMEMCACHE_OK : SHMEMCACHE_NOT_STORED;
      break;
    case Write::kDelete: expect_status = old != nullptr ? SHMEMCACHE_OK : SHMEMCACHE_NOT_FOUND; break;
    case Write::kIncr:
      if (old != nullptr) expect = std::to_string(std::stoull(*old) + 5);
      expect_status = old != nullptr ? SHMEMCACHE_OK : SHMEMCACHE_NOT_FOUND;
      break;
  }
  PE_CHECK_STATUS(written, expect_status);
  std::vector<char> buf(buffer_len);
  size_t len = 0;
  const shmemcache_status_t s = shmemcache_get(c, keys[target].data(), keys[target].size(), buf.data(), buf.size(),
                                               &len);
  const bool sets = w == Write::kSetSmall || w == Write::kSetLarge || w == Write::kSetBlocking;
  const bool present = w != Write::kDelete && (old != nullptr || sets);
  PE_CHECK_STATUS(s, present ? SHMEMCACHE_OK : SHMEMCACHE_NOT_FOUND);
  if (present) PE_CHECK(std::string(buf.data(), len) == expect);
}

std::string Pattern(char c, size_t n, int round) {
  std::string v(n, c);
  std::snprintf(&v[0], n, "%c-%d-", c, round);
  v[v.size() - 1] = c;  // snprintf's NUL
  return v;
}

// Values of 10 KiB, asked alone and pulled: the written key is first, last or in the middle of 3.
void LargeValues(shmemcache_t* c, int rank) {
  const std::vector<Write> writes = {Write::kSetSmall, Write::kSetLarge, Write::kAppend, Write::kDelete,
                                     Write::kSetBlocking};
  const shmemcache_stats_t s0 = Stats(c);
  for (int round = 0; round < 15; ++round) {
    std::vector<std::string> keys, values;
    for (int k = 0; k < 3; ++k) {
      keys.push_back("mo-large-" + std::to_string(rank) + "-" + std::to_string(k));
      values.push_back(Pattern(static_cast<char>('a' + k), k == 1 ? 300 : 10240, round));
    }
    const size_t target = static_cast<size_t>(round % 3);
    const std::vector<const std::string*> olds = {&values[0], &values[1], &values[2]};
    const Write w = writes[static_cast<size_t>(round / 3) % writes.size()];
    const std::string fresh = w == Write::kSetLarge ? Pattern('N', 12000, round) : Pattern('n', 40, round);
    Round(c, keys, olds, target, w, fresh, 16384);
  }
  const shmemcache_stats_t s1 = Stats(c);
  // The path under test ran: items went in messages and large ones were asked alone and pulled.
  PE_CHECK(s1.mget_messages > s0.mget_messages);
  PE_CHECK(s1.large_gets_pulled > s0.large_gets_pulled);
}

// The reply ring of 3936 bytes (main) holds the reply header (104 bytes) and at most 55 answers of 5-byte values
// (numbers: iincr rounds), 14 of 200-byte ones: 96 keys never fit in one reply. The written key is the first
// (answered in the first reply), one in the middle or the last (asked again).
void SmallBudget(shmemcache_t* c, int rank) {
  const std::vector<Write> writes = {Write::kSetSmall, Write::kAppend, Write::kDelete, Write::kIncr,
                                     Write::kSetBlocking};
  constexpr size_t kKeys = 96;
  const size_t targets[] = {0, 1, kKeys / 2, kKeys - 1};
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> keys, values;
    const Write w = writes[static_cast<size_t>(round) % writes.size()];
    for (size_t k = 0; k < kKeys; ++k) {
      keys.push_back("mo-budget-" + std::to_string(rank) + "-" + std::to_string(k));
      values.push_back(w == Write::kIncr ? std::to_string(1000 * round + static_cast<int>(k))
                                         : Pattern(static_cast<char>('a' + k % 26), 200, round));
    }
    const size_t target = targets[static_cast<size_t>(round / 5) % 4];
    std::vector<const std::string*> olds;
    for (const std::string& v : values) olds.push_back(&v);
    const shmemcache_stats_t s0 = Stats(c);
    Round(c, keys, olds, target, w, Pattern('n', 40, round), 1024);
    const shmemcache_stats_t s1 = Stats(c);
    PE_CHECK(s1.mget_messages >= s0.mget_messages + 2);  // the reply left items to ask again (see the top)
  }
}

// 128 keys of 64-byte values, read with buffers of 64 bytes and of 4 KiB (a reservation past the ring, capped at
// it): one multi-get message per batch, every value whole.
void OneMessage(shmemcache_t* c, int rank) {
  constexpr size_t kKeys = 128;
  std::vector<std::string> keys, values;
  for (size_t k = 0; k < kKeys; ++k) {
    keys.push_back("mo-fit-" + std::to_string(rank) + "-" + std::to_string(k));
    values.push_back(Pattern(static_cast<char>('a' + k % 26), 64, static_cast<int>(k)));
    PE_CHECK_STATUS(shmemcache_set(c, keys[k].data(), keys[k].size(), values[k].data(), values[k].size()),
                    SHMEMCACHE_OK);
  }
  for (size_t buffer_len : {size_t{64}, size_t{4096}}) {
    for (int round = 0; round < 5; ++round) {
      std::vector<std::vector<char>> buffers(kKeys, std::vector<char>(buffer_len));
      std::vector<shmemcache_mget_item_t> items(kKeys);
      for (size_t k = 0; k < kKeys; ++k)
        items[k] = {keys[k].data(), keys[k].size(), buffers[k].data(), buffer_len, 0, SHMEMCACHE_IN_PROGRESS};
      const shmemcache_stats_t s0 = Stats(c);
      PE_CHECK_STATUS(shmemcache_mget(c, items.data(), items.size()), SHMEMCACHE_OK);
      const shmemcache_stats_t s1 = Stats(c);
      for (size_t k = 0; k < kKeys; ++k) {
        PE_CHECK_STATUS(items[k].status, SHMEMCACHE_OK);
        PE_CHECK(std::string(buffers[k].data(), items[k].value_len) == values[k]);
      }
      PE_CHECK(s1.mget_messages == s0.mget_messages + 1);
      if (s1.mget_messages != s0.mget_messages + 1)
        std::fprintf(stderr, "PE %d: an mget of %zu keys of 64 bytes (buffers of %zu) took %llu messages\n",
                     pe_test::my_pe, kKeys, buffer_len,
                     static_cast<unsigned long long>(s1.mget_messages - s0.mget_messages));
    }
  }
}

// An SSD tier: a key absent from RAM is asked alone; the write creates it (or finds it absent).
void AbsentKeys(shmemcache_t* c, int rank) {
  const std::vector<Write> writes = {Write::kSetSmall, Write::kSetLarge, Write::kAppend, Write::kDelete,
                                     Write::kSetBlocking};
  for (int round = 0; round < 15; ++round) {
    std::vector<std::string> keys, values;
    for (int k = 0; k < 3; ++k) {
      keys.push_back("mo-absent-" + std::to_string(rank) + "-" + std::to_string(k));
      values.push_back(Pattern(static_cast<char>('a' + k), 100, round));
    }
    const size_t target = static_cast<size_t>(round % 3);
    std::vector<const std::string*> olds = {&values[0], &values[1], &values[2]};
    olds[target] = nullptr;
    const Write w = writes[static_cast<size_t>(round / 3) % writes.size()];
    const std::string fresh = w == Write::kSetLarge ? Pattern('N', 12000, round) : Pattern('n', 40, round);
    Round(c, keys, olds, target, w, fresh, 16384);
  }
}

}  // namespace

int main(int argc, char** argv) {
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  const std::string mode = argc > 1 ? argv[1] : "large";
  std::string dir = argc > 2 ? argv[2] : "/tmp/shmemcache-mget-order-test";
  shmemcache_config_t cfg;
  if (mode == "spill") {
    mkdir(dir.c_str(), 0700);  // every PE tries; EEXIST is fine
    cfg = pe_test::SpillConfig(dir.c_str());
  } else {
    shmemcache_config_defaults(&cfg);
  }
  cfg.num_servers = 1;
  cfg.mget_policy = SHMEMCACHE_MGET_MESSAGE;
  if (mode == "budget" || mode == "fit") cfg.large_value_threshold = 0;
  if (mode == "budget") {  // a ring of 4 x (1024 - 40 bytes of chunk framing) = 3936 payload bytes (SmallBudget)
    cfg.chunk_bytes = 1024;
    cfg.chunks_per_peer = 4;
  }
  PE_CHECK(mode == "large" || mode == "budget" || mode == "spill" || mode == "fit");
  return pe_test::ServeOrRun("pe_mget_order", cfg, [&](shmemcache_t* c, int rank) {
    if (mode == "large") LargeValues(c, rank);
    if (mode == "budget") SmallBudget(c, rank);
    if (mode == "spill") AbsentKeys(c, rank);
    if (mode == "fit") OneMessage(c, rank);
  });
}
