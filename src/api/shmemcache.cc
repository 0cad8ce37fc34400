// The C API: argument checks (bad input gets a clear status and changes nothing) and role checks; everything
// else is delegated to the Node (node/node.h) and its Client (the calling thread's) or Server. Every call on a
// handle runs through the handle's gate (api/call_gate.h): Locked beside other threads' calls, LockedAlone for
// serve and finalize; Guarded keeps C++ exceptions inside. Init is in init.cc.
#include <cstring>
#include <string>
#include <type_traits>

#include "api/checks.h"
#include "api/handle.h"
#include "core/export.h"
#include "core/guard.h"
#include "core/status.h"

using namespace smc;

namespace {

Status CheckDataCall(const shmemcache_t* c, const void* key, size_t key_len) {
  Status s = CheckClientCall(c);
  return s != SHMEMCACHE_OK ? s : CheckKey(c, key, key_len);
}

// A call that stores a value (set, iset, store, istore): the key, then the value (CheckValue).
Status CheckSet(const shmemcache_t* c, const void* key, size_t key_len, const void* value, size_t value_len) {
  Status s = CheckDataCall(c, key, key_len);
  return s != SHMEMCACHE_OK ? s : CheckValue(c, value, value_len);
}

// A call that reads a value (get, iget, fetch, ifetch): the key, then value_len and the buffer (CheckBuffer).
Status CheckFetch(const shmemcache_t* c, const void* key, size_t key_len, const void* buffer, size_t buffer_len,
                  const size_t* value_len) {
  Status s = CheckDataCall(c, key, key_len);
  if (s != SHMEMCACHE_OK) return s;
  return value_len == nullptr ? SHMEMCACHE_INVALID_ARGUMENT : CheckBuffer(buffer, buffer_len);
}

// The non-blocking calls' common part: request NULL is INVALID_ARGUMENT, *request stays NULL unless body issues
// the operation, and body runs inside the handle's gate (Locked).
template <typename Body>
Status IssueCall(shmemcache_t* c, const char* call, shmemcache_request_t** request, Body body) {
  if (request == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  *request = nullptr;
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, call, body);
}

}  // namespace

SHMEMCACHE_EXPORT int shmemcache_is_server(const shmemcache_t* c) { return c != nullptr && c->node->is_server(); }

SHMEMCACHE_EXPORT int shmemcache_client_rank(const shmemcache_t* c) {
  return c == nullptr ? -1 : c->node->client_rank();
}

