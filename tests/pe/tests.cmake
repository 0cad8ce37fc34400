# Which oshrun jobs ctest runs. Shared memory is UCX's default on one node; TCP forces UCX_TLS=self,tcp.
set(two_servers ENV SHMEMCACHE_NUM_SERVERS=2)

shmemcache_pe_test(roundtrip_np2 pe_roundtrip 2 ARGS 10000)
shmemcache_pe_test(roundtrip_np4 pe_roundtrip 4 ARGS 10000)
shmemcache_pe_test(roundtrip_np8_2servers pe_roundtrip 8 ARGS 10000 ${two_servers})
shmemcache_pe_test(roundtrip_np4_2servers_tcp pe_roundtrip 4 TCP ARGS 10000 ${two_servers})
shmemcache_pe_test(roundtrip_np2_tcp pe_roundtrip 2 TCP ARGS 10000)

shmemcache_pe_test(bad_input_np3 pe_bad_input 3)
shmemcache_pe_test(bad_input_np3_tcp pe_bad_input 3 TCP)

shmemcache_pe_test(shared_keys_np4 pe_shared_keys 4 ARGS 3)
shmemcache_pe_test(shared_keys_np4_2servers_tcp pe_shared_keys 4 TCP ARGS 3 ${two_servers})

shmemcache_pe_test(library_runtime_np2 pe_library_runtime 2)
shmemcache_pe_test(library_runtime_np3_tcp pe_library_runtime 3 TCP)
shmemcache_pe_test(roundtrip_np3_active_only pe_roundtrip 3 ARGS 5000 ENV SHMEMCACHE_DIRECT_OPS=0)

# Direct operations: deterministic protocol branches, and the consistency stress on both transports
# (1 server, 2 writers, 3 readers, 12 hot keys).
shmemcache_pe_test(direct_np3 pe_direct 3)
shmemcache_pe_test(direct_np3_tcp pe_direct 3 TCP)
shmemcache_pe_test(direct_stress_np6 pe_direct_stress 6 ARGS 6 2)
shmemcache_pe_test(direct_stress_np6_tcp pe_direct_stress 6 TCP ARGS 8 2)
# The on-node fast path (local_access): taken on shared memory where it maps (and its stress: readers and writers
# on both paths at once, above: odd client ranks run with local_access=0), never with local_access=0 or over tcp.
shmemcache_pe_test(local_access_np3 pe_local_access 3 ARGS 1)
shmemcache_pe_test(local_access_np3_tcp pe_local_access 3 TCP ARGS 0)

# Cache management: eviction at 3x memory, stale pointers, size shift, skewed clocks; expiration bars.
shmemcache_pe_test(eviction_np3 pe_eviction 3)
shmemcache_pe_test(eviction_np5_2servers_skewed_clocks pe_eviction 5 ARGS 5000 ${two_servers})
shmemcache_pe_test(eviction_np3_tcp_skewed_clocks pe_eviction 3 TCP ARGS 5000)
shmemcache_pe_test(expiration_bar_np6 pe_expiration_bar 6)
shmemcache_pe_test(expiration_bar_np6_tcp pe_expiration_bar 6 TCP)

# Non-blocking API: buffer reuse, thousands outstanding over 2 servers, ordering, mixing, errors.
shmemcache_pe_test(nonblocking_np4 pe_nonblocking 4 ARGS 4000)
shmemcache_pe_test(nonblocking_np4_tcp pe_nonblocking 4 TCP ARGS 2000)

# SSD spill tier: spill factor 1.5 success rate, no resurrection, unusable directory.
shmemcache_pe_test(spill_np3 pe_spill 3 ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-np3)
shmemcache_pe_test(spill_np3_tcp pe_spill 3 TCP ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-np3-tcp)
# The same with every flash read on the server's I/O thread (1 ms of emulated slow flash each, nothing inline).
shmemcache_pe_test(spill_np3_async_reads pe_spill 3 ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-np3-async
                   ENV SHMEMCACHE_TEST_SPILL_READ_DELAY_MS=1)
