#include "core/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

#include <xxhash.h>

#include "core/export.h"
#include "core/guard.h"

namespace smc {

bool ParseSize(const char* text, size_t* out) {
  // Digits first: strtoull would also accept leading blanks and a sign ("-5" wraps to 2^64 - 5).
  if (text == nullptr || *text < '0' || *text > '9') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text) return false;
  unsigned long long mult = 1;
  if (*end != '\0') {
    switch (*end) {
      case 'k': case 'K': mult = 1ull << 10; break;
      case 'm': case 'M': mult = 1ull << 20; break;
      case 'g': case 'G': mult = 1ull << 30; break;
      default: return false;
    }
    ++end;
    if (*end == 'i' || *end == 'I') ++end;       // accept "MiB"-style "Mi"
    if (*end == 'b' || *end == 'B') ++end;
    if (*end != '\0') return false;
  }
  if (v != 0 && mult > ~0ull / v) return false;
  *out = static_cast<size_t>(v * mult);
  return true;
}

namespace {

// One of three names (or its index as a digit), case-insensitive: *out = its index.
bool ParseChoice(const char* text, const char* const (&names)[3], int* out) {
  for (int i = 0; i < 3; ++i) {
    if (strcasecmp(text, names[i]) == 0 || (text[0] == '0' + i && text[1] == '\0')) {
      *out = i;
      return true;
    }
  }
  return false;
}

}  // namespace

bool ParseDirectPolicy(const char* text, int* out) {
  static const char* const kNames[] = {"auto", "always", "never"};
  return ParseChoice(text, kNames, out);
}

bool ParseMGetPolicy(const char* text, int* out) {
  static const char* const kNames[] = {"auto", "message", "single"};
  return ParseChoice(text, kNames, out);
}

namespace {

// Applies one environment variable through a parser; remembers the first failure.
struct EnvApplier {
  Status status = SHMEMCACHE_OK;
  std::string error;

  template <typename Parse>
  void Apply(const char* name, Parse parse) {
    const char* text = std::getenv(name);
    if (text == nullptr) return;
    if (!parse(text) && status == SHMEMCACHE_OK) {
      status = SHMEMCACHE_CONFIG_ERROR;
      error = std::string("environment variable ") + name + "='" + text + "' does not parse";
    }
  }
  void Size(const char* name, size_t* field) {
    Apply(name, [field](const char* t) { return ParseSize(t, field); });
  }
  void Unsigned(const char* name, unsigned* field) {
    Apply(name, [field](const char* t) {
      size_t v;
      if (!ParseSize(t, &v) || v > 0xffffffffu) return false;
      *field = static_cast<unsigned>(v);
      return true;
    });
  }
  static bool ParseInt(const char* t, int* field) {
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(t, &end, 10);
    if (errno != 0 || end == t || *end != '\0' || v < -2147483647L || v > 2147483647L) return false;
    *field = static_cast<int>(v);
    return true;
  }
  void Int(const char* name, int* field) {
    Apply(name, [field](const char* t) { return ParseInt(t, field); });
  }
  void Double(const char* name, double* field) {
    Apply(name, [field](const char* t) {
      char* end = nullptr;
      double v = std::strtod(t, &end);
      if (end == t || *end != '\0' || !std::isfinite(v)) return false;
      *field = v;
      return true;
    });
  }
};

}  // namespace

