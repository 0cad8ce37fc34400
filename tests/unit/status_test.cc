// The public status enum and its texts: values never move (they cross process and language boundaries), new
// statuses are appended, every status has its own text.
#include "core/status.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace smc {
namespace {

TEST(Status, ValuesAreStableAndAppended) {
  EXPECT_EQ(SHMEMCACHE_OK, 0);
  EXPECT_EQ(SHMEMCACHE_SHUT_DOWN, 11);
  EXPECT_EQ(SHMEMCACHE_EXISTS, SHMEMCACHE_SHUT_DOWN + 1);  // issue 15's three, in its order
  EXPECT_EQ(SHMEMCACHE_NOT_STORED, SHMEMCACHE_SHUT_DOWN + 2);
  EXPECT_EQ(SHMEMCACHE_NOT_NUMERIC, SHMEMCACHE_SHUT_DOWN + 3);
  EXPECT_EQ(SHMEMCACHE_TIMEOUT, SHMEMCACHE_SHUT_DOWN + 4);
}

TEST(Status, EveryStatusHasItsOwnText) {
  std::set<std::string> texts;
  for (int s = SHMEMCACHE_OK; s <= SHMEMCACHE_NOT_SUPPORTED; ++s) {
    const char* text = shmemcache_strerror(static_cast<shmemcache_status_t>(s));
    ASSERT_NE(text, nullptr);
    EXPECT_STRNE(text, "unknown status") << s;
    EXPECT_TRUE(texts.insert(text).second) << "duplicate text for " << s << ": " << text;
  }
  EXPECT_STREQ(shmemcache_strerror(static_cast<shmemcache_status_t>(SHMEMCACHE_NOT_SUPPORTED + 1)), "unknown status");
  EXPECT_STREQ(shmemcache_strerror(static_cast<shmemcache_status_t>(-1)), "unknown status");
}

TEST(Status, NewTexts) {
  EXPECT_STREQ(shmemcache_strerror(SHMEMCACHE_TIMEOUT),
               "a peer did not answer within op_timeout_ms; shmemcache_last_error() names the PE, ring and what was "
               "seen");
  EXPECT_STREQ(shmemcache_strerror(SHMEMCACHE_EXISTS),
               "add: the key is present; store with a CAS token: the pair changed since the token");
  EXPECT_STREQ(shmemcache_strerror(SHMEMCACHE_NOT_STORED), "replace / append / prepend: the key is absent");
  EXPECT_STREQ(shmemcache_strerror(SHMEMCACHE_NOT_NUMERIC),
               "incr: the stored value is not an unsigned decimal number of at most 20 digits");
}

TEST(Status, LastErrorIsPerCallDetail) {
  ClearLastError();
  EXPECT_STREQ(shmemcache_last_error(), "");
  EXPECT_EQ(Fail(SHMEMCACHE_TIMEOUT, "PE 3: no message from PE 0"), SHMEMCACHE_TIMEOUT);
  EXPECT_STREQ(shmemcache_last_error(), "PE 3: no message from PE 0");
  ClearLastError();
  EXPECT_STREQ(shmemcache_last_error(), "");
}

}  // namespace
}  // namespace smc
