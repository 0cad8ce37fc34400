// Client: the request machinery every operation goes through (client.h): the request pool, the queues of
// requests in flight per server, the one Active encode path (PostActive) and the one reply decode path
// (Complete), Test and Wait, and the one blocking wait on a server that Wait, WaitBatch and a blocking call's
// CompleteKey / CompleteServer share (WaitUntil, WaitOnServer). The queues and the conduit are the PE's
// (client_pe.h): everything that touches server s's runs with pe_->active[s] held (ServerHold).
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "client/client.h"
#include "core/backoff.h"
#include "core/clock.h"
#include "transport/peer_wait.h"

namespace smc {

shmemcache_request* Client::PoolRequest() {
  request_pool_.emplace_back();
  return &request_pool_.back();
}

shmemcache_request* Client::DoneRequest(const KeyLocation& loc, Status status) {
  shmemcache_request* r = free_requests_;
  if (r == nullptr) {
    r = NewRequest();
  } else {
    // No Reset: of a single record that never joins a queue, Test, Wait and Release read only these fields (and
    // write magic and next_free); the rest stays as its last use left it until NewRequest takes the record again
    // and resets it. Spares every GET answered at issue Reset's work (issue 17: NewRequest 49 instructions,
    // this 20).
    free_requests_ = r->next_free;
    r->is_batch = false;
  }
  r->magic = shmemcache_request::kLive;
  r->loc = loc;
  r->status = status;
  // Relaxed: no other thread completes it; it reaches another thread (one that tests or waits for it) only through
  // the caller's own hand-over of the pointer, which orders these writes before that thread's reads.
  r->done.store(true, std::memory_order_relaxed);
  return r;
}

size_t Client::ReplyBytes(Op op, size_t buffer_len) const {
  return sizeof(ReplyHeader) + (op == Op::kGet ? buffer_len : 0);
}

unsigned Client::ReplyAlone(Op op, size_t buffer_len) const {
  if (op != Op::kGet || config_.spill_dir == nullptr) return 0;
  return reply_room_[0].CostAlone(ReplyBytes(op, buffer_len));
}

bool Client::WaitsForPlacement(int server, uint64_t hash, bool every_key) const {
  if (placing_[server].total == 0) return false;
  if (every_key) return true;
  if (!placing_[server].MayHold(hash)) return false;  // no reserve of a key in hash's bucket
  const RequestQueue& q = pending_[server];
  for (size_t i = 0; i < q.size(); ++i) {
    const shmemcache_request* r = q.at(i);
    if ((r->flags & message_flags::kReserve) && r->loc.hash == hash) return true;
  }
  return false;
}

bool Client::WriteWaitsForPull(int server, uint64_t hash) const {
  if (!pullable_in_flight_[server].MayHold(hash)) return false;
  const RequestQueue& q = pending_[server];
  for (size_t i = 0; i < q.size(); ++i) {
    const shmemcache_request* r = q.at(i);
    if ((r->flags & message_flags::kMayPull) && r->loc.hash == hash) return true;
  }
  return false;
}

bool Client::MultiGetHoldsKey(int server, const void* key, size_t key_len) const {
  const IssuerInFlight* const mine = &mine_in_flight_[server];
  const RequestQueue& q = pending_[server];
  for (size_t i = 0; i < q.size(); ++i) {
    const shmemcache_request* r = q.at(i);
    // Another thread's batch is concurrent with this write (shmemcache.h, "Threads"): it holds nothing back.
    if (r->op != Op::kMultiGet || r->mget_items == nullptr || r->issuer_in_flight != mine) continue;
    for (const size_t k : r->mget_indices) {
      const shmemcache_mget_item_t& it = r->mget_items[k];
      if (it.key_len == key_len && std::memcmp(it.key, key, key_len) == 0) return true;
    }
  }
  return false;
}

Status Client::PostActive(const Operation& op, shmemcache_request** request, bool may_pull) {
  const int s = op.loc.server;
  // A thread posts to s holding no other server's lock (client_pe.h): a reply from s re-posts only to s.
  ServerHold hold(this, s);
  assert(hold.owns());
  const size_t reply_bytes = ReplyBytes(op.op, op.buffer_len);
  const unsigned reply_alone = ReplyAlone(op.op, op.buffer_len);
  // MakeReplyRoom's, its chunk count computed once for it and for the wait below.
  const unsigned room = reply_room_[s].CostAlone(reply_bytes) + reply_alone;
  if (!reply_room_[s].Fits(room) && WaitForReplyRoom(s, room) != SHMEMCACHE_OK)
    return SHMEMCACHE_TIMEOUT;  // nothing issued
  uint8_t flags = 0;
  // kCommit: its reserve's, or a spare's (issued now); kReserve: a free one, or a spare's. What the waits below may
  // post is never a reserve, nor a commit into a spare, so they take no slot and no spare; they free slots, add
  // spares and re-charge completing slots (PlaceValue), so PlaceFor's slot holds when the request goes unless a
  // completion failed s (FailServer empties every slot and spare: checked after the waits). Its budget check
  // may be passed by then: by the class rounding (block_bytes - value_len) of the commits the waits posted
  // (client.h place_budget_).
  uint8_t slot = 0;
  Placement placed;
  if (op.place == kPlaceCommit || op.place == kPlaceCommitNext) {
    flags = op.place == kPlaceCommit ? message_flags::kCommit : message_flags::kCommit | message_flags::kReserveNext;
    slot = (*request)->place_slot;
  } else if ((placed = PlaceFor(op, s)).wire_flags != 0) {
    flags = placed.wire_flags;
    slot = placed.slot;
  } else if (op.op == Op::kSet && SymmetricLayout::LargeValue(config_, op.value_len)) {
    flags = message_flags::kValueLanded;
  } else if (op.op == Op::kGet && may_pull) {
    // From a server whose arena this PE loads from (mapped, local_access on) a pull is a local copy: pulled from
    // 1 KiB on (message.h, kPullNear); from any other from large_value_threshold on. Not with an SSD tier: there
    // a GET may be parked behind a flash read, and a later write of its key would wait for it (WriteWaitsForPull)
    // where a value answered in the reply lets the write go first (pe_spill_async's held read).
    const uint8_t near =
        mapped_[s] && config_.local_access != 0 && config_.spill_dir == nullptr ? message_flags::kPullNear : 0;
    if (PullSized(config_.large_value_threshold, config_.max_value_len, op.buffer_len, near))
      flags = message_flags::kMayPull | near;
  }
  // What must hold when the request goes (each wait completes replies of s until it does):
  //   room      the reply ring has room for its reply (MakeReplyRoom's).
  //   landing   a landed SET: the landing slot is ours again (the previous landed SET's reply has come).
  //   pull      a write: none of this client's pull-eligible GETs of the key is in flight (their pull must not
  //             see it: per-key issue order, client.h).
  //   mget      a write issued now: no multi-get message of this thread's batches with an item of its key is in
  //             flight (WriteWaitsForMultiGet). Its reply may send the item back to be asked again, alone or in a
  //             new message, posted when the reply is taken in: after this write, which it would then see. Once the
  //             message is answered, what it asked again is in flight before the write (a single GET's pull
  //             waits as above, a new message as this). Writes posted again from a completion (a commit, a SET
  //             sent again) were issued before any batch of their thread that is in flight: a batch completes its
  //             thread's requests to its servers first (OpenWindow).
  //   placement a request issued now (a new record; not one posted again from a completion: a commit, a GET
  //             asked again, a SET sent again after its reservation was refused, a multi-get's item asked again,
  //             each issued before any reserve still waiting): no placed SET (kReserve) of its key (of any key for
  //             a request that may touch any) waits for its reserve's reply. The commit is where that SET takes
  //             effect, posted from that reply's completion: a request posted before it would overtake it. This
  //             holds for a reserve too: two placed SETs of one key then have their commits posted in issue order
  //             (the later reserve is posted only once the earlier one's commit, or its refusal's resend, is
  //             posted: Complete takes a reserve out of the queue and posts what follows it within one hold of
  //             the lock). Blocking calls and batches find nothing of their own thread here: they complete their
  //             thread's requests on the key (CompleteKey) or server (CompleteServer, OpenWindow) first.
  // Completing a reply may post (a commit, a GET asked again, a SET sent again, landed or not): that takes reply
  // room and may take the landing slot or add a pull-eligible GET. So the conditions are checked together, after
  // every completion, and the request is encoded only once they all hold with nothing completed since: no
  // completion comes between that check and the post below (the lock is held).
  const bool landed = flags & message_flags::kValueLanded;
  const bool writes = op.op != Op::kGet;
  const bool issued_now = *request == nullptr;
  // (placing_ never grows during the waits: only a request issued now is a reserve. So where it is empty now
  // WaitsForPlacement stays false, and is not called.)
  const bool placing = issued_now && placing_[s].total != 0;
  const bool every_key = placing && InFlightSlot(op.op, op.loc.hash) == IssuerInFlight::kEveryKey;
  while ((!reply_room_[s].Fits(room) && !pending_[s].empty()) || (landed && landing_busy_[s]) ||
         (writes && WriteWaitsForPull(s, op.loc.hash)) ||
         (writes && issued_now && WriteWaitsForMultiGet(s, op.key, op.key_len)) ||
         (placing && WaitsForPlacement(s, op.loc.hash, every_key))) {
    if (CompleteNext(s) != SHMEMCACHE_OK) return SHMEMCACHE_TIMEOUT;
  }
  // A completion the waits ran may have failed s without failing the wait (its own post, a commit or a request
  // asked again, timed out: FailServer, which clears spares_ and every PlaceSlot). Then nothing is written into
  // its arena, its landing slot or its ring: a commit into a spare would copy the value to spare_offset 0, over
  // live pairs of a server that may still be serving.
  if (conduit_.failed(static_cast<size_t>(s))) return conduit_.FailedStatus(static_cast<size_t>(s));
  assert(!(placed.wire_flags & message_flags::kCommit) || (spares_[s] & (1u << slot)));
  switch (op.op) {
    case Op::kSet: case Op::kStore: ++counters_.active_sets; break;
    case Op::kGet: ++counters_.active_gets; break;
    case Op::kDelete:
      if (direct_gets_allowed_) directory_.Remove(op.loc);
      break;
    default: break;
  }
  RequestHeader h{};
  h.op = static_cast<uint8_t>(op.op);
  h.wire_flags = flags;
  h.slot = slot;
  h.key_len = static_cast<uint32_t>(op.key_len);
  h.value_len = static_cast<uint32_t>(op.value_len);
  h.request_id = NextRequestId();
  h.recency = EstimatedEpoch(s);
  h.max_value = op.buffer_len;
  h.mode = static_cast<uint8_t>(op.contract.store.mode);
  h.flags = op.contract.store.flags;
  h.ttl_ms = op.contract.store.ttl_ms;
  h.cas = op.contract.store.cas;
  h.delta = op.contract.delta;
  const size_t value_bytes = flags & message_flags::kValueElsewhere ? 0 : op.value_len;
  // Before sending: a request on the wire always has its record (a GET asked again keeps the caller's).
  shmemcache_request* r = *request != nullptr ? *request : NewRequest();
  // An exact reading before sending: the server's stamp comes after it (server_time.h). One per burst (issue 14):
  // server_time.h needs sent_ns at or before the moment the request left, and a reading taken before the burst's
  // first request is staged is before any of its requests leaves (at the Flush after them); it lengthens the
  // sample's round trip only by the staging time of the requests before this one in the burst.
  uint64_t& burst_read = pe_->burst_read_ns[s];
  if (conduit_.unflushed(static_cast<size_t>(s)) == 0 || burst_read == 0) burst_read = clock_.Refresh();
  r->sent_ns = burst_read;
  // A commit into a spare (PlaceFor's): the value goes into the block before the commit that publishes it, as
  // PlaceValue's (the block is free-tagged and unindexed until then: no reader or writer but this one touches its
  // value bytes; the release fence keeps these stores before the commit's).
  const bool into_spare = (placed.wire_flags & message_flags::kCommit) != 0;
  if (into_spare) {
    std::memcpy(direct_.local_arena(s) + PlaceSlotOf(s, slot).spare_offset + kBlockHeaderBytes + op.key_len,
                op.value, op.value_len);
    std::atomic_thread_fence(std::memory_order_release);
  }
  if (landed) {
    // On the conduit's context: its Fence orders the value before the request that names it.
    pe_->ctx.Put(landing_ + static_cast<size_t>(client_rank_) * landing_slot_bytes_, op.value, op.value_len, s);
    pe_->ctx.Fence();
    ++counters_.large_sets_landed;
  }
  // Staged (encoded straight into the staging when it packs): it goes out, with one doorbell for the burst, when
  // this client next waits for or polls the server, or once burst_flush_ requests are staged (below).
  if (conduit_.PostWritten(static_cast<size_t>(s), RequestBytes(op.key_len, value_bytes), true, &request_[s],
                           [&](uint8_t* out) { WriteRequest(out, h, op.key, op.key_len, op.value, value_bytes); }) !=
      SHMEMCACHE_OK) {
    if (*request == nullptr) Release(r);
    return FailServer(s);  // nothing issued (the request may be partly in the ring; the ring is never read again)
  }
  r->flags = flags;
  if (flags & message_flags::kMayPull) {
    r->SetKey(op.key, op.key_len);
    pullable_in_flight_[s].Add(op.loc.hash);  // r->loc is op.loc (set below, or kept: the same key)
  }
  if (landed) landing_busy_[s] = true;
  if (into_spare) {  // the slot is in flight again, its charge (the spare's bytes) kept for the next spare
    reserving_[s] |= 1u << slot;
    spares_[s] &= ~(1u << slot);
    r->place_slot = slot;
    ++counters_.large_sets_placed;
  }
  if (flags & message_flags::kReserve) {  // what the commit needs (PlaceValue)
    reserving_[s] |= 1u << slot;
    spares_[s] &= ~(1u << slot);  // a spare there is given back by the server
    ChargeSlot(s, slot, op.value_len);
    placing_[s].Add(op.loc.hash);  // r->loc is op.loc (set below): Remove finds the same bucket
    r->place_slot = slot;
    r->SetKey(op.key, op.key_len);
    r->value = op.value;
    r->value_bytes = op.value_len;
    r->store = op.contract.store;
  }
  r->op = op.op;
  // A record sent before (a GET asked again by Pull: its request_id is set; ids start at 1) keeps its location:
  // its issuer reads loc.server without the server's lock (Wait, Test) while the thread completing it here holds
  // that lock (a data race, found by tsan once GETs of 1 KiB pulled: message.h, kPullNear).
  if (r->request_id == 0) r->loc = op.loc;
  r->buffer = op.buffer;
  r->buffer_len = op.buffer_len;
  r->value_len = op.out_len;
  r->reply_bytes = reply_bytes;
  r->reply_alone = reply_alone;
  r->request_id = h.request_id;
  r->out = op.contract.out;
  Track(s, r);  // a Pull keeps the issuer
  *request = r;
  if (burst_flush_ != 0 && (conduit_.unflushed(static_cast<size_t>(s)) >= burst_flush_ ||
                            conduit_.unflushed_bytes(static_cast<size_t>(s)) >= kBurstFlushBytes))
    conduit_.Flush(static_cast<size_t>(s));  // the server starts on them while this client stages more
  return SHMEMCACHE_OK;
}

Status Client::WaitForReplyRoom(int server, unsigned chunks) {
  const ReplyRoom& room = reply_room_[server];
  Status status = SHMEMCACHE_OK;
  while (status == SHMEMCACHE_OK && !pending_[server].empty() && !room.Fits(chunks)) status = CompleteNext(server);
  return status;
}

shmemcache_request* Client::Complete(int server, const MessageView& reply) {
  RequestQueue& q = pending_[server];
  ReplyHeader h;
  bool well_formed = reply.len >= sizeof(h);
  if (well_formed) {
    std::memcpy(&h, reply.data, sizeof(h));
    ObserveServer(server, h);
  }
  // Replies mostly come in request order, but a GET the server reads from flash is answered when its read
  // finishes, after requests that came later: find the request by its id. A malformed reply or an id never sent
  // is a protocol bug: it fails the oldest request rather than hang.
  size_t index = 0;
  if (well_formed) {
    for (size_t i = 0; i < q.size(); ++i) {
      if (q.at(i)->request_id == h.request_id) {
        index = i;
        break;
      }
    }
  }
  shmemcache_request* r = q.at(index);
  q.erase(index);
  well_formed = well_formed && h.request_id == r->request_id;
  if (well_formed && r->op == Op::kMultiGet) {
    reply_[server].assign(reply.data, reply.data + reply.len);
  } else if (well_formed && InlineValueFits(r, h, reply.len) && h.value_len != 0) {
    std::memcpy(r->buffer, reply.data + sizeof(h), h.value_len);
  }
  conduit_.Release(static_cast<size_t>(server));  // before r retires: its reply room goes with it
  Retire(server, r, well_formed ? &h : nullptr);
  // The issuer's counts drop only once r's outputs are written (or r is in flight again and counted anew): a
  // zero read without the lock (MineKeyFree) lets the issuer go Direct on the same key, and a pull still to
  // come must not see that later write of its own thread (per-key issue order). Whatever Decode posts on r's
  // behalf (r again, a batch's parts asked again) is counted before r's count drops (issuer_in_flight.h).
  IssuerInFlight* const issuer = r->issuer_in_flight;
  const uint8_t slot = r->issuer_slot;
  bool in_flight_again = false;  // asked again (Pull) or committed (placed SET): Track counted it again
  if (!well_formed) {
    // A reserve answered by a reply we cannot read: its slot is free again (the server frees any block it
    // reserved there at our next reserve in it).
    if (r->flags & message_flags::kReserve) {
      placing_[server].Remove(r->loc.hash);
      FreeSlot(server, r);
    }
    r->status = SHMEMCACHE_INVALID_ARGUMENT;
    if (r->op == Op::kGet) *r->value_len = 0;
  } else {
    in_flight_again = Decode(server, r, h, reply.len);
  }
  AddIssuerInFlight(issuer, slot, -1);
  if (in_flight_again) return nullptr;
  // A batch part is never seen by a caller: it is settled by whoever called this (Settle). Anything else may be
  // recycled by its issuer as soon as `done` is set, so r is not touched after that.
  const bool part = r->batch != nullptr;
  r->done.store(true, std::memory_order_release);  // after every output: the issuer reads them once it sees it
  return part ? r : nullptr;
}

void Client::CompleteContract(int server, shmemcache_request* r, const ReplyHeader& reply) {
  // Exact, after the reply arrived (server_time.h): taken by ReadReplyClock for the chunk the reply came in.
  const uint64_t now = pe_->reply_read_ns[server];
  // A reply read at the same reading as the last one judged, of a request sent at the same reading (issue 14: the
  // replies of one chunk to the requests of one burst), gives a sample of the same round trip, received at the
  // same moment: its bounds are as wide now as that one's were, and the kept sample is already at least as
  // tight as that one was at this very reading (it is that one, or won against it). So the kept sample is kept
  // without reading or judging anything: no wider than the new one, and valid (server_time.h: either sample
  // is). (KeepTighterSample would take the new one on a tie; the two differ only if their server stamps do.)
  ClientPe::JudgedSample& judged = pe_->sample_judged[server];
  if (judged.received_ns != now || judged.sent_ns != r->sent_ns) {
    judged = ClientPe::JudgedSample{now, r->sent_ns};
    KeepTighterSample(server, ServerTimeSample{reply.server_ms, now, now > r->sent_ns ? now - r->sent_ns : 0});
  }
  if (r->status != SHMEMCACHE_OK) return;
  if (r->out.token) *r->out.token = reply.token;
  if (r->out.flags) *r->out.flags = reply.flags;
  if (r->out.number) *r->out.number = reply.number;
  if (r->op == Op::kStore || r->op == Op::kTouch || r->op == Op::kIncr) Remember(r->loc, reply.pointer);
}

bool Client::InlineValueFits(const shmemcache_request* r, const ReplyHeader& h, size_t reply_len) {
  return r->op == Op::kGet && h.status == SHMEMCACHE_OK && !(h.wire_flags & message_flags::kPull) &&
         reply_len == sizeof(h) + h.value_len && h.value_len <= r->buffer_len;
}

bool Client::Decode(int server, shmemcache_request* r, const ReplyHeader& h, size_t reply_len) {
  r->status = static_cast<Status>(h.status);
  if (r->flags & message_flags::kReserve) return PlaceValue(server, r, h);
  CompleteContract(server, r, h);
  if (r->op == Op::kMultiGet) {
    CompleteMultiGet(r, h);
    return false;
  }
  if (r->op == Op::kGet) {
      if (r->status == SHMEMCACHE_OK) {
      const bool pull = h.wire_flags & message_flags::kPull;
      if (pull ? reply_len != sizeof(h) || h.value_len > r->buffer_len || !(r->flags & message_flags::kMayPull) ||
                     !h.pointer.valid
               : !InlineValueFits(r, h, reply_len)) {
        r->status = SHMEMCACHE_INVALID_ARGUMENT;
        *r->value_len = 0;
        return false;
      }
      if (pull) return Pull(server, r, h.pointer, h.value_len);
      *r->value_len = h.value_len;  // its bytes are in the caller's buffer already (Complete)
      ++counters_.get_hits;
      Remember(r->loc, h.pointer, h.value_len);
    } else if (r->status == SHMEMCACHE_BUFFER_TOO_SMALL) {
      *r->value_len = h.value_len;
      ++counters_.get_hits;
      Remember(r->loc, h.pointer, h.value_len);
    } else {
      *r->value_len = 0;
      if (r->status == SHMEMCACHE_NOT_FOUND) ++counters_.get_misses;
    }
  } else if (r->op == Op::kSet && r->status == SHMEMCACHE_OK) {
    Remember(r->loc, h.pointer);
  }
  return false;
}

void Client::Retire(int server, shmemcache_request* r, const ReplyHeader* reply) {
  reply_room_[server].Retire(r->reply_group);
  reply_room_[server].Release(r->reply_alone);
  in_flight_.fetch_sub(1, std::memory_order_relaxed);  // the issuer's count: Complete, after the outputs
  if (r->flags & message_flags::kMayPull) pullable_in_flight_[server].Remove(r->loc.hash);
  if (r->op == Op::kMultiGet && r->mget_items != nullptr) --multi_gets_in_flight_[server];
  if (r->flags & message_flags::kValueLanded) landing_busy_[server] = false;
  if (r->flags & message_flags::kCommit) {  // the reservation is used up; the slot may hold the next one
    // A spare the reply names outside the arena (a protocol bug) is left to the server, which gives it back at
    // this slot's next reserve: the slot is free here.
    if (reply != nullptr && (r->flags & message_flags::kReserveNext) && (reply->wire_flags & message_flags::kSpare) &&
        reply->status == SHMEMCACHE_OK && InArena(reply->number, reply->spare_bytes))
      KeepSpare(server, r, reply->number, reply->spare_bytes);
    else
      FreeSlot(server, r);
  }
}

void Client::FreeSlot(int server, const shmemcache_request* r) {
  const uint32_t bit = 1u << r->place_slot;
  if (!(reserving_[server] & bit)) return;  // freed already: the server failed (FailServer cleared every slot)
  reserving_[server] &= ~bit;
  ChargeSlot(server, r->place_slot, 0);
}

void Client::KeepSpare(int server, const shmemcache_request* r, uint64_t offset, uint32_t block_bytes) {
  const uint32_t bit = 1u << r->place_slot;
  if (!(reserving_[server] & bit)) return;  // the server failed (FailServer cleared every slot)
  reserving_[server] &= ~bit;
  spares_[server] |= bit;
  ClientPe::PlaceSlot& p = PlaceSlotOf(server, r->place_slot);
  p.spare_offset = offset;
  p.spare_bytes = block_bytes;
  // Never more than the commit's charge (its block's bytes, or the spare it used): the spare is of the class a
  // reserve of the committed pair gets, and that pair fit the block it committed into.
  ChargeSlot(server, r->place_slot, block_bytes);
}

Client::Placement Client::PlaceFor(const Operation& op, int s) const {
  // Only where this client stores into the server's memory itself: a large value (from large_value_threshold
  // on), or from kNearPlaceMinBytes a non-blocking SET's (kPlaceWindow: conduit/message.h). In a free slot of
  // the kPlaceSlots, and while the values reserved there stay within place_budget_ bytes (at most max_value_len,
  // and this PE's share of a quarter of the server's arena), or alone: the one reservation per PE and server of
  // old.
  if (op.value_len < message_flags::kNearPlaceMinBytes && op.value_len < config_.large_value_threshold)
    return {};  // the common case first: too small for either
  if ((op.place != kPlaceMay && op.place != kPlaceWindow) || direct_.local_arena(s) == nullptr) return {};
  if (!SymmetricLayout::LargeValue(config_, op.value_len) &&
      (op.place != kPlaceWindow || config_.large_value_threshold == 0 ||
       op.value_len < message_flags::kNearPlaceMinBytes || op.value_len > config_.max_value_len))
    return {};
  // Unconditional stores only: the server reserves (and may evict for) a block before it decides, so an add,
  // replace or cas placed would pay for a block and the client's copy to be told EXISTS / NOT_STORED, and an
  // eviction the reservation made could decide it (landed, the server decides first).
  if (op.op != Op::kSet &&
      !(op.op == Op::kStore && op.contract.store.mode == StoreMode::kSet && op.contract.store.cas == 0))
    return {};
  // Into a spare it fits, of at most twice its block (the pair stays in the spare's class until its next move:
  // a small value would otherwise pin a large block; the next spare is of the pair's own class). Its charge
  // stays what it is until the reply: the commit asks for the next spare without growing the budget.
  // One pass over the spares: the first that fits is taken; else the one that counts most is remembered for the
  // reserve below.
  const size_t need = BlockBytesFor(op.key_len, op.value_len);
  unsigned largest = message_flags::kPlaceSlots;
  for (uint32_t m = spares_[s]; m != 0; m &= m - 1) {
    const unsigned i = static_cast<unsigned>(__builtin_ctz(m));
    const ClientPe::PlaceSlot& spare = PlaceSlotOf(s, i);
    if (spare.spare_bytes >= need && spare.spare_bytes / 2 <= need)
      return {static_cast<uint8_t>(message_flags::kCommit | message_flags::kReserveNext), static_cast<uint8_t>(i)};
    if (largest == message_flags::kPlaceSlots || spare.charge > PlaceSlotOf(s, largest).charge) largest = i;
  }
  // A reserve: in the spare slot that counts most (the server gives that spare back), else in a free slot, while
  // everything the slots count stays within the budget (the slot's charge replaced by this value's). Or alone:
  // with nothing else of this PE in flight there, one reservation may always be taken (the one per PE and server
  // of old; a blocking SET's), in the largest spare's slot if there is one. Spares are asked for only within the
  // budget (PlaceValue), so this PE pins at most place_budget_ bytes, plus one value while it has no other
  // reservation in flight.
  const uint32_t busy = reserving_[s] | spares_[s];
  auto within = [&](unsigned i) {
    return reserved_bytes_[s] - PlaceSlotOf(s, i).charge + op.value_len <= place_budget_;
  };
  const unsigned free_slot = busy != ~uint32_t{0} ? static_cast<unsigned>(__builtin_ctz(~busy))
                                                  : message_flags::kPlaceSlots;
  // A spare slot before a free one: a spare that nothing fits now is given back by the reserve in its slot, so
  // spares of a value size this PE no longer stores do not sit out the job holding the server's cap of spares per
  // client (Server::SpareCap: a commit asking for a spare past it gets none, so every placed SET would cost two
  // messages again) and their slabs pinned.
  if (largest != message_flags::kPlaceSlots && within(largest))
    return {message_flags::kReserve, static_cast<uint8_t>(largest)};
  if (free_slot != message_flags::kPlaceSlots && within(free_slot))
    return {message_flags::kReserve, static_cast<uint8_t>(free_slot)};
  if (reserving_[s] == 0)
    return {message_flags::kReserve, static_cast<uint8_t>(largest != message_flags::kPlaceSlots ? largest : free_slot)};
  return {};
}

bool Client::PlaceValue(int server, shmemcache_request* r, const ReplyHeader& h) {
  // Its reserve is answered: the commit, if any, is posted before the lock goes.
  placing_[server].Remove(r->loc.hash);
  if (r->status == SHMEMCACHE_NO_SPACE) {
    // Refused for want of a block: reservations (this client's other slots', other clients') may pin memory
    // the SET sent unplaced would not need, whose block the server takes only when it stores it. Nothing is
    // reserved in this slot (the server gave the last one back before it tried); the value is still valid
    // (iset's, or a blocking call's: kPlaceMay, kPlaceWindow), so the SET goes again the way it goes unplaced
    // (landed, or its value in the message) and its answer is that one's: NO_SPACE only where that way
    // too finds no room. Sent from here like a commit: before any later request of its key (PostActive).
    FreeSlot(server, r);
    Operation op{r->op, r->loc, r->key_data(), r->key_len, r->value, r->value_bytes, nullptr, 0, nullptr, {}};
    op.contract.store = r->store;
    op.contract.out = r->out;  // op.place 0: not placed again
    --counters_.active_sets;   // counted once per operation (a Tally: this thread's may dip below its own count)
    if (PostActive(op, &r) == SHMEMCACHE_OK) return true;
    r->status = SHMEMCACHE_TIMEOUT;
    return false;
  }
  uint8_t* local = direct_.local_arena(server);
  const size_t key_len = r->key_len;
  if (r->status != SHMEMCACHE_OK || !(h.wire_flags & message_flags::kReserve) || local == nullptr ||
      h.pointer.block_bytes < BlockBytesFor(key_len, r->value_bytes) ||
      !InArena(h.pointer.offset, h.pointer.block_bytes)) {  // a write through the mapping: inside the arena
    // Nothing reserved (or a reply we cannot use: the server frees it at our next reserve in this slot).
    FreeSlot(server, r);
    if (r->status == SHMEMCACHE_OK) r->status = SHMEMCACHE_INVALID_ARGUMENT;
    CompleteContract(server, r, h);
    return false;
  }
  // The block is free-tagged and unindexed until the commit publishes it (store/kv_store.h, Reservations): no
  // reader or writer but this one touches its value bytes. The release fence keeps these stores before the
  // commit's (x86-TSO keeps them in order anyway; the compiler must not sink them past the post).
  std::memcpy(local + h.pointer.offset + kBlockHeaderBytes + key_len, r->value, r->value_bytes);
  std::atomic_thread_fence(std::memory_order_release);
  Operation op{r->op, r->loc, r->key_data(), key_len, r->value, r->value_bytes, nullptr, 0, nullptr, {}};
  op.contract.store = r->store;
  op.contract.out = r->out;
  op.place = kPlaceCommit;
  // The commit asks for the slot's next block (a spare: message.h kReserveNext) while the budget holds it: the
  // slot then counts this block's bytes (the spare is of its class) in place of the value's.
  if (reserved_bytes_[server] - PlaceSlotOf(server, r->place_slot).charge + h.pointer.block_bytes <= place_budget_) {
    ChargeSlot(server, r->place_slot, h.pointer.block_bytes);
    op.place = kPlaceCommitNext;
  }
  --counters_.active_sets;  // counted once per operation (a Tally: this thread's may dip below its own count)
  if (PostActive(op, &r) == SHMEMCACHE_OK) {
    ++counters_.large_sets_placed;
    return true;
  }
  FreeSlot(server, r);
  r->status = SHMEMCACHE_TIMEOUT;
  return false;
}

bool Client::Pull(int server, shmemcache_request* r, const WirePointer& p, size_t value_len) {
  BlockView view;
  // One copy: the value lands in the caller's buffer (a torn attempt may leave bytes there; the GET then asks
  // again and its answer overwrites them). From a mapped server, the first attempt inline (ReadMapped), Get's
  // retries only when it is not valid (issue 14: Get's set-up cost ~60 instructions of every pulled GET).
  DirectOps::Result result;
  if (direct_.local_arena(server) != nullptr &&
      direct_.ReadMapped(server, p.offset, p.block_bytes, r->key_data(), r->key_len, r->loc.tag, r->buffer,
                         r->buffer_len, &view) == BlockCheck::kValid) {
    result = DirectOps::Result::kDone;
  } else {
    // The server published p.version at this block for this key before it answered: Get's G0.
    result = direct_.Get(server, p.offset, p.block_bytes, r->key_data(), r->key_len, r->loc.tag, r->buffer,
                         r->buffer_len, &view, LengthHint(value_len), p.version);
  }
  if (result == DirectOps::Result::kDone) {
    // A valid copy of this key's pair at some moment since the server answered (a newer value included: this
    // client's own later writes of the key wait for this GET, PostActive). Its length may have changed since.
    ++counters_.large_gets_pulled;
    ++counters_.get_hits;
    *r->value_len = view.value_len;
    if (view.value_len > r->buffer_len) {
      r->status = SHMEMCACHE_BUFFER_TOO_SMALL;
    } else {
      r->status = SHMEMCACHE_OK;
      // fetch: the flags and token of the copy pulled (the reply's may be older).
      if (r->out.flags) *r->out.flags = view.flags;
      if (r->out.token) *r->out.token = view.token;
    }
    // Remember the accepted copy's version, not the reply's: the copy was validated at this block for this key
    // against a target word that held view.version unlocked (or, by the R-rule, against p.version itself), so
    // view.version was published for this key at this block, and it is the latest such version this client has
    // seen (>= p.version: versions only grow). The next GET's remembered version (DirectOps::Get's G0, the R-rule)
    // then matches the block when nothing was written since this copy, not only since the reply.
    WirePointer accepted = p;
    accepted.version = view.version;
    Remember(r->loc, accepted, view.value_len);
    return false;
  }
  // The block changed hands (evicted, deleted, moved) or stayed locked or torn: ask again with the value in the
  // reply. Always ends: an inline answer is never pulled.
  ++counters_.large_pull_retries;
  r->status = SHMEMCACHE_IN_PROGRESS;
  Operation op{Op::kGet, r->loc, r->key_data(), r->key_len, nullptr, 0, r->buffer, r->buffer_len, r->value_len, {}};
  op.contract.out = r->out;  // a fetch asked again still fills its flags and token
  --counters_.active_gets;  // counted once per operation (a Tally: this thread's may dip below its own count)
  if (PostActive(op, &r, /*may_pull=*/false) == SHMEMCACHE_OK) return true;
  r->status = SHMEMCACHE_TIMEOUT;
  *r->value_len = 0;
  return false;
}

void Client::ReadReplyClock(int server, bool held) {
  // One exact reading per reply chunk taken (issue 14), as the server stamps its replies (server/server.cc):
  // server_time.h needs received_ns at or after the moment the reply arrived, and every record of a packed
  // chunk arrived with it, before the reading taken once the chunk was taken (the first record it gave out,
  // when no records were held before the call that took it). A record of a chunk held from before the call
  // reuses that reading; every other reply takes a new one. Every reply this client takes from the conduit
  // comes through here (CompleteNext, PollReplies), so the kept reading is always that of the held chunk.
  uint64_t& read = pe_->reply_read_ns[server];
  if (!held || read == 0) read = clock_.Refresh();
}

Status Client::CompleteNext(int server) {
  conduit_.Flush(static_cast<size_t>(server));  // what this client staged for it goes out before it waits
  MessageView reply;
  const bool held = conduit_.HoldsRecords(static_cast<size_t>(server));
  if (conduit_.ReceiveInPlace(static_cast<size_t>(server), &reply) != SHMEMCACHE_OK) return FailServer(server);
  ReadReplyClock(server, held);
  Settle(Complete(server, reply));
  NoteCompleted(server);
  return SHMEMCACHE_OK;
}

template <typename Settled>
Status Client::CompleteMineUntil(int server, Settled settled) {
  const size_t peer = static_cast<size_t>(server);
  if (conduit_.failed(peer)) return conduit_.FailedStatus(peer);
  if (settled()) return SHMEMCACHE_OK;
  const Status status = WaitUntil(server, settled, /*take_arrived=*/false);
  if (status != SHMEMCACHE_OK) return status;
  // Settled, but the server may have failed before this thread took its lock (its requests then failed too).
  return conduit_.failed(peer) ? conduit_.FailedStatus(peer) : SHMEMCACHE_OK;
}

template <typename Settled>
Status Client::WaitUntil(int server, Settled settled, bool take_arrived) {
  // Every reply that has arrived is taken at each poll of WaitOnServer: take_arrived is the held loop's only.
  if (WaitsWithoutLock()) return WaitOnServer(server, settled);
  ServerHold hold(this, server);  // called holding none, or server's
  assert(hold.owns());
  // Under the lock, a request not settled is in the queue: each CompleteNext has a reply to wait for, bounded.
  while (!settled()) {
    const Status status = CompleteNext(server);
    if (status != SHMEMCACHE_OK) return status;  // failed: every request in flight there completed with TIMEOUT
  }
  // The replies that have arrived besides (the rest of the chunk the last reply came in, and any chunk after it):
  // completed under this one lock, rather than each under its own Wait's (issue 14: a window's Waits then mostly
  // find their request done and take no lock). No wait: only what is there is taken, at most the requests in
  // flight.
  if (take_arrived) CompleteArrived(server);
  return SHMEMCACHE_OK;
}

void Client::CompletionRole::Take() {
  ClientPe::ServerLock& lock = client_->pe_->active[server_];
  assert(!held_ && !lock.completing);
  held_ = lock.completing = true;
}

void Client::CompletionRole::Leave() {
  ClientPe::ServerLock& lock = client_->pe_->active[server_];
  assert(held_ && lock.completing);
  held_ = lock.completing = false;
  if (lock.sleepers != 0) lock.wake = true;  // one of them takes the role over (ServerHold's release wakes them)
}

Client::CompletionRole::~CompletionRole() {
  if (!held_) return;
  ServerHold hold(client_, server_);  // WaitOnServer left without giving the role up (an exception): holding none
  Leave();
}

template <typename Settled>
Status Client::WaitOnServer(int server, Settled settled) {
  const size_t peer = static_cast<size_t>(server);
  ClientPe::ServerLock& lock = pe_->active[server];
  // A sleeper's nap: it is woken when its request is done or the role comes free (NoteCompleted, the poller's
  // leaving); the nap only bounds a sleep whose wake-up was missed (none is known): 1 ms, doubled after each nap
  // that ran out up to kMaxNap, so a long wait wakes a sleeper ~30 times a second, not 1000.
  // Every completion wakes every sleeper (notify_all at the unlock, ServerHold), though only some requests were
  // done: measured (bench_throughput --mode active --threads 4 / 8 / 16, 32 B get and mix90, 2-core VM at load
  // 20-22) 0.01-0.05 sleeps per wait that were woken, or napped out, to find their request still in flight,
  // against tens to thousands of empty polls per operation by the poller: waking each sleeper alone for its own
  // request would save nothing measurable.
  constexpr std::chrono::milliseconds kMaxNap{32};
  std::chrono::milliseconds nap{1};
  CompletionRole role(this, server);  // given up however this wait ends: no sleeper is left without a poller
  bool expired = false;         // its deadline passed since it last saw a completion
  uint64_t seen = 0;            // lock.completions when it last looked
  std::optional<PeerWait> wait;  // started when a poll found nothing; restarted when anything completed
  for (;;) {
    {
      ServerHold hold(this, server);
      assert(hold.owns());
      // Under the lock a request not settled is in the queue (FailServer empties it and settles everything).
      while (!role.held() && lock.completing && !settled()) {
        ++lock.sleepers;
        std::unique_lock<std::mutex> sleep(lock.mutex, std::adopt_lock);
        if (lock.replies.wait_for(sleep, nap) == std::cv_status::timeout && nap < kMaxNap) nap *= 2;
        sleep.release();  // held again: the hold still owns it
        --lock.sleepers;
      }
      bool ok = settled();
      bool done = ok || conduit_.failed(peer);  // not ok: failed (by this thread or another)
      if (!done && !role.held()) {
        role.Take();
        seen = lock.completions;
      }
      if (!done) {
        // What any thread staged for it goes out before this one waits (at the first poll whatever is staged,
        // as CompleteNext does; later, what was staged since).
        if (!wait || conduit_.unflushed(peer) != 0) conduit_.Flush(peer);
        done = !CompleteArrived(server) || (ok = settled());  // a reply torn for op_timeout_ms fails the server
      }
      if (!done && lock.completions != seen) {
        seen = lock.completions;  // something completed (here or by another thread): a new op_timeout_ms
        wait.reset();
        expired = false;
      } else if (!done && expired) {
        const shmemcache_request* oldest = pending_[server].front();
        conduit_.GiveUp(peer, "no reply from PE " + std::to_string(server) + " to request " +
                                  std::to_string(oldest->request_id) + " within op_timeout_ms (" +
                                  std::to_string(config_.op_timeout_ms) + " ms; a blocking wait)");
        FailServer(server);
        done = true;
      }
      if (done) {
        if (role.held()) role.Leave();
        return ok ? SHMEMCACHE_OK : conduit_.FailedStatus(peer);
      }
    }
    if (!wait) wait.emplace(transport_, config_.op_timeout_ms);
    if (!wait->Next()) expired = true;  // polled once more under the lock before giving up
    if (lock.wanted.load(std::memory_order_relaxed) != 0) sched_yield();  // a thread waits to post: it goes first
  }
}

Status Client::CompleteServerSlow(int server) {
  return CompleteMineUntil(server, [&] { return MineInFlight(server) == 0; });
}

Status Client::CompleteKeySlow(const KeyLocation& loc) {
  return CompleteMineUntil(loc.server, [&] { return MineKeyFree(loc); });
}

void Client::PushStagedIfFree(int server) {
  const size_t peer = static_cast<size_t>(server);
  ServerHold hold(this, server, /*try_only=*/true);
  if (hold.owns() && !conduit_.failed(peer) && conduit_.unflushed(peer) != 0) conduit_.Flush(peer);
}

void Client::PushStagedSlow(int server) {
  const size_t peer = static_cast<size_t>(server);
  ServerHold hold(this, server);
  if (hold.owns() && !conduit_.failed(peer) && conduit_.unflushed(peer) != 0) conduit_.Flush(peer);
}

Status Client::FailServer(int server) {
  RequestQueue& q = pending_[server];
  for (size_t i = 0; i < q.size(); ++i) {
    shmemcache_request* r = q.at(i);
    r->status = SHMEMCACHE_TIMEOUT;
    if (r->op == Op::kGet) *r->value_len = 0;
    AddIssuerInFlight(r->issuer_in_flight, r->issuer_slot, -1);
    const bool part = r->batch != nullptr;  // read before `done`: then the issuer may recycle r (Complete)
    r->done.store(true, std::memory_order_release);
    if (part) Settle(r);
  }
  in_flight_.fetch_sub(q.size(), std::memory_order_relaxed);
  q.clear();
  reply_room_[server].Clear();
  pullable_in_flight_[server] = KeyHashCount<uint32_t>{};
  multi_gets_in_flight_[server] = 0;
  landing_busy_[server] = false;
  reserving_[server] = 0;
  reserved_bytes_[server] = 0;
  spares_[server] = 0;  // the server is gone, its reservations with it
  for (unsigned i = 0; i < message_flags::kPlaceSlots; ++i) PlaceSlotOf(server, i) = ClientPe::PlaceSlot{};
  placing_[server] = KeyHashCount<uint8_t>{};
  NoteCompleted(server);
  return conduit_.FailedStatus(static_cast<size_t>(server));
}

void Client::CompleteOldestAnywhere() {
  // Holding a server's lock with requests in flight there: complete on it (the lock is certainly ours; another
  // server's may be held by a thread waiting on this one's queue: client_pe.h, progress).
  const int held = held_server_;
  if (held >= 0 && !pending_[held].empty()) {
    CompleteNext(held);
    return;
  }
  // Each queue is looked at under its own lock, one at a time; the oldest found is completed if still in flight.
  int oldest = -1;
  uint64_t oldest_id = 0;
  for (int s = 0; s < config_.num_servers; ++s) {
    ServerHold hold(this, s);
    if (!hold.owns() || pending_[s].empty()) continue;
    const uint64_t id = pending_[s].front()->request_id;
    if (oldest < 0 || id < oldest_id) {
      oldest = s;
      oldest_id = id;
    }
  }
  if (oldest < 0) {
    transport_->Progress();  // every queue empty or busy: its holder is completing
    return;
  }
  ServerHold hold(this, oldest);
  if (hold.owns() && !pending_[oldest].empty()) CompleteNext(oldest);
}

void Client::PollReplies(int server, bool progress) {
  const size_t peer = static_cast<size_t>(server);
  if (!conduit_.failed(peer)) conduit_.Flush(peer);
  // Replies over transports without hardware RMA land only while this PE progresses.
  if (progress) transport_->Progress();
  if (CompleteArrived(server) && !pending_[server].empty() && ++empty_polls_ % Deadline::kPollsPerClockRead == 0) {
    // Nothing more has arrived: the oldest request in flight to this server may wait op_timeout_ms, as it would
    // in Wait, counted from the first such look at it (Test is called in tight loops: the clock is read every
    // kPollsPerClockRead empty polls; issuing reads no clock). A caller that sleeps between its tests arms
    // first, and Arm looks at every arm (completion_wake.cc): the pacing here does not stretch its deadline.
    if (Late(server, NowNanos())) GiveUpLate(server, "polled with shmemcache_test");
  }
}

bool Client::Late(int server, uint64_t now) {
  shmemcache_request* oldest = pending_[server].front();
  if (oldest->polled_since_ns == 0) oldest->polled_since_ns = now;
  // A reading older than the mark (taken before another thread's look marked it) is not late: unsigned, the
  // difference would wrap and fail a live server.
  return now > oldest->polled_since_ns && (now - oldest->polled_since_ns) / 1000000 >= config_.op_timeout_ms;
}

void Client::GiveUpLate(int server, const char* how) {
  conduit_.GiveUp(static_cast<size_t>(server), "no reply from PE " + std::to_string(server) + " to request " +
                                                   std::to_string(pending_[server].front()->request_id) +
                                                   " within op_timeout_ms (" +
                                                   std::to_string(config_.op_timeout_ms) + " ms; " + how + ")");
  FailServer(server);
}

bool Client::CompleteArrived(int server) {
  const size_t peer = static_cast<size_t>(server);
  Status s = SHMEMCACHE_OK;
  MessageView reply;
  bool any = false;
  for (bool held = conduit_.HoldsRecords(peer);
       !pending_[server].empty() && (s = conduit_.PollInPlace(peer, &reply)) == SHMEMCACHE_OK;
       held = conduit_.HoldsRecords(peer)) {
    ReadReplyClock(server, held);
    Settle(Complete(server, reply));
    any = true;
  }
  if (any) NoteCompleted(server);  // once for all of them (a window's replies mostly come here together)
  if (s != SHMEMCACHE_TIMEOUT) return true;
  FailServer(server);
  return false;
}

void Client::CompleteAll() {
  for (int s = 0; s < config_.num_servers; ++s) {
    ServerHold hold(this, s);  // called holding none
    while (!pending_[s].empty() && CompleteNext(s) == SHMEMCACHE_OK) {
    }
  }
}

Status Client::Test(shmemcache_request* r) {
  if (r->magic != shmemcache_request::kLive) return SHMEMCACHE_INVALID_ARGUMENT;
  Disarm();
  NoteTested();  // before r's done is read (conduit/completion_wake.h)
  if (r->is_batch) return TestBatch(r);
  if (!r->done.load(std::memory_order_acquire)) {
    // Progress outside the lock, not under it: the runtime's progress may yield the core (yield_when_idle), and
    // a thread that posts to this server meanwhile would sleep on the lock until this one got a core back (issue
    // 17: a gateway's threads, 0.07-0.15 futex waits per operation at 8-32 connections). What this PE staged for
    // the server goes out first, as PollReplies would send it before it progresses.
    // Never waits for the lock: while another thread holds it, it is taking in replies (perhaps this one's).
    const int server = r->loc.server;
    const size_t peer = static_cast<size_t>(server);
    if (conduit_.maps(peer) && !conduit_.WakesNone(peer)) {
      // The server writes its replies in place (stores through its mapping of this PE: no progress of this PE's
      // lands them), so the progress may come after the look: the lock is taken once, to flush and take in
      // (PollReplies), where it was taken twice (a flush, the progress, then the look).
      {
        ServerHold hold(this, server, /*try_only=*/true);
        if (hold.owns()) PollReplies(server, /*progress=*/false);
      }
      transport_->Progress();
    } else {  // replies by put: over UCX tcp they land only while this PE progresses, so it progresses first
      PushStagedIfFree(server);
      transport_->Progress();
      ServerHold hold(this, server, /*try_only=*/true);
      if (hold.owns()) PollReplies(server, /*progress=*/false);
    }
  }
  if (!r->done.load(std::memory_order_acquire)) {
    // Arm looks there, whoever issued r (conduit/completion_wake.h). r may be this thread's own: MineInFlight
    // covers it already; the bit adds one look at its server, which costs at most one "not now" (shmemcache.h,
    // IN_PROGRESS) if r completes before the arm while other threads hold that lock. Telling the issuer apart
    // would read issuer_in_flight here, for no gain in what Arm guarantees.
    NoteTestedServer(r->loc.server);
    return SHMEMCACHE_IN_PROGRESS;
  }
  return Explain(r->status, r->loc.server);
}

Status Client::WaitPending(shmemcache_request* r) {
  if (r->is_batch) return WaitBatch(r);
  // A failure completes r with TIMEOUT: its status is r's. Without the lock, other threads may post to the server
  // meanwhile (WaitOnServer).
  if (!r->done.load(std::memory_order_acquire))
    // Its status is not needed: a failed server marks r done with its own status (FailServer), read below.
    (void)WaitUntil(r->loc.server, [r] { return r->done.load(std::memory_order_acquire); }, /*take_arrived=*/true);
  const Status status = Explain(r->status, r->loc.server);
  Release(r);
  return status;
}

Status Client::WaitBatch(shmemcache_request* batch) {
  // Every part is in its server's queue until it settles, counted in the issuing thread's counts there
  // (batch_issuer: the waiter's own MineInFlight only when it issued the batch; any thread may wait for a
  // request, shmemcache.h), and is settled under that server's lock by whoever completes it (a part asked again
  // goes back into the same server's queue under the same hold, counted before the part it replaces drops:
  // issuer_in_flight.h). So one pass over the servers, each waited on until the issuer has nothing in flight
  // there (read under its lock) or the batch is done, settles every part: each wait is bounded (a failed server
  // settles its parts with TIMEOUT; requests of the issuer's that are not the batch's complete too). The loop
  // only repeats that pass should a part have been settled elsewhere while the pass ran; it stops once a pass
  // finds nothing of the issuer's.
  // Each server's wait is WaitUntil's: WaitOnServer where it may (WaitsWithoutLock), so the lock is held only to
  // poll and the other threads of the PE post to that server while this batch waits there (a part held at its
  // flash does not hold them up); the batch's parts that another thread's poll takes in are settled under the
  // lock by that thread, and its NoteCompleted wakes this one. The predicate is read only under the lock, where
  // no part is half settled. single_thread keeps the lock through each server's wait (nothing else could post).
  bool mine = true;
  while (mine && batch->batch_remaining.load(std::memory_order_acquire) > 0) {
    mine = false;
    for (int s = 0; s < config_.num_servers; ++s) {
      // A failed server completes its parts with TIMEOUT: its wait ends with nothing of the issuer's there.
      (void)WaitUntil(s, [&] {
        if (batch->batch_issuer[s].all.load(std::memory_order_acquire) == 0 ||
            batch->batch_remaining.load(std::memory_order_acquire) == 0)
          return true;
        mine = true;  // the pass must repeat
        return false;
      }, /*take_arrived=*/false);
    }
  }
  ExplainBatch(batch);  // its items may be the caller's already (a Test found it done): not read
  Release(batch);
  return SHMEMCACHE_OK;
}

}  // namespace smc
