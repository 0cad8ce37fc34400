// The server PE: runs Active operations that clients post through the conduit, on its KV store in symmetric
// memory. Single-threaded. It sleeps in a progressing wait on its doorbell (so one-sided operations of clients
// keep being served on every transport, and an idle server yields its core on oversubscribed nodes), then
// drains the rings of the clients whose ready bit is set.
#ifndef SHMEMCACHE_SERVER_SERVER_H_
#define SHMEMCACHE_SERVER_SERVER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "conduit/conduit.h"
#include "conduit/message.h"
#include "core/layout.h"
#include "core/stats.h"
#include "shmem/runtime.h"
#include "spill/spill_store.h"
#include "store/kv_store.h"

namespace smc {

class Server {
 public:
  Server(const shmemcache_config_t& config, const SymmetricLayout& layout, uint8_t* symmetric_base,
         shm::Context* ctx, int server_index, int num_clients, Stats* stats);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Puts an SSD tier behind this server (config.spill_dir): pairs that batch eviction removes from RAM are
  // written there, and an Active GET that misses RAM reads them back. CONFIG_ERROR/IO_ERROR with *error
  // when the directory is unusable.
  Status AttachSpill(std::string* error);
  // Serves until every client has said goodbye. Returns OK.
  Status Serve();
  bool done() const { return clients_done_ == num_clients_; }
  const KvStore& store() const { return store_; }

 private:
  void Handle(size_t client, const std::vector<uint8_t>& message);
  void Reply(size_t client, const ReplyHeader& header, const uint8_t* value, size_t value_len);
  int ClientPe(size_t client) const { return num_servers_ + static_cast<int>(client); }
  void UpdateStoreStats();
  // An Active GET that missed RAM: reads the pair from the SSD tier and promotes it back into RAM.
  Status ReadBack(const KeyLocation& loc, const RequestView& req, uint64_t recency, BlockPointer* ptr);
  static void OnEviction(void* self, const uint8_t* key, size_t key_len, const uint8_t* value, size_t value_len);
  // The server's current recency epoch: time ranges of recency_range_ms counted on this PE's own clock from
  // its start, beginning at 1 (0 means "unknown" on the wire).
  uint64_t CurrentEpoch() const;
  // The recency to apply for a client's request: what the client sent, never ahead of the server's epoch.
  uint64_t RecencyFor(uint64_t sent) const;
  // Tells every client the new expiration bar: a one-sided atomic set of this server's mailbox word in each
  // client's symmetric memory. It never waits on a client and always carries the latest bar (replies carry it
  // too).
  void BroadcastExpirationBar();

  shmemcache_config_t config_;
  int server_index_;
  int num_servers_;
  int num_clients_;
  int clients_done_ = 0;
  Stats* stats_;
  shm::Context* ctx_;
  shm::SelfWordAtomics atomics_;
  KvStore store_;
  Conduit conduit_;
  uint64_t* epoch_word_;
  uint64_t* expiration_bar_word_;
  uint64_t* mailbox_;  // symmetric address of this server's bar mailbox on every client
  uint64_t start_nanos_;
  uint64_t range_nanos_;
  uint64_t bar_sent_ = 0;
  std::vector<uint8_t> message_;
  std::vector<uint8_t> reply_;
  std::vector<uint8_t> scratch_;
  std::unique_ptr<SpillStore> spill_;
  std::vector<uint8_t> spill_value_;
  SpillFault pending_read_fault_ = SpillFault::kNone;  // test-only, see AttachSpill
  std::vector<size_t> ready_;
};

}  // namespace smc

#endif  // SHMEMCACHE_SERVER_SERVER_H_
