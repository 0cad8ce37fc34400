// StartReply (conduit/message.h): the reply header every Active request begins with, written field by field
// instead of value-initialized (issue 14), is byte for byte the value-initialized header with its epoch and
// server_ms set.
#include <gtest/gtest.h>

#include <cstring>

#include "conduit/message.h"

namespace smc {
namespace {

// Neither wire struct has padding: every byte is a field that StartReply writes.
static_assert(sizeof(WirePointer) == sizeof(uint64_t) * 3 + sizeof(uint32_t) * 2 + 2 + sizeof(WirePointer::reserved),
              "WirePointer has padding: StartReply's field-by-field zeroing would leave bytes unwritten");
static_assert(sizeof(ReplyHeader) == 4 + sizeof(uint32_t) + sizeof(uint64_t) * 3 + sizeof(WirePointer) +
                                         sizeof(uint64_t) * 3 + sizeof(uint32_t) * 2,
              "ReplyHeader has padding: StartReply's field-by-field zeroing would leave bytes unwritten");

TEST(ReplyHeader, StartReplyIsTheZeroHeaderWithItsEpochAndStamp) {
  for (uint64_t epoch : {uint64_t{0}, uint64_t{1}, ~uint64_t{0}}) {
    for (uint64_t server_ms : {uint64_t{0}, uint64_t{123456789}, ~uint64_t{0}}) {
      ReplyHeader want{};
      want.epoch = epoch;
      want.server_ms = server_ms;
      // Every byte is a field (the asserts above), so comparing the bytes compares every field.
      const ReplyHeader got = StartReply(epoch, server_ms);
      EXPECT_EQ(std::memcmp(&got, &want, sizeof(want)), 0) << "epoch " << epoch << " server_ms " << server_ms;
    }
  }
}

}  // namespace
}  // namespace smc
