// The client PE's side of shmemcache: routes each operation to its server (jump hash), and runs it either as
// a Direct operation (one-sided, through the pointer directory) or as an Active operation (a request through
// the conduit, answered by the server). Single-threaded: one handle, one thread.
#ifndef SHMEMCACHE_CLIENT_CLIENT_H_
#define SHMEMCACHE_CLIENT_CLIENT_H_

#include <cstdint>
#include <vector>

#include "client/direct_ops.h"
#include "client/pointer_directory.h"
#include "conduit/conduit.h"
#include "conduit/message.h"
#include "core/hash.h"
#include "core/layout.h"
#include "core/stats.h"
#include "shmem/runtime.h"
#include "store/hash_table.h"

namespace smc {

class Client {
 public:
  Client(const shmemcache_config_t& config, const SymmetricLayout& layout, uint8_t* symmetric_base,
         shm::Context* ctx, int client_rank, Stats* stats);
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Arguments are already checked by the API layer (non-empty key within limits, value within limits).
  Status Set(const void* key, size_t key_len, const void* value, size_t value_len);
  Status Get(const void* key, size_t key_len, void* buffer, size_t buffer_len, size_t* value_len);
  Status Delete(const void* key, size_t key_len);
  // Tells every server this client is done (no reply).
  void SayGoodbye();
  // Takes in the expiration bars every server has pushed to this client. Operations do this for their own
  // server; exposed for tests and for callers that want bars before their next operation.
  void PollNotices();
  uint64_t known_expiration_bar(int server) const { return expiration_bar_[server]; }
  const PointerDirectory& directory() const { return directory_; }

 private:
  // Sends a request to loc.server and waits for its reply; the reply's value (if any) is left in reply_.
  Status Active(Op op, const KeyLocation& loc, const void* key, size_t key_len, const void* value,
                size_t value_len, uint64_t max_value, ReplyHeader* reply);
  void ObserveServer(int server, const ReplyHeader& reply);
  // Direct GET through a pointer; returns true (and fills the outputs) when it produced the answer.
  bool TryDirectGet(const KeyLocation& loc, uint64_t offset, uint32_t block_bytes, const void* key,
                    size_t key_len, void* buffer, size_t buffer_len, size_t* value_len, Status* status);
  // Fetches the key's hash-table set with one get and looks for its tag; true with the block if found.
  bool FindInRemoteSet(const KeyLocation& loc, uint64_t* offset, uint32_t* block_bytes);
  uint64_t CurrentRange() const;
  void Remember(const KeyLocation& loc, const WirePointer& p);
  // This client's estimate of a server's current epoch: the last epoch it heard plus the ranges that passed on
  // this client's own clock since (no cross-PE clock comparison).
  uint64_t EstimatedEpoch(int server) const;
  // Non-intrusive recency update: CAS the block's recency word from what this client last knew to the
  // current epoch, only when the range changed. Returns the recency the block now has, as far as known.
  uint64_t UpdateRecency(int server, uint64_t offset, uint64_t known);
  // Reads the expiration bar this server last pushed into this client's mailbox (a local load).
  void DrainNotices(int server);

  shmemcache_config_t config_;
  int client_rank_;
  Stats* stats_;
  shm::Context* ctx_;
  std::vector<uint64_t> expiration_bar_;  // per server; outlives directory_, which points to it
  Conduit conduit_;
  DirectOps direct_;
  PointerDirectory directory_;
  std::vector<size_t> class_bytes_;  // block size of each slab class, as the servers compute it
  uint8_t* table_;                   // symmetric address of the servers' hash tables
  std::vector<HashWay> set_buffer_;
  uint64_t next_request_id_ = 1;
  std::vector<uint64_t> server_epoch_;
  std::vector<uint64_t> epoch_heard_at_;  // EpochClockNanos() when server_epoch_ was learned
  uint64_t range_nanos_;
  uint8_t* arena_;
  volatile uint64_t* mailboxes_;  // one per server, written by the servers
  std::vector<uint8_t> request_;
  std::vector<uint8_t> reply_;
};

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_CLIENT_H_
