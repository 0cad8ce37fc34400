# Jobs that must finish or fail clearly (issue 12), labelled "reliability": ctest -L reliability.

# The two-server hang: the default example with 2 and 4 servers, on shared memory and on TCP, run several times
# per test (the hang showed in 4-6 runs of 10 before the fix). Each run is short; any failure or time-out fails.
function(shmemcache_repeated_job name servers np)
  cmake_parse_arguments(R "TCP" "" "ENV" ${ARGN})
  set(runs 3)
  set(per_run_timeout 60)
  set(transport)
  if(R_TCP)
    set(transport --tcp)
  endif()
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -E env SHMEMCACHE_NUM_SERVERS=${servers} ${R_ENV}
                   ${CMAKE_CURRENT_SOURCE_DIR}/repeat_job.sh --runs ${runs} --timeout ${per_run_timeout} --
                   ${transport} -np ${np} $<TARGET_FILE:shmemcache_mixed_workload> --seconds 0.5 --keys 2000)
  math(EXPR ctest_timeout "${runs} * (${per_run_timeout} + 15) + 30")
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ctest_timeout} LABELS "pe;reliability")
endfunction()

shmemcache_repeated_job(mixed_workload_2servers_np6_x3 2 6)
shmemcache_repeated_job(mixed_workload_4servers_np8_x3 4 8)
shmemcache_repeated_job(mixed_workload_2servers_np4_tcp_active_only_x3 2 4 TCP ENV SHMEMCACHE_DIRECT_OPS=0)
shmemcache_repeated_job(mixed_workload_4servers_np6_tcp_x3 4 6 TCP)

# Bounded waits: a server that does not serve for longer than op_timeout_ms (blocking, wait, test and a ring
# that stays full all end in TIMEOUT, then TIMEOUT at once). op_timeout_ms = 2000. A fragment flagged but never
# completed and a block lock never released need a broken peer: one-process tests, tests/unit/server_test.cc
# (ServerFailure.*, label unit).
# PE 4's value must go through its ring to fill it: large values would bypass the ring (issue 14).
set(ring_only ENV SHMEMCACHE_LARGE_VALUE_THRESHOLD=0)
shmemcache_pe_test(peer_timeout_silent_np5 pe_peer_timeout 5 ARGS silent 2000 TIMEOUT 120 LABELS reliability
                   ${ring_only})
shmemcache_pe_test(peer_timeout_silent_np5_tcp pe_peer_timeout 5 TCP ARGS silent 2000 TIMEOUT 120
                   LABELS reliability ${ring_only})
# The same at SHMEM_THREAD_MULTIPLE, where a blocking wait polls without holding its server's lock between polls
# and its own deadline fails the server (Client::WaitOnServer).
shmemcache_pe_test(peer_timeout_silent_np5_multiple pe_peer_timeout 5 ARGS silent 2000 multiple TIMEOUT 120
                   LABELS reliability threads ${ring_only})
shmemcache_pe_test(peer_timeout_silent_np5_multiple_tcp pe_peer_timeout 5 TCP ARGS silent 2000 multiple TIMEOUT 120
                   LABELS reliability threads ${ring_only})
# Several threads of one client blocked on the silent server at once (one polls, the others sleep: Client::
# WaitOnServer), in each kind of blocking wait (Wait, CompleteKey, WaitBatch): every one returns TIMEOUT once the
# poller's deadline fails the server, none hangs, and the handle answers (TIMEOUT at once) and finalizes after.
shmemcache_pe_test(peer_timeout_silent_threads_np2 pe_peer_timeout 2 ARGS silent_threads 2000 6 TIMEOUT 120
                   LABELS reliability threads)
shmemcache_pe_test(peer_timeout_silent_threads_np2_tcp pe_peer_timeout 2 TCP ARGS silent_threads 2000 6 TIMEOUT 120
                   LABELS reliability threads)

# Init fails together: one PE with hash_ways = 0, different configurations, a variable on one PE only, a
# variable that does not parse on one PE; every PE gets CONFIG_ERROR and the job exits 0.
shmemcache_pe_test(init_errors_together_np3 pe_init_errors 3 ARGS together TIMEOUT 120 LABELS reliability)
shmemcache_pe_test(init_errors_together_np3_tcp pe_init_errors 3 TCP ARGS together TIMEOUT 120 LABELS reliability)

# Absurd but parseable sizes: CONFIG_ERROR on every PE naming the variable, never a crash (issue 12, item 4).
shmemcache_pe_test(init_errors_hash_sets_overflow_np3 pe_init_errors 3
                   ARGS env SHMEMCACHE_HASH_SETS SHMEMCACHE_HASH_SETS
                   ENV SHMEMCACHE_HASH_SETS=134217728G TIMEOUT 120 LABELS reliability)
shmemcache_pe_test(init_errors_server_memory_near_2e64_np3 pe_init_errors 3
                   ARGS env SHMEMCACHE_SERVER_MEMORY_BYTES SHMEMCACHE_SERVER_MEMORY_BYTES
                   ENV SHMEMCACHE_SERVER_MEMORY_BYTES=18446744073709551608 TIMEOUT 120 LABELS reliability)
shmemcache_pe_test(init_errors_server_memory_2e64_minus_1_np3 pe_init_errors 3
                   ARGS env SHMEMCACHE_SERVER_MEMORY_BYTES SHMEMCACHE_SERVER_MEMORY_BYTES
                   ENV SHMEMCACHE_SERVER_MEMORY_BYTES=18446744073709551615 TIMEOUT 120 LABELS reliability)
shmemcache_pe_test(init_errors_directory_too_large_np3 pe_init_errors 3
                   ARGS env SHMEMCACHE_DIRECTORY_ENTRIES SHMEMCACHE_DIRECTORY_ENTRIES SHMEMCACHE_DIRECTORY_WAYS
                   ENV SHMEMCACHE_DIRECTORY_ENTRIES=1G SHMEMCACHE_DIRECTORY_WAYS=64 TIMEOUT 120
                   LABELS reliability)
