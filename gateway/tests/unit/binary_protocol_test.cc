// The binary protocol engine (protocol/binary_protocol.h) over the reference backend, one process: packet
// framing split at every byte, quiet gets answered before the Noop that ends them, batched runs of gets, stores
// with flags / expiration / CAS, incr with creation, lengths that close, values swallowed. The same opcodes are
// checked over TCP against memcached 1.6 and a shmemcached job by tests/tcp/binary_test.py.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine_fixture.h"

namespace shmemcached {
namespace {

std::string Be(uint64_t v, int bytes) {
  std::string b;
  for (int i = bytes - 1; i >= 0; --i) b.push_back(static_cast<char>(v >> (8 * i)));
  return b;
}

std::string Req(uint8_t op, const std::string& key = "", const std::string& ext = "", const std::string& value = "",
                uint32_t opaque = 0, uint64_t cas = 0) {
  std::string h;
  h.push_back('\x80');
  h.push_back(static_cast<char>(op));
  h += Be(key.size(), 2);
  h.push_back(static_cast<char>(ext.size()));
  h += std::string(3, '\0');
  h += Be(ext.size() + key.size() + value.size(), 4);
  h += Be(opaque, 4);
  h += Be(cas, 8);
  return h + ext + key + value;
}

struct Res {
  uint8_t op;
  uint16_t status;
  std::string ext, key, value;
  uint32_t opaque;
  uint64_t cas;
};

uint64_t Num(const std::string& s, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

// Parses whole response packets; a trailing partial packet fails the test.
std::vector<Res> Parse(const std::string& out) {
  std::vector<Res> r;
  size_t at = 0;
  while (at + 24 <= out.size()) {
    EXPECT_EQ(static_cast<unsigned char>(out[at]), 0x81);
    size_t keylen = Num(out, at + 2, 2), extlen = Num(out, at + 4, 1), body = Num(out, at + 8, 4);
    Res x{static_cast<uint8_t>(out[at + 1]), static_cast<uint16_t>(Num(out, at + 6, 2)),
          out.substr(at + 24, extlen), out.substr(at + 24 + extlen, keylen),
          out.substr(at + 24 + extlen + keylen, body - extlen - keylen), static_cast<uint32_t>(Num(out, at + 12, 4)),
          Num(out, at + 16, 8)};
    r.push_back(x);
    at += 24 + body;
  }
  EXPECT_EQ(at, out.size());
  return r;
}

std::string SetExt(uint32_t flags, uint32_t exptime) { return Be(flags, 4) + Be(exptime, 4); }

TEST(BinaryProtocol, SetGetSplitAtEveryByteAnswersAlike) {
  const std::string input = Req(0x01, "k", SetExt(7, 0), "hello", 1) + Req(0x0d, "k", "", "", 2) +
                            Req(0x09, "missing", "", "", 3) + Req(0x0c, "missing", "", "", 4) +
                            Req(0x0a, "", "", "", 5);
  Engine whole;
  const std::string expected = whole.Run(input);
  std::vector<Res> r = Parse(expected);
  ASSERT_EQ(r.size(), 4u);  // the GetQ miss is silent
  EXPECT_EQ(r[0].op, 0x01);
  EXPECT_NE(r[0].cas, 0u);
  EXPECT_EQ(r[1].op, 0x0d);
  EXPECT_EQ(r[1].key, "k");
  EXPECT_EQ(r[1].value, "hello");
  EXPECT_EQ(r[1].ext, Be(7, 4));
  EXPECT_EQ(r[1].cas, r[0].cas);
  EXPECT_EQ(r[2].status, 0x0001);
  EXPECT_EQ(r[2].key, "missing");
  EXPECT_EQ(r[3].op, 0x0a);
  EXPECT_EQ(r[3].opaque, 5u);
  for (size_t cut = 1; cut < input.size(); ++cut) {
    Engine e;
    std::vector<size_t> cuts(input.size() / cut + 1, cut);
    std::string got = e.RunSplit(input, cuts);
    // Tokens differ between engines only if stores differ; both start from the same fresh backend.
    ASSERT_EQ(got, expected) << "pieces of " << cut;
  }
}

TEST(BinaryProtocol, RunOfQuietGetsIsOneBatchedRead) {
  Engine e;
  std::string input;
  for (int i = 0; i < 10; ++i) input += Req(0x01, "k" + std::to_string(i), SetExt(0, 0), "v", 0);
  e.Run(input);
  uint64_t before = e.gateway().counters().multiget_calls;
  std::string gets;
  for (int i = 0; i < 20; ++i) gets += Req(0x0d, "k" + std::to_string(i), "", "", static_cast<uint32_t>(i));
  std::vector<Res> r = Parse(e.Run(gets + Req(0x0a, "", "", "", 99)));
  EXPECT_EQ(e.gateway().counters().multiget_calls - before, 1u);
  ASSERT_EQ(r.size(), 11u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(r[i].key, "k" + std::to_string(i));
    EXPECT_EQ(r[i].opaque, static_cast<uint32_t>(i));
  }
  EXPECT_EQ(r[10].op, 0x0a);
  EXPECT_EQ(r[10].opaque, 99u);
}

TEST(BinaryProtocol, StoresCasIncrAndErrors) {
  Engine e;
  auto c = e.Connect();
  std::vector<Res> r = Parse(e.Feed(*c, Req(0x01, "a", SetExt(1, 0), "x")));
  uint64_t token = r[0].cas;
  r = Parse(e.Feed(*c, Req(0x01, "a", SetExt(1, 0), "y", 0, token + 1000) +  // stale token: exists
                           Req(0x01, "a", SetExt(2, 0), "z", 0, token) +       // current token: stored
                           Req(0x02, "a", SetExt(0, 0), "w") +                 // add on present: exists
                           Req(0x03, "nope", SetExt(0, 0), "w") +              // replace on absent: not found
                           Req(0x0e, "nope", "", "w") +                        // append on absent: not stored
                           Req(0x0f, "a", "", ">") +                           // prepend
                           Req(0x00, "a")));
  ASSERT_EQ(r.size(), 7u);
  EXPECT_EQ(r[0].status, 0x0002);
  EXPECT_EQ(r[0].value, "Data exists for key.");
  EXPECT_EQ(r[1].status, 0x0000);
  EXPECT_EQ(r[2].status, 0x0002);
  EXPECT_EQ(r[3].status, 0x0001);
  EXPECT_EQ(r[4].status, 0x0005);
  EXPECT_EQ(r[5].status, 0x0000);
  EXPECT_EQ(r[6].value, ">z");
  EXPECT_EQ(r[6].ext, Be(2, 4));
  const std::string no_create = Be(5, 8) + Be(100, 8) + Be(0xffffffff, 4);
  const std::string create = Be(5, 8) + Be(100, 8) + Be(0, 4);
  r = Parse(e.Feed(*c, Req(0x05, "n", no_create) + Req(0x05, "n", create) + Req(0x05, "n", create) +
                           Req(0x06, "n", Be(1000, 8) + Be(0, 12)) + Req(0x15, "n", create) + Req(0x05, "a", create) +
                           Req(0x0a)));
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0].status, 0x0001);
  EXPECT_EQ(r[1].value, Be(100, 8));  // created with the initial value
  EXPECT_NE(r[1].cas, 0u);
  EXPECT_EQ(r[2].value, Be(105, 8));
  EXPECT_EQ(r[3].value, Be(0, 8));  // decr stops at 0
  EXPECT_EQ(r[4].status, 0x0006);   // IncrementQ is silent on success: this is incr on "a" (non-numeric)
  EXPECT_EQ(r[5].op, 0x0a);
  // A value over the limit: Too large, swallowed, the connection goes on; the old value of a set is gone.
  Engine small(Limits(), 0, 64);
  auto d = small.Connect();
  small.Feed(*d, Req(0x01, "big", SetExt(0, 0), "old"));
  r = Parse(small.Feed(*d, Req(0x11, "big", SetExt(0, 0), std::string(100, 'x')) + Req(0x00, "big") + Req(0x0a)));
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].status, 0x0003);
  EXPECT_EQ(r[1].status, 0x0001);
  EXPECT_EQ(d->last, Session::Next::kNeedInput);
}

