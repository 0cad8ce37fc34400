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
# (Over tcp the default policy sends SETs Active (issue 14): these jobs test the Direct protocol, so they ask for it.)
set(direct_always ENV SHMEMCACHE_DIRECT_POLICY=always)
shmemcache_pe_test(direct_np3_tcp pe_direct 3 TCP ${direct_always})
shmemcache_pe_test(direct_stress_np6 pe_direct_stress 6 ARGS 6 2)
shmemcache_pe_test(direct_stress_np6_tcp pe_direct_stress 6 TCP ARGS 8 2 ${direct_always})
# The same with eviction running all along (2 MiB server, cold pairs): stale pointers, blocks freed and reused.
shmemcache_pe_test(direct_stress_evict_np6 pe_direct_stress 6 ARGS 6 2 1)
shmemcache_pe_test(direct_stress_evict_np6_tcp pe_direct_stress 6 TCP ARGS 8 2 1 ${direct_always})
# The same, readers reading every hot key with one mget (issue 15): a batch's in-place reads on shared memory,
# its one-sided reads over tcp (mget_policy single: auto would send every key of a batch in a message there).
shmemcache_pe_test(direct_stress_mget_evict_np6 pe_direct_stress 6 ARGS 6 2 1 1)
shmemcache_pe_test(direct_stress_mget_evict_np6_tcp pe_direct_stress 6 TCP ARGS 8 2 1 1
                   ENV SHMEMCACHE_DIRECT_POLICY=always SHMEMCACHE_MGET_POLICY=single)
# The on-node fast path (local_access): taken on shared memory where it maps (and its stress: readers and writers
# on both paths at once, above: odd client ranks run with local_access=0), never with local_access=0 or over tcp.
# (UCX_ATOMIC_MODE=cpu: UCX's default picks a NIC's atomics where one offers them, and the agreement on CPU atomics
# for block words then rightly fails; the test pins the shared-memory case on any machine.)
shmemcache_pe_test(local_access_np3 pe_local_access 3 ARGS 1 ENV UCX_ATOMIC_MODE=cpu)
shmemcache_pe_test(local_access_np3_tcp pe_local_access 3 TCP ARGS 0 ${direct_always})
# Remote Direct SETs of lengths around the staged single put's bounds (DirectOps::kStagedPutMaxBytes, and
# kBlockingStagedPutMaxBytes over tcp), written and read back byte for byte by two clients; local_access 0 and
# direct_policy always are set by the program. The argument names the transport: the program checks by its read
# forms that the tcp job ran with blocking reads (the 64 KiB bound) and the other without.
shmemcache_pe_test(staged_put_np3 pe_staged_put 3 ARGS shm)
shmemcache_pe_test(staged_put_np3_tcp pe_staged_put 3 TCP ARGS tcp)
# The value-length hint of a remote one-copy Direct GET: grow and shrink within and across slab classes.
shmemcache_pe_test(length_hint_np3_tcp pe_length_hint 3 TCP)
shmemcache_pe_test(length_hint_np3_remote pe_length_hint 3 ENV SHMEMCACHE_LOCAL_ACCESS=0)
# Direct SETs and incrs next to a client that stays out of SHMEM (their completion must not wait for it over tcp).
shmemcache_pe_test(idle_peer_write_np3_tcp pe_idle_peer_write 3 TCP TIMEOUT 120
                   ENV SHMEMCACHE_DIRECT_POLICY=always SHMEMCACHE_MGET_POLICY=single)
shmemcache_pe_test(idle_peer_write_np3_remote pe_idle_peer_write 3 TIMEOUT 120
                   ENV SHMEMCACHE_DIRECT_POLICY=always SHMEMCACHE_MGET_POLICY=single SHMEMCACHE_LOCAL_ACCESS=0)
shmemcache_pe_test(direct_stress_large_np6 pe_direct_stress 6 ARGS 5 2 0 0 1)
shmemcache_pe_test(direct_stress_large_np6_tcp pe_direct_stress 6 TCP ARGS 6 2 0 0 1 ${direct_always})
# Direct stores with options (issue 15) among the writers, with eviction: flags and value of one store, tokens that
# never go back, failed cas / replace that change nothing, a cas counter; thousands of them Direct on shared memory.
shmemcache_pe_test(direct_stress_options_np6 pe_direct_stress 6 ARGS 6 2 1 0 0 1)
shmemcache_pe_test(direct_stress_options_np6_tcp pe_direct_stress 6 TCP ARGS 8 2 1 0 0 1 ${direct_always})
# Mapped, but UCX's atomics are not CPU atomics (device mode, no NIC here: software atomics): no CPU word atomics.
shmemcache_pe_test(local_access_np3_device_atomics pe_local_access 3 ARGS 2
                   ENV UCX_ATOMIC_MODE=device SHMEMCACHE_IDLE_SPIN_US=0)