SHMEMCACHE_EXPORT int shmemcache_num_clients(const shmemcache_t* c) {
  return c == nullptr ? 0 : c->node->num_clients();
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_serve(shmemcache_t* c) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return LockedAlone(c, "shmemcache_serve", [&] {
    if (c->node->finalized()) return SHMEMCACHE_SHUT_DOWN;
    if (!c->node->is_server()) return SHMEMCACHE_WRONG_ROLE;
    return c->node->Serve();
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_set(shmemcache_t* c, const void* key, size_t key_len,
                                                     const void* value, size_t value_len) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_set", [&] {
    Status s = CheckSet(c, key, key_len, value, value_len);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->Set(key, key_len, value, value_len);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_get(shmemcache_t* c, const void* key, size_t key_len,
                                                     void* buffer, size_t buffer_len, size_t* value_len) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_get", [&] {
    Status s = CheckFetch(c, key, key_len, buffer, buffer_len, value_len);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->Get(key, key_len, buffer, buffer_len, value_len);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_delete(shmemcache_t* c, const void* key, size_t key_len) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_delete", [&] {
    Status s = CheckDataCall(c, key, key_len);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->Delete(key, key_len);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_idelete(shmemcache_t* c, const void* key, size_t key_len,
                                                         shmemcache_request_t** request) {
  return IssueCall(c, "shmemcache_idelete", request, [&] {
    Status s = CheckDataCall(c, key, key_len);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->IssueDelete(key, key_len, request);
  });
}

namespace {

// may_place: iset's (its value stays valid until it completes), not bset's (its value is free on return).
Status IssueSet(shmemcache_t* c, const void* key, size_t key_len, const void* value, size_t value_len,
                shmemcache_request_t** request, bool may_place) {
  return IssueCall(c, may_place ? "shmemcache_iset" : "shmemcache_bset", request, [&] {
    Status s = CheckSet(c, key, key_len, value, value_len);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->Issue(Op::kSet, key, key_len, value, value_len, nullptr, 0, nullptr, request,
                                    may_place);
  });
}

Status IssueGet(shmemcache_t* c, const void* key, size_t key_len, void* buffer, size_t buffer_len,
                size_t* value_len, shmemcache_request_t** request) {
  return IssueCall(c, "shmemcache_iget", request, [&] {
    Status s = CheckFetch(c, key, key_len, buffer, buffer_len, value_len);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->Issue(Op::kGet, key, key_len, nullptr, 0, buffer, buffer_len, value_len, request);
  });
}

Status CheckRequestCall(shmemcache_t* c, shmemcache_request_t* request) {
  if (c == nullptr || request == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  if (c->node->finalized()) return SHMEMCACHE_SHUT_DOWN;
  if (c->node->is_server()) return SHMEMCACHE_WRONG_ROLE;
  return SHMEMCACHE_OK;
}

}  // namespace

// The i- and b-variants share one implementation: keys and values are copied into the request message at
// issue, which meets both contracts (see shmemcache.h), except an iset's value placed into a mapped server
// (conduit/message.h, kReserve), read when the reservation's reply comes, as iset's contract allows.
SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_iset(shmemcache_t* c, const void* key, size_t key_len,
                                                      const void* value, size_t value_len,
                                                      shmemcache_request_t** request) {
  return IssueSet(c, key, key_len, value, value_len, request, /*may_place=*/true);
}
SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_bset(shmemcache_t* c, const void* key, size_t key_len,
                                                      const void* value, size_t value_len,
                                                      shmemcache_request_t** request) {
  return IssueSet(c, key, key_len, value, value_len, request, /*may_place=*/false);
}
SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_iget(shmemcache_t* c, const void* key, size_t key_len,
                                                      void* buffer, size_t buffer_len, size_t* value_len,
                                                      shmemcache_request_t** request) {
  return IssueGet(c, key, key_len, buffer, buffer_len, value_len, request);
}
SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_bget(shmemcache_t* c, const void* key, size_t key_len,
                                                      void* buffer, size_t buffer_len, size_t* value_len,
                                                      shmemcache_request_t** request) {
  return IssueGet(c, key, key_len, buffer, buffer_len, value_len, request);
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_test(shmemcache_t* c, shmemcache_request_t* request) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_test", [&] {
    Status s = CheckRequestCall(c, request);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->Test(request);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_wait(shmemcache_t* c, shmemcache_request_t* request) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_wait", [&] {
    Status s = CheckRequestCall(c, request);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->Wait(request);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_completion_fd(shmemcache_t* c, int* fd) {
  if (c == nullptr || fd == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_completion_fd", [&] {
    Status s = CheckClientCall(c);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->CompletionFd(fd);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_arm(shmemcache_t* c) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_arm", [&] {
    Status s = CheckClientCall(c);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->Arm();
  });
}

// ---- memcached's contract (issue 15) -----------------------------------------------------------------------

namespace {

// shmemcache_store's and shmemcache_istore's checks: the key, the value and the options (a mode out of range is
// INVALID_ARGUMENT). OK with *request set (options NULL: *plain = true, the request untouched).
Status CheckStore(const shmemcache_t* c, const void* key, size_t key_len, const void* value, size_t value_len,
                  const shmemcache_store_options_t* options, StoreRequest* request, bool* plain) {
  Status s = CheckSet(c, key, key_len, value, value_len);
  if (s != SHMEMCACHE_OK) return s;
  *plain = options == nullptr;
  if (options != nullptr) {
    // Read the mode as its underlying integer: a C caller may pass any int, and loading an out-of-range value
    // as the C++ enum type is undefined behaviour.
    std::underlying_type_t<shmemcache_mode_t> mode;
    std::memcpy(&mode, &options->mode, sizeof mode);
    if (static_cast<uint64_t>(mode) >= kStoreModes) return SHMEMCACHE_INVALID_ARGUMENT;  // negative: huge
    *request = StoreRequest{static_cast<StoreMode>(mode), options->flags, options->ttl_ms, options->cas};
  }
  return SHMEMCACHE_OK;
}

}  // namespace

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_store(shmemcache_t* c, const void* key, size_t key_len,
                                                       const void* value, size_t value_len,
                                                       const shmemcache_store_options_t* options, uint64_t* cas_out) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_store", [&]() -> Status {
    StoreRequest request;
    bool plain;
    Status s = CheckStore(c, key, key_len, value, value_len, options, &request, &plain);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->Store(key, key_len, value, value_len, plain ? nullptr : &request, cas_out);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_istore(shmemcache_t* c, const void* key, size_t key_len,
                                                        const void* value, size_t value_len,
                                                        const shmemcache_store_options_t* options, uint64_t* cas_out,
                                                        shmemcache_request_t** request) {
  return IssueCall(c, "shmemcache_istore", request, [&]() -> Status {
    StoreRequest store;
    bool plain;
    Status s = CheckStore(c, key, key_len, value, value_len, options, &store, &plain);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->IssueStore(key, key_len, value, value_len, plain ? nullptr : &store, cas_out, request);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_fetch(shmemcache_t* c, const void* key, size_t key_len,
                                                       void* buffer, size_t buffer_len, size_t* value_len,
                                                       uint32_t* flags, uint64_t* cas) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_fetch", [&]() -> Status {
    Status s = CheckFetch(c, key, key_len, buffer, buffer_len, value_len);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->Fetch(key, key_len, buffer, buffer_len, value_len, flags, cas);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_ifetch(shmemcache_t* c, const void* key, size_t key_len,
                                                        void* buffer, size_t buffer_len, size_t* value_len,
                                                        uint32_t* flags, uint64_t* cas,
                                                        shmemcache_request_t** request) {
  return IssueCall(c, "shmemcache_ifetch", request, [&]() -> Status {
    Status s = CheckFetch(c, key, key_len, buffer, buffer_len, value_len);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->IssueFetch(key, key_len, buffer, buffer_len, value_len, flags, cas, request);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_touch(shmemcache_t* c, const void* key, size_t key_len,
                                                       uint64_t ttl_ms) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_touch", [&]() -> Status {
    Status s = CheckDataCall(c, key, key_len);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->Touch(key, key_len, ttl_ms);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_incr(shmemcache_t* c, const void* key, size_t key_len,
                                                      int64_t delta, uint64_t* new_value) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_incr", [&]() -> Status {
    Status s = CheckDataCall(c, key, key_len);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->Incr(key, key_len, delta, new_value);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_itouch(shmemcache_t* c, const void* key, size_t key_len,
                                                        uint64_t ttl_ms, shmemcache_request_t** request) {
  return IssueCall(c, "shmemcache_itouch", request, [&]() -> Status {
    Status s = CheckDataCall(c, key, key_len);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->IssueTouch(key, key_len, ttl_ms, request);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_iincr(shmemcache_t* c, const void* key, size_t key_len,
                                                       int64_t delta, uint64_t* new_value,
                                                       shmemcache_request_t** request) {
  return IssueCall(c, "shmemcache_iincr", request, [&]() -> Status {
    Status s = CheckDataCall(c, key, key_len);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->IssueIncr(key, key_len, delta, new_value, request);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_flush_all(shmemcache_t* c) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_flush_all", [&]() -> Status {
    Status s = CheckClientCall(c);
    if (s != SHMEMCACHE_OK) return s;
    return c->node->client()->FlushAll();
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_server_stats(shmemcache_t* c, int server,
                                                              shmemcache_stats_t* stats) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_server_stats", [&]() -> Status {
    Status s = CheckClientCall(c);
    if (s != SHMEMCACHE_OK) return s;
    if (stats == nullptr || server < 0 || server >= c->node->config().num_servers)
      return SHMEMCACHE_INVALID_ARGUMENT;
    return c->node->client()->ServerStats(server, stats);
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_get_stats(const shmemcache_t* c, shmemcache_stats_t* stats) {
  if (c == nullptr || stats == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return Locked(c, "shmemcache_get_stats", [&] {
    c->node->FillStats(stats);
    return SHMEMCACHE_OK;
  });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_finalize(shmemcache_t* c) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  return LockedAlone(c, "shmemcache_finalize", [&] {
    if (c->node->finalized()) return SHMEMCACHE_SHUT_DOWN;
    c->node->Finalize();
    if (c->transport->owns_runtime()) c->transport->StopRuntime();
    return SHMEMCACHE_OK;
  });
}

SHMEMCACHE_EXPORT void shmemcache_destroy(shmemcache_t* c) {
  if (c == nullptr) return;
  if (!c->node->finalized()) shmemcache_finalize(c);
  delete c;
}
