// Client: the multi-set message (conduit/multi_set_message.h, issue 15). The Active SETs of one mset window for
// one server go in as few messages as its reply ring allows (a part each), and each part's one reply gives every
// item its status and its block (as a SET reply does), instead of one request and one reply per key.
//
// A part is an ordinary request record of its issuing thread (request.h: op kMultiGet, mset_items set; no batch
// part), waited for by RunActive (batch.cc) like a single SET; it counts in its issuer's in-flight counts as a
// request that may touch any key. Whoever takes in its reply (the issuer, or another thread holding the server's
// lock) writes its items' statuses and caches the blocks in its own directory, before `done` (requests.cc).
//
// Flow control: the reply's size is fixed by the item count (MultiSetReplyBytes), so a part reserves exactly that
// much of its server's reply ring. A part carries as many pairs as its request packs in one chunk and its reply
// fits the ring; a pair that packs in no chunk goes in a part of its own, and one that could not travel alone
// in the ring (MultiSetCarries) keeps the single SET.
#include <cassert>

#include "client/client.h"
#include "conduit/fragment.h"
#include "conduit/multi_set_message.h"

namespace smc {

bool Client::MultiSetCarries(const Operation& op) const {
  if (op.op != Op::kSet || SymmetricLayout::LargeValue(config_, op.value_len)) return false;
  const size_t ring = RingPayloadBytes(config_);
  return sizeof(RequestHeader) + MultiSetPairBytes(op.key_len, op.value_len) <= ring &&
         MultiSetReplyBytes(1) <= ring;
}

void Client::PostMultiSets(int server, const size_t* slots, size_t n, shmemcache_mset_item_t* items) {
  ServerHold hold(this, server);  // called holding none
  assert(hold.owns());
  const size_t ring = RingPayloadBytes(config_);
  const size_t payload = ChunkPayloadBytes(config_);
  size_t from = 0;
  while (from < n) {
    // This part's pairs: as many as its request packs in one chunk (a larger request is cut into fragments
    // that the server copies back together, and it starts only once the last has come: Active mset of 128 x
    // 1 KiB on shared memory, p50, 42-46 us per chunk against 51-53 us per ring) and its reply fits the ring;
    // at least one (MultiSetCarries: then it may take the ring).
    size_t request_bytes = sizeof(RequestHeader), to = from;
    for (; to < n; ++to) {
      const Operation& op = batch_[slots[to]].op;
      const size_t more = MultiSetPairBytes(op.key_len, op.value_len);
      if (to > from && (!fragment::Packs(request_bytes + more, payload) || MultiSetReplyBytes(to - from + 1) > ring))
        break;
      request_bytes += more;
    }
    const size_t reply_bytes = MultiSetReplyBytes(to - from);
    while (in_flight_ >= config_.max_outstanding) CompleteOldestAnywhere();
    // As each single SET does (PostActive): a write waits for this client's pull-eligible GETs of its key.
    Status status = conduit_.failed(static_cast<size_t>(server)) ? SHMEMCACHE_TIMEOUT : SHMEMCACHE_OK;
    for (size_t k = from; k < to && status == SHMEMCACHE_OK; ++k) {
      while (status == SHMEMCACHE_OK && WriteWaitsForPull(server, batch_[slots[k]].op.loc.hash))
        status = CompleteNext(server) == SHMEMCACHE_OK ? SHMEMCACHE_OK : SHMEMCACHE_TIMEOUT;
    }
    if (status == SHMEMCACHE_OK) status = MakeReplyRoom(server, reply_bytes, 0);
    shmemcache_request* part = NewRequest();
    part->op = Op::kMultiGet;  // the record's op for the reply's path (request.h); the wire says kMultiSet
    part->loc.server = server;
    part->mset_items = items;
    part->mget_indices.clear();
    for (size_t k = from; k < to; ++k) part->mget_indices.push_back(batch_[slots[k]].item);
    if (status == SHMEMCACHE_OK) {
      const RequestHeader h = PartHeader(server, reply_bytes);
      MultiSetRequestWriter writer;
      writer.Begin(&request_[server], h);
      for (size_t k = from; k < to; ++k) {
        const Operation& op = batch_[slots[k]].op;
        writer.Add(op.key, op.key_len, op.value, op.value_len);
      }
      // Counted as PostActive counts a single SET: once the reply room is made and the request goes to the ring,
      // whatever the post or the server then answers (a post that fails, a NO_SPACE item): active_sets counts the
      // SETs this client sent Active, and a multi-set is the same SETs in fewer messages. (It counted only after a
      // successful post, so the one failure both can meet, a ring write that fails the server, was counted by the
      // single SET and not by the multi-set.)
      counters_.active_sets += to - from;
      status = PostPart(server, part, h.request_id, reply_bytes);
    }
    if (status != SHMEMCACHE_OK) {  // the server failed: nothing in flight, every item takes its status
      part->status = status;
      part->done.store(true, std::memory_order_relaxed);
    }
    for (size_t k = from; k < to; ++k) {
      BatchSlot& s = batch_[slots[k]];
      s.path = BatchSlot::Path::kPacked;
      s.scratch = batch_parts_.size();
    }
    batch_parts_.push_back(BatchPart{part, SHMEMCACHE_IN_PROGRESS});
    from = to;
    // Sent once a burst's worth is staged (as PostActive does): the server starts on these parts while this
    // client stages the next (never over UCX tcp, where each send waits for the server: burst_flush_ 0).
    if (burst_flush_ != 0 && conduit_.unflushed_bytes(static_cast<size_t>(server)) >= kBurstFlushBytes)
      conduit_.Flush(static_cast<size_t>(server));
  }
  conduit_.Flush(static_cast<size_t>(server));  // the server starts on them while the next server's are staged
}

void Client::CompleteMultiSet(shmemcache_request* r, const ReplyHeader& h) {
  if (r->status != SHMEMCACHE_OK) return;  // refused whole: RunActive gives its status to every item
  shmemcache_mset_item_t* items = r->mset_items;
  const std::vector<size_t>& indices = r->mget_indices;
  const size_t n = indices.size();
  const std::vector<uint8_t>& reply = reply_[r->loc.server];
  const size_t body = reply.size() - sizeof(h);
  const uint8_t* answers_at = reply.data() + sizeof(h);
  const size_t answers_bytes = h.value_len == body ? body : 0;
  // Checked whole first: a malformed reply (a protocol bug) gives no item an answer and caches no block.
  MultiSetReplyReader check(answers_at, answers_bytes, h.flags, static_cast<uint32_t>(n));
  MultiSetAnswer a;
  while (check.Next(&a)) {
  }
  if (check.malformed()) {
    for (size_t k = 0; k < n; ++k) items[indices[k]].status = SHMEMCACHE_INVALID_ARGUMENT;
    return;
  }
  MultiSetReplyReader answers(answers_at, answers_bytes, h.flags, static_cast<uint32_t>(n));
  for (size_t k = 0; k < n && answers.Next(&a); ++k) {
    shmemcache_mset_item_t& it = items[indices[k]];
    it.status = static_cast<Status>(a.status);
    if (it.status == SHMEMCACHE_OK) Remember(Locate(it.key, it.key_len, config_.num_servers), a.pointer);
  }
}

}  // namespace smc