# A server filled to 0.57 pairs per way at the default table sizing (issue 13): every pair Direct, single GETs and
# mgets, through the mapping, with one-sided gets (local_access 0) and over tcp (16 MiB server: fewer pairs; one
# pair of its keys shares set and tag, so one GET is Active: pe_full_server.cc).
shmemcache_pe_test(full_server_np3 pe_full_server 3 ARGS 600000)
shmemcache_pe_test(full_server_np3_remote pe_full_server 3 ARGS 600000 ENV SHMEMCACHE_LOCAL_ACCESS=0)
shmemcache_pe_test(full_server_np3_tcp pe_full_server 3 TCP ARGS 150000 1
                   ENV SHMEMCACHE_SERVER_MEMORY_BYTES=16M SHMEMCACHE_DIRECT_POLICY=always SHMEMCACHE_MGET_POLICY=single)
# The blocking GET's flattened on-node path and its fall-backs (miss, stale pointer, expiry, torn or locked copies,
# no mapping); over tcp the same checks hold on the general path.
shmemcache_pe_test(get_mapped_np4 pe_get_mapped 4 ARGS 1)
shmemcache_pe_test(get_mapped_np4_tcp pe_get_mapped 4 TCP ARGS 0 ${direct_always})

# Cache management: eviction at 3x memory, stale pointers, size shift, skewed clocks; expiration bars.
shmemcache_pe_test(eviction_np3 pe_eviction 3)
shmemcache_pe_test(eviction_np5_2servers_skewed_clocks pe_eviction 5 ARGS 5000 ${two_servers})
shmemcache_pe_test(eviction_np3_tcp_skewed_clocks pe_eviction 3 TCP ARGS 5000 ${direct_always})  # stale pointers: Direct GETs
shmemcache_pe_test(expiration_bar_np6 pe_expiration_bar 6)
shmemcache_pe_test(expiration_bar_np6_tcp pe_expiration_bar 6 TCP)

