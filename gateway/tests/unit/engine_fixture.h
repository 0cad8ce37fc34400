// A protocol engine over the ReferenceBackend with a fake clock, and helpers that feed a session bytes and
// collect its answers, whole or split into pieces.
#ifndef SHMEMCACHED_TESTS_UNIT_ENGINE_FIXTURE_H_
#define SHMEMCACHED_TESTS_UNIT_ENGINE_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "protocol/byte_queue.h"
#include "protocol/gateway_context.h"
#include "protocol/session.h"
#include "support/reference_backend.h"

namespace shmemcached {

// A string literal with its embedded NUL bytes.
template <size_t N>
std::string Bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

class FakeClock final : public Clock {
 public:
  uint64_t NowUnixMs() override { return unix_ms; }
  uint64_t unix_ms = 1700000000000;  // 2023-11-14
  uint64_t mono_ms = 1000;
  void Advance(uint64_t ms) {
    unix_ms += ms;
    mono_ms += ms;
  }
};

// One gateway (backend + context) and any number of sessions on it.
class Engine {
 public:
  explicit Engine(Limits limits = Limits(), size_t memory_limit = 0, size_t max_value = 1 << 20)
      : backend_([this] { return clock.mono_ms; }, max_value, memory_limit),
        gateway_(&backend_, &clock, limits, "1.6.18-test") {}

  struct Conn {
    std::unique_ptr<Session> session;
    ByteQueue in, out;
    Session::Next last = Session::Next::kNeedInput;
  };

  std::unique_ptr<Conn> Connect() {
    auto c = std::make_unique<Conn>();
    c->session = std::make_unique<Session>(&gateway_);
    return c;
  }

  // Feeds bytes to c, runs it, returns (and removes) all output produced so far. Output is drained after each
  // Process call so backpressure never blocks here.
  std::string Feed(Conn& c, const std::string& bytes) {
    c.in.Append(bytes);
    std::string out;
    while (true) {
      c.last = c.session->Process(&c.in, &c.out);
      out.append(c.out.view());
      c.out.Clear();
      if (c.last != Session::Next::kOutputFull) break;
    }
    return out;
  }

  // A fresh connection, the whole input at once.
  std::string Run(const std::string& bytes) {
    auto c = Connect();
    return Feed(*c, bytes);
  }

  // The same input in pieces of the given sizes (the rest in one piece).
  std::string RunSplit(const std::string& bytes, const std::vector<size_t>& cuts) {
    auto c = Connect();
    std::string out;
    size_t pos = 0;
    for (size_t cut : cuts) {
      if (pos >= bytes.size()) break;
      out += Feed(*c, bytes.substr(pos, cut));
      pos += cut;
    }
    if (pos < bytes.size()) out += Feed(*c, bytes.substr(pos));
    return out;
  }

  FakeClock clock;
  ReferenceBackend& backend() { return backend_; }
  GatewayContext& gateway() { return gateway_; }

 private:
  ReferenceBackend backend_;
  GatewayContext gateway_;
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_TESTS_UNIT_ENGINE_FIXTURE_H_
