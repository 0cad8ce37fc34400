#include "client/client.h"

#include <cstring>

namespace smc {

namespace {
ConduitLayout ClientConduit(const shmemcache_config_t& c, const SymmetricLayout& l, uint8_t* base) {
  ConduitLayout cl;
  cl.chunk_bytes = c.chunk_bytes;
  cl.chunks = c.chunks_per_peer;
  cl.peers = l.peers;
  cl.inbox = base + l.inbox_offset;
  cl.doorbell = reinterpret_cast<uint64_t*>(base + SymmetricLayout::kDoorbellOffset);
  cl.ready_bits = reinterpret_cast<uint64_t*>(base + l.ready_offset);
  return cl;
}
}  // namespace

Client::Client(const shmemcache_config_t& config, const SymmetricLayout& layout, uint8_t* base,
               shm::Context* ctx, int client_rank, Stats* stats)
    : config_(config),
      client_rank_(client_rank),
      stats_(stats),
      ctx_(ctx),
      conduit_(ctx, ClientConduit(config, layout, base), static_cast<size_t>(client_rank)),
      server_epoch_(config.num_servers, 0),
      expiration_bar_(config.num_servers, 0) {}

void Client::ObserveServer(int server, const ReplyHeader& reply) {
  if (reply.epoch > server_epoch_[server]) server_epoch_[server] = reply.epoch;
  if (reply.expiration_bar > expiration_bar_[server]) expiration_bar_[server] = reply.expiration_bar;
}

Status Client::Active(Op op, const KeyLocation& loc, const void* key, size_t key_len, const void* value,
                      size_t value_len, uint64_t max_value, ReplyHeader* reply) {
  RequestHeader h{};
  h.op = static_cast<uint8_t>(op);
  h.key_len = static_cast<uint32_t>(key_len);
  h.value_len = static_cast<uint32_t>(value_len);
  h.request_id = next_request_id_++;
  h.recency = server_epoch_[loc.server];
  h.max_value = max_value;
  EncodeRequest(&request_, h, key, key_len, value, value_len);
  conduit_.Send(static_cast<size_t>(loc.server), loc.server, request_.data(), request_.size(), true);
  conduit_.Receive(static_cast<size_t>(loc.server), &reply_);
  if (reply_.size() < sizeof(ReplyHeader)) return SHMEMCACHE_INVALID_ARGUMENT;
  std::memcpy(reply, reply_.data(), sizeof(ReplyHeader));
  ObserveServer(loc.server, *reply);
  stats_->messages_sent = conduit_.stats().messages_sent;
  stats_->messages_received = conduit_.stats().messages_received;
  return static_cast<Status>(reply->status);
}

Status Client::Set(const void* key, size_t key_len, const void* value, size_t value_len) {
  ++stats_->sets;
  KeyLocation loc = Locate(key, key_len, config_.num_servers);
  ReplyHeader reply;
  ++stats_->active_sets;
  return Active(Op::kSet, loc, key, key_len, value, value_len, 0, &reply);
}

Status Client::Get(const void* key, size_t key_len, void* buffer, size_t buffer_len, size_t* value_len) {
  ++stats_->gets;
  KeyLocation loc = Locate(key, key_len, config_.num_servers);
  ReplyHeader reply;
  ++stats_->active_gets;
  Status s = Active(Op::kGet, loc, key, key_len, nullptr, 0, buffer_len, &reply);
  if (s == SHMEMCACHE_OK) {
    if (reply_.size() != sizeof(ReplyHeader) + reply.value_len) return SHMEMCACHE_INVALID_ARGUMENT;
    if (reply.value_len) std::memcpy(buffer, reply_.data() + sizeof(ReplyHeader), reply.value_len);
    *value_len = reply.value_len;
    ++stats_->get_hits;
  } else if (s == SHMEMCACHE_BUFFER_TOO_SMALL) {
    *value_len = reply.value_len;
    ++stats_->get_hits;
  } else {
    *value_len = 0;
    if (s == SHMEMCACHE_NOT_FOUND) ++stats_->get_misses;
  }
  return s;
}

Status Client::Delete(const void* key, size_t key_len) {
  ++stats_->deletes;
  KeyLocation loc = Locate(key, key_len, config_.num_servers);
  ReplyHeader reply;
  return Active(Op::kDelete, loc, key, key_len, nullptr, 0, 0, &reply);
}

void Client::SayGoodbye() {
  RequestHeader h{};
  h.op = static_cast<uint8_t>(Op::kBye);
  h.request_id = next_request_id_++;
  EncodeRequest(&request_, h, nullptr, 0, nullptr, 0);
  for (int s = 0; s < config_.num_servers; ++s) {
    conduit_.Send(static_cast<size_t>(s), s, request_.data(), request_.size(), true);
  }
  ctx_->Quiet();
}

}  // namespace smc
