// The client PE's side of shmemcache: routes each operation to its server (jump hash), and runs it either as
// a Direct operation (one-sided, through the pointer directory) or as an Active operation (a request through
// the conduit, answered by the server). Single-threaded: one handle, one thread.
#ifndef SHMEMCACHE_CLIENT_CLIENT_H_
#define SHMEMCACHE_CLIENT_CLIENT_H_

#include <cstdint>
#include <vector>

#include "conduit/conduit.h"
#include "conduit/message.h"
#include "core/hash.h"
#include "core/layout.h"
#include "core/stats.h"
#include "shmem/runtime.h"

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

 private:
  // Sends a request to loc.server and waits for its reply; the reply's value (if any) is left in reply_.
  Status Active(Op op, const KeyLocation& loc, const void* key, size_t key_len, const void* value,
                size_t value_len, uint64_t max_value, ReplyHeader* reply);
  void ObserveServer(int server, const ReplyHeader& reply);

  shmemcache_config_t config_;
  int client_rank_;
  Stats* stats_;
  shm::Context* ctx_;
  Conduit conduit_;
  uint64_t next_request_id_ = 1;
  std::vector<uint64_t> server_epoch_;
  std::vector<uint64_t> expiration_bar_;
  std::vector<uint8_t> request_;
  std::vector<uint8_t> reply_;
};

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_CLIENT_H_
