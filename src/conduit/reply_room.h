// Flow control of a client's reply ring, counted in bytes (issue 14). A server that finds a client's reply ring
// full waits for the client (and fails it after op_timeout_ms), so a client keeps in flight to a server only
// requests whose replies, at their largest, certainly fit the ring's chunks. Small replies share packed chunks
// (fragment.h), so counting a chunk per reply would cap a client at `chunks` small requests in flight per server.
//
// What the count relies on (the sender's rules, Conduit::Post and Server::ServeReady):
//   1. A message goes out packed iff it fits one record (fragment::Packs); packed records fill the open chunk in
//      order and a record that does not fit starts the next chunk (next-fit); a fragmented message takes its own
//      chunks and closes the open one. Only a Flush closes a chunk otherwise.
//   2. The server answers in the order it takes requests, and takes the records of one request chunk in one pass,
//      with no Flush to that client between their replies (it flushes at the end of the pass). A request chunk's
//      requests are a *group*, named by the chunk's sequence (Conduit::last_staged after Post).
//   3. A reply sent outside its group's pass (a GET read back from flash) is charged again on its own (Charge).
// Under 1 and 2, the replies of a group occupy at most the chunks next-fit packing of their largest lengths takes
// when the group starts on a fresh chunk: the server may start it in a chunk the group before it left open, may
// pack several groups of a pass together, may send shorter replies or skip some (rule 3): none of these can make
// next-fit use more chunks (a bin that starts at a later item ends at a later item or the same one).
// A group's charge is released when its last request retires: a chunk still in the ring holds a reply to a
// request not yet retired (the receiver frees a packed chunk as it hands out its last record, before that
// record's request retires).
//
// Pure accounting: no SHMEM, unit-tested in one process (tests/unit/reply_room_test.cc). Not thread-safe: the
// client's PE lock serializes it with the conduit.
#ifndef SHMEMCACHE_CONDUIT_REPLY_ROOM_H_
#define SHMEMCACHE_CONDUIT_REPLY_ROOM_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "conduit/fragment.h"

namespace smc {

class ReplyRoom {
 public:
  // chunks: the reply ring's chunks; payload_max: payload bytes per chunk (ConduitLayout::payload_max).
  ReplyRoom(unsigned chunks, size_t payload_max) : chunks_(chunks), payload_max_(payload_max) {}

  // Chunks a reply of at most len bytes adds when its request joins group `group` (0: a group of its own, or a
  // reply charged on its own). Capped at the ring: a reply larger than the ring is let in once nothing else is
  // in flight (the receiver, waiting for it, consumes it as it lands).
  unsigned Cost(uint64_t group, size_t len) const {
    Group g;
    g.fill = kClosed;
    if (const Group* found = group != 0 ? Find(group) : nullptr) g = *found;
    return std::min(Place(&g, len), chunks_);
  }
  // Cost(0, len): the chunks of a reply in a group of its own.
  unsigned CostAlone(size_t len) const {
    return fragment::Packs(len, payload_max_) ? 1 : std::min(FragmentsOf(len), chunks_);
  }
  // True when a charge of `chunks` more fits beside what is charged now.
  bool Fits(unsigned chunks) const { return used_ + chunks <= chunks_; }

  // A request of group (> 0) whose reply takes at most len bytes is in flight: charges what Cost said. Inline
  // (issue 14: once per Active request): requests mostly join the newest group (the chunk being staged).
  void Add(uint64_t group, size_t len) {
    Group* g = !groups_.empty() && groups_.back().seq == group ? &groups_.back() : NewOrFound(group);
    const unsigned chunks = std::min(Place(g, len), chunks_);
    g->chunks += chunks;
    ++g->requests;
    used_ += chunks;
  }
  // A charge of its own, for a reply that may be sent outside its group (rule 3); released by Release.
  void Charge(unsigned chunks) { used_ += chunks; }
  void Release(unsigned chunks) { used_ -= chunks; }
  // A request of group retired (its reply was taken): the group's charge goes with its last request. Inline
  // (issue 14: once per Active reply): replies mostly retire the oldest group.
  void Retire(uint64_t group) {
    Group* g = !groups_.empty() && groups_.front().seq == group ? &groups_.front() : Find(group);
    if (g == nullptr || --g->requests != 0) return;
    used_ -= g->chunks;
    groups_.erase(groups_.begin() + (g - groups_.data()));
  }
  // Everything in flight is gone (the server failed).
  void Clear();

  unsigned used() const { return used_; }
  unsigned chunks() const { return chunks_; }

 private:
  struct Group {
    uint64_t seq = 0;
    unsigned requests = 0;
    unsigned chunks = 0;  // charged to this group
    size_t fill = 0;      // payload bytes used in its last chunk; kClosed: the next reply starts a chunk
  };
  static constexpr size_t kClosed = SIZE_MAX;
  // Chunks a reply of len bytes adds to a group in state g; *g becomes the state after it.
  unsigned Place(Group* g, size_t len) const {
    if (fragment::Packs(len, payload_max_)) {
      const size_t record = fragment::RecordBytes(len);
      if (g->fill != kClosed && g->fill + record <= payload_max_) {
        g->fill += record;
        return 0;
      }
      g->fill = record;
      return 1;
    }
    return PlaceFragmented(g, len);
  }
  unsigned PlaceFragmented(Group* g, size_t len) const;  // Place of a reply that does not pack
  unsigned FragmentsOf(size_t len) const;  // the chunks of a reply that does not pack, capped at the ring
  Group* NewOrFound(uint64_t group);  // Add's group when it is not the newest: found, or a new one
  Group* Find(uint64_t group);
  const Group* Find(uint64_t group) const;

  unsigned chunks_;
  size_t payload_max_;
  unsigned used_ = 0;
  std::vector<Group> groups_;  // groups with requests in flight, by seq, oldest first (a ring's worth at most)
};

}  // namespace smc

#endif  // SHMEMCACHE_CONDUIT_REPLY_ROOM_H_
