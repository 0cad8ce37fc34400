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

# The library, instrumented once: each layer (CMakeLists.txt, shmemcache_layer) again as <layer>_sanitize, with
# the same sources, include view and dependencies; unit_tests_sanitize and the sanitized PE programs
# (tests/pe) link the static library made of them.
# -O1 after the build type's -O2/-O3 wins: quicker to build, and the reports point at the right lines.
set(sanitized_objects)
foreach(layer ${SHMEMCACHE_LAYERS})
  get_target_property(layer_sources ${layer} SOURCES)
  get_target_property(layer_includes ${layer} INCLUDE_DIRECTORIES)
  get_target_property(layer_libs ${layer} LINK_LIBRARIES)
  add_library(${layer}_sanitize OBJECT ${layer_sources})
  target_include_directories(${layer}_sanitize PRIVATE ${layer_includes})
  target_compile_options(${layer}_sanitize PRIVATE -Wall -Wextra ${SHMEMCACHE_SANITIZE_FLAGS} -O1 -g)
  if(layer_libs)
    target_link_libraries(${layer}_sanitize PRIVATE ${layer_libs})
  endif()
  list(APPEND sanitized_objects $<TARGET_OBJECTS:${layer}_sanitize>)
endforeach()
add_library(shmemcache_sanitize STATIC ${sanitized_objects})
target_include_directories(shmemcache_sanitize PUBLIC ${SHMEMCACHE_VIEW_DIR}/node ${PROJECT_SOURCE_DIR}/include)
target_compile_options(shmemcache_sanitize PUBLIC ${SHMEMCACHE_SANITIZE_FLAGS} -O1 -g)
target_link_options(shmemcache_sanitize PUBLIC ${SHMEMCACHE_SANITIZE_FLAGS})
target_link_libraries(shmemcache_sanitize PUBLIC shmemcache_deps::oshmem shmemcache_deps::xxhash Threads::Threads)

add_executable(unit_tests_sanitize ${UNIT_TEST_SOURCES})
target_link_libraries(unit_tests_sanitize PRIVATE shmemcache_sanitize GTest::gtest GTest::gtest_main)
gtest_discover_tests(unit_tests_sanitize TEST_PREFIX sanitize. DISCOVERY_TIMEOUT 120
                     PROPERTIES TIMEOUT 300 LABELS sanitize
                     ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