# Non-blocking API: buffer reuse, thousands outstanding over 2 servers, ordering, mixing, errors.
shmemcache_pe_test(nonblocking_np4 pe_nonblocking 4 ARGS 4000)
shmemcache_pe_test(nonblocking_np4_tcp pe_nonblocking 4 TCP ARGS 2000)
# Per-key issue order (issue 17): a request in flight holds back only its own key's (and its bucket's) Direct
# operations; other keys of the server stay Direct; a multi-get message holds every key.
shmemcache_pe_test(nonblocking_per_key_np3 pe_per_key_order 3)
shmemcache_pe_test(nonblocking_per_key_np3_tcp pe_per_key_order 3 TCP)
# A non-blocking GET / fetch answered at issue (on a mapped server: the blocking GET's flattened path) gives the
# blocking call's answers and counts: hits, flags and token, a buffer too small, an expired pair, an iset of the
# key still in flight; over tcp the same on the general path.
shmemcache_pe_test(nonblocking_mapped_np3 pe_iget_mapped 3 ARGS 1)
shmemcache_pe_test(nonblocking_mapped_np3_tcp pe_iget_mapped 3 TCP ARGS 0)
# Per-key issue order of a multi-get's items that its reply sends back to be asked again (alone: large values, keys
# absent from RAM with an SSD tier; in a new message: the reply budget ran out): a non-blocking write of such a key
# issued after the imget does not show in it (pe_mget_order.cc).
shmemcache_pe_test(mget_order_large_np3 pe_mget_order 3 ARGS large)
shmemcache_pe_test(mget_order_large_np3_tcp pe_mget_order 3 TCP ARGS large)
shmemcache_pe_test(mget_order_budget_np3 pe_mget_order 3 ARGS budget)
shmemcache_pe_test(mget_order_budget_np3_tcp pe_mget_order 3 TCP ARGS budget)
# large_value_threshold 0 (never large): a batch of 128 small values goes in one multi-get message.
shmemcache_pe_test(mget_order_fit_np3 pe_mget_order 3 ARGS fit)
shmemcache_pe_test(mget_order_fit_np3_tcp pe_mget_order 3 TCP ARGS fit)
shmemcache_pe_test(mget_order_spill_np3 pe_mget_order 3 ARGS spill ${CMAKE_CURRENT_BINARY_DIR}/mget-order-spill-np3)
shmemcache_pe_sanitize_test(mget_order_large_np3 pe_mget_order 3 ARGS large)
# Pipelined windows (issue 14): windows past the ring and max_outstanding, mixed sizes (packed, a chunk,
# fragmented, large), shuffled completion by test and wait, self-checked values; many clients on one server; a
# 2-chunk ring of 512 B chunks.
shmemcache_pe_test(pipeline_np4_2servers pe_pipeline 4 ARGS 40 ENV SHMEMCACHE_NUM_SERVERS=2)
shmemcache_pe_test(pipeline_np4_2servers_tcp pe_pipeline 4 TCP ARGS 8 ENV SHMEMCACHE_NUM_SERVERS=2)
shmemcache_pe_test(pipeline_np8_1server pe_pipeline 8 ARGS 15)
shmemcache_pe_test(pipeline_np3_small_ring pe_pipeline 3 ARGS 20 ENV SHMEMCACHE_CHUNK_BYTES=512
                   SHMEMCACHE_CHUNKS_PER_PEER=2)

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
# memcached's contract on pairs that live on flash only (issue 15): the same outcomes as in RAM, both transports;
# a corrupt record is absent for each operation that decides on the current pair.
shmemcache_pe_test(spill_contract_np3 pe_spill_contract 3 ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-contract-np3)
shmemcache_pe_test(spill_contract_np3_tcp pe_spill_contract 3 TCP ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-contract-np3-tcp)
foreach(op add replace cas touch incr append delete)
  shmemcache_pe_test(spill_contract_corrupt_${op}_np2 pe_spill_contract 2
                     ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-contract-corrupt-${op} corrupt ${op}
                     ENV SHMEMCACHE_TEST_SPILL_FAULT=corrupt)
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
shmemcache_pe_sanitize_test(direct_stress_options_np6 pe_direct_stress 6 ARGS 6 2 1 0 0 1)
shmemcache_pe_sanitize_test(nonblocking_np4 pe_nonblocking 4 ARGS 4000)
shmemcache_pe_sanitize_test(eviction_np3 pe_eviction 3)
shmemcache_pe_sanitize_test(small_memory_np4 pe_small_memory 4)
shmemcache_pe_sanitize_test(spill_async_np3 pe_spill_async 3 ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-async-np3-sanitize
                            ENV SHMEMCACHE_TEST_SPILL_READ_HOLD=${CMAKE_CURRENT_BINARY_DIR}/spill-async-np3-sanitize.hold)
shmemcache_pe_sanitize_test(spill_contract_np3 pe_spill_contract 3 ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-contract-np3-sanitize)
shmemcache_pe_sanitize_test(spill_fault_corrupt_np3 pe_spill 3 ARGS ${CMAKE_CURRENT_BINARY_DIR}/spill-fault-corrupt-sanitize
                            ENV SHMEMCACHE_TEST_SPILL_FAULT=corrupt)

# Threads sharing one client handle (issue 16): 8 threads in each of 2 clients, both transports; and below
# SHMEM_THREAD_MULTIPLE a second thread gets SHMEMCACHE_WRONG_THREAD.
shmemcache_pe_test(threads_np3 pe_threads 3 ARGS multi 8 1500 LABELS threads)
shmemcache_pe_test(threads_np3_tcp pe_threads 3 TCP ARGS multi 8 600 LABELS threads)
shmemcache_pe_test(threads_single_np3 pe_threads 3 ARGS single LABELS threads)
# Threads of both clients on the same keys: incr totals exact, mset/mget of shared hot keys whole; then
# shmemcache_finalize beside threads that keep calling (OK, then only SHUT_DOWN). Both transports.
shmemcache_pe_test(threads_shared_np3 pe_threads_shared 3 ARGS 8 300 LABELS threads)
shmemcache_pe_test(threads_shared_np3_tcp pe_threads_shared 3 TCP ARGS 8 90 LABELS threads)
# Per-server locks (issue 16): 2 servers, every operation Active, threads' requests and batches over both.
shmemcache_pe_test(threads_active_np4 pe_threads 4 ARGS active 8 800 LABELS threads)
shmemcache_pe_test(threads_active_np4_tcp pe_threads 4 TCP ARGS active 8 400 LABELS threads)
# The same with values up to 8000 B: bursts' isets placed in several reservation slots at once (kPlaceSlots).
shmemcache_pe_test(threads_placed_np4 pe_threads 4 ARGS active 8 800 8000 LABELS threads)
# The same with most values "large" (threshold 256 B): threads of one PE race for its one reservation per server
# (placed SETs, conduit/message.h kReserve) and land when it is taken.
shmemcache_pe_test(threads_large_np4 pe_threads 4 ARGS active 8 800 ENV SHMEMCACHE_LARGE_VALUE_THRESHOLD=256
                   LABELS threads)
