// Random and truncated commands fed to many sessions of one gateway, in random pieces, with output drained
// at random (sometimes not at all): nothing crashes, every session stays within its bounds, and a control
// session keeps getting correct answers. Deterministic (fixed seeds) and bounded in time.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
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
  // A binary protocol packet: a known opcode (sometimes any byte) with the extras it takes, a key, a value where
  // it takes one; sometimes wrong lengths, a body length from nowhere, a bad magic, a CAS token.
  std::string BinaryCommand() {
    static const uint8_t kOps[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
                                   0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x18, 0x19,
                                   0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x20, 0x21, 0x23, 0x24, 0x07, 0x17, 0x55};
    const uint8_t op = Pick(10) == 0 ? static_cast<uint8_t>(Pick(256)) : kOps[Pick(sizeof kOps)];
    size_t extlen = 0;
    bool takes_value = false;
    switch (op) {
      case 0x01: case 0x02: case 0x03: case 0x11: case 0x12: case 0x13: extlen = 8; takes_value = true; break;
      case 0x0e: case 0x0f: case 0x19: case 0x1a: case 0x55: takes_value = true; break;
      case 0x05: case 0x06: case 0x15: case 0x16: extlen = 20; break;
      case 0x1c: case 0x1d: case 0x1e: case 0x23: case 0x24: case 0x1b: extlen = 4; break;
      case 0x08: case 0x18: extlen = Pick(2) * 4; break;
      default: break;
    }
    if (Pick(8) == 0) extlen = Pick(30);
    std::string key = (op == 0x0a || op == 0x0b || op == 0x08 || op == 0x1b || Pick(6) == 0) ? "" : Key();
    if (op == 0x10 && Pick(2) == 0) key = Pick(2) == 0 ? "settings" : "reset";
    std::string ext = Bytes(extlen);
    if (extlen == 20 && Pick(2) == 0) std::memset(&ext[16], 0xff, 4);  // incr without creation
    std::string value = takes_value ? (Pick(10) == 0 ? std::string(Pick(6000), 'v') : Bytes(Pick(20))) : "";
    uint64_t body = ext.size() + key.size() + value.size();
    if (Pick(12) == 0) body = Pick(8) != 0 ? Pick(40) : rng_();  // a huge one is swallowed until the session ends
    std::string h(24, '\0');
    h[0] = Pick(60) == 0 ? static_cast<char>(Pick(256)) : '\x80';
    h[1] = static_cast<char>(op);
    h[2] = static_cast<char>(key.size() >> 8);
    h[3] = static_cast<char>(key.size());
    h[4] = static_cast<char>(ext.size());
    for (int i = 0; i < 4; ++i) h[8 + i] = static_cast<char>(body >> (24 - 8 * i));
    for (int i = 0; i < 4; ++i) h[12 + i] = static_cast<char>(Pick(256));  // opaque
    if (Pick(5) == 0) h[23] = static_cast<char>(1 + Pick(255));          // a CAS token
    return h + ext + key + value;
  }
  // A command, sometimes cut short.
  std::string Message(bool binary = false) {
    std::string c = binary ? BinaryCommand() : Command();
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
  auto binary_control = e.Connect();
  int closes = 0, binary_closes = 0;
  uint64_t binary_out = 0;
  for (int step = 0; step < 200000; ++step) {
    int i = static_cast<int>(f.Pick(kSessions));
    Engine::Conn& c = *conns[i];
    if (pending[i].empty()) pending[i] = f.Message(i % 2 == 1);  // odd sessions speak the binary protocol
    // Feed what the connection would read: at most the session's input limit.
    size_t room = c.session->InputLimit() - std::min(c.in.size(), c.session->InputLimit());
    size_t n = std::min<size_t>({pending[i].size(), room, 1 + f.Pick(512)});
    c.in.Append(pending[i].data(), n);
    pending[i].erase(0, n);
    Session::Next next = c.session->Process(&c.in, &c.out);
    ASSERT_LE(c.in.size(), c.session->InputLimit());
    ASSERT_LE(c.out.size(), out_bound);
    if (f.Pick(3) != 0) {  // a slow reader
      size_t read = std::min<size_t>(c.out.size(), f.Pick(8192));
      c.out.Consume(read);
      if (i % 2 == 1) binary_out += read;
    }
    if (next == Session::Next::kCloseNow || next == Session::Next::kCloseAfterWrite) {
      if (i % 2 == 1) ++binary_closes;
      conns[i] = e.Connect();
      pending[i].clear();
      ++closes;
    } else if (f.Pick(300) == 0) {  // the client goes away (ends a session stuck swallowing a huge body)
      conns[i] = e.Connect();
      pending[i].clear();
    }
    if (step % 500 == 0) {
      std::string v = std::to_string(step);
      ASSERT_EQ(e.Feed(*control, "set control 0 0 " + std::to_string(v.size()) + "\r\n" + v + "\r\nget control\r\n"),
                "STORED\r\nVALUE control 0 " + std::to_string(v.size()) + "\r\n" + v + "\r\nEND\r\n");
      // A binary control session: GetK of the same pair answers its key and value.
      std::string getk(24, '\0');
      getk[0] = '\x80';
      getk[1] = '\x0c';
      getk[3] = 7;
      getk[11] = 7;
      std::string answer = e.Feed(*binary_control, getk + "control");
      ASSERT_EQ(answer.size(), 24 + 4 + 7 + v.size());
      ASSERT_EQ(answer.substr(24 + 4), "control" + v);
    }
  }
  EXPECT_GT(closes, 0);  // the fuzzer did reach the hang-up paths
  EXPECT_GT(binary_closes, 100);  // binary sessions too, and were answered
  EXPECT_GT(binary_out, 100000u);
  std::printf("closes %d (binary %d), binary output %llu bytes\n", closes, binary_closes,
              static_cast<unsigned long long>(binary_out));
}

}  // namespace
}  // namespace shmemcached
