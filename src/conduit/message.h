// Messages carried by the conduit: Active-operation requests (client -> server) and replies (server -> client).
// Fixed little headers followed by key and value bytes. Replies carry the block's location so the client can
// cache it in its pointer directory, plus the server's recency epoch and expiration bar, and memcached's contract
// (issue 15, store/contract.h): the pair's flags and CAS token, and the server's clock reading server_ms, from
// which a client bounds the server's time for Direct expiry checks (core/server_time.h).
#ifndef SHMEMCACHE_CONDUIT_MESSAGE_H_
#define SHMEMCACHE_CONDUIT_MESSAGE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace smc {

// kSet: a plain set (what a Direct SET does). kGet also serves shmemcache_fetch (every reply carries flags and
// token). kStore: a set with options (mode, flags, ttl_ms, cas). kFlushAll has no key: it is addressed to a
// server, not routed by key. kMultiGet: many GETs for one server in one message (conduit/multi_get_message.h);
// kMultiSet: many SETs (conduit/multi_set_message.h).
enum class Op : uint8_t {
  kSet = 1, kGet = 2, kDelete = 3, kStore = 4, kTouch = 5, kIncr = 6, kFlushAll = 7, kMultiGet = 8, kMultiSet = 9
};

// Large values (config large_value_threshold) bypass the ring. RequestHeader::wire_flags:
//   kValueLanded  kSet: the value_len bytes are not in the message; the client put them into its landing slot
//                 on the server (core/layout.h) before sending, ordered by a fence. The slot is the client's
//                 again once the reply has come.
//   kReserve      kSet, kStore (mode set without cas: the client places no conditional store, since the
//                 reservation, which may evict, comes before the decision): no value bytes. The client maps the
//                 server's memory and will write the value itself: the server reserves a block for key_len + value_len
//                 (store/kv_store.h, Reservations; kPlaceSlots per client, named by RequestHeader::slot: a new
//                 one in a slot gives that slot's last back) and answers OK
//                 with its location in reply.pointer (valid 0: not a pair to cache), or a refusal (NO_SPACE,
//                 VALUE_TOO_LARGE, ...). Nothing is stored yet; this request's commit comes only after this reply
//                 (other requests of the client's threads may come between; nothing relies on their order).
//   kCommit       kSet, kStore: no value bytes. The client stored value_len value bytes at kBlockHeaderBytes +
//                 key_len of its reservation (through its mapping, ordered before this request by a release
//                 fence); the server decides and publishes it as it would store the value (store/contract.h),
//                 writing the header and key only, never reading the value. The linearization point of the SET.
//                 (With a spare, kReserveNext below, the commit alone: one round trip.)
//                 Two round trips and the client's copy cost less than the landing slot's one round trip plus
//                 the server's cross-core copy and checksum from the threshold on: blocking Active SET p50 on
//                 shared memory (2-core VM, load 7, median of 6 interleaved runs) 8 KiB 3.0 -> 2.5 us, 64 KiB
//                 14.5 -> 3.6, 512 KiB 67 -> 13, 1 MiB 172 -> 48. Where the client cannot map the server (UCX
//                 tcp across nodes) the value lands (kValueLanded): placing it with puts would add a round trip
//                 that costs more there than the server's copy.
//                 A non-blocking SET (shmemcache_iset: its value stays valid until it completes) on a mapped
//                 server is placed from kNearPlaceMinBytes on, below the threshold too: in a window the second
//                 round trip overlaps the others' and the server never reads the value, whose lines stay in
//                 the client's cache, where a ring message makes both cores move every byte. Measured on the
//                 2-core VM (bench_nonblocking --mode active, window 32, p50 per op, interleaved with the ring
//                 path, load 4-6): 4 KiB 0.66 -> 0.47-0.49 us, 3 KiB about even (0.46-0.73 -> 0.47-0.53),
//                 2 KiB 0.37 -> 0.45 and 1 KiB 0.28 -> 0.46 worse (two small messages cost more than the ring's
//                 copy of so few bytes): so from 4 KiB. A PE places into a free slot while the values it has reserved
//                 on the server stay within its budget (max_value_len, and its share of a quarter of the server's
//                 arena: client.h, place_budget_), or into an empty table (one reservation alone). A reserve refused
//                 NO_SPACE is sent again unplaced (client/requests.cc, PlaceValue). Windowed large isets, which landed one at a time
//                 (the landing slot is the client's one), then overlap too: window 32, p50 per op, 8 KiB
//                 1.87 -> 0.83 us, 16 KiB 4.5 -> 1.3, 64 KiB 18.9 -> 12.4 (2-core VM, load 5-6).
//   kReserveNext  with kCommit (issue 14, spare reservations): once the commit is published (status OK), the server
//                 reserves the next block for the same slot, of the class a reserve of the committed pair
//                 (key_len + value_len) would get, and answers its location with the commit's reply (ReplyHeader
//                 wire_flags kSpare, number: its offset, spare_bytes; reply.pointer stays the published pair's). The
//                 client then holds a spare: a later placed SET that fits it (BlockBytesFor(key_len, value_len) <=
//                 spare_bytes, any key) writes its value there through its mapping and posts its commit at issue,
//                 one message, no reserve round trip. A spare is a reservation like any (store/kv_store.h): never
//                 evicted, given back at the slot's next reserve or the job's end; the client counts it in its budget
//                 (client/client.h place_budget_) and asks for one only while that budget holds it. Being
//                 speculative, a spare never evicts (KvStore::ReserveFreeBlock: only a block the class or the free
//                 pages give now), and the server holds at most Server::SpareCap per client (each pins its slab):
//                 departures are an anonymous count, so a departed client's spares stay held, their slabs pinned,
//                 until every client has departed (Server::Serve), within that cap. No spare (kSpare clear) when
//                 the commit failed, the client is at the cap or the reservation was refused (NO_SPACE ...): the
//                 slot is then empty on both sides. Per windowed SET (scripts/bench/window_instructions.sh,
//                 instructions without the runtime's progress, 2-core VM, A/B interleaved): 4 KiB client 4230-4456
//                 -> 2096-2112, server 2515 -> 1873 (new keys: 3746-4323 -> 2097, 2315 -> 1636); 16 KiB client
//                 19.4-21.2 k -> 18.2 k (the copy), server 2762 -> 1960. bench_nonblocking window 32, p50 per op (load
//                 5.5-5.7): 4 KiB 0.99-1.49 -> 0.63-0.77 us, 16 KiB 1.51-2.27 -> 0.92-1.62; a blocking Active SET of
//                 16 KiB (bench_latency) p50 1.54-1.57 -> 1.03-1.05 us.
//   kMayPull      kGet: if the value is large and sits in a block, answer with the block's location
//                 (ReplyHeader::wire_flags kPull, no value bytes); the client pulls it with one validated get.
//   kPullNear     with kMayPull: the client maps this server's memory (same node), so "large" starts at
//                 PullThreshold's lower bound (issue 14): a pull there is a local copy and a checksum, where a
//                 value in the reply costs two cross-core moves of its bytes (the server's copy into the client's
//                 ring, the client's copy out) and the server's copy besides. Measured on the 2-core VM, Active
//                 GET p50 (blocking / window of 32 per op): 1 KiB 1.48 / 0.41 -> 1.26 / 0.26 us, 4 KiB
//                 1.93 / 0.87 -> 1.4-1.7 / 0.33 us; at 256-512 B about even, so the bound is 1 KiB.
// ReplyHeader::wire_flags:
//   kPull         the value (value_len bytes) was not sent: it is in the block reply.pointer names, at version
//                 reply.pointer.version when the server answered.
//   kSpare        a kCommit with kReserveNext: the server reserved the slot's next block (number: its offset,
//                 spare_bytes).
namespace message_flags {
constexpr uint8_t kValueLanded = 1;
constexpr uint8_t kMayPull = 2;
constexpr uint8_t kPullNear = 4;
constexpr uint8_t kReserve = 8;
constexpr uint8_t kCommit = 16;
constexpr uint8_t kReserveNext = 32;  // with kCommit only
// The request carries no value bytes (they are elsewhere, or not written yet).
constexpr uint8_t kValueElsewhere = kValueLanded | kReserve | kCommit;
constexpr uint8_t kPull = 1;
constexpr uint8_t kSpare = 2;
// The smallest value a kPullNear GET is answered by location for (kPullNear, above).
constexpr size_t kNearPullMinBytes = 1024;
// The smallest value a non-blocking SET placed into a mapped server is (kCommit, above).
constexpr size_t kNearPlaceMinBytes = 4096;
// Reservations a client may hold on one server at a time (kReserve, RequestHeader::slot): a window's worth.
constexpr unsigned kPlaceSlots = 32;
}  // namespace message_flags

