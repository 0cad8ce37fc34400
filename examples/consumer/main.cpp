// An application that uses an installed shmemcache through the C++ wrapper (shmemcache.hpp).
// PE 0 serves; every other PE stores a small and a large value, reads them back, deletes one, and prints
// "consumer client <rank>: ok" when everything matched. Exit status 0 on success.
#include <shmemcache/shmemcache.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <utility>

namespace {

int failures = 0;

void check(bool ok, const char *what, int rank) {
  if (!ok) {
    std::fprintf(stderr, "consumer client %d: FAILED: %s\n", rank, what);
    failures++;
  }
}

int run_client(shmc::Cache &cache) {
  const int rank = cache.client_rank();
  const std::string small_key = "consumer:" + std::to_string(rank) + ":small";
  const std::string large_key = "consumer:" + std::to_string(rank) + ":large";
  const std::string small_value = "hello from C++ client " + std::to_string(rank);
  std::string large_value(100 * 1024, '\0');  // larger than the wrapper's first get buffer
  for (std::size_t i = 0; i < large_value.size(); i++) large_value[i] = static_cast<char>((i * 131 + rank) % 251);
  large_value[7] = '\0';  // values are bytes, NUL included

  shmc::Status st = cache.set(small_key, small_value);
  check(st == SHMEMCACHE_OK, "set small", rank);
  st = cache.set(large_key, large_value);
  check(st == SHMEMCACHE_OK, "set large", rank);

  std::optional<std::string> got = cache.get(small_key);
  check(got && *got == small_value, "get small (optional)", rank);
  std::string buffer;
  st = cache.get(large_key, &buffer);
  check(st == SHMEMCACHE_OK && buffer == large_value, "get large (grows the buffer)", rank);
  st = cache.get(small_key, &buffer);  // reuses the now large buffer
  check(st == SHMEMCACHE_OK && buffer == small_value, "get small into a reused buffer", rank);

  st = cache.get("consumer:no such key", &buffer);
  check(st == SHMEMCACHE_NOT_FOUND && buffer.empty(), "get missing key -> NOT_FOUND", rank);
  check(!cache.get("consumer:no such key"), "get missing key -> nullopt", rank);

  check(cache.del(large_key) == SHMEMCACHE_OK, "delete", rank);
  check(!cache.get(large_key), "get after delete", rank);
  check(cache.del(large_key) == SHMEMCACHE_NOT_FOUND, "delete again -> NOT_FOUND", rank);
  check(cache.set("", "x") != SHMEMCACHE_OK, "empty key is rejected", rank);

  // Explicit finalize (collective; the servers finalize in their destructors), then the last counters.
  check(cache.finalize() == SHMEMCACHE_OK, "finalize", rank);
  check(cache.set(small_key, small_value) == SHMEMCACHE_SHUT_DOWN, "set after finalize -> SHUT_DOWN", rank);
  const shmc::Stats stats = cache.stats();
  check(stats.sets >= 2 && stats.gets >= 4, "stats after finalize", rank);
  std::printf("consumer client %d: %s (sets=%llu gets=%llu hits=%llu direct_gets=%llu active_gets=%llu)\n", rank,
              failures == 0 ? "ok" : "FAILED", static_cast<unsigned long long>(stats.sets),
              static_cast<unsigned long long>(stats.gets), static_cast<unsigned long long>(stats.get_hits),
              static_cast<unsigned long long>(stats.direct_gets), static_cast<unsigned long long>(stats.active_gets));
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main() {
  try {
    shmc::Cache first;  // collective; throws std::runtime_error if init fails
    shmc::Cache cache = std::move(first);  // handles move; `first` is now empty
    if (first || !cache) {
      std::fprintf(stderr, "consumer: move did not transfer the handle\n");
      return 1;
    }
    if (cache.is_server()) {
      shmc::Status st = cache.serve();
      if (st != SHMEMCACHE_OK) {
        std::fprintf(stderr, "consumer server: serve: %s\n", shmc::what(st));
        return 1;
      }
      std::printf("consumer server: done (items=%llu)\n",
                  static_cast<unsigned long long>(cache.stats().items));
      return 0;  // ~Cache finalizes, together with the clients' explicit finalize
    }
    return run_client(cache);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
