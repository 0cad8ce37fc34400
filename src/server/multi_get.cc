// The server's side of the multi-get message (conduit/multi_get_message.h, issue 15): many GETs of one client
// answered in one reply, each item exactly as a single GET would be answered (expiry judged by the store at
// this server's clock, BUFFER_TOO_SMALL with the size needed, the block's location for the client's directory),
// within the reply budget the client reserved in its reply ring.
#include "conduit/multi_get_message.h"
#include "core/hash.h"
#include "server/eviction_pause.h"
#include "server/server.h"

namespace smc {

void Server::HandleMultiGet(size_t client, const RequestView& req, ReplyHeader reply) {
  const RequestHeader& h = req.header;
  // A malformed body or a budget too small for one answer (or larger than the client's reply ring) is a client
  // bug: the whole message is refused and no item is read.
  const uint64_t ring_bytes = RingPayloadBytes(config_);
  // No key and no wire flag: with a kValueElsewhere flag DecodeRequest would not have counted value_len against
  // the message, and the body walk below would run past it.
  bool well_formed = h.wire_flags == 0 && h.key_len == 0 && h.flags > 0 &&
                     h.max_value >= sizeof(ReplyHeader) + sizeof(MultiGetAnswer) && h.max_value <= ring_bytes;
  const uint8_t* key;
  size_t key_len;
  uint64_t max_value;
  if (well_formed) {
    MultiGetRequestReader check(req.value, h.value_len, h.flags);
    while (check.Next(&key, &key_len, &max_value)) {
    }
    well_formed = !check.malformed();
  }
  if (!well_formed) {
    reply.status = SHMEMCACHE_INVALID_ARGUMENT;
    Reply(client, reply, nullptr, 0);
    return;
  }
  const AccessTime at{reply.server_ms, RecencyFor(h.recency, reply.epoch)};
  MultiGetReplyWriter answers;
  answers.Begin(&multi_reply_, reply, h.max_value);
  MultiGetRequestReader items(req.value, h.value_len, h.flags);
  EvictionPause pause(store_, &counters_.max_eviction_pause_us);
  while (items.Next(&key, &key_len, &max_value)) {
    MultiGetAnswer a{};
    const uint8_t* value = nullptr;
    size_t carried = 0;
    BlockPointer ptr;
    Status status = SHMEMCACHE_INVALID_ARGUMENT;  // misrouted or empty key: a client bug, never a crash
    const KeyLocation loc = Locate(key, key_len, num_servers_);
    if (key_len != 0 && loc.server == server_index_) {
      BlockView view;
      status = store_.Get(loc, key, key_len, at, &scratch_, &view, &ptr);
      if (StoreFailed(store_.failed() ? SHMEMCACHE_TIMEOUT : status)) return;  // no answer: the server stops
      if (status == SHMEMCACHE_NOT_FOUND && spill_) {
        a.wire_flags = message_flags::kAskAlone;  // it may be on flash: the single GET's read-back path
      } else if (status == SHMEMCACHE_OK) {
        a.value_len = static_cast<uint32_t>(view.value_len);
        a.flags = view.flags;
        a.token = view.token;
        if (view.value_len > max_value) {
          status = SHMEMCACHE_BUFFER_TOO_SMALL;
        } else if (SymmetricLayout::LargeValue(config_, view.value_len)) {
          a.wire_flags = message_flags::kAskAlone;  // the single GET may pull it from its block
        } else {
          value = view.value;
          carried = view.value_len;
        }
      }
    }
    if (!answers.Fits(carried)) {
      if (answers.answers() > 0) break;  // this item and the rest: the client asks again
      a.wire_flags = message_flags::kAskAlone;  // could never fit this budget
      carried = 0;
    }
    a.status = static_cast<uint8_t>(status);
    if ((status == SHMEMCACHE_OK || status == SHMEMCACHE_BUFFER_TOO_SMALL) && ptr.block_bytes != 0)
      a.pointer = WireFor(ptr);
    answers.Add(a, value, carried);
  }
  pause.End();
  answers.set_expiration_bar(store_.expiration_bar());
  PostMultiReply(client);
}

void Server::PostMultiReply(size_t client) {
  if (failure_ != SHMEMCACHE_OK) return;
  Status s = conduit_.Post(client, multi_reply_.data(), multi_reply_.size(), false);  // flushed with the pass
  if (s != SHMEMCACHE_OK) {
    failure_ = s;
    failure_text_ = LastError();
    return;
  }
  if (store_.expiration_bar() > bar_sent_) BroadcastExpirationBar();
  stats_dirty_ = true;
}

}  // namespace smc
