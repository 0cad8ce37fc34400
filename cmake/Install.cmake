# Install rules and the package files that let other projects use an installed shmemcache:
#   include/shmemcache/*.h, *.hpp            public headers
#   lib/libshmemcache.so.*, libshmemcache.a  the shared and the static library
#   lib/cmake/shmemcache/                    find_package(shmemcache CONFIG): shmemcache::shmemcache (shared),
#                                            shmemcache::shmemcache_static
#   lib/pkgconfig/shmemcache.pc              pkg-config --cflags --libs [--static] shmemcache
# Included by the root CMakeLists.txt once the targets shmemcache and shmemcache_static exist.
#
# Why the static target needs help: in the build tree shmemcache_static links liboshmem and xxhash through
# $<BUILD_INTERFACE:shmemcache_deps::...>, which the export drops, so the exported static target would carry no
# dependencies and a static consumer would fail to link (undefined shmem_* and XXH3_* symbols). The package
# config therefore finds both again (it installs and includes cmake/Dependencies.cmake, the same code the build
# uses) and appends them to shmemcache::shmemcache_static as link-only dependencies. The shared target needs
# nothing: libshmemcache.so records liboshmem and libxxhash as its own DT_NEEDED entries, and the public
# headers never include shmem.h or xxhash.h.
include(CMakePackageConfigHelpers)

set(SHMEMCACHE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/shmemcache"
    CACHE STRING "Where the shmemcache CMake package files are installed (relative to the prefix)")
set(SHMEMCACHE_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
    CACHE STRING "Where shmemcache.pc is installed (relative to the prefix)")

# ---- headers and libraries ----------------------------------------------------------------------------------
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/shmemcache"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        COMPONENT shmemcache_development
        FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")

install(TARGETS shmemcache shmemcache_static
        EXPORT shmemcacheTargets
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT shmemcache_runtime
                NAMELINK_COMPONENT shmemcache_development
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT shmemcache_development
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT shmemcache_runtime
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

# ---- CMake package ------------------------------------------------------------------------------------------
install(EXPORT shmemcacheTargets
        NAMESPACE shmemcache::
        FILE shmemcacheTargets.cmake
        DESTINATION "${SHMEMCACHE_INSTALL_CMAKEDIR}"
        COMPONENT shmemcache_development)

# The OpenSHMEM root this tree was built against, so a consumer's package config looks there first.
set(SHMEMCACHE_PACKAGE_OSHMEM_ROOT "${OSHMEM_ROOT}")
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/shmemcacheConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/package/shmemcacheConfig.cmake"
  INSTALL_DESTINATION "${SHMEMCACHE_INSTALL_CMAKEDIR}"
  NO_SET_AND_CHECK_MACRO)
# 0.x: a minor release may change the API, so only the same major.minor is compatible.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/package/shmemcacheConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/package/shmemcacheConfig.cmake"
              "${PROJECT_BINARY_DIR}/package/shmemcacheConfigVersion.cmake"
        DESTINATION "${SHMEMCACHE_INSTALL_CMAKEDIR}"
        COMPONENT shmemcache_development)
install(FILES "${CMAKE_CURRENT_LIST_DIR}/Dependencies.cmake"
        DESTINATION "${SHMEMCACHE_INSTALL_CMAKEDIR}"
        RENAME shmemcacheDependencies.cmake
        COMPONENT shmemcache_development)

# ---- pkg-config ---------------------------------------------------------------------------------------------
# Libs.private / Requires.private only matter for `pkg-config --static` (linking libshmemcache.a): liboshmem
# and libmpi have no .pc of their own on Debian, so they are listed by directory and name; xxhash goes through
# its libxxhash.pc when there is one. The library is C++, so a C program that links it statically needs
# libstdc++ too.
get_filename_component(_shmemcache_oshmem_libdir "${SHMEMCACHE_OSHMEM_LIBRARY}" DIRECTORY)
set(SHMEMCACHE_PC_LIBS_PRIVATE "-L${_shmemcache_oshmem_libdir} -loshmem")
if(SHMEMCACHE_MPI_LIBRARY)
  get_filename_component(_shmemcache_mpi_libdir "${SHMEMCACHE_MPI_LIBRARY}" DIRECTORY)
  if(NOT _shmemcache_mpi_libdir STREQUAL _shmemcache_oshmem_libdir)
    string(APPEND SHMEMCACHE_PC_LIBS_PRIVATE " -L${_shmemcache_mpi_libdir}")
  endif()
  string(APPEND SHMEMCACHE_PC_LIBS_PRIVATE " -lmpi")
endif()
set(SHMEMCACHE_PC_REQUIRES_PRIVATE "")
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(SHMEMCACHE_PC_XXHASH QUIET libxxhash)
endif()
if(SHMEMCACHE_PC_XXHASH_FOUND)
  set(SHMEMCACHE_PC_REQUIRES_PRIVATE "libxxhash")
else()
  get_filename_component(_shmemcache_xxhash_libdir "${SHMEMCACHE_XXHASH_LIBRARY}" DIRECTORY)
  string(APPEND SHMEMCACHE_PC_LIBS_PRIVATE " -L${_shmemcache_xxhash_libdir} -lxxhash")
endif()
string(APPEND SHMEMCACHE_PC_LIBS_PRIVATE " -lstdc++ -lm")

# The prefix is only known for sure at install time (`cmake --install build --prefix DIR` overrides the
# configured one), so shmemcache.pc is generated by the install step itself, with the real prefix in it.
foreach(_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(_shmemcache_pc_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    # Escaped twice: it passes through install(CODE) before configure_file writes it out as ${prefix}/...
    set(_shmemcache_pc_${_dir} "\\\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()
set(_shmemcache_pc_out "${PROJECT_BINARY_DIR}/package/install-time/shmemcache.pc")
install(CODE "
  set(SHMEMCACHE_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(SHMEMCACHE_PC_LIBDIR \"${_shmemcache_pc_LIBDIR}\")
  set(SHMEMCACHE_PC_INCLUDEDIR \"${_shmemcache_pc_INCLUDEDIR}\")
  set(SHMEMCACHE_PC_VERSION \"${PROJECT_VERSION}\")
  set(SHMEMCACHE_PC_REQUIRES_PRIVATE \"${SHMEMCACHE_PC_REQUIRES_PRIVATE}\")
  set(SHMEMCACHE_PC_LIBS_PRIVATE \"${SHMEMCACHE_PC_LIBS_PRIVATE}\")
  configure_file(\"${CMAKE_CURRENT_LIST_DIR}/shmemcache.pc.in\" \"${_shmemcache_pc_out}\" @ONLY)
" COMPONENT shmemcache_development)
install(FILES "${_shmemcache_pc_out}"
        DESTINATION "${SHMEMCACHE_INSTALL_PKGCONFIGDIR}"
        COMPONENT shmemcache_development)
