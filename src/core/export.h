// The library is built with -fvisibility=hidden; only the C API is exported.
#ifndef SHMEMCACHE_CORE_EXPORT_H_
#define SHMEMCACHE_CORE_EXPORT_H_
#define SHMEMCACHE_EXPORT extern "C" __attribute__((visibility("default")))
#endif
