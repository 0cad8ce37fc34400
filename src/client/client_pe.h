// What the threads of one client PE share (issue 16). Each thread that calls the library gets its own Client
// (client.h: its context, Direct operations, pointer directory, request pool, buffers, counters); they all hold
// one ClientPe: the conduit to the servers and everything that goes with its rings.
//
// Locking:
//   active   one recursive mutex over the conduit and the queues of requests in flight (every ring, every
//            server): posting a request, taking in replies (whoever holds it completes every thread's
//            requests whose replies it reads), failing a server. Held while a blocking call waits for a reply
//            (bounded by op_timeout_ms). A leaf apart from `ctx` below. Direct operations never take it.
//   ctx      the PE's main context, used through a SerializedContext (its own mutex per operation): the
//            conduit's context, and the context of every thread that could not get one of its own.
// Readers without the lock: in_flight (atomic), conduit.failed() (atomic), epochs and server_time (SeqLocked,
// written under `active`).
#ifndef SHMEMCACHE_CLIENT_CLIENT_PE_H_
#define SHMEMCACHE_CLIENT_CLIENT_PE_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "client/request_queue.h"
#include "conduit/conduit.h"
#include "conduit/reply_room.h"
#include "core/layout.h"
#include "core/seq_locked.h"
#include "core/server_time.h"
#include "transport/serialized_context.h"
#include "transport/transport.h"

namespace smc {

// A server's recency epoch as this client PE last heard it, and its clock reading (CoarseClock::Refresh) then.
struct EpochHeard {
  uint64_t epoch = 0;
  uint64_t heard_at = 0;
};

struct ClientPe {
  // main_ctx: the PE's context (Node's), outliving this object.
  ClientPe(const shmemcache_config_t& config, const SymmetricLayout& layout, uint8_t* base, Transport* transport,
           Context* main_ctx, int client_rank)
      : ctx(main_ctx),
        conduit(transport, &ctx, ConduitLayoutFor(config, layout, base), static_cast<size_t>(client_rank),
                /*first_peer_pe=*/0, config.op_timeout_ms),
        pending(config.num_servers),
        reply_room(config.num_servers, ReplyRoom(config.chunks_per_peer, config.chunk_bytes - kChunkHeaderBytes -
                                                                              kChunkTrailerBytes)),
        landing_busy(config.num_servers, 0),
        pullable_in_flight(config.num_servers, 0),
        epochs(config.num_servers),
        server_time(config.num_servers) {}
  ClientPe(const ClientPe&) = delete;
  ClientPe& operator=(const ClientPe&) = delete;

  SerializedContext ctx;
  std::recursive_mutex active;
  // ---- under `active` ----
  Conduit conduit;
  // Requests in flight, per server, in issue order (a server answers one client's requests in order, except
  // GETs it reads from flash, which it answers when the read finishes). Every thread's.
  std::vector<RequestQueue> pending;
  std::vector<ReplyRoom> reply_room;         // per server: the reply ring's room those requests may take
  std::vector<uint8_t> landing_busy;         // per server: a landed SET is in flight (our slot there is in use)
  std::vector<unsigned> pullable_in_flight;  // per server: kMayPull GETs in flight
  uint64_t next_request_id = 1;
  std::vector<uint8_t> request;              // the message being encoded
  std::vector<uint8_t> reply;                // the reply being decoded
  // ---- written under `active`, read by any thread ----
  std::atomic<size_t> in_flight{0};          // requests in flight, every thread's (max_outstanding)
  std::vector<SeqLocked<EpochHeard>> epochs;              // per server
  std::vector<SeqLocked<ServerTimeSample>> server_time;   // per server; received_ns 0: none yet
};

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_CLIENT_PE_H_
