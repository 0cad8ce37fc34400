// Non-blocking requests (paper 000 §IV): what an i/b-call leaves behind until test or wait reports it.
// Requests live in a per-client pool and are recycled, never freed while the client lives, so a second wait
// on a released request finds a dead magic number instead of freed memory.
#ifndef SHMEMCACHE_CLIENT_REQUEST_H_
#define SHMEMCACHE_CLIENT_REQUEST_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "client/contract_args.h"
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
  bool done = false;
  smc::Status status = SHMEMCACHE_IN_PROGRESS;
  // GET outputs, written at completion.
  void* buffer = nullptr;
  size_t buffer_len = 0;
  size_t* value_len = nullptr;
  smc::ContractOutputs out;  // flags, token, counter value: written at completion (contract_args.h)
  uint64_t sent_ns = 0;      // the client's clock when it was sent (the round trip of its server-time sample)
  unsigned reply_chunks = 1;  // conduit chunks the reply may take (flow control of the reply ring)
  uint8_t flags = 0;          // smc::message_flags sent with it (kMayPull: a GET that may pull; kValueLanded)
  // kMayPull GETs: the key, kept to validate the pulled block and to ask again. Its capacity survives recycling.
  std::vector<uint8_t> key;
  uint64_t polled_since_ns = 0;  // NowNanos() when Test first found it waiting (Test's time limit), or 0
  // Batches (client/batch.cc, multi_get.cc). A batch record (shmemcache_imget) is what the caller tests and
  // waits for; its parts are records of their own, each in flight to one server and never seen by the caller:
  // a part writes its items' answers when it completes and goes back to the pool (Client::Settle).
  bool is_batch = false;
  size_t batch_remaining = 0;                  // a batch: its parts in flight
  shmemcache_request* batch = nullptr;         // a part: its batch
  shmemcache_status_t* item_status = nullptr;  // a single GET part: where its status goes
  shmemcache_mget_item_t* mget_items = nullptr;  // a kMultiGet part: the caller's items, and which of them it
  std::vector<size_t> mget_indices;              // carries (capacity survives recycling)
  shmemcache_request* next_free = nullptr;
};

#endif  // SHMEMCACHE_CLIENT_REQUEST_H_
