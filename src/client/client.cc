#include "client/client.h"

#include <cstring>

#include "core/clock.h"
#include "store/slab.h"

namespace smc {

Client::Client(const shmemcache_config_t& config, const SymmetricLayout& layout, uint8_t* base,
               shm::Context* ctx, int client_rank, Stats* stats, EpochClock clock)
    : config_(config),
      client_rank_(client_rank),
      stats_(stats),
      ctx_(ctx),
      expiration_bar_(config.num_servers, 0),
      conduit_(ctx, ConduitLayoutFor(config, layout, base), static_cast<size_t>(client_rank), /*first_peer_pe=*/0,
               config.op_timeout_ms),
      direct_(ctx, base + layout.arena_offset, stats),
      directory_(config.directory_entries, config.directory_ways, &expiration_bar_),
      class_bytes_(SlabClassSizes(config.slab_growth_factor, BlockBytesFor(config.max_key_len,
                                                                           config.max_value_len))),
      table_(base + layout.table_offset),
      set_buffer_(config.hash_ways),
      server_epoch_(config.num_servers, 0),
      epoch_heard_at_(config.num_servers, 0),
      clock_(clock),
      range_nanos_(uint64_t{config.recency_range_ms} * 1000000),
      arena_(base + layout.arena_offset),
      mailboxes_(reinterpret_cast<volatile uint64_t*>(base + layout.mailbox_offset)),
      pending_(config.num_servers),
      pending_chunks_(config.num_servers, 0) {}

void Client::ObserveServer(int server, const ReplyHeader& reply) {
  // A notice may have waited in the ring since it was sent: adopt its epoch only if it is ahead of what this
  // client already estimates, so the estimate never moves backwards.
  if (reply.epoch > EstimatedEpoch(server)) {
    server_epoch_[server] = reply.epoch;
    epoch_heard_at_[server] = clock_.Nanos();
  }
  if (reply.expiration_bar > expiration_bar_[server]) {
    expiration_bar_[server] = reply.expiration_bar;
    ++stats_->expiration_bar_updates;
  }
}

uint64_t Client::EstimatedEpoch(int server) const {
  if (server_epoch_[server] == 0) return 0;  // never heard: let the server decide
  return server_epoch_[server] + (clock_.Nanos() - epoch_heard_at_[server]) / range_nanos_;
}

uint64_t Client::UpdateRecency(int server, uint64_t offset, uint64_t known) {
  uint64_t now = EstimatedEpoch(server);
  if (now <= known) return known;
  uint64_t* word = reinterpret_cast<uint64_t*>(arena_ + offset + kRecencyOffset);
  uint64_t seen = ctx_->CompareSwap(word, known, now, server);
  ++stats_->recency_updates;
  return seen == known ? now : seen;  // someone else moved it (or the block changed): keep what is there
}

void Client::DrainNotices(int server) {
  uint64_t bar = mailboxes_[server];
  if (bar > expiration_bar_[server]) {
    expiration_bar_[server] = bar;
    ++stats_->expiration_bar_updates;
  }
  stats_->directory_expired = directory_.stats().expired;
}

Status Client::Active(Op op, const KeyLocation& loc, const void* key, size_t key_len, const void* value,
                      size_t value_len, uint64_t max_value, ReplyHeader* reply) {
  RequestHeader h{};
  h.op = static_cast<uint8_t>(op);
  h.key_len = static_cast<uint32_t>(key_len);
  h.value_len = static_cast<uint32_t>(value_len);
  h.request_id = next_request_id_++;
  h.recency = EstimatedEpoch(loc.server);
  h.max_value = max_value;
  EncodeRequest(&request_, h, key, key_len, value, value_len);
  const size_t peer = static_cast<size_t>(loc.server);
  if (conduit_.Send(peer, request_.data(), request_.size(), true) != SHMEMCACHE_OK ||
      conduit_.Receive(peer, &reply_) != SHMEMCACHE_OK)
    return FailServer(loc.server);
  if (reply_.size() < sizeof(ReplyHeader)) return SHMEMCACHE_INVALID_ARGUMENT;
  std::memcpy(reply, reply_.data(), sizeof(ReplyHeader));
  ObserveServer(loc.server, *reply);
  stats_->messages_sent = conduit_.stats().messages_sent;
  stats_->messages_received = conduit_.stats().messages_received;
  return static_cast<Status>(reply->status);
}

uint64_t Client::CurrentRange() const { return NowNanos() / (uint64_t{config_.recency_range_ms} * 1000000); }

void Client::Remember(const KeyLocation& loc, const WirePointer& p) {
  if (config_.direct_ops && p.valid)
    directory_.Update(loc, p.offset, p.block_bytes, p.version, CurrentRange(), p.recency);
}

// Decision process (paper §III-B): a pointer in the directory -> Direct SET if the new pair fits its block;
// otherwise (or if the Direct SET cannot complete) an Active SET, whose reply installs the pointer.
Status Client::Set(const void* key, size_t key_len, const void* value, size_t value_len) {
  ++stats_->sets;
  KeyLocation loc = Locate(key, key_len, config_.num_servers);
  Status ready = CompleteServer(loc.server);  // requests issued earlier take effect first
  if (ready != SHMEMCACHE_OK) return ready;
  if (config_.direct_ops) {
    DrainNotices(loc.server);
    DirectoryEntry* e = directory_.Lookup(loc);
    if (e != nullptr) {
      ++stats_->directory_hits;
      if (BlockBytesFor(key_len, value_len) <= e->block_bytes) {
        uint64_t version;
        DirectOps::Result r = direct_.Set(loc.server, e->offset, e->block_bytes, e->version, key, key_len, value,
                                          value_len, loc.tag, &version);
        if (r == DirectOps::Result::kDone) {
          ++stats_->direct_sets;
          uint64_t recency = UpdateRecency(loc.server, e->offset, e->server_recency);
          directory_.Update(loc, e->offset, e->block_bytes, version, CurrentRange(), recency);
          return SHMEMCACHE_OK;
        }
        if (r == DirectOps::Result::kGiveUp) ++stats_->direct_fallbacks;
        else directory_.Remove(loc);
      }
    } else {
      ++stats_->directory_misses;
    }
  }
  ReplyHeader reply;
  ++stats_->active_sets;
  Status s = Active(Op::kSet, loc, key, key_len, value, value_len, 0, &reply);
  if (s == SHMEMCACHE_OK) Remember(loc, reply.pointer);
  return s;
}

bool Client::TryDirectGet(const KeyLocation& loc, uint64_t offset, uint32_t block_bytes, const void* key,
                          size_t key_len, void* buffer, size_t buffer_len, size_t* value_len, Status* status) {
  BlockView view;
  DirectOps::Result r = direct_.Get(loc.server, offset, block_bytes, key, key_len, loc.tag, &view);
  if (r != DirectOps::Result::kDone) {
    if (r == DirectOps::Result::kNotThisKey) directory_.Remove(loc);
    else ++stats_->direct_fallbacks;
    return false;
  }
  ++stats_->direct_gets;
  ++stats_->get_hits;
  *value_len = view.value_len;
  if (view.value_len > buffer_len) {
    *status = SHMEMCACHE_BUFFER_TOO_SMALL;
  } else {
    if (view.value_len) std::memcpy(buffer, view.value, view.value_len);
    *status = SHMEMCACHE_OK;
  }
  uint64_t recency = UpdateRecency(loc.server, offset, view.recency);
  directory_.Update(loc, offset, block_bytes, view.version, CurrentRange(), recency);
  return true;
}

bool Client::FindInRemoteSet(const KeyLocation& loc, uint64_t* offset, uint32_t* block_bytes) {
  size_t set = SetOf(loc.hash, config_.hash_sets);
  size_t bytes = sizeof(HashWay) * config_.hash_ways;
  ctx_->Get(set_buffer_.data(), table_ + set * bytes, bytes, loc.server);
  for (const HashWay& w : set_buffer_) {
    if (!WayValid(w.meta) || WayTag(w.meta) != loc.tag) continue;
    uint8_t cls = WayClass(w.meta);
    if (cls >= class_bytes_.size()) continue;  // a torn way; the Active path will answer
    *offset = w.offset;
    *block_bytes = static_cast<uint32_t>(class_bytes_[cls]);
    return true;
  }
  return false;  // no match, or the pair sits in the server-local overflow list: never chased remotely
}

// Decision process: a pointer in the directory -> Direct GET. Otherwise fetch the key's hash-table set with
// one get; a tag match -> Direct GET, else Active GET (whose reply installs the pointer).
Status Client::Get(const void* key, size_t key_len, void* buffer, size_t buffer_len, size_t* value_len) {
  ++stats_->gets;
  KeyLocation loc = Locate(key, key_len, config_.num_servers);
  Status status = CompleteServer(loc.server);
  if (status != SHMEMCACHE_OK) {
    *value_len = 0;
    return status;
  }
  if (config_.direct_ops) {
    DrainNotices(loc.server);
    DirectoryEntry* e = directory_.Lookup(loc);
    if (e != nullptr) {
      ++stats_->directory_hits;
      if (TryDirectGet(loc, e->offset, e->block_bytes, key, key_len, buffer, buffer_len, value_len, &status))
        return status;
    } else {
      ++stats_->directory_misses;
      uint64_t offset;
      uint32_t block_bytes;
      if (FindInRemoteSet(loc, &offset, &block_bytes) &&
          TryDirectGet(loc, offset, block_bytes, key, key_len, buffer, buffer_len, value_len, &status))
        return status;
    }
  }
  ReplyHeader reply;
  ++stats_->active_gets;
  Status s = Active(Op::kGet, loc, key, key_len, nullptr, 0, buffer_len, &reply);
  if (s == SHMEMCACHE_OK) {
    if (reply_.size() != sizeof(ReplyHeader) + reply.value_len) return SHMEMCACHE_INVALID_ARGUMENT;
    if (reply.value_len) std::memcpy(buffer, reply_.data() + sizeof(ReplyHeader), reply.value_len);
    *value_len = reply.value_len;
    ++stats_->get_hits;
    Remember(loc, reply.pointer);
  } else if (s == SHMEMCACHE_BUFFER_TOO_SMALL) {
    *value_len = reply.value_len;
    ++stats_->get_hits;
    Remember(loc, reply.pointer);
  } else {
    *value_len = 0;
    if (s == SHMEMCACHE_NOT_FOUND) ++stats_->get_misses;
  }
  return s;
}

Status Client::Delete(const void* key, size_t key_len) {
  ++stats_->deletes;
  KeyLocation loc = Locate(key, key_len, config_.num_servers);
  Status ready = CompleteServer(loc.server);
  if (ready != SHMEMCACHE_OK) return ready;
  ReplyHeader reply;
  if (config_.direct_ops) directory_.Remove(loc);
  return Active(Op::kDelete, loc, key, key_len, nullptr, 0, 0, &reply);
}

void Client::PollNotices() {
  for (int s = 0; s < config_.num_servers; ++s) DrainNotices(s);
}

void Client::SayGoodbye() {
  CompleteAll();
  for (int s = 0; s < config_.num_servers; ++s) conduit_.Depart(static_cast<size_t>(s));
  ctx_->Quiet();
}

}  // namespace smc
