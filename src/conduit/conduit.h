// The messaging conduit (paper §III-B2): every PE owns, in symmetric memory, one ring of `chunks_per_peer`
// message chunks of `chunk_bytes` for each peer that sends to it (servers: one per client; clients: one per
// server). A sender writes a fragment into the receiver's ring with one put; the receiver polls, reassembles,
// and zeroes the chunk, which frees it.
//
// Chunk layout:
//   offset 0   use_flag  u64  the fragment's sequence number (1, 2, ...); 0 = free
//   offset 8   checksum  u64  XXH3 of bytes [16, 32 + frag_len) (lengths, ack, payload), seeded with the sequence
//   offset 16  frag_len  u32  payload bytes in this chunk
//   offset 20  msg_len   u32  total length of the message this fragment belongs to
//   offset 24  ack       u64  piggybacked acknowledgement: the sender has consumed the receiver's messages up to
//                             this sequence number (frees chunks in the reverse ring without a round trip)
//   offset 32  payload
//   32 + align8(frag_len): comp_flag u64 = sequence number
// A get or put does not deliver bytes in address order (DESIGN.md), so a fragment is accepted only when
// use_flag, comp_flag and the checksum all agree; it is never read half-written.
//
// Flow control: sequence s lives in chunk (s-1) % chunks. The sender may have at most `chunks` fragments
// unconsumed. It learns consumption from acks piggybacked on messages in the other direction and, when out of
// chunks, by a remote get of the use_flag of a chunk a few positions ahead (zero = consumed, and so are all
// before it, because the receiver consumes in order).
//
// Servers are woken by a doorbell: after its fragments, a client fences, sets its bit in the server's ready
// bitmap and increments the doorbell word the server waits on, so the server scans only clients with work.
//
// Not thread-safe: one Conduit per PE, used by its single thread.
#ifndef SHMEMCACHE_CONDUIT_CONDUIT_H_
#define SHMEMCACHE_CONDUIT_CONDUIT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/layout.h"
#include "shmem/runtime.h"

namespace smc {

constexpr size_t kChunkHeaderBytes = 32;
constexpr size_t kChunkTrailerBytes = 8;

// The symmetric regions the conduit uses on every PE (same layout everywhere).
struct ConduitLayout {
  size_t chunk_bytes = 4096;
  unsigned chunks = 8;
  size_t peers = 1;               // rings per PE: max(clients, servers)
  uint8_t* inbox = nullptr;       // peers * chunks * chunk_bytes
  uint64_t* doorbell = nullptr;   // 1 word
  uint64_t* ready_bits = nullptr; // ReadyWords(peers) words

  static size_t ReadyWords(size_t peers) { return (peers + 63) / 64; }
  static size_t InboxBytes(size_t chunk_bytes, unsigned chunks, size_t peers) {
    return chunk_bytes * chunks * peers;
  }
  size_t payload_max() const { return chunk_bytes - kChunkHeaderBytes - kChunkTrailerBytes; }
};

// The conduit's regions inside a PE's symmetric allocation (the same on servers and clients).
inline ConduitLayout ConduitLayoutFor(const shmemcache_config_t& c, const SymmetricLayout& l, uint8_t* base) {
  ConduitLayout cl;
  cl.chunk_bytes = c.chunk_bytes;
  cl.chunks = c.chunks_per_peer;
  cl.peers = l.peers;
  cl.inbox = base + l.inbox_offset;
  cl.doorbell = reinterpret_cast<uint64_t*>(base + SymmetricLayout::kDoorbellOffset);
  cl.ready_bits = reinterpret_cast<uint64_t*>(base + l.ready_offset);
  return cl;
}

struct ConduitStats {
  uint64_t messages_sent = 0;
  uint64_t messages_received = 0;
  uint64_t fragments_sent = 0;
  uint64_t probes = 0;        // remote gets of a use_flag because the ring looked full
  uint64_t torn_waits = 0;    // fragments seen flagged but not yet complete
};

class Conduit {
 public:
  // my_slot: this PE's ring index on the receivers it sends to (its rank in its role).
  Conduit(shm::Context* ctx, const ConduitLayout& layout, size_t my_slot);
  Conduit(const Conduit&) = delete;
  Conduit& operator=(const Conduit&) = delete;

  // Sends one message to peer (ring index `peer` here, PE `pe`). Blocks, keeping the runtime progressing, while
  // the receiver's ring is full. ring_doorbell: wake a server that waits on its doorbell.
  void Send(size_t peer, int pe, const uint8_t* message, size_t len, bool ring_doorbell);
  // Non-blocking: consumes the fragments from `peer` that have arrived; true when *message holds a whole one.
  bool Poll(size_t peer, std::vector<uint8_t>* message);
  // Blocks (progressing) until a whole message from `peer` is in *message.
  void Receive(size_t peer, std::vector<uint8_t>* message);

  // Server side: waits until the doorbell moves past what was seen, then returns the ring indices whose ready
  // bit was set (and clears those bits).
  void WaitDoorbell(std::vector<size_t>* ready);
  // The same without waiting: false (and *ready empty) when the doorbell has not moved, after one progress call.
  bool PollDoorbell(std::vector<size_t>* ready);

  const ConduitStats& stats() const { return stats_; }

 private:
  struct Peer {
    uint64_t next_send = 1;   // sequence of the next fragment to send
    uint64_t acked = 0;       // fragments <= acked are known consumed by the receiver
    uint64_t next_recv = 1;   // sequence expected next from this peer
    std::vector<uint8_t> assembling;
    size_t expected_len = 0;
  };
  uint8_t* chunk(size_t ring, uint64_t seq) const {
    return layout_.inbox + (ring * layout_.chunks + (seq - 1) % layout_.chunks) * layout_.chunk_bytes;
  }
  // Fragment `seq` from peer `ring` if it has fully arrived; returns false if not (yet).
  bool FragmentReady(size_t ring, uint64_t seq, bool wait);
  void WaitForSpace(size_t peer, int pe);
  bool ProbeOnce(size_t peer, int pe);  // one remote look at the ring; true if room was found
  size_t BuildFragment(uint8_t* out, uint64_t seq, const uint8_t* data, size_t frag_len, size_t msg_len,
                       uint64_t ack) const;

  shm::Context* ctx_;
  ConduitLayout layout_;
  size_t my_slot_;
  std::vector<Peer> peers_;
  std::vector<uint8_t> staging_;
  uint64_t doorbell_seen_ = 0;
  void CollectReady(std::vector<size_t>* ready);  // after the doorbell moved: swaps out the ready bits
  ConduitStats stats_;
};

}  // namespace smc

#endif  // SHMEMCACHE_CONDUIT_CONDUIT_H_