# A blocking wait lets the other threads of its PE post to its server (Client::WaitOnServer): 4 threads make
# Active SETs and GETs while a fifth waits for a GET the server's flash holds back; both transports.
shmemcache_pe_test(threads_wait_np2 pe_threads_wait 2 ARGS ${CMAKE_CURRENT_BINARY_DIR}/threads-wait-np2 4 200
                   ENV SHMEMCACHE_TEST_SPILL_READ_HOLD=${CMAKE_CURRENT_BINARY_DIR}/threads-wait-np2.hold LABELS threads)
shmemcache_pe_test(threads_wait_np2_tcp pe_threads_wait 2 TCP ARGS ${CMAKE_CURRENT_BINARY_DIR}/threads-wait-np2-tcp 4 100
                   ENV SHMEMCACHE_TEST_SPILL_READ_HOLD=${CMAKE_CURRENT_BINARY_DIR}/threads-wait-np2-tcp.hold
                   LABELS threads)
# The same with the fifth thread in a batch's wait (Client::WaitBatch): shmemcache_mget, and shmemcache_imget then
# shmemcache_wait, of the held key and keys in memory.
shmemcache_pe_test(threads_wait_mget_np2 pe_threads_wait 2
                   ARGS ${CMAKE_CURRENT_BINARY_DIR}/threads-wait-mget-np2 4 200 mget
                   ENV SHMEMCACHE_TEST_SPILL_READ_HOLD=${CMAKE_CURRENT_BINARY_DIR}/threads-wait-mget-np2.hold
                   LABELS threads)
shmemcache_pe_test(threads_wait_mget_np2_tcp pe_threads_wait 2 TCP
                   ARGS ${CMAKE_CURRENT_BINARY_DIR}/threads-wait-mget-np2-tcp 4 100 mget
                   ENV SHMEMCACHE_TEST_SPILL_READ_HOLD=${CMAKE_CURRENT_BINARY_DIR}/threads-wait-mget-np2-tcp.hold
                   LABELS threads)
shmemcache_pe_test(threads_wait_imget_np2 pe_threads_wait 2
                   ARGS ${CMAKE_CURRENT_BINARY_DIR}/threads-wait-imget-np2 4 200 imget
                   ENV SHMEMCACHE_TEST_SPILL_READ_HOLD=${CMAKE_CURRENT_BINARY_DIR}/threads-wait-imget-np2.hold
                   LABELS threads)

# Over tcp, direct_policy auto sends SETs Active (issue 14): the tests below that count Direct SETs ask for them.
# memcached's contract (issue 15): every call and status, expiry through cached pointers, tokens across Direct
# and Active writers, concurrent counters / add / CAS loops, flush_all, server_stats; both transports.
shmemcache_pe_test(contract_np4 pe_contract 4 ARGS 300 TIMEOUT 180)
shmemcache_pe_test(contract_np5_2servers pe_contract 5 ARGS 300 TIMEOUT 180 ${two_servers})
shmemcache_pe_test(contract_np4_tcp pe_contract 4 TCP ARGS 200 TIMEOUT 240 ${direct_always})
shmemcache_pe_test(contract_np5_2servers_tcp pe_contract 5 TCP ARGS 200 TIMEOUT 240
                   ENV SHMEMCACHE_NUM_SERVERS=2 SHMEMCACHE_DIRECT_POLICY=always)
shmemcache_pe_sanitize_test(contract_np4 pe_contract 4 ARGS 100 TIMEOUT 240)
# Direct stores with options (flags, ttl, cas; modes set and replace): paths proven by stats, tokens across
# Direct and Active writers, cas races with exactly one winner, expiry stamped Direct (over tcp the default
# policy sends SETs Active: the tcp job asks for Direct).
shmemcache_pe_test(direct_store_np4 pe_direct_store 4 ARGS 100 TIMEOUT 180)
shmemcache_pe_test(direct_store_np5_2servers pe_direct_store 5 ARGS 100 TIMEOUT 180 ${two_servers})
shmemcache_pe_test(direct_store_np4_tcp pe_direct_store 4 TCP ARGS 60 TIMEOUT 240 ${direct_always})
# Non-blocking contract calls (istore, itouch, iincr): every mode and status at completion, per-key issue order
# with everything in flight, hundreds of stores with flags/ttl/tokens in flight, concurrent add and counters.
shmemcache_pe_test(istore_np4 pe_istore 4 ARGS 300 TIMEOUT 180)
shmemcache_pe_test(istore_np5_2servers pe_istore 5 ARGS 300 TIMEOUT 180 ${two_servers})
shmemcache_pe_test(istore_np4_tcp pe_istore 4 TCP ARGS 150 TIMEOUT 240)
shmemcache_pe_test(istore_np5_2servers_tcp pe_istore 5 TCP ARGS 150 TIMEOUT 240
                   ENV SHMEMCACHE_NUM_SERVERS=2 SHMEMCACHE_DIRECT_POLICY=always)
