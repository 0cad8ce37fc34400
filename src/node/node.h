// One PE of a shmemcache job, run from a Transport: the configuration, the agreement between PEs, the symmetric
// allocation and its layout, this PE's role and the Server or Client on it, serve and the collective finalize.
// The C API (src/api) is a thin wrapper: argument checks, an OpenShmemTransport and a Node. One-process tests run
// a whole job as Nodes on the threads of a LoopbackJob (transport/loopback_transport.h).
//
// Start, steps each ending in an agreement (AgreeAll) so that every PE takes the same path (init fails together,
// issue 12):
//   1. the configuration: this PE's own checks (node/init_checks.h) and the fields themselves (PEs must pass
//      the same);
//   2. the symmetric allocation;
//   3. this PE's server or client (an unusable spill_dir, no memory for its bookkeeping);
// then a barrier (every PE's memory is zeroed before anyone sends). On a failed step every PE undoes what it set
// up (the collective frees match because every PE fails at the same step) and returns CONFIG_ERROR.
//
// Roles: PEs 0 .. num_servers-1 serve, the others are clients (client rank = PE - num_servers).
// Threads (issue 16): on a client, client() gives each calling thread its own Client (client/client.h), made on
// the thread's first call, all sharing one ClientPe (client/client_pe.h); the Clients of threads that have
// exited stay until Finalize, which destroys them all (and their contexts) before the runtime may stop. Start,
// Serve (on servers) and Finalize are called once each, in that order, and Finalize while no other thread uses
// the node (the C API's gate, api/call_gate.h); client() and FillStats may be called from any thread.
#ifndef SHMEMCACHE_NODE_NODE_H_
#define SHMEMCACHE_NODE_NODE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "client/client.h"
#include "client/client_pe.h"
#include "core/per_thread.h"
#include "core/layout.h"
#include "core/stats.h"
#include "core/test_hooks.h"
#include "server/server.h"
#include "shmemcache/shmemcache.h"
#include "transport/transport.h"

namespace smc {

class Node {
 public:
  // Collective over the transport's PEs, whatever the configuration. config: this PE's, or nullptr for
  // defaults + environment. OK with *node set (a copy of the configuration is kept, spill_dir included);
  // otherwise CONFIG_ERROR on every PE, *node untouched, LastError() saying why (on the PE that rejected) or
  // naming the PEs that rejected and the first field that differs (on the others).
  // hooks: the test switches this PE's server or client get (core/test_hooks.h; the C API passes
  // TestHooks::FromEnvironment(), one-process tests pass their own).
  static Status Start(Transport* transport, const shmemcache_config_t* config, std::unique_ptr<Node>* node,
                      const TestHooks& hooks = TestHooks());
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const shmemcache_config_t& config() const { return config_; }
  bool is_server() const { return is_server_; }
  int my_pe() const { return my_pe_; }
  int n_pes() const { return n_pes_; }
  int client_rank() const { return is_server_ ? -1 : my_pe_ - config_.num_servers; }
  int num_clients() const { return n_pes_ - config_.num_servers; }
  bool finalized() const { return finalized_; }

  // The calling thread's client (nullptr on a server or after Finalize), made on its first call: std::bad_alloc
  // when that fails. And this PE's server (nullptr on a client or after Finalize).
  Client* client() {
    if (is_server_ || finalized_ || client_pe_ == nullptr) return nullptr;
    return clients_.Get([this] { return MakeClient(); });
  }
  Server* server() { return server_.get(); }

  // Servers: serves until every client has finalized (Server::Serve). The first call's status is kept; later
  // calls return it without serving again.
  Status Serve();
  // Collective. Clients complete their requests in flight and tell every server they are done; servers serve
  // until every client has (Serve, if not done yet); then the context, the server or client and the symmetric
  // allocation go. Never waits on a failed server. A second call does nothing.
  void Finalize();

  // Fills *stats with this PE's counters (shmemcache_get_stats), pulled from the components now (core/stats.h);
  // a client first takes in the expiration bars its servers have pushed (a local read), so the bar counts are
  // current. After Finalize: the values it ended with.
  void FillStats(shmemcache_stats_t* stats);

  // For tests: the transport, this PE's symmetric allocation and its layout (valid until Finalize).
  Transport* transport() const { return transport_; }
  const SymmetricLayout& layout() const { return layout_; }
  uint8_t* symmetric() const { return symmetric_; }

 private:
  Node(Transport* transport, const shmemcache_config_t& config, const SymmetricLayout& layout, uint8_t* symmetric,
       const TestHooks& hooks);
  // Step 3: zeroes what this PE uses of its symmetric memory, creates the context and the server (with its SSD
  // tier) or the client. Local. OK, or CONFIG_ERROR with the reason in LastError().
  Status SetUp();
  // A new Client for the calling thread: its own context where the PE's main context is the library's own
  // and the runtime gives it one (thread_multiple: a thread-safe one; shmem/openshmem_transport.h), else
  // the main context (behind the ClientPe's lock when other threads may share it).
  std::unique_ptr<Client> MakeClient();
  // Releases what SetUp built (local) and the symmetric allocation (collective).
  void TearDown();

  Transport* transport_;
  shmemcache_config_t config_;
  std::string spill_dir_;  // owned copy of config_.spill_dir
  TestHooks hooks_;
  SymmetricLayout layout_;
  uint8_t* symmetric_;
  int my_pe_;
  int n_pes_;
  bool is_server_;
  bool finalized_ = false;
  bool served_ = false;
  Status serve_status_ = SHMEMCACHE_OK;  // what the (one) serve returned
  Stats final_stats_{};  // taken by Finalize, before the components go
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ClientPe> client_pe_;  // clients: what their threads share
  PerThread<Client> clients_;            // clients: one per thread that called
  bool oversubscribed_ = false;          // config oversubscribed resolved (SetUp; core/cpu_share.h)
  bool cpu_word_atomics_ = false;        // block words through CPU atomics (SetUp: the job's agreement, local_access)
  bool threads_share_ctx_ = false;       // the runtime allows every thread (thread_multiple)
};

}  // namespace smc

#endif  // SHMEMCACHE_NODE_NODE_H_
