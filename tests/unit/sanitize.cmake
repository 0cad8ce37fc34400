# The unit tests once more under AddressSanitizer + UndefinedBehaviorSanitizer (issue 12): a second binary,
# unit_tests_sanitize, built from the same test sources and the library's sources (all of them, instrumented, at
# -O1; the unit tests exercise every layer but the OpenSHMEM transport and the C API, whole jobs included, on the
# loopback transport). Every finding fails
# its test (-fno-sanitize-recover=all; ASan aborts by default); leaks are reported (LeakSanitizer). Each test is
# a ctest named sanitize.<Suite>.<Test>, label `sanitize`, run by scripts/test.sh with the rest. Some PE programs
# are built on the same instrumented library (tests/pe/CMakeLists.txt, shmemcache_pe_sanitize_test); README,
# "Sanitizers", says what OpenMPI needs for that.
option(SHMEMCACHE_SANITIZE_TESTS "Also build and run the unit tests and some PE tests under ASan + UBSan (label sanitize)" ON)
if(NOT SHMEMCACHE_SANITIZE_TESTS)
  return()
endif()
include(CheckCXXSourceCompiles)
set(SHMEMCACHE_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=address,undefined")
set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=address,undefined")
check_cxx_source_compiles("int main() { return 0; }" SHMEMCACHE_HAVE_SANITIZERS)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NOT SHMEMCACHE_HAVE_SANITIZERS)
  message(WARNING "the compiler cannot build with -fsanitize=address,undefined: no sanitize tests "
                  "(Debian: the libasan/libubsan of gcc come with g++)")
  return()
endif()

# The library, instrumented once (shmemcache_instrumented_library, tests/CMakeLists.txt): unit_tests_sanitize and
# the sanitized PE programs (tests/pe) link shmemcache_sanitize.
# -O1 after the build type's -O2/-O3 wins: quicker to build, and the reports point at the right lines.
shmemcache_instrumented_library(sanitize ${SHMEMCACHE_SANITIZE_FLAGS} -O1 -g)

add_executable(unit_tests_sanitize ${UNIT_TEST_SOURCES})
target_link_libraries(unit_tests_sanitize PRIVATE shmemcache_sanitize GTest::gtest GTest::gtest_main)
gtest_discover_tests(unit_tests_sanitize TEST_PREFIX sanitize. DISCOVERY_TIMEOUT 120
                     PROPERTIES TIMEOUT 300 LABELS sanitize
                     ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
