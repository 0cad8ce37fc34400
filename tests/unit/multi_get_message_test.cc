// The multi-get message's encoding (conduit/multi_get_message.h): a request and a reply round-trip through the
// writers and readers, the reply writer honours its budget, and every kind of malformed body is caught.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conduit/multi_get_message.h"

namespace smc {
namespace {

std::vector<uint8_t> Request(const std::vector<std::string>& keys, std::vector<uint64_t> caps) {
  RequestHeader h{};
  h.request_id = 42;
  h.recency = 7;
  h.max_value = 9999;
  std::vector<uint8_t> out;
  MultiGetRequestWriter w;
  w.Begin(&out, h);
  for (size_t i = 0; i < keys.size(); ++i) w.Add(keys[i].data(), keys[i].size(), caps[i]);
  return out;
}

TEST(MultiGetMessage, RequestRoundTrips) {
  const std::vector<std::string> keys = {"alpha", "b", std::string(250, 'k')};
  std::vector<uint8_t> msg = Request(keys, {10, 0, 1u << 20});
  RequestView view;
  ASSERT_TRUE(DecodeRequest(msg, &view));  // the common request decoder accepts it
  EXPECT_EQ(static_cast<Op>(view.header.op), Op::kMultiGet);
  EXPECT_EQ(view.header.key_len, 0u);
  EXPECT_EQ(view.header.flags, 3u);
  EXPECT_EQ(view.header.request_id, 42u);
  EXPECT_EQ(view.header.max_value, 9999u);
  EXPECT_EQ(view.header.value_len, msg.size() - sizeof(RequestHeader));
  MultiGetRequestReader r(view.value, view.header.value_len, view.header.flags);
  const uint8_t* key;
  size_t key_len;
  uint64_t cap;
  std::vector<uint64_t> caps;
  for (const std::string& k : keys) {
    ASSERT_TRUE(r.Next(&key, &key_len, &cap));
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(key), key_len), k);
    caps.push_back(cap);
  }
  EXPECT_FALSE(r.Next(&key, &key_len, &cap));
  EXPECT_FALSE(r.malformed());
  EXPECT_EQ(caps, (std::vector<uint64_t>{10, 0, 1u << 20}));
}

TEST(MultiGetMessage, MalformedRequestsAreCaught) {
  std::vector<uint8_t> msg = Request({"one", "two"}, {1, 2});
  RequestView view;
  ASSERT_TRUE(DecodeRequest(msg, &view));
  const uint8_t* key;
  size_t key_len;
  uint64_t cap;
  auto walk = [&](const uint8_t* body, size_t bytes, uint32_t count) {
    MultiGetRequestReader r(body, bytes, count);
    while (r.Next(&key, &key_len, &cap)) {
    }
    return r.malformed();
  };
  EXPECT_FALSE(walk(view.value, view.header.value_len, 2));
  EXPECT_TRUE(walk(view.value, view.header.value_len, 3));      // more items claimed than present
  EXPECT_TRUE(walk(view.value, view.header.value_len, 1));      // bytes left over
  EXPECT_TRUE(walk(view.value, view.header.value_len - 1, 2));  // the last key runs past the body
  EXPECT_TRUE(walk(view.value, 10, 1));                         // not even one item header
  // A key length pointing far past the body.
  std::vector<uint8_t> body(view.value, view.value + view.header.value_len);
  MultiGetKey k;
  std::memcpy(&k, body.data(), sizeof(k));
  k.key_len = 0xFFFFFFF0u;
  std::memcpy(body.data(), &k, sizeof(k));
  EXPECT_TRUE(walk(body.data(), body.size(), 2));
}

MultiGetAnswer Answer(Status status, uint32_t value_len, uint8_t wire_flags = 0) {
  MultiGetAnswer a{};
  a.status = static_cast<uint8_t>(status);
  a.value_len = value_len;
  a.wire_flags = wire_flags;
  a.token = 1000 + value_len;
  a.flags = 77;
  a.pointer.offset = 4096;
  a.pointer.valid = 1;
  return a;
}