// The smallest value a kMayPull GET with these wire flags is answered by location for: large_value_threshold
// (nonzero: pulls are on), or, kPullNear, the lower of it and kNearPullMinBytes. Client and server both use it.
inline size_t PullThreshold(size_t large_value_threshold, uint8_t wire_flags) {
  if ((wire_flags & message_flags::kPullNear) && large_value_threshold > message_flags::kNearPullMinBytes)
    return message_flags::kNearPullMinBytes;
  return large_value_threshold;
}
// PullSized's range, its lower bound computed already (pull_from: PullThreshold, or 0 where pulls are off): the
// server computes it once per GET (Server::PullFrom).
inline bool InPullRange(size_t pull_from, size_t max_value_len, size_t len) {
  return pull_from != 0 && len >= pull_from && len <= max_value_len;
}
// Whether `len` bytes are pull-sized under these wire flags: pulls are on (large_value_threshold != 0) and len
// lies in [PullThreshold, max_value_len]. The one rule both sides apply: the client to a GET's buffer (may it
// ask for a pull: kMayPull), the server to the value it found (answer by location).
inline bool PullSized(size_t large_value_threshold, size_t max_value_len, size_t len, uint8_t wire_flags) {
  return InPullRange(large_value_threshold != 0 ? PullThreshold(large_value_threshold, wire_flags) : 0, max_value_len,
                     len);
}

