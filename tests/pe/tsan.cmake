# ThreadSanitizer (issue 16): the library instrumented once more, with -fsanitize=thread, and pe_threads on it
# (tsan.threads_np3, tsan.threads_np3_tcp; labels sanitize, threads, pe): 8 threads sharing a handle in each of 2
# clients, both transports. Any report fails the run (TSan exits 66). What OpenMPI needs under TSan (measured):
#   - its and UCX's memory hooks off (OMPI_MCA_memory=^patcher, UCX_MEM_*): with them a process whose second
#     thread calls into OpenSHMEM dies with SIGSEGV inside TSan's interceptors, before any report;
#   - detect_deadlocks=0: OpenMPI's btl_tcp takes two of its own mutexes in both orders at init and finalize
#     (main thread only: TSan's lock-order report, not a race, and not ours);
#   - history_size=7: with 16 busy threads the default history lost the earlier access's stack now and then,
#     and a report without it cannot be matched against the suppressions below.
# Three suppressions (tsan_suppressions.txt): Direct SETs written in place through a mapping, whose block protocol
# synchronises through the runtime's atomics, which TSan cannot see; and, over tcp, servers' puts copied in by UCX
# on whichever of our threads progresses; and OpenMPI's own race between a thread creating its context and another
# thread's progress loop taking the new worker's spinlock (the file says why each is safe or not ours).
option(SHMEMCACHE_TSAN_TESTS "Also build pe_threads under ThreadSanitizer (labels sanitize, threads)" ON)
if(NOT SHMEMCACHE_TSAN_TESTS)
  return()
endif()
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=thread")
set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=thread")
check_cxx_source_compiles("int main() { return 0; }" SHMEMCACHE_HAVE_TSAN)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NOT SHMEMCACHE_HAVE_TSAN)
  message(WARNING "the compiler cannot build with -fsanitize=thread: no ThreadSanitizer test")
  return()
endif()

shmemcache_instrumented_library(tsan -fsanitize=thread -O1 -g)

add_executable(pe_threads_tsan ${CMAKE_CURRENT_SOURCE_DIR}/pe_threads.cc ${CMAKE_CURRENT_SOURCE_DIR}/common/pe_test.cc)
target_include_directories(pe_threads_tsan PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(pe_threads_tsan PRIVATE shmemcache_tsan)
add_executable(pe_threads_wait_tsan ${CMAKE_CURRENT_SOURCE_DIR}/pe_threads_wait.cc
               ${CMAKE_CURRENT_SOURCE_DIR}/common/pe_test.cc)
target_include_directories(pe_threads_wait_tsan PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(pe_threads_wait_tsan PRIVATE shmemcache_tsan)
add_executable(pe_peer_timeout_tsan ${CMAKE_CURRENT_SOURCE_DIR}/pe_peer_timeout.cc
               ${CMAKE_CURRENT_SOURCE_DIR}/common/pe_test.cc)
target_include_directories(pe_peer_timeout_tsan PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(pe_peer_timeout_tsan PRIVATE shmemcache_tsan)
add_executable(pe_completion_fd_tsan ${CMAKE_CURRENT_SOURCE_DIR}/pe_completion_fd.cc
               ${CMAKE_CURRENT_SOURCE_DIR}/common/pe_test.cc)
target_include_directories(pe_completion_fd_tsan PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(pe_completion_fd_tsan PRIVATE shmemcache_tsan)

set(tsan_env OMPI_MCA_memory=^patcher UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_MALLOC_HOOKS=no UCX_MEM_EVENTS=no
    TSAN_OPTIONS=detect_deadlocks=0:history_size=7:suppressions=${CMAKE_CURRENT_SOURCE_DIR}/tsan_suppressions.txt)
shmemcache_pe_test(tsan.threads_np3 pe_threads_tsan 3 ARGS multi 8 300 ENV ${tsan_env} LABELS sanitize threads)
shmemcache_pe_test(tsan.threads_np3_tcp pe_threads_tsan 3 TCP ARGS multi 8 200 ENV ${tsan_env}
                   LABELS sanitize threads)
shmemcache_pe_test(tsan.threads_active_np4 pe_threads_tsan 4 ARGS active 8 200 ENV ${tsan_env}
                   LABELS sanitize threads)
shmemcache_pe_test(tsan.threads_active_np4_tcp pe_threads_tsan 4 TCP ARGS active 8 120 ENV ${tsan_env}
                   LABELS sanitize threads)
shmemcache_pe_test(tsan.threads_large_np4 pe_threads_tsan 4 ARGS active 8 200 ENV ${tsan_env}
                   SHMEMCACHE_LARGE_VALUE_THRESHOLD=256 LABELS sanitize threads)
# Values up to 8000 B: bursts of isets placed in several reservation slots at once (conduit/message.h kPlaceSlots).
shmemcache_pe_test(tsan.threads_placed_np4 pe_threads_tsan 4 ARGS active 8 200 8000 ENV ${tsan_env}
                   LABELS sanitize threads)
shmemcache_pe_test(tsan.threads_wait_np2 pe_threads_wait_tsan 2
                   ARGS ${CMAKE_CURRENT_BINARY_DIR}/tsan-threads-wait-np2 4 100
                   ENV ${tsan_env} SHMEMCACHE_TEST_SPILL_READ_HOLD=${CMAKE_CURRENT_BINARY_DIR}/tsan-threads-wait-np2.hold
                   LABELS sanitize threads)
shmemcache_pe_test(tsan.threads_wait_mget_np2 pe_threads_wait_tsan 2
                   ARGS ${CMAKE_CURRENT_BINARY_DIR}/tsan-threads-wait-mget-np2 4 100 mget
                   ENV ${tsan_env}
                   SHMEMCACHE_TEST_SPILL_READ_HOLD=${CMAKE_CURRENT_BINARY_DIR}/tsan-threads-wait-mget-np2.hold
                   LABELS sanitize threads)
# Threads blocked on a server that stops answering, until the poller's deadline fails it (pe_peer_timeout
# silent_threads): the sleepers' wake-up and the failure's completions under TSan.
shmemcache_pe_test(tsan.peer_timeout_silent_threads_np2 pe_peer_timeout_tsan 2 ARGS silent_threads 2000 6 TIMEOUT 180
                   ENV ${tsan_env} LABELS sanitize threads)
# Completion wake-ups (issue 17) under TSan: 3 threads sharing a handle arm and sleep on one eventfd (Arm reads the
# counts, queue sizes and the wake line without a lock, then takes each server's lock once), and an arm that must not
# wait for a lock another thread holds while a stopped server fails (pe_peer_timeout arm_skips).
shmemcache_pe_test(tsan.completion_fd_np2_threads pe_completion_fd_tsan 2 ARGS sleep 1000 3 TIMEOUT 180
                   ENV ${tsan_env} SHMEMCACHE_DIRECT_OPS=0 SHMEMCACHE_IDLE_SPIN_US=1 LABELS sanitize threads)
shmemcache_pe_test(tsan.peer_timeout_arm_skips_np3 pe_peer_timeout_tsan 3 ARGS arm_skips 5000 TIMEOUT 180
                   ENV ${tsan_env} SHMEMCACHE_DIRECT_OPS=0 SHMEMCACHE_IDLE_SPIN_US=1 SHMEMCACHE_OVERSUBSCRIBED=0
                   LABELS sanitize threads)