# Non-blocking delete (idelete): OK / NOT_FOUND / refused at issue, issue order with isets and igets of the key
# all in flight, hundreds of iset+idelete pairs in flight at once, every client deleting the same keys (one OK).
shmemcache_pe_test(idelete_np4 pe_idelete 4 ARGS 300 TIMEOUT 180)
shmemcache_pe_test(idelete_np5_2servers pe_idelete 5 ARGS 300 TIMEOUT 180 ${two_servers})
shmemcache_pe_test(idelete_np4_tcp pe_idelete 4 TCP ARGS 150 TIMEOUT 240)
shmemcache_pe_test(idelete_np5_2servers_tcp pe_idelete 5 TCP ARGS 150 TIMEOUT 240
                   ENV SHMEMCACHE_NUM_SERVERS=2 SHMEMCACHE_DIRECT_POLICY=always)

# Batches (mget/imget/mset): every item's own status (bad input, hits, misses, too-small buffers, repeated keys,
# values up to max_value_len, expired pairs) on 2 servers, and mset writers against mget readers on 6 hot keys.
# Over tcp (auto) every GET of a batch goes in multi-get messages.
shmemcache_pe_test(batch_np4_2servers pe_batch 4 ARGS 300 ${two_servers})
shmemcache_pe_test(batch_np4_2servers_tcp pe_batch 4 TCP ARGS 150 ENV SHMEMCACHE_NUM_SERVERS=2 SHMEMCACHE_DIRECT_POLICY=always)
shmemcache_pe_test(batch_np5_1server pe_batch 5 ARGS 300)
shmemcache_pe_test(batch_np3_active_only pe_batch 3 ARGS 100 ENV SHMEMCACHE_DIRECT_OPS=0)
# The multi-get message on every path (mget_policy): every key through it on shared memory; a reply ring too
# small for most values (answers spread over many messages, values asked alone); the old single GETs over tcp.
shmemcache_pe_test(batch_np4_2servers_message pe_batch 4 ARGS 150 ENV SHMEMCACHE_NUM_SERVERS=2
                   SHMEMCACHE_MGET_POLICY=message)
shmemcache_pe_test(batch_np3_small_ring pe_batch 3 ARGS 100 ENV SHMEMCACHE_CHUNK_BYTES=512
                   SHMEMCACHE_CHUNKS_PER_PEER=2 SHMEMCACHE_MGET_POLICY=message)
shmemcache_pe_test(batch_np3_single_tcp pe_batch 3 TCP ARGS 50 ENV SHMEMCACHE_MGET_POLICY=single
                   SHMEMCACHE_DIRECT_POLICY=always)
shmemcache_pe_sanitize_test(batch_np4_2servers pe_batch 4 ARGS 100 ${two_servers})

