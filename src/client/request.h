// Non-blocking requests (paper 000 §IV): what an i/b-call leaves behind until test or wait reports it.
// Requests live in a per-thread pool (client.h) and are recycled, never freed while the client lives, so a
// second wait on a released request finds a dead magic number instead of freed memory. Threads (issue 16): any
// thread holding its server's Active lock may complete a request (client_pe.h): it writes the outputs, then sets
// `done` with release; Test and Wait read `done` with acquire before they read the outputs.
// A record finished at issue (Client::DoneRequest: a GET answered at once) holds only what DoneRequest sets --
// magic, is_batch (false), loc, status and done --; its other fields are left over from its previous use (it is
// not Reset) and must not be read: Test, Wait and Release read no others of a single record that never joined a
// queue.
#ifndef SHMEMCACHE_CLIENT_REQUEST_H_
#define SHMEMCACHE_CLIENT_REQUEST_H_

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "client/contract_args.h"
#include "client/issuer_in_flight.h"
#include "conduit/message.h"
#include "core/hash.h"
#include "core/status.h"

struct shmemcache_request {
  static constexpr uint32_t kLive = 0x52455131;      // "REQ1"
  static constexpr uint32_t kReleased = 0xDEADBEEF;
  uint32_t magic = kReleased;
  smc::Op op = smc::Op::kGet;
  smc::KeyLocation loc{};
  uint64_t request_id = 0;
  std::atomic<bool> done{false};
  smc::Status status = SHMEMCACHE_IN_PROGRESS;
  // GET outputs, written at completion.
  void* buffer = nullptr;
  size_t buffer_len = 0;
  size_t* value_len = nullptr;
  smc::ContractOutputs out;  // flags, token, counter value: written at completion (contract_args.h)
  uint64_t sent_ns = 0;      // the client's clock when it was sent (the round trip of its server-time sample)
  // Flow control of the reply ring (conduit/reply_room.h): the most bytes its reply may take, the request chunk it
  // went out in (its reply's group), and the chunks charged besides for a reply that may come outside its group.
  size_t reply_bytes = 0;
  uint64_t reply_group = 0;
  unsigned reply_alone = 0;
  uint8_t flags = 0;          // smc::message_flags sent with it (kMayPull: a GET that may pull; kValueLanded,
                              // kReserve, kCommit)
  // kMayPull GETs: the key, kept to validate the pulled block and to ask again; a placed SET's (kReserve), for
  // its commit (SetKey, key_data, key_len): up to kInlineKey bytes in the record itself (one small copy at issue,
  // no call into std::vector), longer ones in key_heap, whose capacity survives recycling.
  static constexpr size_t kInlineKey = 64;
  size_t key_len = 0;
  uint8_t key_inline[kInlineKey];
  std::vector<uint8_t> key_heap;
  void SetKey(const void* k, size_t n) {
    key_len = n;
    if (n <= kInlineKey) std::memcpy(key_inline, k, n);
    else key_heap.assign(static_cast<const uint8_t*>(k), static_cast<const uint8_t*>(k) + n);
  }
  const uint8_t* key_data() const { return key_len <= kInlineKey ? key_inline : key_heap.data(); }
  // A placed SET (kReserve): its value (the caller's, valid until completion) and options, for the commit.
  const void* value = nullptr;
  size_t value_bytes = 0;
  smc::StoreRequest store;
  uint8_t place_slot = 0;  // kReserve, kCommit: its reservation slot on the server (Client::reserving_)
  uint64_t polled_since_ns = 0;  // NowNanos() when Test or Arm first found it waiting (their time limit), or 0
  // Batches (client/batch.cc, multi_get.cc). A batch record (shmemcache_imget) is what the caller tests and
  // waits for; its parts are records of their own, each in flight to one server and never seen by the caller:
  // a part writes its items' answers when it completes and goes back to the pool (Client::Settle).
  // Threads: a part may complete, and settle, on any thread holding its server's Active lock; batch_remaining is
  // decremented (release) after the part's answers are written, and the issuer reads it (acquire) before it
  // reads them.
  bool is_batch = false;
  std::atomic<size_t> batch_remaining{0};      // a batch: its parts in flight
  smc::IssuerInFlight* batch_issuer = nullptr;  // a batch: its issuing thread's mine_in_flight_ (per server);
                                                // its parts count there, whoever posts them
  shmemcache_request* batch = nullptr;         // a part: its batch
  shmemcache_status_t* item_status = nullptr;  // a single GET part: where its status goes
  shmemcache_mget_item_t* mget_items = nullptr;  // a kMultiGet part: the caller's items, and which of them it
  std::vector<size_t> mget_indices;              // carries (capacity survives recycling)
  // A batch: the first server whose failure answered one of its items TIMEOUT (-1: none), set once
  // (NoteBatchTimeout) before the batch_remaining decrement that settles the item, or at issue; TestBatch and
  // WaitBatch explain it (Explain) without reading the items, which are the caller's again once Test returns OK.
  std::atomic<int> batch_failed_server{-1};
  // A multi-set part (client/multi_set.cc): the caller's items (their indices in mget_indices). Its record's op
  // is kMultiGet (so its reply's body is kept and handed to CompleteMultiGet, which passes it on), it is no
  // batch part (batch nullptr: its issuer waits for it as for a single request).
  shmemcache_mset_item_t* mset_items = nullptr;
  shmemcache_request* next_free = nullptr;
  // The issuing thread's counts of its requests in flight to loc.server (Client::mine_in_flight_,
  // client/issuer_in_flight.h), and the slot it counts in there (its key's bucket, or kEveryKey): completion takes
  // it off them. Set when posted (Track).
  smc::IssuerInFlight* issuer_in_flight = nullptr;
  uint8_t issuer_slot = 0;

  shmemcache_request() = default;
  shmemcache_request(const shmemcache_request&) = delete;
  shmemcache_request& operator=(const shmemcache_request&) = delete;
  // Back to a fresh record (magic kReleased, done false, every field as constructed; NewRequest, not DoneRequest,
  // calls it), keeping the capacities of key_heap and mget_indices. Field by field: destroying and
  // re-constructing the record zeroed all of it and moved both vectors twice (issue 14: ~65 instructions of
  // every request's issue; this is about half).
  void Reset() {
    magic = kReleased;
    op = smc::Op::kGet;
    loc = smc::KeyLocation{};
    request_id = 0;
    done.store(false, std::memory_order_relaxed);
    status = SHMEMCACHE_IN_PROGRESS;
    buffer = nullptr;
    buffer_len = 0;
    value_len = nullptr;
    out = smc::ContractOutputs{};
    sent_ns = 0;
    reply_bytes = 0;
    reply_group = 0;
    reply_alone = 0;
    flags = 0;
    key_len = 0;
    key_heap.clear();
    value = nullptr;
    value_bytes = 0;
    store = smc::StoreRequest{};
    place_slot = 0;
    polled_since_ns = 0;
    is_batch = false;
    batch_remaining.store(0, std::memory_order_relaxed);
    batch_issuer = nullptr;
    batch = nullptr;
    item_status = nullptr;
    mget_items = nullptr;
    mget_indices.clear();
    batch_failed_server.store(-1, std::memory_order_relaxed);
    mset_items = nullptr;
    next_free = nullptr;
    issuer_in_flight = nullptr;
    issuer_slot = 0;
  }
};

#endif  // SHMEMCACHE_CLIENT_REQUEST_H_
