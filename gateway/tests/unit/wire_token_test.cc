// WireToken / TokenOfWire (backend/wire_token.h): what a memcached client sees of a shmemcache token.
#include "backend/wire_token.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace shmemcached {
namespace {

TEST(WireToken, IsABijectionPerKeyThatKeepsNoTokenAsZero) {
  for (const std::string& key : {std::string("a"), std::string("b"), std::string("counter:17"), std::string("\0x", 2),
                                  std::string(250, 'k')}) {
    EXPECT_EQ(WireToken(key, 0), 0u);
    EXPECT_EQ(TokenOfWire(key, 0), 0u);
    for (uint64_t token : {1ull, 2ull, 12345ull, (1ull << 39) + 7, (1ull << 61) - 1}) {
      const uint64_t wire = WireToken(key, token);
      EXPECT_NE(wire, 0u) << key;
      EXPECT_LT(wire, 1ull << 63) << "positive as an int64";
      EXPECT_EQ(TokenOfWire(key, wire), token) << key;
    }
  }
}

TEST(WireToken, TheMaskItselfIsATokenThatMatchesNothingNotNoToken) {
  // Sent by a client, KeyMask(key) would map to 0 = "store unconditionally" without the guard.
  for (const std::string& key : {std::string("k"), std::string("absent")}) {
    EXPECT_EQ(TokenOfWire(key, KeyMask(key)), kNoSuchToken);
    EXPECT_NE(TokenOfWire(key, KeyMask(key)), 0u);
  }
}

TEST(WireToken, EqualTokensOfDifferentKeysLookDifferentAndDoNotMatchEachOther) {
  // shmemcache gives new keys small, often equal tokens (block versions): on the wire they must differ, and
  // one key's wire token must not name another key's token (memcached answers EXISTS to such a cas).
  std::set<uint64_t> seen;
  for (int i = 0; i < 10000; ++i) {
    const std::string key = "key" + std::to_string(i);
    EXPECT_TRUE(seen.insert(WireToken(key, 1)).second) << key;
    EXPECT_NE(TokenOfWire("other", WireToken(key, 1)), 1u) << key;
  }
}

}  // namespace
}  // namespace shmemcached
