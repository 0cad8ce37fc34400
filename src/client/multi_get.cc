// Client: the multi-get message (conduit/multi_get_message.h, issue 15) and the records of a batch of GETs.
// A batch (Client::MultiGet, shmemcache_imget) is one record the caller waits for; what it sends is in parts,
// one record each in the server queues like any request: kMultiGet parts (many items for one server) and single
// GET parts (an item the server asked to get alone). A part answers its items when its reply comes, then counts
// itself off its batch (Settle); the batch is done when none is left.
//
// Flow control: a kMultiGet part reserves, in this client's reply ring for its server, room for its answers with
// each value up to min(buffer_len, large_value_threshold - 1) bytes (buffer_len with large_value_threshold 0: no
// value is large then), at most the whole ring; the server packs its answers into that budget and leaves the rest
// of the items unanswered (they go again in the next part), so a reply never needs more of the ring than its part
// reserved. A part carries as many keys as its request holds
// in one ring, whatever its buffers: small values in large buffers still take one round trip.
//
// Threads (issue 16): parts are posted and completed with their server's Active lock held (client_pe.h), by the
// issuing thread or by any thread that takes in replies from that server (CompleteMultiGet may ask again from
// there, of the same server); a part counts in its issuing thread's mine_in_flight_ (batch_issuer) whoever posts
// it, so that thread's later Direct operations on the server wait for it as for its single requests: a kMultiGet
// part as a request that may touch any key (its keys are not looked at: every Direct operation of that thread on
// the server waits for it), a single GET part in its key's bucket (client/issuer_in_flight.h).
//
// Order (shmemcache.h, imget): an item asked again is posted when its part's reply is taken in, so a write of its
// key that the batch's thread issued meanwhile would reach the server first. A write issued while a kMultiGet part
// of its thread with an item of its key is in flight to its server waits for that part's reply, and so for what
// it asks again (Client::WriteWaitsForMultiGet, in PostActive): a key the server answers in the reply costs that
// write the wait too (the item's key is all it looks at). Counted per server (multi_gets_in_flight_), so a write
// with no multi-get in flight looks at one number.
#include <algorithm>
#include <cassert>
#include <cstring>
#include <mutex>

#include "client/client.h"
#include "conduit/multi_get_message.h"