# Issue 14. Large values bypass the ring (landed SETs, pulled GETs, 64 KiB .. max_value_len) and race a Direct
# writer and eviction on both transports (direct_policy always: the writer's Direct SETs happen over tcp too).
set(large_env ENV SHMEMCACHE_SERVER_MEMORY_BYTES=16M SHMEMCACHE_DIRECT_POLICY=always)
shmemcache_pe_test(large_values_np4 pe_large_values 4 ARGS 3 ${large_env})
shmemcache_pe_test(large_values_np4_tcp pe_large_values 4 TCP ARGS 3 ${large_env})
# The same race at 1-1.75 KiB on shared memory: pulled from the block because the client maps the server.
shmemcache_pe_test(large_values_near_np4 pe_large_values 4 ARGS 3 1024 ${large_env})
# Large Active SETs placed by their client (kReserve / kCommit) racing a Direct writer, an Active store writer
# with options and eviction; the server copies no large value where clients map it, and each lands over tcp.
shmemcache_pe_test(large_placed_np5 pe_large_placed 5 ARGS 3 placed ${large_env})
shmemcache_pe_test(large_placed_np5_tcp pe_large_placed 5 TCP ARGS 3 landed ${large_env})
shmemcache_pe_sanitize_test(large_placed_np5 pe_large_placed 5 ARGS 3 placed ${large_env})
# Windows of non-blocking SETs of 4-8 KiB placed by their client (kPlaceSlots reservations per client), racing a
# Direct writer, eviction and readers; per-key issue order within the window; bset not placed.
shmemcache_pe_test(window_placed_np4 pe_window_placed 4 ARGS 3 placed ${large_env})
shmemcache_pe_test(window_placed_np4_tcp pe_window_placed 4 TCP ARGS 3 inline ${large_env})
shmemcache_pe_sanitize_test(window_placed_np4 pe_window_placed 4 ARGS 3 placed ${large_env})
# Per-key issue order of placed isets: two or three isets of one key in flight, then igets that fill the reply
# ring (their posts complete the reservations' replies): the last iset wins; imgets after an iset read it; a window
# of isets holds several reservation slots at once (all placed). Over tcp nothing is placed, the same order holds.
shmemcache_pe_test(placed_order_np3 pe_placed_order 3 ARGS placed)
shmemcache_pe_test(placed_order_np3_tcp pe_placed_order 3 TCP ARGS inline)
shmemcache_pe_sanitize_test(placed_order_np3 pe_placed_order 3 ARGS placed)
# Windows of 32 placed isets of 64 KiB from 7 clients on a 6 MiB server: none fails NO_SPACE (the landed path
# stores them all; reservations must not pin what it would use).
shmemcache_pe_test(placed_small_server_np8 pe_placed_small_server 8 ARGS 40 65536 placed
                   ENV SHMEMCACHE_SERVER_MEMORY_BYTES=6M)
# The Direct/Active policy, asserted on the stats.
shmemcache_pe_test(policy_never_np3 pe_policy 3 ARGS never ENV SHMEMCACHE_DIRECT_POLICY=never)
shmemcache_pe_test(policy_never_np3_tcp pe_policy 3 TCP ARGS never ENV SHMEMCACHE_DIRECT_POLICY=never)
shmemcache_pe_test(policy_auto_np3 pe_policy 3 ARGS auto-shm)
shmemcache_pe_test(policy_auto_np3_tcp pe_policy 3 TCP ARGS auto-tcp)
shmemcache_pe_test(policy_always_np3_tcp pe_policy 3 TCP ARGS always ENV SHMEMCACHE_DIRECT_POLICY=always)
# Fairness: 1 server, 16 clients of Active operations for 3 s; every client progresses, min/median printed.
shmemcache_pe_test(fairness_np17 pe_fairness 17 ARGS 3 ENV SHMEMCACHE_DIRECT_OPS=0)
shmemcache_pe_test(fairness_np17_tcp pe_fairness 17 TCP ARGS 3 ENV SHMEMCACHE_DIRECT_OPS=0)
# Fairness on a shared core (config oversubscribed): a rankfile binds the server and the first client to CPU 0
# and the three other clients to CPU 1, so the first client waits for a server that runs on its own core; it must
# get at least an eighth of the median client's operations (it got 0.03-0.08 when waits spun first). Skipped on
# a machine with one CPU.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/shared_core.rankfile
     "rank 0=localhost slot=0\nrank 1=localhost slot=0\nrank 2=localhost slot=1\nrank 3=localhost slot=1\n"
     "rank 4=localhost slot=1\n")
set(two_cpus PREFIX sh -c "[ \"$(nproc)\" -lt 2 ] && exit 77 || exec \"$@\"" two_cpus)
shmemcache_pe_test(fairness_shared_core_np5 pe_fairness 5 ARGS 3 shared-core ENV SHMEMCACHE_DIRECT_OPS=0
                   OSHRUN -rf ${CMAKE_CURRENT_BINARY_DIR}/shared_core.rankfile ${two_cpus})
shmemcache_pe_test(fairness_shared_core_np5_tcp pe_fairness 5 TCP ARGS 3 shared-core ENV SHMEMCACHE_DIRECT_OPS=0
                   OSHRUN -rf ${CMAKE_CURRENT_BINARY_DIR}/shared_core.rankfile ${two_cpus})

