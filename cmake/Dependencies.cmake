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
endif()
