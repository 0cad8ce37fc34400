// Random and truncated commands fed to many sessions of one gateway, in random pieces, with output drained
// at random (sometimes not at all): nothing crashes, every session stays within its bounds, and a control
// session keeps getting correct answers. Deterministic (fixed seeds) and bounded in time.
#include <gtest/gtest.h>

#include <random>

#include "engine_fixture.h"

namespace shmemcached {
namespace {

class Fuzzer {
 public:
  explicit Fuzzer(uint32_t seed) : rng_(seed) {}

  std::string Key() {
    static const char* kKeys[] = {"a", "b", "k1", "counter", "Zm9v", "\x01\x02", "long_key_name_here"};
    if (Pick(20) == 0) return std::string(1 + Pick(300), 'k');  // sometimes over the limit
    return kKeys[Pick(7)];
  }
  std::string Bytes(size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(Pick(256));
    return s;
  }
  std::string Number() {
    static const char* kNumbers[] = {"0", "1", "-1", "10", "4294967296", "2147483648", "18446744073709551615",
                                     "abc", "", "99999999999999999999", "1000000000", "3"};
    return kNumbers[Pick(12)];
  }
  std::string Command() {
    std::string value = Pick(10) == 0 ? std::string(Pick(3000), 'v') : Bytes(Pick(20));
    std::string len = Pick(8) == 0 ? Number() : std::to_string(value.size());
    switch (Pick(16)) {
      case 0: return "set " + Key() + " " + Number() + " " + Number() + " " + len + "\r\n" + value + "\r\n";
      case 1: return "get " + Key() + " " + Key() + " " + Key() + "\r\n";
      case 2: return "gets " + Key() + "\r\n";
      case 3: return "incr " + Key() + " " + Number() + "\r\n";
      case 4: return "cas " + Key() + " 0 0 " + len + " " + Number() + "\r\n" + value + "\r\n";
      case 5: return "ms " + Key() + " " + len + " T" + Number() + " c k O1 q\r\n" + value + "\r\n";
      case 6: return "mg " + Key() + " v k c f s O2 q\r\n";
      case 7: return "ma " + Key() + " N0 J5 D" + Number() + " v\r\n";
      case 8: return "md " + Key() + " q\r\n";
      case 9: return "gat " + Number() + " " + Key() + "\r\n";
      case 10: return "touch " + Key() + " " + Number() + " noreply\r\n";
      case 11: return "append " + Key() + " 0 0 " + len + "\r\n" + value + "\r\n";
      case 12: return "flush_all " + Number() + "\r\n";
      case 13: return Bytes(Pick(64));                  // garbage
      case 14: return std::string(Pick(4000), 'g');      // a long line without newline
      default: return "mn\r\nstats\r\nversion\r\n";
    }
  }
  // A command, sometimes cut short.
  std::string Message() {
    std::string c = Command();
    if (Pick(6) == 0) c.resize(Pick(static_cast<uint32_t>(c.size()) + 1));
    return c;
  }
  uint32_t Pick(uint32_t n) { return n == 0 ? 0 : rng_() % n; }

 private:
  std::mt19937 rng_;
};

TEST(SessionFuzz, RandomAndTruncatedCommands) {
  Limits l;
  l.output_high_water = 16 * 1024;
  l.batch_keys = 4;
  l.batch_value_bytes = 256;
  Engine e(l, 0, 4096);
  const size_t out_bound = l.output_high_water + l.batch_keys * (l.batch_value_bytes + 300) + 4096 + 300;
  Fuzzer f(20240611);
  constexpr int kSessions = 8;
  std::vector<std::unique_ptr<Engine::Conn>> conns;
  for (int i = 0; i < kSessions; ++i) conns.push_back(e.Connect());
  std::vector<std::string> pending(kSessions);
  auto control = e.Connect();
  int closes = 0;
  for (int step = 0; step < 200000; ++step) {
    int i = static_cast<int>(f.Pick(kSessions));
    Engine::Conn& c = *conns[i];
    if (pending[i].empty()) pending[i] = f.Message();
    // Feed what the connection would read: at most the session's input limit.
    size_t room = c.session->InputLimit() - std::min(c.in.size(), c.session->InputLimit());
    size_t n = std::min<size_t>({pending[i].size(), room, 1 + f.Pick(512)});
    c.in.Append(pending[i].data(), n);
    pending[i].erase(0, n);
    Session::Next next = c.session->Process(&c.in, &c.out);
    ASSERT_LE(c.in.size(), c.session->InputLimit());
    ASSERT_LE(c.out.size(), out_bound);
    if (f.Pick(3) != 0) c.out.Consume(std::min<size_t>(c.out.size(), f.Pick(8192)));  // a slow reader
    if (next == Session::Next::kCloseNow || next == Session::Next::kCloseAfterWrite) {
      conns[i] = e.Connect();
      pending[i].clear();
      ++closes;
    }
    if (step % 500 == 0) {
      std::string v = std::to_string(step);
      ASSERT_EQ(e.Feed(*control, "set control 0 0 " + std::to_string(v.size()) + "\r\n" + v + "\r\nget control\r\n"),
                "STORED\r\nVALUE control 0 " + std::to_string(v.size()) + "\r\n" + v + "\r\nEND\r\n");
    }
  }
  EXPECT_GT(closes, 0);  // the fuzzer did reach the hang-up paths
}

}  // namespace
}  // namespace shmemcached
