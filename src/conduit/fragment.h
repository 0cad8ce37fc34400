// One message fragment as it sits in a conduit chunk (see conduit.h), and the checks a receiver makes before
// it reads one. Pure byte formatting: no SHMEM, unit-tested in one process.
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
// A message is either cut into fragments of its own (msg_len = its length; the receiver appends payloads until
// it has msg_len bytes) or, when it fits one record, packed (issue 14: a burst of small messages costs one chunk,
// not one each): msg_len = kPackedMsgLen and the payload is a run of whole messages, each a record of u32
// length, u32 zero, its bytes, zero padding to 8 bytes.
// A get or put does not deliver bytes in address order (DESIGN.md), so a fragment is accepted only when
// use_flag, comp_flag and the checksum all agree (FragmentComplete); it is never read half-written.
// Written in place (issue 14): a sender that maps the receiver's ring (shmem_ptr: same node) writes the fragment
// there with its own CPU stores, every byte but the use_flag first, then the use_flag with a release store
// (SealInPlace, Publish). A receiver that reads use_flag == seq with an acquire load then sees every byte
// (C++'s release/acquire; on x86-TSO and AArch64 alike), so the checksum proves nothing there and is replaced by
// kInPlaceMark, which Checksum never returns: a chunk carries the mark only if a sender wrote it in place, and a
// sender writes one ring always one way (conduit.h), so a chunk landing through an unordered put never holds a
// stale mark either.
#ifndef SHMEMCACHE_CONDUIT_FRAGMENT_H_
#define SHMEMCACHE_CONDUIT_FRAGMENT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/bytes.h"

namespace smc {

constexpr size_t kChunkHeaderBytes = 32;
constexpr size_t kChunkTrailerBytes = 8;

namespace fragment {

constexpr size_t kUseFlagOffset = 0;
constexpr size_t kChecksumOffset = 8;
constexpr size_t kFragLenOffset = 16;
constexpr size_t kMsgLenOffset = 20;
constexpr size_t kAckOffset = 24;

constexpr uint32_t kPackedMsgLen = 0xffffffff;
constexpr size_t kRecordHeaderBytes = 8;
// Payload bytes a message of len bytes takes as a record of a packed chunk.
inline size_t RecordBytes(size_t len) { return kRecordHeaderBytes + ((len + 7) & ~size_t{7}); }
// True when a message of len bytes goes out as a record of a packed chunk (else cut into fragments of its own).
inline bool Packs(size_t len, size_t payload_max) { return RecordBytes(len) <= payload_max; }

inline size_t CompFlagOffset(size_t frag_len) { return kChunkHeaderBytes + ((frag_len + 7) & ~size_t{7}); }

// XXH3 of the contiguous bytes [16, 32 + frag_len) of chunk (lengths, ack, payload), seeded with seq. A pure
// function of those bytes: no state survives between calls (issue 12's hang came from a streaming state that
// was never initialised).
// Never kInPlaceMark.
uint64_t Checksum(const uint8_t* chunk, size_t frag_len, uint64_t seq);
constexpr uint64_t kInPlaceMark = 0x696e2d706c616365ull;  // "in-place": the checksum word of a fragment SealInPlace wrote

// Writes fragment seq carrying data[0, frag_len) of a msg_len-byte message into out, which has room for
// kChunkHeaderBytes + align8(frag_len) + kChunkTrailerBytes. Returns the bytes to put, through the comp_flag.
size_t Encode(uint8_t* out, uint64_t seq, const uint8_t* data, size_t frag_len, size_t msg_len, uint64_t ack);

// Writes the header, checksum and comp_flag of fragment seq whose frag_len payload bytes already sit at
// out + kChunkHeaderBytes. Returns the bytes to put, through the comp_flag.
size_t Seal(uint8_t* out, uint64_t seq, size_t frag_len, size_t msg_len, uint64_t ack);
// In place (see the top): SealInPlace writes what Seal writes, the mark for the checksum, everything but the
// use_flag; Publish then stores the use_flag (release), after which the receiver may read the fragment.
size_t SealInPlace(uint8_t* out, uint64_t seq, size_t frag_len, size_t msg_len, uint64_t ack);
inline void Publish(uint8_t* out, uint64_t seq) {
  __atomic_store_n(reinterpret_cast<uint64_t*>(out + kUseFlagOffset), seq, __ATOMIC_RELEASE);
}
// Appends a record of len bytes to the payload of a packed chunk at out that holds `used` payload bytes (the
// caller checks that used + RecordBytes(len) fits): writes its header and padding and returns where its len
// bytes go (the caller writes them; the chunk is sealed after). Inline: Conduit::Reserve's inline case calls it
// per message (issue 14).
inline uint8_t* ReserveRecord(uint8_t* out, size_t used, size_t len) {
  uint8_t* record = out + kChunkHeaderBytes + used;
  StoreU32(record, static_cast<uint32_t>(len));
  StoreU32(record + 4, 0);
  // The padding: zero the record's last word (the caller's len bytes overwrite its head), one store rather than
  // a memset call per message.
  if (len & 7) StoreU64(record + kRecordHeaderBytes + (len & ~size_t{7}), 0);
  return record + kRecordHeaderBytes;
}
// Shortens the record whose bytes ReserveRecord placed at bytes to len (no more than it had), once they are
// written: its header says len and its padding is zero again.
void TrimRecord(uint8_t* bytes, size_t len);

// True when chunk holds all of fragment seq: use_flag and comp_flag equal seq, frag_len <= payload_max and the
// checksum matches (or is kInPlaceMark: the caller read use_flag with an acquire load). Reads each byte once through plain loads; the caller orders them after its flag read.
bool Complete(const uint8_t* chunk, uint64_t seq, size_t payload_max);

// What chunk holds, for error messages: "use=.. frag_len=.. msg_len=.. ack=.. comp=.. checksum=.. computed=..".
std::string Describe(const uint8_t* chunk, uint64_t seq, size_t payload_max);

}  // namespace fragment
}  // namespace smc

#endif  // SHMEMCACHE_CONDUIT_FRAGMENT_H_
