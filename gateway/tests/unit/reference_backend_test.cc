// The reference backend is the model the engine is tested against, so its own semantics are pinned here.
#include "support/reference_backend.h"

#include <gtest/gtest.h>

namespace shmemcached {
namespace {

class ReferenceBackendTest : public ::testing::Test {
 protected:
  uint64_t now_ = 0;
  ReferenceBackend b_{[this] { return now_; }, 100, 0};
  std::string value_;
  uint32_t flags_ = 0;
  uint64_t cas_ = 0;

  Status Put(std::string_view k, std::string_view v, StoreMode m = StoreMode::kSet, uint32_t flags = 0,
             uint64_t ttl = 0, uint64_t cas = 0, uint64_t* cas_out = nullptr) {
    StoreOptions o;
    o.mode = m;
    o.flags = flags;
    o.ttl_ms = ttl;
    o.cas = cas;
    return b_.Store(k, v, o, cas_out);
  }
  Status Get(std::string_view k) { return b_.Fetch(k, &value_, &flags_, &cas_); }
};

TEST_F(ReferenceBackendTest, ModesAndStatuses) {
  EXPECT_EQ(Put("k", "1", StoreMode::kReplace), Status::kNotStored);
  EXPECT_EQ(Put("k", "1", StoreMode::kAppend), Status::kNotStored);
  EXPECT_EQ(Put("k", "1", StoreMode::kAdd, 7), Status::kOk);
  EXPECT_EQ(Put("k", "2", StoreMode::kAdd), Status::kExists);
  EXPECT_EQ(Put("k", "b", StoreMode::kAppend, 99), Status::kOk);
  EXPECT_EQ(Put("k", "a", StoreMode::kPrepend, 99), Status::kOk);
  ASSERT_EQ(Get("k"), Status::kOk);
  EXPECT_EQ(value_, "a1b");
  EXPECT_EQ(flags_, 7u);  // append/prepend keep the pair's flags
  EXPECT_EQ(Put("k", "r", StoreMode::kReplace, 3), Status::kOk);
  ASSERT_EQ(Get("k"), Status::kOk);
  EXPECT_EQ(value_, "r");
  EXPECT_EQ(flags_, 3u);
  EXPECT_EQ(Put("k", std::string(101, 'x')), Status::kValueTooLarge);
  EXPECT_EQ(Put("k", std::string(100, 'x'), StoreMode::kAppend), Status::kValueTooLarge);
  EXPECT_EQ(Put(std::string(251, 'k'), "v"), Status::kKeyTooLong);
}

TEST_F(ReferenceBackendTest, CasTokens) {
  uint64_t c1, c2;
  ASSERT_EQ(Put("k", "1", StoreMode::kSet, 0, 0, 0, &c1), Status::kOk);
  ASSERT_EQ(Put("k", "2", StoreMode::kSet, 0, 0, c1, &c2), Status::kOk);
  EXPECT_NE(c1, c2);
  EXPECT_EQ(Put("k", "3", StoreMode::kSet, 0, 0, c1), Status::kExists);  // stale token changes nothing
  ASSERT_EQ(Get("k"), Status::kOk);
  EXPECT_EQ(value_, "2");
  EXPECT_EQ(cas_, c2);
  EXPECT_EQ(Put("absent", "x", StoreMode::kSet, 0, 0, c2), Status::kNotFound);
  uint64_t n;
  ASSERT_EQ(Put("n", "5"), Status::kOk);
  ASSERT_EQ(Get("n"), Status::kOk);
  uint64_t before = cas_;
  ASSERT_EQ(b_.Incr("n", 1, &n), Status::kOk);
  ASSERT_EQ(Get("n"), Status::kOk);
  EXPECT_NE(cas_, before);  // every modification, incr included, gets a new token
}

TEST_F(ReferenceBackendTest, IncrLikeMemcached) {
  uint64_t n;
  EXPECT_EQ(b_.Incr("none", 1, &n), Status::kNotFound);
  ASSERT_EQ(Put("n", "10"), Status::kOk);
  ASSERT_EQ(b_.Incr("n", -1, &n), Status::kOk);
  EXPECT_EQ(n, 9u);
  ASSERT_EQ(Get("n"), Status::kOk);
  EXPECT_EQ(value_, "9 ");  // shorter result written in place, padded
  ASSERT_EQ(b_.Incr("n", 991, &n), Status::kOk);
  ASSERT_EQ(Get("n"), Status::kOk);
  EXPECT_EQ(value_, "1000");
  ASSERT_EQ(b_.Incr("n", INT64_MIN, &n), Status::kOk);  // decrement stops at 0
  EXPECT_EQ(n, 0u);
  ASSERT_EQ(Put("w", "18446744073709551615"), Status::kOk);
  ASSERT_EQ(b_.Incr("w", 2, &n), Status::kOk);  // wraps
  EXPECT_EQ(n, 1u);
  for (const char* bad : {"", "abc", "-5", "5abc", "99999999999999999999"}) {
    ASSERT_EQ(Put("x", bad), Status::kOk);
    EXPECT_EQ(b_.Incr("x", 1, &n), Status::kNotNumeric) << bad;
  }
  ASSERT_EQ(Put("x", " 5 x"), Status::kOk);  // memcached's strtoull reading: a space ends the number
  EXPECT_EQ(b_.Incr("x", 1, &n), Status::kOk);
  EXPECT_EQ(n, 6u);
}

TEST_F(ReferenceBackendTest, ExpiryAndTouch) {
  ASSERT_EQ(Put("k", "v", StoreMode::kSet, 0, 1000), Status::kOk);
  now_ = 999;
  EXPECT_EQ(Get("k"), Status::kOk);
  now_ = 1000;
  EXPECT_EQ(Get("k"), Status::kNotFound);
  EXPECT_EQ(b_.Touch("k", 10), Status::kNotFound);
  ASSERT_EQ(Put("k", "v", StoreMode::kSet, 0, 10), Status::kOk);
  ASSERT_EQ(b_.Touch("k", 0), Status::kOk);  // never expires now
  now_ = 1000000;
  EXPECT_EQ(Get("k"), Status::kOk);
  ASSERT_EQ(Put("a", "x", StoreMode::kSet, 0, 5), Status::kOk);
  ASSERT_EQ(Put("a", "y", StoreMode::kAppend), Status::kOk);  // append keeps the expiry
  now_ += 5;
  EXPECT_EQ(Get("a"), Status::kNotFound);
}

TEST_F(ReferenceBackendTest, MultiGetBuffersAndFlush) {
  ASSERT_EQ(Put("a", "1234"), Status::kOk);
  ASSERT_EQ(Put("b", "1"), Status::kOk);
  MultiGetItem items[3];
  items[0].key = "a";
  items[0].buffer_len = 3;
  items[1].key = "b";
  items[1].buffer_len = 3;
  items[2].key = "c";
  items[2].buffer_len = 3;
  ASSERT_EQ(b_.MultiGet(items, 3), Status::kOk);
  EXPECT_EQ(items[0].status, Status::kBufferTooSmall);
  EXPECT_EQ(items[0].value_len, 4u);
  EXPECT_EQ(items[1].status, Status::kOk);
  EXPECT_EQ(items[1].value, "1");
  EXPECT_EQ(items[2].status, Status::kNotFound);
  ASSERT_EQ(b_.FlushAll(), Status::kOk);
  EXPECT_EQ(Get("a"), Status::kNotFound);
}

TEST(ReferenceBackendMemory, NoSpace) {
  ReferenceBackend b([] { return uint64_t{0}; }, 100, 10);
  StoreOptions o;
  EXPECT_EQ(b.Store("k", "12345678", o, nullptr), Status::kOk);  // 9 bytes
  EXPECT_EQ(b.Store("j", "12", o, nullptr), Status::kNoSpace);
  EXPECT_EQ(b.Store("k", "123456789", o, nullptr), Status::kOk);  // replacing frees the old bytes
}

}  // namespace
}  // namespace shmemcached