Status ConfigDefaults(shmemcache_config_t* c) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  std::memset(c, 0, sizeof(*c));
  c->num_servers = 1;
  c->server_memory_bytes = 64ull << 20;
  c->hash_sets = 0;  // auto: ResolveAutoSettings
  c->hash_ways = 8;
  c->directory_entries = 8192;  // x 8 ways x 56 B: 3.5 MiB of client memory (README)
  c->directory_ways = 8;
  c->recency_range_ms = 100;
  c->max_key_len = 250;
  c->max_value_len = 1ull << 20;
  c->chunk_bytes = 4352;   // a 4 KiB value with its message header and chunk framing: one chunk
  c->chunks_per_peer = 0;  // auto: ResolveAutoSettings
  c->direct_ops = 1;
  c->spill_dir = nullptr;
  c->spill_bytes = 1ull << 30;
  c->spill_mmap_max_bytes = 0;
  c->slab_growth_factor = 1.25;
  c->slab_page_bytes = 1ull << 20;
  c->private_context = -1;
  c->max_outstanding = 64;
  c->op_timeout_ms = 60000;
  c->large_value_threshold = 8u << 10;
  c->direct_policy = SHMEMCACHE_DIRECT_AUTO;
  c->local_access = -1;
  c->mget_policy = SHMEMCACHE_MGET_AUTO;
  c->idle_spin_us = -1;
  c->oversubscribed = -1;

  EnvApplier env;
  env.Int("SHMEMCACHE_NUM_SERVERS", &c->num_servers);
  env.Size("SHMEMCACHE_SERVER_MEMORY_BYTES", &c->server_memory_bytes);
  env.Size("SHMEMCACHE_HASH_SETS", &c->hash_sets);
  env.Unsigned("SHMEMCACHE_HASH_WAYS", &c->hash_ways);
  env.Size("SHMEMCACHE_DIRECTORY_ENTRIES", &c->directory_entries);
  env.Unsigned("SHMEMCACHE_DIRECTORY_WAYS", &c->directory_ways);
  env.Unsigned("SHMEMCACHE_RECENCY_RANGE_MS", &c->recency_range_ms);
  env.Size("SHMEMCACHE_MAX_KEY_LEN", &c->max_key_len);
  env.Size("SHMEMCACHE_MAX_VALUE_LEN", &c->max_value_len);
  env.Size("SHMEMCACHE_CHUNK_BYTES", &c->chunk_bytes);
  env.Unsigned("SHMEMCACHE_CHUNKS_PER_PEER", &c->chunks_per_peer);
  env.Int("SHMEMCACHE_DIRECT_OPS", &c->direct_ops);
  if (const char* dir = std::getenv("SHMEMCACHE_SPILL_DIR")) c->spill_dir = *dir ? dir : nullptr;
  env.Size("SHMEMCACHE_SPILL_BYTES", &c->spill_bytes);
  env.Size("SHMEMCACHE_SPILL_MMAP_MAX_BYTES", &c->spill_mmap_max_bytes);
  env.Double("SHMEMCACHE_SLAB_GROWTH_FACTOR", &c->slab_growth_factor);
  env.Size("SHMEMCACHE_SLAB_PAGE_BYTES", &c->slab_page_bytes);
  env.Int("SHMEMCACHE_PRIVATE_CONTEXT", &c->private_context);
  env.Unsigned("SHMEMCACHE_MAX_OUTSTANDING", &c->max_outstanding);
  env.Unsigned("SHMEMCACHE_OP_TIMEOUT_MS", &c->op_timeout_ms);
  env.Size("SHMEMCACHE_LARGE_VALUE_THRESHOLD", &c->large_value_threshold);
  env.Apply("SHMEMCACHE_DIRECT_POLICY", [c](const char* t) { return ParseDirectPolicy(t, &c->direct_policy); });
  env.Int("SHMEMCACHE_LOCAL_ACCESS", &c->local_access);
  env.Apply("SHMEMCACHE_MGET_POLICY", [c](const char* t) { return ParseMGetPolicy(t, &c->mget_policy); });
  // A number of microseconds, or the words auto (-1) and adaptive (SHMEMCACHE_IDLE_SPIN_ADAPTIVE), any case.
  env.Apply("SHMEMCACHE_IDLE_SPIN_US", [&env, c](const char* t) {
    if (strcasecmp(t, "auto") == 0) c->idle_spin_us = -1;
    else if (strcasecmp(t, "adaptive") == 0) c->idle_spin_us = SHMEMCACHE_IDLE_SPIN_ADAPTIVE;
    else return env.ParseInt(t, &c->idle_spin_us);
    return true;
  });
  env.Int("SHMEMCACHE_OVERSUBSCRIBED", &c->oversubscribed);
  if (env.status != SHMEMCACHE_OK) return Fail(env.status, env.error);
  return SHMEMCACHE_OK;
}

