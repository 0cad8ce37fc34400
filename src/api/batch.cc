// The C API's batches, shmemcache_mget, shmemcache_imget and shmemcache_mset: the call's own checks (an error there touches no
// item), each item's argument checks (an item with bad input gets its status and is not run), then the
// client's batch (client/batch.cc) for the rest.
#include "api/checks.h"
#include "api/handle.h"
#include "core/export.h"
#include "core/guard.h"
#include "core/status.h"

using namespace smc;

namespace {

Status CheckBatchCall(const shmemcache_t* c, const void* items, size_t count) {
  Status s = CheckClientCall(c);
  if (s != SHMEMCACHE_OK) return s;
  return items == nullptr && count > 0 ? SHMEMCACHE_INVALID_ARGUMENT : SHMEMCACHE_OK;
}

// IN_PROGRESS marks the items the client runs; the others already hold their answer.
Status CheckItem(const shmemcache_mget_item_t& it, size_t max_key_len) {
  Status s = CheckKey(it.key, it.key_len, max_key_len);
  if (s == SHMEMCACHE_OK) s = CheckBuffer(it.buffer, it.buffer_len);
  return s == SHMEMCACHE_OK ? SHMEMCACHE_IN_PROGRESS : s;
}
Status CheckItem(const shmemcache_t* c, const shmemcache_mset_item_t& it) {
  Status s = CheckKey(c, it.key, it.key_len);
  if (s == SHMEMCACHE_OK) s = CheckValue(c, it.value, it.value_len);
  return s == SHMEMCACHE_OK ? SHMEMCACHE_IN_PROGRESS : s;
}

void Prepare(shmemcache_t* c, shmemcache_mget_item_t* items, size_t count) {
  const size_t max_key_len = c->node->config().max_key_len;  // once: the item stores below might alias it
  for (size_t i = 0; i < count; ++i) {
    items[i].value_len = 0;
    items[i].status = CheckItem(items[i], max_key_len);
  }
}
void Prepare(shmemcache_t* c, shmemcache_mset_item_t* items, size_t count) {
  for (size_t i = 0; i < count; ++i) items[i].status = CheckItem(c, items[i]);
}

void Run(Client* client, shmemcache_mget_item_t* items, size_t count) { client->MultiGet(items, count); }
void Run(Client* client, shmemcache_mset_item_t* items, size_t count) { client->MultiSet(items, count); }

template <class Item>
Status BatchInGate(const char* call, shmemcache_t* c, Item* items, size_t count) {
  Status s = CheckBatchCall(c, items, count);
  if (s != SHMEMCACHE_OK) return s;
  Prepare(c, items, count);
  s = Guarded(call, SHMEMCACHE_NO_SPACE, [&] {
    Run(c->node->client(), items, count);
    return SHMEMCACHE_OK;
  });
  if (s != SHMEMCACHE_OK) {  // cut short (out of memory): the items not answered yet get the call's status
    for (size_t i = 0; i < count; ++i)
      if (items[i].status == SHMEMCACHE_IN_PROGRESS) items[i].status = s;
  }
  return SHMEMCACHE_OK;
}

// The whole batch inside the handle's gate (api/handle.h Locked), as every call on a handle.
template <class Item>
Status Batch(const char* call, shmemcache_t* c, Item* items, size_t count) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, call, [&] { return BatchInGate(call, c, items, count); });
}

// shmemcache_imget's body inside the gate: the batch's checks, then the client issues it.
Status IssueBatch(shmemcache_t* c, shmemcache_mget_item_t* items, size_t count, shmemcache_request_t** request) {
  Status s = CheckBatchCall(c, items, count);
  if (s != SHMEMCACHE_OK) return s;
  Prepare(c, items, count);
  Client* client = c->node->client();
  s = Guarded("shmemcache_imget", SHMEMCACHE_NO_SPACE, [&] { return client->IssueMultiGet(items, count, request); });
  if (s != SHMEMCACHE_OK) {  // cut short (out of memory): nothing may write the items after this returns
    Guarded("shmemcache_imget", SHMEMCACHE_NO_SPACE, [&] {
      client->CompleteAll();
      return SHMEMCACHE_OK;
    });
    *request = nullptr;
    for (size_t i = 0; i < count; ++i)
      if (items[i].status == SHMEMCACHE_IN_PROGRESS) items[i].status = s;
  }
  return s;
}

}  // namespace

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_imget(shmemcache_t* c, shmemcache_mget_item_t* items, size_t count,
                                                       shmemcache_request_t** request) {
  if (request == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  *request = nullptr;
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_imget", [&] { return IssueBatch(c, items, count, request); });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_mget(shmemcache_t* c, shmemcache_mget_item_t* items, size_t count) {
  return Batch("shmemcache_mget", c, items, count);
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_mset(shmemcache_t* c, shmemcache_mset_item_t* items, size_t count) {
  return Batch("shmemcache_mset", c, items, count);
}