# Asynchronous SSD reads: the server keeps serving while a flash read is held (until the clients release it);
# out-of-order replies keep per-key order; no promotion over a newer SET.
shmemcache_pe_test(spill_async_np3 pe_spill_async 3 ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-async-np3
                   ENV SHMEMCACHE_TEST_SPILL_READ_HOLD=${CMAKE_CURRENT_BINARY_DIR}/spill-async-np3.hold)
shmemcache_pe_test(spill_async_np3_tcp pe_spill_async 3 TCP ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-async-np3-tcp
                   ENV SHMEMCACHE_TEST_SPILL_READ_HOLD=${CMAKE_CURRENT_BINARY_DIR}/spill-async-np3-tcp.hold)
# A real full disk: spill_dir on a 28 MiB tmpfs (in a private mount namespace; skipped where it cannot be
# made), spill_bytes 256 MiB, 4x the server's memory written: ENOSPC, reclaim, retry. One client, so that its
# write order is the eviction order the check relies on.
shmemcache_pe_test(spill_full_disk_np2 pe_spill 2 ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-full-disk full_disk
                   PREFIX ${CMAKE_CURRENT_SOURCE_DIR}/with_small_tmpfs.sh 28m ${CMAKE_CURRENT_BINARY_DIR}/spill-full-disk)
foreach(fault enospc eio_write eio_read short_read corrupt delete_file)
  shmemcache_pe_test(spill_fault_${fault}_np3 pe_spill 3 ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-fault-${fault}
                     ENV SHMEMCACHE_TEST_SPILL_FAULT=${fault})
endforeach()

# The automatic private-context choice follows the transport UCX really uses (a wrong "private" hangs finalize).
shmemcache_pe_test(context_choice_np2 pe_context_choice 2 ARGS private TIMEOUT 60)
shmemcache_pe_test(context_choice_np3_tcp pe_context_choice 3 TCP ARGS default TIMEOUT 60)
shmemcache_pe_test(context_choice_np1_tcp pe_context_choice 1 TCP ARGS default TIMEOUT 60)

# Eviction must not empty the cache (issue 12): 8 MiB of server memory, 10 k keys of 32 B-4 KiB; the server
# holds at least half its memory in payload and the hit ratio is one its capacity allows.
shmemcache_pe_test(small_memory_np4 pe_small_memory 4)
shmemcache_pe_test(small_memory_np4_tcp pe_small_memory 4 TCP ARGS 10000)

# The same programs built with ASan + UBSan (CMakeLists.txt above): both transports, two servers, Direct
# operations under contention, the non-blocking API, eviction, the SSD tier with its I/O thread, bad input.
shmemcache_pe_sanitize_test(roundtrip_np4 pe_roundtrip 4 ARGS 10000)
shmemcache_pe_sanitize_test(roundtrip_np4_2servers_tcp pe_roundtrip 4 TCP ARGS 5000 ${two_servers})
shmemcache_pe_sanitize_test(bad_input_np3 pe_bad_input 3)
shmemcache_pe_sanitize_test(direct_stress_np6 pe_direct_stress 6 ARGS 6 2)
shmemcache_pe_sanitize_test(nonblocking_np4 pe_nonblocking 4 ARGS 4000)
shmemcache_pe_sanitize_test(eviction_np3 pe_eviction 3)
shmemcache_pe_sanitize_test(small_memory_np4 pe_small_memory 4)
shmemcache_pe_sanitize_test(spill_async_np3 pe_spill_async 3 ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-async-np3-sanitize
                            ENV SHMEMCACHE_TEST_SPILL_READ_HOLD=${CMAKE_CURRENT_BINARY_DIR}/spill-async-np3-sanitize.hold)
shmemcache_pe_sanitize_test(spill_fault_corrupt_np3 pe_spill 3 ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-fault-corrupt-sanitize
                            ENV SHMEMCACHE_TEST_SPILL_FAULT=corrupt)
