// Framing, pipelining and bounds of a session: answers do not depend on how the input is split, lines and
// data blocks have memcached's limits, refused data is swallowed without being held, and a client that does
// not read makes the session pause instead of grow.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine_fixture.h"

namespace shmemcached {
namespace {

// A pipeline touching every framing path: values containing "\r\n", empty values, noreply, errors whose data
// line becomes a command, a swallowed refused block, meta commands with and without data, a multi-get.
std::string MixedScript() {
  std::string s;
  s += "set a 1 0 5\r\nab\r\nc\r\n";
  s += "set e 0 0 0\r\n\r\n";
  s += "set n 0 0 2 noreply\r\n10\r\n";
  s += "get a e n missing\r\n";
  s += "gets a\r\n";
  s += "set bad x 0 1\r\nq\r\n";
  s += "set chunk 0 0 1\r\nxyz\r\n";
  s += "set big 0 0 200\r\n" + std::string(100, 'x') + "\r\nget a\r\n" + std::string(91, 'y') + "\r\n";
  s += "incr n 5\r\ndecr n 100\r\nappend a 0 0 1\r\n!\r\n";
  s += "ms m 4 T0 F2 k c\r\nm\r\nn\r\nmg m v f k s\r\nmg nothere q v\r\nma cnt N0 J9 v\r\nmd m q\r\nmn\r\n";
  s += "touch a 100\r\ngat 10 a e\r\ndelete e\r\nbogus line\r\n\r\nverbosity 1\r\n";
  s += "get a\nget a\r\r\n";
  return s;
}

TEST(Session, AnswersDoNotDependOnHowInputIsSplit) {
  const std::string script = MixedScript();
  std::string whole;
  {
    Engine e(Limits(), 0, 100);
    whole = e.Run(script);
  }
  ASSERT_NE(whole.find("SERVER_ERROR object too large for cache"), std::string::npos) << whole;
  ASSERT_NE(whole.find("VA 4 f2 km s4\r\nm\r\nn\r\n"), std::string::npos) << whole;
  for (size_t cut = 1; cut < script.size(); ++cut) {
    Engine e(Limits(), 0, 100);
    ASSERT_EQ(e.RunSplit(script, {cut}), whole) << "split at byte " << cut;
  }
  Engine e(Limits(), 0, 100);
  EXPECT_EQ(e.RunSplit(script, std::vector<size_t>(script.size(), 1)), whole) << "byte by byte";
}

TEST(Session, LineWithoutNewlineLimit) {
  Engine e;
  auto c = e.Connect();
  EXPECT_EQ(e.Feed(*c, std::string(2048, 'x')), "");
  EXPECT_EQ(c->last, Session::Next::kNeedInput);  // memcached waits up to 2048 bytes
  e.Feed(*c, "x");
  EXPECT_EQ(c->last, Session::Next::kCloseNow);  // then hangs up

  // A multi-get line may be longer (memcached grows its buffer; here up to max_get_line).
  auto g = e.Connect();
  std::string keys;
  for (int i = 0; i < 500; ++i) keys += " key" + std::to_string(i);
  EXPECT_EQ(e.Feed(*g, "   get" + keys), "");
  EXPECT_EQ(g->last, Session::Next::kNeedInput);
  EXPECT_EQ(e.Feed(*g, "\r\n"), "END\r\n");

  Limits small;
  small.max_get_line = 3000;
  Engine s(small);
  auto h = s.Connect();
  EXPECT_EQ(s.Feed(*h, "gets" + keys), "SERVER_ERROR out of memory reading request\r\n");
  EXPECT_EQ(h->last, Session::Next::kCloseAfterWrite);
}

TEST(Session, ProtocolsMemcachedHangsUpOn) {
  Engine e;
  auto bin = e.Connect();
  // The first byte 0x80 selects the binary protocol (binary_protocol_test.cc); a later packet without the
  // request magic is hung up on (after sending what was answered before), as memcached does.
  std::string noop(24, '\0');
  noop[0] = '\x80';
  noop[1] = '\x0a';
  EXPECT_EQ(e.Feed(*bin, noop).size(), 24u);
  EXPECT_EQ(e.Feed(*bin, "get x\r\n"), "");  // a header is 24 bytes: not judged yet
  EXPECT_EQ(bin->last, Session::Next::kNeedInput);
  EXPECT_EQ(e.Feed(*bin, "get y\r\nget z\r\nget w\r\n"), "");
  EXPECT_EQ(bin->last, Session::Next::kCloseAfterWrite);
  auto later = e.Connect();
  EXPECT_EQ(e.Feed(*later, "version\r\n\x80 x\r\n"), "VERSION 1.6.18-test\r\nERROR\r\n");  // only the first byte
  auto http = e.Connect();
  EXPECT_EQ(e.Feed(*http, "GET / HTTP/1.1\r\nHost: x\r\n"), "");
  EXPECT_EQ(http->last, Session::Next::kCloseNow);
}

TEST(Session, QuitIgnoresWhatFollows) {
  Engine e;
  auto c = e.Connect();
  EXPECT_EQ(e.Feed(*c, "set a 0 0 1\r\n1\r\nquit\r\nset b 0 0 1\r\n2\r\n"), "STORED\r\n");
  EXPECT_EQ(c->last, Session::Next::kCloseAfterWrite);
  EXPECT_EQ(e.Run("get b\r\n"), "END\r\n");
}

// "set k 0 0 2000000000": refused at once and the ~2 GB that follow are discarded as they arrive; the
// session never holds more than what one read brought.
TEST(Session, TwoGigabyteValueIsSwallowedWithoutBuffering) {
  Engine e;
  auto c = e.Connect();
  EXPECT_EQ(e.Feed(*c, "set k 0 0 2000000000\r\n"), "SERVER_ERROR object too large for cache\r\n");
  const std::string chunk(1 << 20, 'z');
  uint64_t left = 2000000002;
  while (left > chunk.size()) {
    ASSERT_EQ(e.Feed(*c, chunk), "");
    ASSERT_EQ(c->in.size(), 0u);
    ASSERT_LE(c->in.capacity(), 2 * chunk.size());
    left -= chunk.size();
  }
  EXPECT_EQ(e.Feed(*c, chunk.substr(0, left) + "get k\r\n"), "END\r\n");
  // 2^31 does not fit memcached's 32-bit length: a format error, and what follows is read as commands.
  EXPECT_EQ(e.Feed(*c, "set k 0 0 2147483648\r\nzzzz\r\n"), "CLIENT_ERROR bad command line format\r\nERROR\r\n");
}

// A client that sends requests and never reads: the session stops at the high-water mark, with its output
// bounded, and finishes the same answer once the output drains.
TEST(Session, SlowReaderPausesTheSessionInsteadOfGrowing) {
  Limits l;
  l.output_high_water = 8 * 1024;
  l.batch_keys = 16;
  l.batch_value_bytes = 2048;
  Engine e(l);
  std::string value(1000, 'v');
  std::string setup, get = "get";
  for (int i = 0; i < 200; ++i) {
    setup += "set k" + std::to_string(i) + " 0 0 1000 noreply\r\n" + value + "\r\n";
    get += " k" + std::to_string(i);
  }
  e.Run(setup);
  std::string pipeline;
  for (int i = 0; i < 50; ++i) pipeline += "get k" + std::to_string(i) + "\r\n";
  pipeline += get + "\r\n" + "get k0\r\n";
  std::string expected = e.Run(pipeline);

  auto c = e.Connect();
  c->in.Append(pipeline);
  std::string received;
  int pauses = 0;
  while (true) {
    Session::Next next = c->session->Process(&c->in, &c->out);
    // At most the mark plus one batch of values (each with its header) is ever buffered.
    ASSERT_LE(c->out.size(), l.output_high_water + l.batch_keys * 1100);
    if (next != Session::Next::kOutputFull) break;
    ++pauses;
    ASSERT_LT(c->in.size(), pipeline.size());
    // The client reads a little, as a slow reader does.
    size_t n = std::min<size_t>(c->out.size(), 3000);
    received.append(c->out.data(), n);
    c->out.Consume(n);
  }
  received.append(c->out.view());
  EXPECT_GT(pauses, 10);
  EXPECT_EQ(received, expected);
}

TEST(Session, MultiGetIsOneBackendCallPerBatch) {
  Limits l;
  l.batch_keys = 128;
  l.batch_value_bytes = 64;
  Engine e(l);
  std::string setup, get = "get";
  for (int i = 0; i < 300; ++i) {
    setup += "set k" + std::to_string(i) + " 0 0 2 noreply\r\nvv\r\n";
    get += " k" + std::to_string(i);
  }
  setup += "set large 0 0 100 noreply\r\n" + std::string(100, 'L') + "\r\n";
  e.Run(setup);
  uint64_t calls = e.backend().multiget_calls();
  std::string hundred = "get";
  for (int i = 0; i < 100; ++i) hundred += " k" + std::to_string(i);
  e.Run(hundred + "\r\n");
  EXPECT_EQ(e.backend().multiget_calls() - calls, 1u);
  calls = e.backend().multiget_calls();
  std::string out = e.Run(get + "\r\n");
  EXPECT_EQ(e.backend().multiget_calls() - calls, 3u);  // 128 + 128 + 44 keys
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 601);
  // A value larger than a batch buffer is fetched alone, with a buffer of its size.
  uint64_t fetches = e.backend().fetch_calls();
  EXPECT_EQ(e.Run("get k1 large k2\r\n"),
            "VALUE k1 0 2\r\nvv\r\nVALUE large 0 100\r\n" + std::string(100, 'L') + "\r\nVALUE k2 0 2\r\nvv\r\nEND\r\n");
  EXPECT_EQ(e.backend().fetch_calls() - fetches, 1u);
}

TEST(Session, InputLimitCoversTheLongestGetLine) {
  Engine e;
  Session s(&e.gateway());
  EXPECT_GE(s.InputLimit(), e.gateway().limits().max_get_line);
}

}  // namespace
}  // namespace shmemcached
