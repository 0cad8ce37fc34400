// Unaligned little helpers for reading and writing fixed-width integers in byte buffers (block and fragment
// formats, wire headers). memcpy compiles to one load or store; no alignment or aliasing assumptions.
#ifndef SHMEMCACHE_CORE_BYTES_H_
#define SHMEMCACHE_CORE_BYTES_H_

#include <cstdint>
#include <cstring>

namespace smc {

inline uint64_t LoadU64(const uint8_t* p) { uint64_t v; std::memcpy(&v, p, 8); return v; }
inline uint32_t LoadU32(const uint8_t* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
inline void StoreU64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline void StoreU32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

}  // namespace smc

#endif  // SHMEMCACHE_CORE_BYTES_H_