TEST(MultiGetMessage, ReplyRoundTripsEveryStatus) {
  ReplyHeader h{};
  h.request_id = 5;
  h.epoch = 3;
  std::vector<uint8_t> out;
  MultiGetReplyWriter w;
  w.Begin(&out, h, 4096);
  const std::string v = "hello";
  ASSERT_TRUE(w.Fits(v.size()));
  w.Add(Answer(SHMEMCACHE_OK, 5), reinterpret_cast<const uint8_t*>(v.data()), v.size());
  w.Add(Answer(SHMEMCACHE_NOT_FOUND, 0), nullptr, 0);
  w.Add(Answer(SHMEMCACHE_BUFFER_TOO_SMALL, 300), nullptr, 0);  // the size needed, no bytes
  w.Add(Answer(SHMEMCACHE_OK, 20000, message_flags::kAskAlone), nullptr, 0);
  w.Add(Answer(SHMEMCACHE_OK, 0), nullptr, 0);  // an empty value
  w.set_expiration_bar(11);
  ReplyHeader got;
  std::memcpy(&got, out.data(), sizeof(got));
  EXPECT_EQ(static_cast<Op>(got.op), Op::kMultiGet);
  EXPECT_EQ(got.status, SHMEMCACHE_OK);
  EXPECT_EQ(got.flags, 5u);
  EXPECT_EQ(got.request_id, 5u);
  EXPECT_EQ(got.expiration_bar, 11u);
  EXPECT_EQ(got.value_len, out.size() - sizeof(got));
  MultiGetReplyReader r(out.data() + sizeof(got), got.value_len, got.flags, 6);
  MultiGetAnswer a;
  const uint8_t* value;
  ASSERT_TRUE(r.Next(16, &a, &value));
  EXPECT_EQ(a.status, SHMEMCACHE_OK);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(value), a.value_len), "hello");
  EXPECT_EQ(a.token, 1005u);
  EXPECT_EQ(a.flags, 77u);
  EXPECT_EQ(a.pointer.offset, 4096u);
  ASSERT_TRUE(r.Next(16, &a, &value));
  EXPECT_EQ(a.status, SHMEMCACHE_NOT_FOUND);
  ASSERT_TRUE(r.Next(16, &a, &value));  // 300 > 16 is fine: no bytes carried
  EXPECT_EQ(a.status, SHMEMCACHE_BUFFER_TOO_SMALL);
  EXPECT_EQ(a.value_len, 300u);
  ASSERT_TRUE(r.Next(1 << 20, &a, &value));
  EXPECT_TRUE(a.wire_flags & message_flags::kAskAlone);
  EXPECT_FALSE(MultiGetReplyReader::CarriesValue(a));
  ASSERT_TRUE(r.Next(0, &a, &value));
  EXPECT_EQ(a.value_len, 0u);
  EXPECT_FALSE(r.Next(16, &a, &value));
  EXPECT_FALSE(r.malformed());
}

TEST(MultiGetMessage, ReplyWriterKeepsToItsBudget) {
  std::vector<uint8_t> out;
  MultiGetReplyWriter w;
  const size_t budget = sizeof(ReplyHeader) + 2 * sizeof(MultiGetAnswer) + 100;
  w.Begin(&out, ReplyHeader{}, budget);
  std::vector<uint8_t> value(100, 'x');
  EXPECT_TRUE(w.Fits(100));
  EXPECT_FALSE(w.Fits(101 + sizeof(MultiGetAnswer)));
  w.Add(Answer(SHMEMCACHE_OK, 100), value.data(), 100);
  EXPECT_FALSE(w.Fits(1));
  EXPECT_TRUE(w.Fits(0));
  w.Add(Answer(SHMEMCACHE_NOT_FOUND, 0), nullptr, 0);
  EXPECT_FALSE(w.Fits(0));
  EXPECT_EQ(out.size(), budget);
  EXPECT_EQ(w.answers(), 2u);
}

TEST(MultiGetMessage, MalformedRepliesAreCaught) {
  std::vector<uint8_t> out;
  MultiGetReplyWriter w;
  w.Begin(&out, ReplyHeader{}, 4096);
  const std::string v = "0123456789";
  w.Add(Answer(SHMEMCACHE_OK, 10), reinterpret_cast<const uint8_t*>(v.data()), 10);
  w.Add(Answer(SHMEMCACHE_NOT_FOUND, 0), nullptr, 0);
  const uint8_t* body = out.data() + sizeof(ReplyHeader);
  const size_t bytes = out.size() - sizeof(ReplyHeader);
  auto walk = [&](const uint8_t* b, size_t n, uint32_t answers, uint32_t max_answers, uint64_t cap) {
    MultiGetReplyReader r(b, n, answers, max_answers);
    MultiGetAnswer a;
    const uint8_t* value;
    while (r.Next(cap, &a, &value)) {
    }
    return r.malformed();
  };
  EXPECT_FALSE(walk(body, bytes, 2, 2, 10));
  EXPECT_FALSE(walk(body, bytes, 2, 5, 10));     // fewer answers than items: the rest are asked again
  EXPECT_TRUE(walk(body, bytes, 2, 1, 10));      // more answers than items asked
  EXPECT_TRUE(walk(body, bytes, 0, 2, 10));      // no answer at all: a server always answers one
  EXPECT_TRUE(walk(body, bytes, 2, 2, 9));       // a value longer than its buffer
  EXPECT_TRUE(walk(body, bytes - 1, 2, 2, 10));  // cut short
  EXPECT_TRUE(walk(body, bytes, 1, 2, 10));      // bytes left over
  EXPECT_TRUE(walk(body, 70, 1, 2, 10));         // the value runs past the body
}

}  // namespace
}  // namespace smc