void ResolveAutoSettings(shmemcache_config_t* c, int n_pes) {
  if (c->hash_sets == 0 && c->hash_ways != 0) {
    size_t ways = c->server_memory_bytes / kServerBytesPerWay;
    c->hash_sets = std::max<size_t>(1, (ways + c->hash_ways - 1) / c->hash_ways);
  }
  if (c->chunks_per_peer == 0) {
    const size_t peers = static_cast<size_t>(std::max({n_pes - c->num_servers, c->num_servers, 1}));
    const size_t affordable = kAutoRingBytes / (peers * std::max<size_t>(c->chunk_bytes, 1));
    c->chunks_per_peer = static_cast<unsigned>(std::max<size_t>(
        kAutoRingChunksMin, std::min<size_t>({c->max_outstanding, kAutoRingChunksMax, affordable})));
  }
}

Status ValidateConfig(const shmemcache_config_t& c, int n_pes) {
  auto bad = [](const std::string& what) { return Fail(SHMEMCACHE_CONFIG_ERROR, what); };
  if (c.num_servers < 1) return bad("num_servers must be at least 1 (SHMEMCACHE_NUM_SERVERS)");
  if (n_pes >= 0 && c.num_servers >= n_pes)
    return bad("num_servers (" + std::to_string(c.num_servers) + ") must be smaller than the number of PEs (" +
               std::to_string(n_pes) + "): at least one PE must be a client");
  if (c.hash_ways == 0 || c.hash_ways > 64) return bad("hash_ways must be in 1..64");
  if (c.directory_entries == 0 || c.directory_ways == 0 || c.directory_ways > 64)
    return bad("directory_entries must be > 0 and directory_ways in 1..64");
  if (c.max_key_len == 0 || c.max_key_len > (1u << 20)) return bad("max_key_len must be in 1..1048576");
  if (c.max_value_len > (1ull << 31)) return bad("max_value_len must be at most 2 GiB");
  if (c.chunk_bytes < 256 || c.chunk_bytes % 64 != 0 || c.chunk_bytes > (64u << 20))
    return bad("chunk_bytes must be a multiple of 64 between 256 and 64 MiB");
  if (c.chunks_per_peer != 0 && (c.chunks_per_peer < 2 || c.chunks_per_peer > 4096))
    return bad("chunks_per_peer must be 0 (auto) or in 2..4096");
  if (!(c.slab_growth_factor >= 1.01 && c.slab_growth_factor <= 4.0))
    return bad("slab_growth_factor must be in 1.01..4.0");
  if (c.max_outstanding == 0 || c.max_outstanding > 65536) return bad("max_outstanding must be in 1..65536");
  if (c.private_context < -1 || c.private_context > 1) return bad("private_context must be -1, 0 or 1");
  if (c.recency_range_ms == 0) return bad("recency_range_ms must be > 0");
  if (c.server_memory_bytes < (1u << 20)) return bad("server_memory_bytes must be at least 1 MiB");
  // A server indexes at most 2^32 - 1 pairs (store/recency_tiers.h: 32-bit node links), each in a block of at least
  // 64 B (store/slab.h kMinBlockBytes): refused here, not met as an exception inside the server's loop.
  if (c.server_memory_bytes >= ((1ull << 32) - 1) * 64)
    return bad("server_memory_bytes must be below 256 GiB (SHMEMCACHE_SERVER_MEMORY_BYTES; a server holds at most "
               "2^32 - 1 pairs)");
  if (c.op_timeout_ms == 0) return bad("op_timeout_ms must be at least 1 (SHMEMCACHE_OP_TIMEOUT_MS)");
  if (c.direct_policy < SHMEMCACHE_DIRECT_AUTO || c.direct_policy > SHMEMCACHE_DIRECT_NEVER)
    return bad("direct_policy must be SHMEMCACHE_DIRECT_AUTO, _ALWAYS or _NEVER (SHMEMCACHE_DIRECT_POLICY=auto, "
               "always or never)");
  if (c.local_access < -1 || c.local_access > 1)
    return bad("local_access must be -1, 0 or 1 (SHMEMCACHE_LOCAL_ACCESS)");
  if (c.mget_policy < SHMEMCACHE_MGET_AUTO || c.mget_policy > SHMEMCACHE_MGET_SINGLE)
    return bad("mget_policy must be SHMEMCACHE_MGET_AUTO, _MESSAGE or _SINGLE (SHMEMCACHE_MGET_POLICY=auto, "
               "message or single)");
  if (c.idle_spin_us < SHMEMCACHE_IDLE_SPIN_ADAPTIVE || c.idle_spin_us > 1000000)
    return bad("idle_spin_us must be -1 (auto), -2 (adaptive), 0 (never sleep) or 1..1000000 "
               "(SHMEMCACHE_IDLE_SPIN_US)");
  if (c.oversubscribed < -1 || c.oversubscribed > 1)
    return bad("oversubscribed must be -1 (auto), 0 or 1 (SHMEMCACHE_OVERSUBSCRIBED)");
  return SHMEMCACHE_OK;
}

