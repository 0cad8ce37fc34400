// A client PE that speaks the wire protocol (conduit/message.h) through its own Conduit instead of its Client,
// for tests of the server's dispatch: its Client never sends a message, so this conduit has the rings.
#ifndef SHMEMCACHE_TESTS_UNIT_RAW_CLIENT_H_
#define SHMEMCACHE_TESTS_UNIT_RAW_CLIENT_H_

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "conduit/conduit.h"
#include "conduit/message.h"
#include "node/node.h"

namespace smc {
namespace testing_loopback {

class RawClient {
 public:
  explicit RawClient(Node& node)
      : ctx_(node.transport()->CreateContext(1)),
        conduit_(node.transport(), ctx_.get(), ConduitLayoutFor(node.config(), node.layout(), node.symmetric()),
                 static_cast<size_t>(node.client_rank()), /*first_peer_pe=*/0, node.config().op_timeout_ms) {}

  // Sends message to server 0 and returns its reply (header in *h, value bytes after it).
  std::vector<uint8_t> Ask(const std::vector<uint8_t>& message, ReplyHeader* h, int server = 0) {
    std::vector<uint8_t> reply;
    EXPECT_EQ(conduit_.Send(static_cast<size_t>(server), message.data(), message.size(), true), SHMEMCACHE_OK);
    EXPECT_EQ(conduit_.Receive(static_cast<size_t>(server), &reply), SHMEMCACHE_OK);
    EXPECT_GE(reply.size(), sizeof(ReplyHeader));
    if (reply.size() >= sizeof(ReplyHeader)) std::memcpy(h, reply.data(), sizeof(*h));
    return reply;
  }
  std::vector<uint8_t> Request(Op op, const std::string& key, const std::string& value, uint64_t max_value) {
    return Request(op, key, value, max_value, RequestHeader{});
  }
  // The same with the contract fields (mode, flags, ttl_ms, cas, delta) of `fields`.
  std::vector<uint8_t> Request(Op op, const std::string& key, const std::string& value, uint64_t max_value,
                               const RequestHeader& fields) {
    RequestHeader h = fields;
    h.op = static_cast<uint8_t>(op);
    h.key_len = static_cast<uint32_t>(key.size());
    h.value_len = static_cast<uint32_t>(value.size());
    h.request_id = ++next_id_;
    h.max_value = max_value;
    std::vector<uint8_t> m;
    EncodeRequest(&m, h, key.data(), key.size(), value.data(), value.size());
    return m;
  }
  uint64_t last_id() const { return next_id_; }

 private:
  std::unique_ptr<Context> ctx_;
  Conduit conduit_;
  uint64_t next_id_ = 0;
};

}  // namespace testing_loopback
}  // namespace smc

#endif  // SHMEMCACHE_TESTS_UNIT_RAW_CLIENT_H_
