// The client PE's side of shmemcache: routes each operation to its server (jump hash), and runs it either as
// a Direct operation (one-sided, through the pointer directory) or as an Active operation (a request through
// the conduit, answered by the server). Single-threaded: one handle, one thread.
//
// Failure (issue 12): when a wait for a server times out (the conduit's waits are bounded by op_timeout_ms; a
// request polled with Test counts from the oldest request in flight to that server), the server is failed for
// good: every request in flight to it completes with TIMEOUT, and every later operation that needs it returns
// TIMEOUT at once (before any Direct or Active step), with LastError() saying what was seen.
#ifndef SHMEMCACHE_CLIENT_CLIENT_H_
#define SHMEMCACHE_CLIENT_CLIENT_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "client/direct_ops.h"
#include "client/pointer_directory.h"
#include "client/request.h"
#include "conduit/conduit.h"
#include "conduit/message.h"
#include "core/clock.h"
#include "core/hash.h"
#include "core/layout.h"
#include "core/stats.h"
#include "shmem/runtime.h"
#include "store/hash_table.h"

namespace smc {

class Client {
 public:
  Client(const shmemcache_config_t& config, const SymmetricLayout& layout, uint8_t* symmetric_base,
         shm::Context* ctx, int client_rank, Stats* stats, EpochClock clock);
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Arguments are already checked by the API layer (non-empty key within limits, value within limits).
  Status Set(const void* key, size_t key_len, const void* value, size_t value_len);
  Status Get(const void* key, size_t key_len, void* buffer, size_t buffer_len, size_t* value_len);
  Status Delete(const void* key, size_t key_len);
  // Tells every server this client is done (Conduit::Depart: no reply, no wait, failed servers included).
  // Completes every request still in flight first (each wait bounded by op_timeout_ms).
  void SayGoodbye();

  // Non-blocking operations (client/nonblocking.cc). Issue runs the same decision process as the blocking
  // calls: a Direct operation completes at once (no request to a server is in flight for that server, so
  // issue order is kept); everything else is an Active request posted now and completed by Test/Wait, with
  // replies matched to requests by request_id. Arguments are already checked.
  Status Issue(Op op, const void* key, size_t key_len, const void* value, size_t value_len, void* buffer,
               size_t buffer_len, size_t* out_len, shmemcache_request** request);
  Status Test(shmemcache_request* request);  // never blocks; does not release
  Status Wait(shmemcache_request* request);  // blocks (bounded); releases
  // Completes every request in flight (finalize): with its reply, or with TIMEOUT if its server failed.
  void CompleteAll();
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
  // Non-blocking machinery.
  shmemcache_request* NewRequest();
  void Release(shmemcache_request* r);  // back to the pool
  // Waits for the next reply from server and completes its request (usually the oldest in flight there; a GET
  // read from flash may be answered after later requests). OK, or TIMEOUT (FailServer has run).
  Status CompleteNext(int server);
  void CompleteOldestAnywhere();       // CompleteNext on the server whose oldest request is the oldest of all
  // Completes the replies that have arrived, without blocking; fails the server when its oldest request has
  // waited longer than op_timeout_ms.
  void PollReplies(int server);
  void Complete(int server);           // reply_ holds a reply from server: completes the request it answers
  // Completes every request in flight to server. OK when it can take a new operation; TIMEOUT when it failed
  // (now or earlier).
  Status CompleteServer(int server);
  // The server's conduit has failed: completes every request in flight to it with TIMEOUT and returns TIMEOUT
  // with LastError() saying what failed it.
  Status FailServer(int server);
  unsigned ReplyChunks(Op op, size_t buffer_len) const;
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
  std::vector<uint64_t> epoch_heard_at_;  // clock_.Nanos() when server_epoch_ was learned
  EpochClock clock_;
  uint64_t range_nanos_;
  uint8_t* arena_;
  volatile uint64_t* mailboxes_;  // one per server, written by the servers
  std::vector<uint8_t> request_;
  std::vector<uint8_t> reply_;
  // Requests in flight, per server, in issue order (a server answers one client's requests in order, except
  // GETs it reads from flash, which it answers when the read finishes).
  std::vector<std::deque<shmemcache_request*>> pending_;
  std::vector<unsigned> pending_chunks_;  // reply chunks those requests may take
  size_t in_flight_ = 0;
  uint32_t empty_polls_ = 0;  // PollReplies calls that found nothing (paces its clock reads)
  std::deque<shmemcache_request> request_pool_;  // stable addresses; recycled through free_requests_
  shmemcache_request* free_requests_ = nullptr;
};

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_CLIENT_H_