const char* const kConfigFieldNames[kConfigFields] = {
    "num_servers",     "server_memory_bytes", "hash_sets",          "hash_ways",          "directory_entries",
    "directory_ways",  "recency_range_ms",    "max_key_len",        "max_value_len",      "chunk_bytes",
    "chunks_per_peer", "direct_ops",          "spill_dir",          "spill_bytes",        "spill_mmap_max_bytes",
    "slab_growth_factor", "slab_page_bytes",  "private_context",    "max_outstanding",    "op_timeout_ms",
    "large_value_threshold", "direct_policy", "local_access", "mget_policy", "idle_spin_us",
    "oversubscribed"};

std::array<std::string, kConfigFields> ConfigFieldValues(const shmemcache_config_t& c) {
  auto text = [](auto v) { return std::to_string(v); };
  char growth[32];
  std::snprintf(growth, sizeof(growth), "%.17g", c.slab_growth_factor);
  return {text(c.num_servers),       text(c.server_memory_bytes), text(c.hash_sets),
          text(c.hash_ways),         text(c.directory_entries),   text(c.directory_ways),
          text(c.recency_range_ms),  text(c.max_key_len),         text(c.max_value_len),
          text(c.chunk_bytes),       text(c.chunks_per_peer),     text(c.direct_ops),
          c.spill_dir == nullptr ? std::string() : "'" + std::string(c.spill_dir) + "'",
          text(c.spill_bytes),       text(c.spill_mmap_max_bytes), growth,
          text(c.slab_page_bytes),
          text(c.private_context),   text(c.max_outstanding),     text(c.op_timeout_ms),
          text(c.large_value_threshold), text(c.direct_policy), text(c.local_access), text(c.mget_policy),
          text(c.idle_spin_us),      text(c.oversubscribed)};
}

std::string ConfigEnvName(size_t field) {
  std::string name = "SHMEMCACHE_";
  for (const char* p = kConfigFieldNames[field]; *p != '\0'; ++p)
    name += static_cast<char>(std::toupper(static_cast<unsigned char>(*p)));
  return name;
}

uint64_t ConfigFingerprint(const shmemcache_config_t& c) {
  uint64_t fingerprint = 0;
  for (const std::string& value : ConfigFieldValues(c))
    fingerprint = XXH3_64bits_withSeed(value.data(), value.size(), fingerprint);
  return fingerprint;
}

}  // namespace smc

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_config_defaults(shmemcache_config_t* config) {
  return smc::Guarded("shmemcache_config_defaults", SHMEMCACHE_CONFIG_ERROR,
                      [&] { return smc::ConfigDefaults(config); });
}
