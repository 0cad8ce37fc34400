// The server's side of the multi-set message (conduit/multi_set_message.h, issue 15): many SETs of one client
// stored in request order and answered in one reply, each pair exactly as a single SET of it is (Handle: the same
// store call, the same counters, its flash copy forgotten, its status and block), the expiration bar read after
// the last store. The store steps it shares with Handle (StoreValue, Stored) are in server.cc.
#include "conduit/multi_set_message.h"
#include "core/hash.h"
#include "server/eviction_pause.h"
#include "server/server.h"

namespace smc {

void Server::HandleMultiSet(size_t client, const RequestView& req, ReplyHeader reply) {
  const RequestHeader& h = req.header;
  // A malformed body, or a budget below the reply's size (or above the client's reply ring), is a client bug:
  // the whole message is refused and no pair is stored.
  const uint64_t ring_bytes = RingPayloadBytes(config_);
  // No key and no wire flag: as for kMultiGet (multi_get.cc), the body is value_len bytes of the message itself.
  bool well_formed = h.wire_flags == 0 && h.key_len == 0 && h.flags > 0 && h.max_value >= MultiSetReplyBytes(h.flags) &&
                     h.max_value <= ring_bytes;
  const uint8_t *key, *value;
  size_t key_len, value_len;
  if (well_formed) {
    MultiSetRequestReader check(req.value, h.value_len, h.flags);
    while (check.Next(&key, &key_len, &value, &value_len)) {
    }
    well_formed = !check.malformed();
  }
  if (!well_formed) {
    reply.status = SHMEMCACHE_INVALID_ARGUMENT;
    Reply(client, reply, nullptr, 0);
    return;
  }
  // One clock reading and one recency for the message, as for a request chunk of single SETs (ServeReady).
  const AccessTime at{reply.server_ms, RecencyFor(h.recency, reply.epoch)};
  const StoreRequest plain;  // a plain set, as Op::kSet
  MultiSetReplyWriter answers;
  answers.Begin(&multi_reply_, reply);
  MultiSetRequestReader pairs(req.value, h.value_len, h.flags);
  EvictionPause pause(store_, &counters_.max_eviction_pause_us);
  while (pairs.Next(&key, &key_len, &value, &value_len)) {
    MultiSetAnswer a{};
    Status status = SHMEMCACHE_INVALID_ARGUMENT;  // misrouted or empty key: a client bug, never a crash
    const KeyLocation loc = Locate(key, key_len, num_servers_);
    if (key_len != 0 && loc.server == server_index_) {
      BlockPointer ptr;
      // A plain set decides nothing on the current pair: no flash copy is read (DecidesOnCurrentPair).
      status = StoreValue(loc, key, key_len, value, value_len, plain, at, nullptr, &ptr);
      if (StoreFailed(store_.failed() ? SHMEMCACHE_TIMEOUT : status)) return;  // no answer: the server stops
      Stored(status, key, key_len);
      if (status == SHMEMCACHE_OK && ptr.block_bytes != 0) a.pointer = WireFor(ptr);
    }
    a.status = static_cast<uint8_t>(status);
    answers.Add(a);
  }
  pause.End();
  answers.set_expiration_bar(store_.expiration_bar());
  PostMultiReply(client);
}

}  // namespace smc
