#include "conduit/conduit.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "core/bytes.h"
#include "core/event_fd.h"

namespace smc {

Conduit::Conduit(Transport* transport, Context* ctx, const ConduitLayout& layout, size_t my_slot,
                 int first_peer_pe, uint64_t op_timeout_ms, bool map_rings, bool cpu_atomics)
    : transport_(transport),
      ctx_(ctx), layout_(layout), my_slot_(my_slot), first_peer_pe_(first_peer_pe), op_timeout_ms_(op_timeout_ms),
      peers_(layout.peers), cpu_atomics_(cpu_atomics), peer_doorbell_(layout.peers), peer_sleeping_(layout.peers) {
  map_rings_ = map_rings;
  for (size_t peer = 0; map_rings && peer < layout.peers && PeerPe(peer) < transport->NumPes(); ++peer) {
    if (PeerPe(peer) == transport->MyPe()) continue;
    Peer& p = peers_[peer];
    uint8_t* ring = layout.inbox + my_slot * layout.chunks * layout.chunk_bytes;
    p.mapped_ring = static_cast<uint8_t*>(transport->LocalPointer(ring, PeerPe(peer)));
    if (p.mapped_ring && layout.wake_line)
      p.peer_wake_line = static_cast<const uint64_t*>(transport->LocalPointer(layout.wake_line, PeerPe(peer)));
    if (!p.mapped_ring || !cpu_atomics) continue;
    p.mapped_doorbell = static_cast<uint64_t*>(transport->LocalPointer(layout.doorbell, PeerPe(peer)));
    p.mapped_ready = static_cast<uint64_t*>(transport->LocalPointer(layout.ready_bits + my_slot / 64, PeerPe(peer)));
    if (!p.mapped_doorbell || !p.mapped_ready) p.mapped_doorbell = p.mapped_ready = nullptr;
  }
  for (size_t peer = 0; layout.sleeping && peer < layout.peers && PeerPe(peer) < transport->NumPes(); ++peer) {
    if (PeerPe(peer) == transport->MyPe()) continue;
    peer_doorbell_[peer] = static_cast<const uint64_t*>(transport->LocalPointer(layout.doorbell, PeerPe(peer)));
    peer_sleeping_[peer] = static_cast<const uint64_t*>(transport->LocalPointer(layout.sleeping, PeerPe(peer)));
  }
}

Conduit::~Conduit() {
  for (Peer& p : peers_) {
    if (p.wake_fd >= 0) CloseFd(p.wake_fd);
  }
}

void Conduit::WakeArmedClients(bool refuse) {
  refuse_wakes_ = refuse;
  if (layout_.wake_line == nullptr) return;
  // Without map_rings (this PE's local_access 0) it writes every reply by put, so it wakes no client, even one
  // that maps it (local_access differs per PE): say so on its own line, where such a client's Arm reads it
  // (completion_wake.h). Beyond kMaxServers it never accepts either (clients know that from its slot).
  if (!map_rings_) __atomic_store_n(&layout_.wake_line[WakeLine::kWakesNone], 1, __ATOMIC_RELEASE);
  if (!map_rings_ || my_slot_ >= WakeLine::kMaxServers) return;
  pid_namespace_ = PidNamespace();
  for (size_t peer = 0; peer < peers_.size(); ++peer) {
    Peer& p = peers_[peer];
    if (p.mapped_ring == nullptr) continue;  // replies go by put: the client cannot be woken (it answers NOT_SUPPORTED)
    p.mapped_wake = static_cast<uint64_t*>(transport_->LocalPointer(layout_.wake_line, PeerPe(peer)));
  }
}

void Conduit::WakeIfArmed(Peer& p, uint64_t registration) {
  uint64_t* line = p.mapped_wake;
  if (registration != p.wake_registration) {  // a new registration (a handle's first, or a later handle's)
    if (p.wake_fd >= 0) CloseFd(p.wake_fd);
    p.wake_registration = registration;
    p.wake_fd = -1;
    // Acquire: the client's pid namespace, stored before its registration (released), read after it.
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    const uint64_t client_namespace = __atomic_load_n(&line[WakeLine::kPidNamespace], __ATOMIC_RELAXED);
    // Another pid namespace (containers sharing memory): the pid would name some other process here.
    if (!refuse_wakes_ && pid_namespace_ != 0 && client_namespace == pid_namespace_)
      p.wake_fd = TakeFdOfProcess(WakeLine::Pid(registration), WakeLine::Fd(registration));
    if (p.wake_fd >= 0 && !IsEventFd(p.wake_fd)) {  // the pid reused, the number closed and reused: not its own
      CloseFd(p.wake_fd);
      p.wake_fd = -1;
    }
    if (p.wake_fd < 0) {  // this server's own refusal: the client's arms fail only for requests in flight here
      WakeLine::Say(line, WakeLine::kRefused, my_slot_);
      return;
    }
    WakeLine::Say(line, WakeLine::kAccepted, my_slot_);
  }
  if (p.wake_fd < 0) return;  // refused
  // Dekker with the client's arm (completion_wake.h): the use_flags published above before armed is read.
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (!WakeLine::ClaimWake(line)) return;  // not armed, or written since the arm
  SignalEventFd(p.wake_fd);
  ++p.stats.client_wakes;
}

Status Conduit::GiveUp(size_t peer, const std::string& what) {
  Peer& p = peers_[peer];
  if (!p.failed) {  // the first failure stays: failed() readers without the owner's lock read `failure` then
    p.failure = "PE " + std::to_string(transport_->MyPe()) + ": " + what;
    __atomic_store_n(&p.failed, true, __ATOMIC_RELEASE);
  }
  return FailedStatus(peer);
}

Status Conduit::FailedStatus(size_t peer) const { return Fail(SHMEMCACHE_TIMEOUT, peers_[peer].failure); }

bool Conduit::ProbeOnce(size_t peer) {
  Peer& p = peers_[peer];
  // Probe a chunk a few positions ahead of the last known free one first, then the oldest.
  const uint64_t far = std::max<uint64_t>(1, layout_.chunks / 2);
  uint64_t outstanding = p.next_send - 1 - p.acked;
  for (uint64_t probe : {p.acked + std::min(far, outstanding), p.acked + 1}) {
    uint64_t flag;
    const size_t index = (probe - 1) % layout_.chunks;
    if (p.mapped_ring) {  // in place: through the mapping (a zero read here orders this PE's next writes there)
      flag = __atomic_load_n(reinterpret_cast<const uint64_t*>(p.mapped_ring + index * layout_.chunk_bytes),
                             __ATOMIC_ACQUIRE);
    } else {
      ctx_->Get(&flag, layout_.inbox + (my_slot_ * layout_.chunks + index) * layout_.chunk_bytes, sizeof(flag),
                PeerPe(peer));
    }
    ++p.stats.probes;
    if (flag != probe) {  // zeroed: consumed, and so is everything before it
      p.acked = std::max(p.acked, probe);
      return true;
    }
  }
  return false;
}

Status Conduit::WaitForSpace(size_t peer) {
  Peer& p = peers_[peer];
  if (p.next_send - 1 - p.acked < layout_.chunks) return SHMEMCACHE_OK;
  PeerWait wait(transport_, op_timeout_ms_);
  while (!ProbeOnce(peer)) {
    if (!wait.Next()) {
      return GiveUp(peer, "its ring on PE " + std::to_string(PeerPe(peer)) + " (ring " + std::to_string(my_slot_) +
                                " there) stayed full for op_timeout_ms (" + std::to_string(op_timeout_ms_) +
                                " ms): PE " + std::to_string(PeerPe(peer)) + " has not consumed sequence " +
                                std::to_string(p.acked + 1) + " (sequences up to " +
                                std::to_string(p.next_send - 1) + " sent)");
    }
  }
  return SHMEMCACHE_OK;
}

Status Conduit::Send(size_t peer, const uint8_t* message, size_t len, bool ring_doorbell) {
  Status s = Post(peer, message, len, ring_doorbell);
  if (s == SHMEMCACHE_OK) Flush(peer);
  return s;
}

Status Conduit::StageChunk(size_t peer) {
  Peer& p = peers_[peer];
  SealPack(p);
  if (p.next_send - 1 - p.acked >= layout_.chunks) {
    // The ring is full (staged fragments included): what is staged lands and the doorbell rings before this
    // PE waits for the receiver to consume.
    Flush(peer);
    Status s = WaitForSpace(peer);
    if (s != SHMEMCACHE_OK) return s;
  }
  if (p.staged_count == 0) p.staged_from = p.next_send;
  p.listed = true;
  ++p.staged_count;
  ++p.next_send;
  return SHMEMCACHE_OK;
}

void Conduit::SealPack(Peer& p) {
  if (!p.pack_open) return;
  uint8_t* out = StagedChunk(p, p.staged_count - 1);
  const uint64_t seq = p.staged_from + p.staged_count - 1;
  p.staged_tail_bytes = p.mapped_ring ? fragment::SealInPlace(out, seq, p.pack_used, fragment::kPackedMsgLen,
                                                              p.next_recv - 1)
                                      : fragment::Seal(out, seq, p.pack_used, fragment::kPackedMsgLen, p.next_recv - 1);
  p.pack_open = false;
}

uint8_t* Conduit::ReserveStaging(size_t peer, size_t len, bool ring_doorbell, Status* status) {
  Peer& p = peers_[peer];
  *status = SHMEMCACHE_OK;
  if (p.failed) {
    *status = FailedStatus(peer);
    return nullptr;
  }
  const size_t payload_max = layout_.payload_max();
  if (!fragment::Packs(len, payload_max)) return nullptr;
  if (!p.pack_open || p.pack_used + fragment::RecordBytes(len) > payload_max) {  // the open chunk, or a new one
    // The staging is allocated by the first message staged; an open chunk lies in it already (issue 14: the test
    // was ~5 instructions per reply).
    if (p.staged.empty() && !p.mapped_ring) p.staged.resize(layout_.chunk_bytes * layout_.chunks);
    *status = StageChunk(peer);
    if (*status != SHMEMCACHE_OK) return nullptr;
    p.pack_open = true;
    p.pack_used = 0;
    p.pack_chunk = StagedChunk(p, p.staged_count - 1);
  }
  return AppendRecord(p, len, ring_doorbell);
}

void Conduit::Trim(size_t peer, size_t len) {
  Peer& p = peers_[peer];
  assert(p.pack_open && p.reserved != nullptr && len <= p.reserved_len);
  p.pack_used -= fragment::RecordBytes(p.reserved_len) - fragment::RecordBytes(len);
  fragment::TrimRecord(p.reserved, len);
  p.unflushed_bytes -= p.reserved_len - len;
  p.reserved_len = len;
}

Status Conduit::Post(size_t peer, const uint8_t* message, size_t len, bool ring_doorbell) {
  const Part parts[] = {{message, len}};
  return PostParts(peer, parts, ring_doorbell);
}

Status Conduit::PostFragments(size_t peer, const Part* parts, size_t len, bool ring_doorbell) {
  Peer& p = peers_[peer];
  const size_t payload_max = layout_.payload_max();
  if (p.staged.empty() && !p.mapped_ring) p.staged.resize(layout_.chunk_bytes * layout_.chunks);
  size_t part = 0, part_at = 0;  // the next byte to send: parts[part], part_at bytes in
  size_t sent = 0;
  while (sent < len) {
    Status s = StageChunk(peer);
    if (s != SHMEMCACHE_OK) return s;
    const size_t frag = std::min(payload_max, len - sent);
    uint8_t* out = StagedChunk(p, p.staged_count - 1);
    for (size_t filled = 0; filled < frag;) {  // the fragment's payload, from as many parts as it spans
      while (parts[part].len == part_at) {
        ++part;
        part_at = 0;
      }
      const size_t n = std::min(frag - filled, parts[part].len - part_at);
      std::memcpy(out + kChunkHeaderBytes + filled, static_cast<const uint8_t*>(parts[part].data) + part_at, n);
      filled += n;
      part_at += n;
    }
    p.staged_tail_bytes = p.mapped_ring ? fragment::SealInPlace(out, p.next_send - 1, frag, len, p.next_recv - 1)
                                        : fragment::Seal(out, p.next_send - 1, frag, len, p.next_recv - 1);
    p.doorbell_owed |= ring_doorbell;  // (a Flush on a full ring in StageChunk cleared it for what went before)
    sent += frag;
  }
  ++p.unflushed;
  p.unflushed_bytes += len;
  ++p.stats.messages_sent;
  return SHMEMCACHE_OK;
}

void Conduit::Flush(size_t peer) {
  Peer& p = peers_[peer];
  if (p.failed) return;  // never written again
  const int pe = PeerPe(peer);
  SealPack(p);
  p.unflushed = 0;
  p.unflushed_bytes = 0;
  if (p.staged_count != 0 && p.mapped_ring) {
    // In place: every byte is in the peer's ring already; the use_flags, in sequence order, publish them.
    for (uint64_t i = 0; i < p.staged_count; ++i) fragment::Publish(StagedChunk(p, i), p.staged_from + i);
    p.stats.fragments_sent += p.staged_count;
    p.stats.in_place += p.staged_count;
    p.staged_count = 0;
    if (p.mapped_wake != nullptr) {  // a client's wake line (WakeArmedClients): one relaxed load unless registered
      const uint64_t registration = __atomic_load_n(&p.mapped_wake[WakeLine::kRegistration], __ATOMIC_RELAXED);
      if (registration != 0) WakeIfArmed(p, registration);
    }
  } else if (p.staged_count != 0) {
    // Consecutive sequences sit in consecutive chunks of the remote ring: one put, two where the ring wraps.
    const uint64_t count = p.staged_count;
    const size_t start_index = (p.staged_from - 1) % layout_.chunks;
    const uint64_t head = std::min<uint64_t>(count, layout_.chunks - start_index);
    auto bytes_of = [&](uint64_t n, bool ends_staging) {
      return (n - 1) * layout_.chunk_bytes + (ends_staging ? p.staged_tail_bytes : layout_.chunk_bytes);
    };
    uint8_t* ring = layout_.inbox + my_slot_ * layout_.chunks * layout_.chunk_bytes;
    ctx_->Put(ring + start_index * layout_.chunk_bytes, p.staged.data(), bytes_of(head, head == count), pe);
    ++p.stats.puts;
    if (count > head) {
      ctx_->Put(ring, p.staged.data() + head * layout_.chunk_bytes, bytes_of(count - head, true), pe);
      ++p.stats.puts;
    }
    p.stats.fragments_sent += count;
    p.staged_count = 0;
  }
  if (p.doorbell_owed) RingDoorbell(peer);
}

void Conduit::RingDoorbell(size_t peer) {
  Peer& p = peers_[peer];
  p.doorbell_owed = false;
  const uint64_t bit = 1ull << (my_slot_ % 64);
  if (p.mapped_ready) {
    // CPU atomics (see the top): the fetch-OR is a release after the use_flags' stores, the add follows it.
    if (__atomic_fetch_or(p.mapped_ready, bit, __ATOMIC_SEQ_CST) & bit) {
      ++p.stats.rings_skipped;  // not yet swapped out: the pass that swaps it reads this burst
      return;
    }
    __atomic_fetch_add(p.mapped_doorbell, 1, __ATOMIC_SEQ_CST);
    ++p.stats.doorbells;
    // No lost wake-up (doorbell_sleep.h): the add is complete (a locked instruction) before the sleeping word
    // is read.
    if (peer_sleeping_[peer] != nullptr && WakeSleeperAfterAdd(p.mapped_doorbell, peer_sleeping_[peer]))
      ++p.stats.wakes;
    return;
  }
  const int pe = PeerPe(peer);
  ctx_->Fence();  // the fragments land before the doorbell
  ctx_->Or(layout_.ready_bits + my_slot_ / 64, bit, pe);
  ctx_->Fence();
  Ring(peer);
  ++p.stats.doorbells;
}

void Conduit::FlushAll() {
  // A scan of every peer rather than a list of those staged to: a list shared by all peers would be the one
  // state across peers on the sending path (threads, conduit.h). A server has a few dozen peers at most.
  for (size_t peer = 0; peer < peers_.size(); ++peer) {
    Peer& p = peers_[peer];
    if (!p.listed) continue;
    if (!p.failed) Flush(peer);
    p.listed = false;
  }
}

ConduitStats Conduit::stats() const {
  ConduitStats sum;
  for (const Peer& p : peers_) {
    sum.messages_sent += p.stats.messages_sent;
    sum.messages_received += p.stats.messages_received;
    sum.fragments_sent += p.stats.fragments_sent;
    sum.probes += p.stats.probes;
    sum.torn_waits += p.stats.torn_waits;
    sum.puts += p.stats.puts;
    sum.doorbells += p.stats.doorbells;
    sum.wakes += p.stats.wakes;
    sum.rings_skipped += p.stats.rings_skipped;
    sum.in_place += p.stats.in_place;
    sum.client_wakes += p.stats.client_wakes;
  }
  return sum;
}

void Conduit::Consume(Peer& p, uint8_t* c) {
  size_t frag_len = LoadU32(c + fragment::kFragLenOffset);
  size_t msg_len = LoadU32(c + fragment::kMsgLenOffset);
  p.acked = std::max(p.acked, LoadU64(c + fragment::kAckOffset));
  if (msg_len == fragment::kPackedMsgLen && frag_len != 0) {  // whole messages: handed out by TakeRecord
    p.held = p.next_recv;
    p.held_chunk = c;
    p.held_len = frag_len;
    p.held_at = 0;
    return;
  }
  if (msg_len != fragment::kPackedMsgLen) {
    if (p.assembling.empty()) {
      p.expected_len = msg_len;
      p.assembling.reserve(msg_len);
    }
    p.assembling.insert(p.assembling.end(), c + kChunkHeaderBytes, c + kChunkHeaderBytes + frag_len);
  }
  Free(p, c);
}

void Conduit::Free(Peer& p, uint8_t* c) {
  // The comp_flag is zeroed too, so that a later shorter fragment cannot meet a stale one.
  StoreU64(c + fragment::CompFlagOffset(LoadU32(c + fragment::kFragLenOffset)), 0);
  __atomic_store_n(reinterpret_cast<uint64_t*>(c + fragment::kUseFlagOffset), 0, __ATOMIC_RELEASE);
  ++p.next_recv;
}

Status Conduit::TakeRecord(size_t ring, MessageView* message) { return TakeRecordInline(ring, message); }

Status Conduit::TakeRecordInline(size_t ring, MessageView* message) {
  Peer& p = peers_[ring];
  if (p.held == 0) return SHMEMCACHE_IN_PROGRESS;
  uint8_t* c = p.held_chunk;
  const size_t left = p.held_len - p.held_at;
  const uint8_t* record = c + kChunkHeaderBytes + p.held_at;
  const size_t len = left >= fragment::kRecordHeaderBytes ? LoadU32(record) : left;
  if (left < fragment::kRecordHeaderBytes || fragment::RecordBytes(len) > left)  // checksummed: a sender bug
    return RecordOverrun(ring, len, left);
  *message = MessageView{record + fragment::kRecordHeaderBytes, len};
  p.held_at += fragment::RecordBytes(len);
  p.lent_chunk = p.held_at >= p.held_len;  // its last record: the chunk goes back to the sender at Release
  ++p.stats.messages_received;
  return SHMEMCACHE_OK;
}

Status Conduit::RecordOverrun(size_t ring, size_t len, size_t left) {
  peers_[ring].held = 0;
  return GiveUp(ring, "a packed chunk from PE " + std::to_string(PeerPe(ring)) + " (ring " + std::to_string(ring) +
                          ") holds a record of " + std::to_string(len) + " bytes with " + std::to_string(left) +
                          " left");
}

void Conduit::ReleaseLent(size_t ring) {
  Peer& p = peers_[ring];
  if (p.lent_chunk) {
    p.lent_chunk = false;
    if (!p.failed) Free(p, p.held_chunk);  // a failed peer's ring is never written again
    p.held = 0;
  }
  if (p.lent_assembly) {
    p.lent_assembly = false;
    p.assembling.clear();
  }
}

Status Conduit::Collect(size_t ring, MessageView* message, std::optional<PeerWait>* wait) {
  Peer& p = peers_[ring];
  Release(ring);  // the message lent last
  for (;;) {
    Status taken = TakeRecordInline(ring, message);
    if (taken != SHMEMCACHE_IN_PROGRESS) return taken;
    const uint64_t seq = p.next_recv;
    uint8_t* c = chunk(ring, seq);
    if (__atomic_load_n(reinterpret_cast<uint64_t*>(c + fragment::kUseFlagOffset), __ATOMIC_ACQUIRE) != seq)
      return SHMEMCACHE_IN_PROGRESS;
    // Flagged. The rest of the fragment may still be landing: bytes arrive in no particular order, and on
    // transports that copy on the receiver's side (UCX tcp) only while this PE progresses.
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (!fragment::Complete(c, seq, layout_.payload_max())) {
      const Status landed = WaitLanded(ring, c, seq, wait);
      if (landed != SHMEMCACHE_OK) return landed;
    }
    const bool packed = LoadU32(c + fragment::kMsgLenOffset) == fragment::kPackedMsgLen;
    Consume(p, c);
    if (packed) continue;  // its records come out at the top of the loop
    if (p.assembling.size() >= p.expected_len) {
      *message = MessageView{p.assembling.data(), p.assembling.size()};
      p.lent_assembly = true;
      ++p.stats.messages_received;
      return SHMEMCACHE_OK;
    }
  }
}

Status Conduit::WaitLanded(size_t ring, const uint8_t* c, uint64_t seq, std::optional<PeerWait>* wait) {
  Peer& p = peers_[ring];
  for (;;) {
    ++p.stats.torn_waits;
    if (!*wait) wait->emplace(transport_, op_timeout_ms_);
    if (!(*wait)->Next()) {
      return GiveUp(ring, "a message from PE " + std::to_string(PeerPe(ring)) + " (ring " + std::to_string(ring) +
                       ", sequence " + std::to_string(seq) +
                       ") was flagged but did not complete within op_timeout_ms (" + std::to_string(op_timeout_ms_) +
                       " ms); the chunk holds " + fragment::Describe(c, seq, layout_.payload_max()));
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (fragment::Complete(c, seq, layout_.payload_max())) return SHMEMCACHE_OK;
  }
}

Status Conduit::PollArriving(size_t ring, MessageView* message) {
  if (peers_[ring].failed) return FailedStatus(ring);
  std::optional<PeerWait> wait;  // started only if a fragment is caught landing
  return Collect(ring, message, &wait);
}

Status Conduit::ReceiveInPlace(size_t ring, MessageView* message) {
  if (peers_[ring].failed) return FailedStatus(ring);
  std::optional<PeerWait> wait;  // started (a clock reading) only when the message has not arrived yet
  for (;;) {
    Status s = Collect(ring, message, &wait);
    if (s != SHMEMCACHE_IN_PROGRESS) return s;
    if (!wait) wait.emplace(transport_, op_timeout_ms_);
    if (!wait->Next()) {
      const uint64_t seq = peers_[ring].next_recv;
      return GiveUp(ring, "no message from PE " + std::to_string(PeerPe(ring)) + " within op_timeout_ms (" +
                                std::to_string(op_timeout_ms_) + " ms): ring " + std::to_string(ring) +
                                " waits for sequence " + std::to_string(seq) + ", whose chunk holds " +
                                fragment::Describe(chunk(ring, seq), seq, layout_.payload_max()));
    }
  }
}

Status Conduit::CopyOut(size_t ring, Status s, const MessageView& view, std::vector<uint8_t>* message) {
  if (s != SHMEMCACHE_OK) return s;
  Peer& p = peers_[ring];
  if (p.lent_assembly) {  // a message of fragments: its assembly buffer changes hands, no copy
    message->swap(p.assembling);
    p.assembling.clear();
    p.lent_assembly = false;
  } else {
    message->assign(view.data, view.data + view.len);
  }
  Release(ring);
  return SHMEMCACHE_OK;
}

Status Conduit::Poll(size_t ring, std::vector<uint8_t>* message) {
  MessageView view;
  return CopyOut(ring, PollInPlace(ring, &view), view, message);
}

Status Conduit::Receive(size_t ring, std::vector<uint8_t>* message) {
  MessageView view;
  return CopyOut(ring, ReceiveInPlace(ring, &view), view, message);
}

void Conduit::Depart(size_t peer) {
  const int pe = PeerPe(peer);
  ctx_->Add(layout_.departures, 1, pe);
  ctx_->Fence();  // the count lands before the doorbell that makes the server look at it
  Ring(peer);
}

void Conduit::Ring(size_t peer) {
  if (peer_sleeping_[peer] == nullptr || peer_doorbell_[peer] == nullptr) {
    ctx_->Add(layout_.doorbell, 1, PeerPe(peer));  // nothing to wake: completes whenever
    return;
  }
  // A fetching add: complete on return, so no quiet before the sleeping word's read (one could wait for every
  // peer's progress: doorbell_sleep.h).
  ctx_->FetchAdd(layout_.doorbell, 1, PeerPe(peer));
  if (WakeSleeperAfterAdd(peer_doorbell_[peer], peer_sleeping_[peer])) ++peers_[peer].stats.wakes;
}

void Conduit::SleepWhenIdle(uint64_t spin_ns, uint64_t max_nap_ns, std::function<void()> tick) {
  sleep_.emplace(transport_, layout_.doorbell, layout_.sleeping, spin_ns, max_nap_ns, std::move(tick));
}

void Conduit::WaitDoorbell(std::vector<size_t>* ready) {
  if (sleep_) {
    sleep_->WaitUntilMoved(doorbell_seen_);
  } else if (waiting_yield_ != nullptr) {
    while (__atomic_load_n(layout_.doorbell, __ATOMIC_ACQUIRE) == doorbell_seen_) {
      transport_->Progress();
      waiting_yield_->Tick();
    }
  } else {
    transport_->IdleWaitUntilNotEqual(layout_.doorbell, doorbell_seen_);
  }
  CollectReady(ready);
}

bool Conduit::PollDoorbell(std::vector<size_t>* ready) {
  ready->clear();
  if (__atomic_load_n(layout_.doorbell, __ATOMIC_ACQUIRE) == doorbell_seen_) {
    transport_->Progress();
    if (__atomic_load_n(layout_.doorbell, __ATOMIC_ACQUIRE) == doorbell_seen_) return false;
  }
  CollectReady(ready);
  return true;
}

void Conduit::CollectReady(std::vector<size_t>* ready) {
  ready->clear();
  doorbell_seen_ = __atomic_load_n(layout_.doorbell, __ATOMIC_ACQUIRE);
  int me = transport_->MyPe();
  size_t words = ConduitLayout::ReadyWords(layout_.peers);
  for (size_t w = 0; w < words; ++w) {
    if (__atomic_load_n(&layout_.ready_bits[w], __ATOMIC_ACQUIRE) == 0) continue;
    // CPU atomics where the job agreed (see the top): every client's OR on this word is a locked instruction too.
    uint64_t bits = cpu_atomics_ ? __atomic_exchange_n(&layout_.ready_bits[w], 0, __ATOMIC_SEQ_CST)
                                 : ctx_->Swap(&layout_.ready_bits[w], 0, me);
    while (bits != 0) {
      unsigned b = static_cast<unsigned>(__builtin_ctzll(bits));
      bits &= bits - 1;
      ready->push_back(w * 64 + b);
    }
  }
}

}  // namespace smc