namespace smc {

namespace {

constexpr size_t kMaxItemsPerMessage = 256;  // a window

}  // namespace

Client::MGetPath Client::mget_path() {
  if (mget_path_ == MGetPath::kUndecided) {
    switch (config_.mget_policy) {
      case SHMEMCACHE_MGET_MESSAGE: mget_path_ = MGetPath::kMessagesOnly; break;
      case SHMEMCACHE_MGET_SINGLE: mget_path_ = MGetPath::kDirectThenSingles; break;
      default:  // auto: over UCX tcp a one-sided get costs a server wake-up, as a message does, but per key
        mget_path_ = transport_->Describe().context_transport == ContextTransport::kTcp
                         ? MGetPath::kMessagesOnly
                         : MGetPath::kDirectThenMessages;
    }
  }
  return mget_path_;
}

shmemcache_request* Client::NewBatch() {
  shmemcache_request* batch = NewRequest();
  batch->is_batch = true;
  batch->op = Op::kMultiGet;
  batch->batch_issuer = mine_in_flight_.get();
  return batch;
}

void Client::PostMultiGets(int server, const size_t* indices, size_t n, shmemcache_mget_item_t* items,
                           shmemcache_request* batch) {
  ServerHold hold(this, server);  // holding none, or server's (items of a reply from it asked again)
  assert(hold.owns());
  const size_t ring = RingPayloadBytes(config_);
  // A value the reply may carry: below large_value_threshold (from it on the server answers kAskAlone); with
  // large_value_threshold 0 (never large) any value up to its buffer. At most the ring either way, so that the sum
  // below cannot overflow.
  const size_t value_cap =
      config_.large_value_threshold > 0 ? std::min(config_.large_value_threshold - 1, ring) : ring;
  size_t from = 0;
  while (from < n) {
    // This message's items: as many as its request allows in one ring (at least one). The reply's reservation
    // is capped at the ring: values are usually far smaller than their buffers, and what does not fit is
    // asked again (CompleteMultiGet).
    size_t request_bytes = sizeof(RequestHeader), reply_bytes = sizeof(ReplyHeader), to = from;
    for (; to < n && to - from < kMaxItemsPerMessage; ++to) {
      const shmemcache_mget_item_t& it = items[indices[to]];
      const size_t more = MultiGetKeyBytes(it.key_len);
      if (to > from && request_bytes + more > ring) break;
      request_bytes += more;
      reply_bytes += MultiGetAnswerBytes(std::min<size_t>(it.buffer_len, value_cap));
    }
    reply_bytes = std::min(reply_bytes, ring);
    while (in_flight_ >= config_.max_outstanding) CompleteOldestAnywhere();
    Status status =
        conduit_.failed(static_cast<size_t>(server)) ? SHMEMCACHE_TIMEOUT : MakeReplyRoom(server, reply_bytes, 0);
    shmemcache_request* part = NewRequest();
    part->op = Op::kMultiGet;
    part->loc.server = server;
    part->batch = batch;
    part->mget_items = items;
    part->mget_indices.assign(indices + from, indices + to);
    part->issuer_in_flight = batch->batch_issuer + server;
    if (status == SHMEMCACHE_OK) {
      const RequestHeader h = PartHeader(server, reply_bytes);
      MultiGetRequestWriter writer;
      writer.Begin(&request_[server], h);
      for (size_t k = from; k < to; ++k) writer.Add(items[indices[k]].key, items[indices[k]].key_len,
                                                    items[indices[k]].buffer_len);
      status = PostPart(server, part, h.request_id, reply_bytes);
      if (status == SHMEMCACHE_OK) {
        ++batch->batch_remaining;
        ++counters_.mget_messages;
      }
    }
    if (status != SHMEMCACHE_OK) {  // the server failed: its items are answered TIMEOUT, nothing is in flight
      part->done = true;
      part->status = status;
      ++batch->batch_remaining;
      Settle(part);
    }
    from = to;
  }
}

void Client::PostSingleGet(shmemcache_mget_item_t* items, size_t i, shmemcache_request* batch) {
  shmemcache_mget_item_t& it = items[i];
  const Operation op = MakeOperation(Op::kGet, it.key, it.key_len, nullptr, 0, it.buffer, it.buffer_len,
                                     &it.value_len);
  ServerHold hold(this, op.loc.server);  // holding none, or this server's (its reply asked again)
  assert(hold.owns());
  while (in_flight_ >= config_.max_outstanding) CompleteOldestAnywhere();
  shmemcache_request* part = NewRequest();
  part->issuer_in_flight = batch->batch_issuer + op.loc.server;  // PostActive counts it there
  part->batch = batch;
  part->item_status = &it.status;
  Status posted = PostActive(op, &part);
  if (posted != SHMEMCACHE_OK) {  // the server failed: nothing issued
    if (posted == SHMEMCACHE_TIMEOUT) NoteBatchTimeout(batch, op.loc.server);
    Release(part);
    it.status = posted;
    it.value_len = 0;
    return;
  }
  ++batch->batch_remaining;  // before anything can complete it: completion needs the lock this thread holds
}

void Client::CompleteMultiGet(shmemcache_request* r, const ReplyHeader& h) {
  if (r->mset_items != nullptr) return CompleteMultiSet(r, h);  // a multi-set part (request.h)
  if (r->status != SHMEMCACHE_OK) return;  // the message was refused: Settle gives its status to every item
  shmemcache_mget_item_t* items = r->mget_items;
  std::vector<size_t>& indices = r->mget_indices;
  const size_t n = indices.size();
  const std::vector<uint8_t>& reply = reply_[r->loc.server];
  const size_t body = reply.size() - sizeof(h);
  MultiGetReplyReader answers(reply.data() + sizeof(h), h.value_len == body ? body : 0, h.flags,
                              static_cast<uint32_t>(n));
  // indices[0, again) collects the items to ask for again: alone first, then in a new message.
  size_t answered = 0, alone = 0;
  for (; answered < n; ++answered) {
    const size_t i = indices[answered];
    shmemcache_mget_item_t& it = items[i];
    MultiGetAnswer a;
    const uint8_t* value;
    if (!answers.Next(it.buffer_len, &a, &value)) break;
    if (a.wire_flags & message_flags::kAskAlone) {
      indices[alone++] = i;
      continue;
    }
    ++counters_.active_gets;
    ++counters_.mget_message_items;
    it.status = static_cast<Status>(a.status);
    it.value_len = 0;
    if (it.status == SHMEMCACHE_OK || it.status == SHMEMCACHE_BUFFER_TOO_SMALL) {
      ++counters_.get_hits;
      it.value_len = a.value_len;
      if (it.status == SHMEMCACHE_OK && a.value_len) std::memcpy(it.buffer, value, a.value_len);
      Remember(Locate(it.key, it.key_len, config_.num_servers), a.pointer);
    } else if (it.status == SHMEMCACHE_NOT_FOUND) {
      ++counters_.get_misses;
    }
  }
  if (answers.malformed()) {  // a protocol bug: what was not answered fails, nothing hangs
    for (size_t k = answered; k < n; ++k) {
      items[indices[k]].status = SHMEMCACHE_INVALID_ARGUMENT;
      items[indices[k]].value_len = 0;
    }
    answered = n;
  }
  // The unanswered ones (the budget ran out) after the alone ones.
  const size_t again = alone + (n - answered);
  std::copy(indices.begin() + answered, indices.end(), indices.begin() + alone);
  indices.resize(again);
  // Asking again may complete other replies (flow control): reply_ is not read past this point, and r stays
  // out of the pool (it is not settled yet) so indices stay valid.
  const int server = r->loc.server;
  shmemcache_request* batch = r->batch;
  for (size_t k = 0; k < alone; ++k) PostSingleGet(items, indices[k], batch);
  if (again > alone) PostMultiGets(server, indices.data() + alone, again - alone, items, batch);
}

void Client::Settle(shmemcache_request* r) {
  if (r == nullptr || r->batch == nullptr || !r->done) return;
  if (r->op == Op::kMultiGet) {
    if (r->status != SHMEMCACHE_OK) {
      for (size_t i : r->mget_indices) {
        r->mget_items[i].status = r->status;
        r->mget_items[i].value_len = 0;
      }
    }
  } else if (r->item_status != nullptr) {
    *r->item_status = r->status;
  }
  if (r->status == SHMEMCACHE_TIMEOUT) NoteBatchTimeout(r->batch, r->loc.server);
  --r->batch->batch_remaining;
  Release(r);
}

Status Client::TestBatch(shmemcache_request* batch) {
  if (batch->batch_remaining.load(std::memory_order_acquire) > 0) {
    // Never waits for a lock: while another thread holds a server's, it is taking in replies (perhaps this batch's).
    // Progress once, outside the locks, after what this PE staged went out (as Test).
    for (int s = 0; s < config_.num_servers; ++s) PushStagedIfFree(s);
    transport_->Progress();
    for (int s = 0; s < config_.num_servers && batch->batch_remaining.load(std::memory_order_relaxed) > 0; ++s) {
      ServerHold hold(this, s, /*try_only=*/true);
      if (!hold.owns() || pending_[s].empty()) continue;
      PollReplies(s, /*progress=*/false);
    }
  }
  if (batch->batch_remaining.load(std::memory_order_acquire) > 0) {
    // Arm looks where its parts may be (conduit/completion_wake.h): a part counts in its issuer's counts of its
    // server until it is taken in, so a server where they read 0 holds none still to take in. The issuer's own
    // servers Arm looks at anyway.
    if (batch->batch_issuer != mine_in_flight_.get())
      for (int s = 0; s < config_.num_servers; ++s)
        if (batch->batch_issuer[s].all.load(std::memory_order_acquire) != 0) NoteTestedServer(s);
    return SHMEMCACHE_IN_PROGRESS;
  }
  ExplainBatch(batch);  // its parts may have failed on another thread; its items are the caller's from here on
  return SHMEMCACHE_OK;
}

RequestHeader Client::PartHeader(int server, uint64_t reply_bytes) {
  RequestHeader h{};
  h.request_id = NextRequestId();
  h.recency = EstimatedEpoch(server);
  h.max_value = reply_bytes;  // the reply budget: what the ring holds for it
  return h;
}

Status Client::PostPart(int server, shmemcache_request* part, uint64_t request_id, uint64_t reply_bytes) {
  part->sent_ns = clock_.Refresh();  // exact, before sending (server_time.h)
  const std::vector<uint8_t>& request = request_[server];
  if (conduit_.Post(static_cast<size_t>(server), request.data(), request.size(), true) != SHMEMCACHE_OK)
    return FailServer(server);
  part->request_id = request_id;
  part->reply_bytes = reply_bytes;
  part->reply_alone = 0;  // answered within its group (a multi-get item on flash is asked again alone)
  Track(server, part);
  if (part->mget_items != nullptr) ++multi_gets_in_flight_[server];  // a multi-get's (Retire takes it off)
  return SHMEMCACHE_OK;
}

}  // namespace smc
