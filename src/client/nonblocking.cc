// Client: the non-blocking operations (iset/bset/iget/bget + test/wait). See client.h and shmemcache.h for
// the contract; this file holds the request bookkeeping.
#include <algorithm>
#include <cstring>

#include "client/client.h"
#include "core/clock.h"
#include "core/backoff.h"

namespace smc {

shmemcache_request* Client::NewRequest() {
  shmemcache_request* r = free_requests_;
  if (r != nullptr) {
    free_requests_ = r->next_free;
  } else {
    request_pool_.emplace_back();
    r = &request_pool_.back();
  }
  *r = shmemcache_request{};
  r->magic = shmemcache_request::kLive;
  return r;
}

unsigned Client::ReplyChunks(Op op, size_t buffer_len) const {
  size_t payload = config_.chunk_bytes - kChunkHeaderBytes - kChunkTrailerBytes;
  size_t bytes = sizeof(ReplyHeader) + (op == Op::kGet ? buffer_len : 0);
  size_t chunks = (bytes + payload - 1) / payload;
  return static_cast<unsigned>(std::min<size_t>(std::max<size_t>(chunks, 1), config_.chunks_per_peer));
}

Status Client::Issue(Op op, const void* key, size_t key_len, const void* value, size_t value_len, void* buffer,
                     size_t buffer_len, size_t* out_len, shmemcache_request** out) {
  KeyLocation loc = Locate(key, key_len, config_.num_servers);
  int s = loc.server;
  while (in_flight_ >= config_.max_outstanding) CompleteOldestAnywhere();
  if (conduit_.failed(static_cast<size_t>(s))) return conduit_.FailedStatus(static_cast<size_t>(s));

  // A Direct operation is done at once, as the blocking call would do it: possible only when nothing is in
  // flight to that server (or it could overtake an earlier request on the same key).
  if (config_.direct_ops && pending_[s].empty() && op != Op::kDelete) {
    DrainNotices(s);
    const DirectoryEntry* e = directory_.Peek(loc);
    if (e != nullptr && (op == Op::kGet || BlockBytesFor(key_len, value_len) <= e->block_bytes)) {
      shmemcache_request* r = NewRequest();
      r->op = op;
      r->loc = loc;
      r->status = op == Op::kSet ? Set(key, key_len, value, value_len)
                                 : Get(key, key_len, buffer, buffer_len, out_len);
      r->done = true;
      *out = r;
      return SHMEMCACHE_OK;
    }
  }

  // Active, pipelined. The reply ring must hold the replies of every request in flight to this server: a
  // server never waits on a client that is not reading.
  const unsigned reply_chunks = ReplyChunks(op, buffer_len);
  while (!pending_[s].empty() && pending_chunks_[s] + reply_chunks > config_.chunks_per_peer) {
    if (CompleteNext(s) != SHMEMCACHE_OK) return SHMEMCACHE_TIMEOUT;  // the server failed: nothing issued
  }
  switch (op) {
    case Op::kSet: ++stats_->sets; ++stats_->active_sets; break;
    case Op::kGet: ++stats_->gets; ++stats_->active_gets; break;
    case Op::kDelete:
      ++stats_->deletes;
      if (config_.direct_ops) directory_.Remove(loc);
      break;
    default: break;
  }
  RequestHeader h{};
  h.op = static_cast<uint8_t>(op);
  h.key_len = static_cast<uint32_t>(key_len);
  h.value_len = static_cast<uint32_t>(op == Op::kSet ? value_len : 0);
  h.request_id = next_request_id_++;
  h.recency = EstimatedEpoch(s);
  h.max_value = op == Op::kGet ? buffer_len : 0;
  EncodeRequest(&request_, h, key, key_len, op == Op::kSet ? value : nullptr, op == Op::kSet ? value_len : 0);
  shmemcache_request* r = NewRequest();  // before sending: a request on the wire always has its record
  if (conduit_.Send(static_cast<size_t>(s), request_.data(), request_.size(), true) != SHMEMCACHE_OK) {
    Release(r);
    return FailServer(s);  // nothing issued (the request may be partly in the ring; the ring is never read again)
  }
  r->op = op;
  r->loc = loc;
  r->buffer = buffer;
  r->buffer_len = buffer_len;
  r->value_len = out_len;
  r->reply_chunks = reply_chunks;
  r->request_id = h.request_id;
  r->issued_ns = NowNanos();
  pending_[s].push_back(r);
  pending_chunks_[s] += r->reply_chunks;
  ++in_flight_;
  stats_->messages_sent = conduit_.stats().messages_sent;
  *out = r;
  return SHMEMCACHE_OK;
}

void Client::Complete(int server) {
  stats_->messages_received = conduit_.stats().messages_received;
  std::deque<shmemcache_request*>& q = pending_[server];
  ReplyHeader h;
  bool well_formed = reply_.size() >= sizeof(h);
  if (well_formed) {
    std::memcpy(&h, reply_.data(), sizeof(h));
    ObserveServer(server, h);
  }
  // Replies mostly come in request order, but a GET the server reads from flash is answered when its read
  // finishes, after requests that came later: find the request by its id. A malformed reply or an id never sent
  // is a protocol bug: it fails the oldest request rather than hang.
  auto it = q.begin();
  if (well_formed) {
    auto match = std::find_if(q.begin(), q.end(), [&](const shmemcache_request* p) { return p->request_id == h.request_id; });
    if (match != q.end()) it = match;
  }
  shmemcache_request* r = *it;
  q.erase(it);
  pending_chunks_[server] -= r->reply_chunks;
  --in_flight_;
  r->done = true;
  if (!well_formed || h.request_id != r->request_id) {
    r->status = SHMEMCACHE_INVALID_ARGUMENT;
    return;
  }
  r->status = static_cast<Status>(h.status);
  if (r->op == Op::kGet) {
    if (r->status == SHMEMCACHE_OK) {
      if (reply_.size() != sizeof(h) + h.value_len || h.value_len > r->buffer_len) {
        r->status = SHMEMCACHE_INVALID_ARGUMENT;
        return;
      }
      if (h.value_len) std::memcpy(r->buffer, reply_.data() + sizeof(h), h.value_len);
      *r->value_len = h.value_len;
      ++stats_->get_hits;
      Remember(r->loc, h.pointer);
    } else if (r->status == SHMEMCACHE_BUFFER_TOO_SMALL) {
      *r->value_len = h.value_len;
      ++stats_->get_hits;
      Remember(r->loc, h.pointer);
    } else {
      *r->value_len = 0;
      if (r->status == SHMEMCACHE_NOT_FOUND) ++stats_->get_misses;
    }
  } else if (r->op == Op::kSet && r->status == SHMEMCACHE_OK) {
    Remember(r->loc, h.pointer);
  }
}

Status Client::CompleteNext(int server) {
  if (conduit_.Receive(static_cast<size_t>(server), &reply_) != SHMEMCACHE_OK) return FailServer(server);
  Complete(server);
  return SHMEMCACHE_OK;
}

Status Client::CompleteServer(int server) {
  if (conduit_.failed(static_cast<size_t>(server))) return conduit_.FailedStatus(static_cast<size_t>(server));
  while (!pending_[server].empty()) {
    Status s = CompleteNext(server);
    if (s != SHMEMCACHE_OK) return s;
  }
  return SHMEMCACHE_OK;
}

Status Client::FailServer(int server) {
  for (shmemcache_request* r : pending_[server]) {
    r->done = true;
    r->status = SHMEMCACHE_TIMEOUT;
    if (r->op == Op::kGet) *r->value_len = 0;
  }
  in_flight_ -= pending_[server].size();
  pending_[server].clear();
  pending_chunks_[server] = 0;
  return conduit_.FailedStatus(static_cast<size_t>(server));
}

void Client::CompleteOldestAnywhere() {
  int oldest = -1;
  for (int s = 0; s < config_.num_servers; ++s) {
    if (pending_[s].empty()) continue;
    if (oldest < 0 || pending_[s].front()->request_id < pending_[oldest].front()->request_id) oldest = s;
  }
  if (oldest >= 0) CompleteNext(oldest);
}

void Client::PollReplies(int server) {
  transport_->Progress();  // replies over transports without hardware RMA land only while this PE progresses
  const size_t peer = static_cast<size_t>(server);
  Status s = SHMEMCACHE_OK;
  while (!pending_[server].empty() && (s = conduit_.Poll(peer, &reply_)) == SHMEMCACHE_OK) Complete(server);
  if (s == SHMEMCACHE_TIMEOUT) {
    FailServer(server);
  } else if (!pending_[server].empty() && ++empty_polls_ % Deadline::kPollsPerClockRead == 0) {
    // Nothing more has arrived: the oldest request in flight to this server may wait op_timeout_ms, as it would
    // in Wait. (Test is called in tight loops: the clock is read every kPollsPerClockRead empty polls.)
    const shmemcache_request* oldest = pending_[server].front();
    uint64_t waited_ms = (NowNanos() - oldest->issued_ns) / 1000000;
    if (waited_ms >= config_.op_timeout_ms) {
      conduit_.GiveUp(peer, "no reply from PE " + std::to_string(server) + " to request " +
                                std::to_string(oldest->request_id) + " within op_timeout_ms (" +
                                std::to_string(config_.op_timeout_ms) + " ms; polled with shmemcache_test)");
      FailServer(server);
    }
  }
}

void Client::CompleteAll() {
  for (int s = 0; s < config_.num_servers; ++s) CompleteServer(s);
}

Status Client::Test(shmemcache_request* r) {
  if (r->magic != shmemcache_request::kLive) return SHMEMCACHE_INVALID_ARGUMENT;
  if (!r->done) PollReplies(r->loc.server);
  if (!r->done) return SHMEMCACHE_IN_PROGRESS;
  if (r->status == SHMEMCACHE_TIMEOUT) conduit_.FailedStatus(static_cast<size_t>(r->loc.server));  // LastError
  return r->status;
}

Status Client::Wait(shmemcache_request* r) {
  if (r->magic != shmemcache_request::kLive) return SHMEMCACHE_INVALID_ARGUMENT;
  while (!r->done) CompleteNext(r->loc.server);  // each wait bounded; a failure completes r with TIMEOUT
  Status status = r->status;
  if (status == SHMEMCACHE_TIMEOUT) conduit_.FailedStatus(static_cast<size_t>(r->loc.server));  // LastError
  Release(r);
  return status;
}

void Client::Release(shmemcache_request* r) {
  r->magic = shmemcache_request::kReleased;
  r->next_free = free_requests_;
  free_requests_ = r;
}

}  // namespace smc