# Idle servers (issue 17, config idle_spin_us): an idle server sleeps and costs no CPU, clients on its node wake
# it, requests that find it asleep are served; over tcp (clients cannot wake it) only when asked, never on auto.
shmemcache_pe_test(idle_server_np3 pe_idle_server 3 ARGS sleeps wakes ENV SHMEMCACHE_DIRECT_OPS=0)
shmemcache_pe_test(idle_server_np3_tcp pe_idle_server 3 TCP ARGS sleeps ENV SHMEMCACHE_DIRECT_OPS=0
                   SHMEMCACHE_IDLE_SPIN_US=100)
shmemcache_pe_test(idle_server_np3_tcp_auto pe_idle_server 3 TCP ARGS nosleep ENV SHMEMCACHE_DIRECT_OPS=0)
shmemcache_pe_test(idle_server_np3_never pe_idle_server 3 ARGS nosleep ENV SHMEMCACHE_DIRECT_OPS=0
                   SHMEMCACHE_IDLE_SPIN_US=0)
# idle_spin_us adaptive: the same sleeps and wake-ups; and a server whose core a client shares (its spin cut
# while that client wants the core) still serves every client fairly.
shmemcache_pe_test(idle_server_np3_adaptive pe_idle_server 3 ARGS sleeps wakes ENV SHMEMCACHE_DIRECT_OPS=0
                   SHMEMCACHE_IDLE_SPIN_US=adaptive)
shmemcache_pe_test(fairness_shared_core_np5_adaptive pe_fairness 5 ARGS 3 shared-core ENV SHMEMCACHE_DIRECT_OPS=0
                   SHMEMCACHE_IDLE_SPIN_US=adaptive OSHRUN -rf ${CMAKE_CURRENT_BINARY_DIR}/shared_core.rankfile
                   ${two_cpus})

# The expiry crawl (issue 15): pairs given a ttl by Direct stores (no hint on the server), never read, are freed by
# the server's idle passes; pairs without ttl stay. A small server (128 K ways) so that a sweep takes a few seconds
# at most, on the sleeping server's ticks (shared memory) and on the polling one's (tcp).
set(expiry_crawl_env ENV SHMEMCACHE_DIRECT_POLICY=always SHMEMCACHE_SERVER_MEMORY_BYTES=8M)
shmemcache_pe_test(expiry_crawl_np3 pe_expiry_crawl 3 ${expiry_crawl_env})
shmemcache_pe_test(expiry_crawl_np3_tcp pe_expiry_crawl 3 TCP ${expiry_crawl_env})
# memcached's contract, edge cases (pe_contract_audit.cc): incr limits and padding, tokens in every mode and after
# flush_all, expiry through cached pointers after touch / set / append / replace, huge ttls, add on an expired key,
# batch size queries and repeated keys across paths; both transports, 1 and 2 servers, and Active only.
shmemcache_pe_test(contract_audit_np4 pe_contract_audit 4 TIMEOUT 180)
shmemcache_pe_test(contract_audit_np5_2servers pe_contract_audit 5 TIMEOUT 180 ${two_servers})
shmemcache_pe_test(contract_audit_np4_active_only pe_contract_audit 4 TIMEOUT 180 ENV SHMEMCACHE_DIRECT_OPS=0)
shmemcache_pe_test(contract_audit_np4_tcp pe_contract_audit 4 TCP TIMEOUT 240 ${direct_always})
shmemcache_pe_test(contract_audit_np5_2servers_tcp pe_contract_audit 5 TCP TIMEOUT 240
                   ENV SHMEMCACHE_NUM_SERVERS=2 SHMEMCACHE_DIRECT_POLICY=always)
# A recency range of 5 ms: the expiry bound (ttl + range) is then tight, and Direct stores with a ttl must bound
# the server's clock within 5 ms or ask the server.
shmemcache_pe_test(contract_audit_np4_range5 pe_contract_audit 4 TIMEOUT 180 ENV SHMEMCACHE_RECENCY_RANGE_MS=5)
shmemcache_pe_test(contract_audit_np4_range5_tcp pe_contract_audit 4 TCP TIMEOUT 240
                   ENV SHMEMCACHE_RECENCY_RANGE_MS=5 SHMEMCACHE_DIRECT_POLICY=always)
shmemcache_pe_sanitize_test(contract_audit_np4 pe_contract_audit 4 TIMEOUT 240)
shmemcache_pe_test(contract_audit_np4_2servers pe_contract_audit 4 TIMEOUT 180 ${two_servers})
shmemcache_pe_test(contract_audit_np4_2servers_tcp pe_contract_audit 4 TCP TIMEOUT 240
                   ENV SHMEMCACHE_NUM_SERVERS=2 SHMEMCACHE_DIRECT_POLICY=always)

