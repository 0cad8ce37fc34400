// The multi-set message's encoding (conduit/multi_set_message.h): a request and a reply round-trip through the
// writers and readers, the sizes the client reserves are the sizes written, and every kind of malformed or
// truncated body is caught.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "conduit/multi_set_message.h"

namespace smc {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

std::vector<uint8_t> Request(const Pairs& pairs) {
  RequestHeader h{};
  h.request_id = 42;
  h.recency = 7;
  h.max_value = MultiSetReplyBytes(pairs.size());
  std::vector<uint8_t> out;
  MultiSetRequestWriter w;
  w.Begin(&out, h);
  for (const auto& p : pairs) w.Add(p.first.data(), p.first.size(), p.second.data(), p.second.size());
  EXPECT_EQ(w.bytes(), out.size());
  return out;
}

// Walks a request body; true when it is malformed. *got: the pairs read before the walk stopped.
bool WalkRequest(const uint8_t* body, size_t bytes, uint32_t count, Pairs* got = nullptr) {
  MultiSetRequestReader r(body, bytes, count);
  const uint8_t *key, *value;
  size_t key_len, value_len;
  while (r.Next(&key, &key_len, &value, &value_len)) {
    if (got != nullptr)
      got->emplace_back(std::string(reinterpret_cast<const char*>(key), key_len),
                        std::string(reinterpret_cast<const char*>(value), value_len));
  }
  return r.malformed();
}

TEST(MultiSetMessage, RequestRoundTrips) {
  const Pairs pairs = {{"alpha", "one"}, {"b", ""}, {std::string(250, 'k'), std::string(5000, 'v')}, {"c", "x"}};
  std::vector<uint8_t> msg = Request(pairs);
  size_t expected = sizeof(RequestHeader);
  for (const auto& p : pairs) expected += MultiSetPairBytes(p.first.size(), p.second.size());
  EXPECT_EQ(msg.size(), expected);  // what the client counts against its ring is what it writes
  RequestView view;
  ASSERT_TRUE(DecodeRequest(msg, &view));  // the common request decoder accepts it
  EXPECT_EQ(static_cast<Op>(view.header.op), Op::kMultiSet);
  EXPECT_EQ(view.header.key_len, 0u);
  EXPECT_EQ(view.header.flags, 4u);
  EXPECT_EQ(view.header.request_id, 42u);
  EXPECT_EQ(view.header.recency, 7u);
  EXPECT_EQ(view.header.max_value, MultiSetReplyBytes(4));
  EXPECT_EQ(view.header.value_len, msg.size() - sizeof(RequestHeader));
  Pairs got;
  EXPECT_FALSE(WalkRequest(view.value, view.header.value_len, view.header.flags, &got));
  EXPECT_EQ(got, pairs);
}

TEST(MultiSetMessage, MalformedOrTruncatedRequestsAreCaught) {
  std::vector<uint8_t> msg = Request({{"one", "value-1"}, {"two", "value-22"}});
  RequestView view;
  ASSERT_TRUE(DecodeRequest(msg, &view));
  const uint8_t* body = view.value;
  const size_t bytes = view.header.value_len;
  EXPECT_FALSE(WalkRequest(body, bytes, 2));
  EXPECT_TRUE(WalkRequest(body, bytes, 3));  // more pairs claimed than present
  EXPECT_TRUE(WalkRequest(body, bytes, 1));  // bytes left over
  EXPECT_TRUE(WalkRequest(body, bytes, 0));  // none claimed, bytes present
  for (size_t cut = 0; cut < bytes; ++cut) EXPECT_TRUE(WalkRequest(body, cut, 2)) << cut;  // every truncation
  // A message cut short fails the common decoder before any reader sees it.
  RequestView short_view;
  EXPECT_FALSE(DecodeRequest(msg.data(), msg.size() - 1, &short_view));
  // Lengths pointing far past the body (their sum would wrap a 32-bit count): caught, not read.
  std::vector<uint8_t> copy(body, body + bytes);
  MultiSetPair p;
  std::memcpy(&p, copy.data(), sizeof(p));
  p.key_len = 0xFFFFFFF0u;
  p.value_len = 0xFFFFFFF0u;
  std::memcpy(copy.data(), &p, sizeof(p));
  EXPECT_TRUE(WalkRequest(copy.data(), copy.size(), 2));
  // A value length one past its pair: the next pair's header is misread, and the body no longer adds up.
  std::memcpy(copy.data(), body, bytes);
  std::memcpy(&p, copy.data(), sizeof(p));
  ++p.value_len;
  std::memcpy(copy.data(), &p, sizeof(p));
  EXPECT_TRUE(WalkRequest(copy.data(), copy.size(), 2));
}

MultiSetAnswer Answer(Status status, uint64_t offset) {
  MultiSetAnswer a{};
  a.status = static_cast<uint8_t>(status);
  if (status == SHMEMCACHE_OK) {
    a.pointer.offset = offset;
    a.pointer.version = 2;
    a.pointer.block_bytes = 128;
    a.pointer.valid = 1;
  }
  return a;
}

std::vector<uint8_t> Reply(const std::vector<Status>& statuses) {
  ReplyHeader h{};
  h.request_id = 5;
  h.epoch = 3;
  std::vector<uint8_t> out;
  MultiSetReplyWriter w;
  w.Begin(&out, h);
  for (size_t i = 0; i < statuses.size(); ++i) w.Add(Answer(statuses[i], 4096 * (i + 1)));
  w.set_expiration_bar(11);
  return out;
}

TEST(MultiSetMessage, ReplyRoundTripsEveryStatus) {
  const std::vector<Status> statuses = {SHMEMCACHE_OK, SHMEMCACHE_NO_SPACE, SHMEMCACHE_VALUE_TOO_LARGE,
                                        SHMEMCACHE_INVALID_ARGUMENT, SHMEMCACHE_OK};
  std::vector<uint8_t> out = Reply(statuses);
  EXPECT_EQ(out.size(), MultiSetReplyBytes(statuses.size()));  // exactly what the client reserved
  ReplyHeader got;
  std::memcpy(&got, out.data(), sizeof(got));
  EXPECT_EQ(static_cast<Op>(got.op), Op::kMultiSet);
  EXPECT_EQ(got.status, SHMEMCACHE_OK);
  EXPECT_EQ(got.flags, statuses.size());
  EXPECT_EQ(got.request_id, 5u);
  EXPECT_EQ(got.epoch, 3u);
  EXPECT_EQ(got.expiration_bar, 11u);
  EXPECT_EQ(got.value_len, out.size() - sizeof(got));
  MultiSetReplyReader r(out.data() + sizeof(got), got.value_len, got.flags, static_cast<uint32_t>(statuses.size()));
  MultiSetAnswer a;
  for (size_t i = 0; i < statuses.size(); ++i) {
    ASSERT_TRUE(r.Next(&a));
    EXPECT_EQ(a.status, statuses[i]);
    EXPECT_EQ(a.pointer.valid, statuses[i] == SHMEMCACHE_OK ? 1 : 0);
    if (statuses[i] == SHMEMCACHE_OK) EXPECT_EQ(a.pointer.offset, 4096 * (i + 1));
  }
  EXPECT_FALSE(r.Next(&a));
  EXPECT_FALSE(r.malformed());
}

TEST(MultiSetMessage, MalformedOrTruncatedRepliesAreCaught) {
  std::vector<uint8_t> out = Reply({SHMEMCACHE_OK, SHMEMCACHE_NO_SPACE, SHMEMCACHE_OK});
  const uint8_t* body = out.data() + sizeof(ReplyHeader);
  const size_t bytes = out.size() - sizeof(ReplyHeader);
  auto walk = [](const uint8_t* b, size_t n, uint32_t answers, uint32_t items) {
    MultiSetReplyReader r(b, n, answers, items);
    MultiSetAnswer a;
    while (r.Next(&a)) {
    }
    return r.malformed();
  };
  EXPECT_FALSE(walk(body, bytes, 3, 3));
  EXPECT_TRUE(walk(body, bytes, 2, 3));  // fewer answers than pairs asked: a server answers every one
  EXPECT_TRUE(walk(body, bytes, 4, 3));  // more answers than pairs
  EXPECT_TRUE(walk(body, bytes, 3, 4));  // as many answers as the header says, but not as many as asked
  EXPECT_TRUE(walk(body, bytes, 0, 0));  // bytes left over
  EXPECT_TRUE(walk(body, bytes + 1, 3, 3));  // a byte too many
  for (size_t cut = 0; cut < bytes; ++cut) EXPECT_TRUE(walk(body, cut, 3, 3)) << cut;  // every truncation
}

}  // namespace
}  // namespace smc
