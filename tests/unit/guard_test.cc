// No C++ exception crosses the C API (core/guard.h): whatever a call's body throws becomes the call's documented
// status, with the reason in shmemcache_last_error().
#include "core/guard.h"

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

namespace smc {
namespace {

TEST(Guarded, PassesTheBodysStatusThrough) {
  EXPECT_EQ(Guarded("call", SHMEMCACHE_NO_SPACE, [] { return SHMEMCACHE_NOT_FOUND; }), SHMEMCACHE_NOT_FOUND);
}

TEST(Guarded, ExceptionsBecomeTheStatus) {
  ClearLastError();
  EXPECT_EQ(Guarded("shmemcache_set", SHMEMCACHE_NO_SPACE, []() -> Status { throw std::bad_alloc(); }),
            SHMEMCACHE_NO_SPACE);
  EXPECT_EQ(std::string(shmemcache_last_error()), "shmemcache_set: out of memory in this process (std::bad_alloc)");
  EXPECT_EQ(Guarded("shmemcache_init", SHMEMCACHE_CONFIG_ERROR,
                    []() -> Status { throw std::length_error("vector::_M_default_append"); }),
            SHMEMCACHE_CONFIG_ERROR);
  EXPECT_EQ(std::string(shmemcache_last_error()), "shmemcache_init: vector::_M_default_append");
  EXPECT_EQ(Guarded("shmemcache_get", SHMEMCACHE_NO_SPACE, []() -> Status { throw 42; }), SHMEMCACHE_NO_SPACE);
  EXPECT_EQ(std::string(shmemcache_last_error()), "shmemcache_get: unexpected internal error");
}

TEST(Guarded, IsNoexcept) {
  auto body = [] { return SHMEMCACHE_OK; };
  EXPECT_TRUE(noexcept(Guarded("call", SHMEMCACHE_NO_SPACE, body)));
}

}  // namespace
}  // namespace smc