TEST(BinaryProtocol, BadLengthsClose) {
  Engine e;
  std::string short_body = Req(0x00, "abc");
  short_body[11] = 1;  // body 1 < key 3
  auto c = e.Connect();
  std::vector<Res> r = Parse(e.Feed(*c, short_body));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, 0x0081);
  EXPECT_EQ(c->last, Session::Next::kCloseAfterWrite);
  c = e.Connect();
  r = Parse(e.Feed(*c, Req(0x00, std::string(251, 'k'))));
  EXPECT_EQ(r[0].status, 0x0004);
  EXPECT_EQ(c->last, Session::Next::kCloseAfterWrite);
  c = e.Connect();
  r = Parse(e.Feed(*c, Req(0x0a, "", "", "x")));  // a Noop with a body
  EXPECT_EQ(r[0].status, 0x0004);
  EXPECT_EQ(c->last, Session::Next::kCloseAfterWrite);
  // Unknown opcodes (SASL's too): answered, body skipped, the connection goes on.
  c = e.Connect();
  r = Parse(e.Feed(*c, Req(0x21, "PLAIN", "", "secret", 7) + Req(0x55, "", "", "zz", 8) + Req(0x0a, "", "", "", 9)));
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].status, 0x0081);
  EXPECT_EQ(r[0].opaque, 7u);
  EXPECT_EQ(r[1].status, 0x0081);
  EXPECT_EQ(r[2].opaque, 9u);
  // QuitQ: nothing answered, closed.
  c = e.Connect();
  EXPECT_EQ(e.Feed(*c, Req(0x17) + Req(0x0a)), "");
  EXPECT_EQ(c->last, Session::Next::kCloseAfterWrite);
}

