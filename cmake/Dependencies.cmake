# Finds OpenMPI's OpenSHMEM (liboshmem) and xxHash from the system and exposes them as imported targets
# shmemcache_deps::oshmem and shmemcache_deps::xxhash. Used both in-tree and by the installed package config.
if(NOT TARGET shmemcache_deps::oshmem)
  find_path(SHMEMCACHE_OSHMEM_INCLUDE_DIR shmem.h
            HINTS ${OSHMEM_ROOT}/include /usr/lib/x86_64-linux-gnu/openmpi/include
                  /usr/lib/aarch64-linux-gnu/openmpi/include /usr/include/openmpi /usr/local/include)
  find_library(SHMEMCACHE_OSHMEM_LIBRARY NAMES oshmem HINTS ${OSHMEM_ROOT}/lib)
  find_library(SHMEMCACHE_MPI_LIBRARY NAMES mpi HINTS ${OSHMEM_ROOT}/lib)
  if(NOT SHMEMCACHE_OSHMEM_INCLUDE_DIR OR NOT SHMEMCACHE_OSHMEM_LIBRARY)
    message(FATAL_ERROR "OpenSHMEM (liboshmem, shmem.h) not found: install libopenmpi-dev (scripts/setup.sh) "
                        "or set OSHMEM_ROOT")
  endif()
  add_library(shmemcache_deps::oshmem INTERFACE IMPORTED)
  set_target_properties(shmemcache_deps::oshmem PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${SHMEMCACHE_OSHMEM_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${SHMEMCACHE_OSHMEM_LIBRARY};${SHMEMCACHE_MPI_LIBRARY}")
endif()
if(NOT TARGET shmemcache_deps::xxhash)
  find_path(SHMEMCACHE_XXHASH_INCLUDE_DIR xxhash.h)
  find_library(SHMEMCACHE_XXHASH_LIBRARY NAMES xxhash)
  if(NOT SHMEMCACHE_XXHASH_INCLUDE_DIR OR NOT SHMEMCACHE_XXHASH_LIBRARY)
    message(FATAL_ERROR "xxHash not found: install libxxhash-dev (scripts/setup.sh)")
  endif()
  add_library(shmemcache_deps::xxhash INTERFACE IMPORTED)
  set_target_properties(shmemcache_deps::xxhash PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${SHMEMCACHE_XXHASH_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${SHMEMCACHE_XXHASH_LIBRARY}")
  # Debian's libxxhash is a generic (scalar) build, ~70x slower than SIMD on 4 KiB, but it also exports the
  # x86 dispatcher (XXH3_*_dispatch: SSE2/AVX2/AVX-512 chosen at run time). Use it where it links (only our
  # sources need the answer; a package consumer without C enabled skips the check).
endif()
if(CMAKE_C_COMPILER_LOADED AND NOT DEFINED SHMEMCACHE_XXH3_DISPATCH_CHECKED)
  set(SHMEMCACHE_XXH3_DISPATCH_CHECKED ON)
  include(CheckCSourceCompiles)
  include(CMakePushCheckState)
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_INCLUDES "${SHMEMCACHE_XXHASH_INCLUDE_DIR}")
  set(CMAKE_REQUIRED_LIBRARIES "${SHMEMCACHE_XXHASH_LIBRARY}")
  set(CMAKE_REQUIRED_QUIET ON)
  check_c_source_compiles("
    #include <xxhash.h>
    #include <xxh_x86dispatch.h>
    int main(void) { return (int)XXH3_64bits_withSeed_dispatch(\"ab\", 2, 1); }" SHMEMCACHE_XXH3_DISPATCH)
  cmake_pop_check_state()
  if(SHMEMCACHE_XXH3_DISPATCH)
    set_property(TARGET shmemcache_deps::xxhash APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS
                 SHMEMCACHE_XXH3_DISPATCH=1)
  endif()
endif()