# Sleeping clients (issue 17, shmemcache_completion_fd / shmemcache_arm): thousands of rounds of requests, arm and
# sleep on the eventfd, with a sleep that runs out failing the job (no lost wake-up); 1 and 2 servers, and several
# threads sharing the handle (a thread takes in another's reply and must wake it). Where a server cannot wake the
# client (its eventfd refused, local_access 0, UCX tcp) arm says NOT_SUPPORTED and never OK.
set(completion_sleep_env SHMEMCACHE_DIRECT_OPS=0 SHMEMCACHE_IDLE_SPIN_US=1)
shmemcache_pe_test(completion_fd_np2 pe_completion_fd 2 ARGS sleep 20000 ENV ${completion_sleep_env})
# (2 servers: not oversubscribed, else a client's first test yields until every reply is in and it never arms.)
shmemcache_pe_test(completion_fd_np3_2servers pe_completion_fd 3 ARGS sleep 10000
                   ENV ${completion_sleep_env} SHMEMCACHE_NUM_SERVERS=2 SHMEMCACHE_OVERSUBSCRIBED=0)
shmemcache_pe_test(completion_fd_np2_threads pe_completion_fd 2 ARGS sleep 5000 3 ENV ${completion_sleep_env})
shmemcache_pe_test(completion_fd_np3_refused pe_completion_fd 3 ARGS unsupported 2000
                   ENV SHMEMCACHE_DIRECT_OPS=0 SHMEMCACHE_TEST_REFUSE_COMPLETION_FD=1)
shmemcache_pe_test(completion_fd_np2_unmapped pe_completion_fd 2 ARGS unsupported 2000
                   ENV SHMEMCACHE_DIRECT_OPS=0 SHMEMCACHE_LOCAL_ACCESS=0)
# local_access per PE (core/config.h): the server at 0 writes replies by put though the client maps it.
shmemcache_pe_test(completion_fd_np2_server_unmapped pe_completion_fd 2 ARGS unsupported_server_unmapped 2000
                   ENV SHMEMCACHE_DIRECT_OPS=0)
shmemcache_pe_test(completion_fd_np2_tcp pe_completion_fd 2 TCP ARGS unsupported 500 ENV SHMEMCACHE_DIRECT_OPS=0)
# A refusal counts for its own server only: of 2 servers one refuses, and the other's requests still sleep.
shmemcache_pe_test(completion_fd_np3_one_refuses pe_completion_fd 3 ARGS one_refuses 2000
                   ENV ${completion_sleep_env} SHMEMCACHE_NUM_SERVERS=2 SHMEMCACHE_OVERSUBSCRIBED=0)
# A sleeper (arm, then a 100 ms bounded sleep, as the gateway's) whose server stops answering (SIGSTOP) sees
# TIMEOUT within op_timeout_ms (1 s) + 2 s: its arms judge the deadline, not only every 64th empty test.
shmemcache_pe_test(peer_timeout_armed_sleeper_np2 pe_peer_timeout 2 ARGS armed_sleeper 1000 TIMEOUT 120
                   ENV ${completion_sleep_env})
# An arm looks only at the servers of its thread's own requests and of those it tested, and waits for no lock of a
# server it has nothing of its own in flight to: a set holds server 1's (stopped) lock for op_timeout_ms (5 s)
# while the main thread arms, each arm returning meanwhile: OK having tested only a done request (server 1, with
# other threads' requests only, is not looked at); "not now" having tested another thread's iget to server 1;
# "not now" or OK with a get to server 0.
shmemcache_pe_test(peer_timeout_arm_skips_np3 pe_peer_timeout 3 ARGS arm_skips 5000 TIMEOUT 120
                   ENV ${completion_sleep_env} SHMEMCACHE_OVERSUBSCRIBED=0)
# Threads that share a handle: a request one thread issued and another tested wakes the tester once its reply
# lands with nobody armed (arm looks at the servers of the requests its thread tested), and, with the server
# stopped until the arm answered, an arm after the hand-off answers OK and the reply wakes it (every other trial);
# an arm's clock check, racing another thread's tests of the same server, never fails a live server (op_timeout_ms
# 30 s).
shmemcache_pe_test(arm_handoff_np2_handed_off pe_arm_handoff 2 ARGS handed_off 20 TIMEOUT 120)
shmemcache_pe_test(arm_handoff_np3_clock_race pe_arm_handoff 3 ARGS clock_race 5 TIMEOUT 120
                   ENV SHMEMCACHE_NUM_SERVERS=2 SHMEMCACHE_OVERSUBSCRIBED=0)