// The fuzz test's control checks (tests/tcp/fuzz_test.py) while fuzz connections send Flush, with the gateway's
// batch on. A pair stored by an earlier write (the text control check's) may be flushed before a later GetK on
// another connection reads it: Key not found, memcached's answer too (the check that expected the pair failed).
// A Set and a GetK sent in one write are processed together: both start before a Flush from another connection
// is processed (operations take effect in the order started, and the Flush completes the batch first), so the
// GetK reads what the Set stored.
TEST(BinaryProtocol, FlushFromAnotherConnectionAndTheControlChecks) {
  Engine e;
  e.backend().set_in_flight_starts(true);
  e.gateway().batch().set_enabled(true);
  auto process = [](Engine::Conn& c, const std::string& bytes) {
    c.in.Append(bytes);
    c.last = c.session->Process(&c.in, &c.out);
  };
  auto take = [](Engine::Conn& c) {
    EXPECT_FALSE(c.session->answers_deferred());
    std::string out(c.out.view());
    c.out.Clear();
    return out;
  };
  auto text = e.Connect(), fuzz = e.Connect(), binary = e.Connect();
  process(*text, "set control 0 0 9\r\ncontrol-0\r\nget control\r\n");
  EXPECT_TRUE(text->session->answers_deferred());
  e.gateway().batch().Complete();
  EXPECT_EQ(take(*text), "STORED\r\nVALUE control 0 9\r\ncontrol-0\r\nEND\r\n");
  process(*fuzz, Req(0x08, "", "", "", 1));  // Flush, processed before the GetK arrives
  EXPECT_EQ(Parse(take(*fuzz)).size(), 1u);
  process(*binary, Req(0x0c, "control", "", "", 2));
  e.gateway().batch().Complete();
  std::vector<Res> r = Parse(take(*binary));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, 0x0001);
  EXPECT_EQ(r[0].key, "control");

  process(*binary, Req(0x01, "control", SetExt(7, 0), "binary-control-1", 3) + Req(0x0c, "control", "", "", 4));
  EXPECT_TRUE(binary->session->answers_deferred());
  process(*fuzz, Req(0x08, "", "", "", 5));  // completes the batch, then flushes
  EXPECT_EQ(Parse(take(*fuzz)).size(), 1u);
  r = Parse(take(*binary));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].op, 0x01);
  EXPECT_EQ(r[0].status, 0u);
  EXPECT_EQ(r[0].opaque, 3u);
  EXPECT_EQ(r[1].op, 0x0c);
  EXPECT_EQ(r[1].status, 0u);
  EXPECT_EQ(r[1].opaque, 4u);
  EXPECT_EQ(r[1].ext, Be(7, 4));
  EXPECT_EQ(r[1].key, "control");
  EXPECT_EQ(r[1].value, "binary-control-1");
  process(*binary, Req(0x0c, "control", "", "", 6));
  e.gateway().batch().Complete();
  r = Parse(take(*binary));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, 0x0001);  // the flush came after
}
}  // namespace
}  // namespace shmemcached