struct RequestHeader {
  uint8_t op;
  uint8_t mode;           // kStore: StoreMode
  uint8_t wire_flags;     // message_flags
  uint8_t slot;           // kReserve, kCommit: the client's reservation slot on the server (< kPlaceSlots)
  uint32_t key_len;
  uint32_t value_len;     // kSet, kStore: bytes of value following the key (or landed: kValueLanded)
  uint32_t flags;         // kStore: the pair's flags
  uint64_t request_id;
  uint64_t recency;       // the client's current recency epoch (piggybacked recency update)
  uint64_t max_value;     // kGet: the client's buffer size; larger values are not sent (BUFFER_TOO_SMALL)
  uint64_t ttl_ms;        // kStore, kTouch: 0 = never expires
  uint64_t cas;           // kStore: 0 = unconditional, else the token the pair must have
  int64_t delta;          // kIncr
};
static_assert(sizeof(RequestHeader) == 64, "wire layout");

struct WirePointer {
  uint64_t offset;
  uint64_t version;
  uint64_t recency;       // the pair's recency epoch on the server
  uint32_t block_bytes;
  uint32_t tag;
  uint8_t cls;
  uint8_t valid;          // 1 when the reply names a block the client may cache
  uint8_t reserved[6];
};
static_assert(sizeof(WirePointer) == 40, "wire layout");

struct ReplyHeader {
  uint8_t status;         // shmemcache_status_t
  uint8_t op;
  uint8_t wire_flags;     // message_flags
  uint8_t reserved;
  uint32_t value_len;     // bytes of value following or to pull (with BUFFER_TOO_SMALL, the size needed)
  uint64_t request_id;
  uint64_t epoch;         // the server's current recency epoch
  uint64_t expiration_bar;
  WirePointer pointer;
  uint64_t server_ms;     // the server's clock reading while it handled the request (core/server_time.h)
  uint64_t token;         // OK: the pair's CAS token (kGet, kStore, kSet, kTouch, kIncr)
  uint64_t number;        // kIncr OK: the counter's new value; kCommit with kSpare: the spare's offset
  uint32_t flags;         // kGet OK / BUFFER_TOO_SMALL: the pair's flags
  uint32_t spare_bytes;   // kCommit with kSpare: the spare's block bytes
};
static_assert(sizeof(ReplyHeader) == 104, "wire layout");

// A reply header whose every byte is zero but its epoch and server_ms: what `ReplyHeader{}` with those two set is
// (neither struct has padding: every byte is a field), written field by field. GCC compiles the value
// initialization of these 104 bytes to `rep stosq` (13 iterations that callgrind counts, and a microcoded start-up)
// ahead of the two stores; field by field it is ten plain stores (issue 14: ~7 instructions per Active request).
// A field added to either struct must be added here (the wire layout asserts above change with it).
inline ReplyHeader StartReply(uint64_t epoch, uint64_t server_ms) {
  ReplyHeader r;
  r.status = 0;
  r.op = 0;
  r.wire_flags = 0;
  r.reserved = 0;
  r.value_len = 0;
  r.request_id = 0;
  r.epoch = epoch;
  r.expiration_bar = 0;
  r.pointer = WirePointer{};
  r.server_ms = server_ms;
  r.token = 0;
  r.number = 0;
  r.flags = 0;
  r.spare_bytes = 0;
  return r;
}

// A request message: its length, and its bytes written at out (RequestBytes of them).
inline size_t RequestBytes(size_t key_len, size_t value_len) { return sizeof(RequestHeader) + key_len + value_len; }
inline void WriteRequest(uint8_t* out, const RequestHeader& h, const void* key, size_t key_len, const void* value,
                         size_t value_len) {
  std::memcpy(out, &h, sizeof(h));
  if (key_len) std::memcpy(out + sizeof(h), key, key_len);
  if (value_len) std::memcpy(out + sizeof(h) + key_len, value, value_len);
}
inline void EncodeRequest(std::vector<uint8_t>* out, const RequestHeader& h, const void* key, size_t key_len,
                          const void* value, size_t value_len) {
  out->resize(RequestBytes(key_len, value_len));
  WriteRequest(out->data(), h, key, key_len, value, value_len);
}

// A parsed request; pointers are into the message buffer. False if the message is malformed.
struct RequestView {
  RequestHeader header;
  const uint8_t* key;
  const uint8_t* value;
};
inline bool DecodeRequest(const uint8_t* msg, size_t len, RequestView* view) {
  if (len < sizeof(RequestHeader)) return false;
  std::memcpy(&view->header, msg, sizeof(RequestHeader));
  size_t need = sizeof(RequestHeader) + size_t{view->header.key_len} +
                (view->header.wire_flags & message_flags::kValueElsewhere ? 0 : view->header.value_len);
  if (len != need) return false;
  view->key = msg + sizeof(RequestHeader);
  view->value = view->key + view->header.key_len;
  return true;
}
inline bool DecodeRequest(const std::vector<uint8_t>& msg, RequestView* view) {
  return DecodeRequest(msg.data(), msg.size(), view);
}

}  // namespace smc

#endif  // SHMEMCACHE_CONDUIT_MESSAGE_H_
