// memcached's text protocol through the engine, command by command: every answer below is memcached 1.6.18's
// (the differential TCP test checks the same scripts against a real memcached).
#include <gtest/gtest.h>

#include "engine_fixture.h"

namespace shmemcached {
namespace {

class TextProtocol : public ::testing::Test {
 protected:
  Engine e_;
  std::string Run(const std::string& in) { return e_.Run(in); }
};

TEST_F(TextProtocol, SetGetMultiGet) {
  EXPECT_EQ(Run("set a 0 0 5\r\nhello\r\nget a\r\n"), "STORED\r\nVALUE a 0 5\r\nhello\r\nEND\r\n");
  EXPECT_EQ(Run("get b\r\n"), "END\r\n");
  EXPECT_EQ(Run("get a b a\r\n"), "VALUE a 0 5\r\nhello\r\nVALUE a 0 5\r\nhello\r\nEND\r\n");
  EXPECT_EQ(Run("bget a\r\n"), "VALUE a 0 5\r\nhello\r\nEND\r\n");
  EXPECT_EQ(Run("set e 0 0 0\r\n\r\nget e\r\n"), "STORED\r\nVALUE e 0 0\r\n\r\nEND\r\n");
  EXPECT_EQ(Run(Bytes("set z 0 0 5\r\n\r\n\0\xff\n\r\nget z\r\n")),
            Bytes("STORED\r\nVALUE z 0 5\r\n\r\n\0\xff\n\r\nEND\r\n"));
}

TEST_F(TextProtocol, FlagsAndTheir32BitQuirk) {
  EXPECT_EQ(Run("set f 4294967295 0 1\r\nx\r\nget f\r\n"), "STORED\r\nVALUE f 4294967295 1\r\nx\r\nEND\r\n");
  EXPECT_EQ(Run("set f 4294967296 0 1\r\nx\r\nget f\r\n"), "STORED\r\nVALUE f 0 1\r\nx\r\nEND\r\n");
  EXPECT_EQ(Run("set f 0 0 4294967297\r\nx\r\nget f\r\n"), "STORED\r\nVALUE f 0 1\r\nx\r\nEND\r\n");
}

TEST_F(TextProtocol, Noreply) {
  EXPECT_EQ(Run("set a 0 0 1 noreply\r\nx\r\nget a\r\n"), "VALUE a 0 1\r\nx\r\nEND\r\n");
  // An argument error under noreply is not answered, and the data line then reads as a command.
  EXPECT_EQ(Run("set a x 0 1 noreply\r\nx\r\n"), "ERROR\r\n");
  EXPECT_EQ(Run("set a 0 0 1 noreply\r\nabc\r\n"), "ERROR\r\n");
  EXPECT_EQ(Run("delete a noreply\r\nget a\r\n"), "END\r\n");
  EXPECT_EQ(Run("add a 0 0 1 noreply\r\ny\r\nincr n 1 noreply\r\ntouch a 1 noreply\r\nverbosity 1 noreply\r\n"
                "flush_all noreply\r\n"),
            "");
}

TEST_F(TextProtocol, StorageModes) {
  EXPECT_EQ(Run("add a 1 0 1\r\nx\r\nadd a 2 0 1\r\ny\r\n"), "STORED\r\nNOT_STORED\r\n");
  EXPECT_EQ(Run("replace b 0 0 1\r\nx\r\nreplace a 3 0 1\r\nz\r\nget a\r\n"),
            "NOT_STORED\r\nSTORED\r\nVALUE a 3 1\r\nz\r\nEND\r\n");
  EXPECT_EQ(Run("append c 0 0 1\r\nx\r\nprepend c 0 0 1\r\nx\r\n"), "NOT_STORED\r\nNOT_STORED\r\n");
  EXPECT_EQ(Run("append a 9 0 2\r\n>>\r\nprepend a 9 0 2\r\n<<\r\nget a\r\n"),
            "STORED\r\nSTORED\r\nVALUE a 3 5\r\n<<z>>\r\nEND\r\n");
}

TEST_F(TextProtocol, CasTokens) {
  Run("set a 0 0 1\r\nx\r\n");
  uint64_t cas;
  std::string v;
  ASSERT_EQ(e_.backend().Fetch("a", &v, nullptr, &cas), Status::kOk);
  std::string token = std::to_string(cas);
  EXPECT_EQ(Run("gets a\r\n"), "VALUE a 0 1 " + token + "\r\nx\r\nEND\r\n");
  EXPECT_EQ(Run("cas a 0 0 1 " + std::to_string(cas + 100) + "\r\ny\r\n"), "EXISTS\r\n");
  EXPECT_EQ(Run("cas a 0 0 1 " + token + "\r\ny\r\n"), "STORED\r\n");
  EXPECT_EQ(Run("cas a 0 0 1 " + token + "\r\nz\r\n"), "EXISTS\r\n");  // the token changed with the store
  EXPECT_EQ(Run("cas nope 0 0 1 1\r\nz\r\n"), "NOT_FOUND\r\n");
  EXPECT_EQ(Run("cas a 0 0 1 0\r\nz\r\ncas nope 0 0 1 0\r\nz\r\n"), "EXISTS\r\nNOT_FOUND\r\n");
  EXPECT_EQ(Run("cas a 0 0 1 abc\r\nz\r\n"), "CLIENT_ERROR bad command line format\r\nERROR\r\n");
  EXPECT_EQ(Run("get a\r\n"), "VALUE a 0 1\r\ny\r\nEND\r\n");
}

TEST_F(TextProtocol, CasRaceBetweenTwoConnections) {
  auto c1 = e_.Connect();
  auto c2 = e_.Connect();
  e_.Feed(*c1, "set r 0 0 1\r\n0\r\n");
  std::string g1 = e_.Feed(*c1, "gets r\r\n");
  std::string g2 = e_.Feed(*c2, "gets r\r\n");
  ASSERT_EQ(g1, g2);
  std::string token = g1.substr(g1.rfind(' ') + 1, g1.find("\r\n") - g1.rfind(' ') - 1);
  EXPECT_EQ(e_.Feed(*c1, "cas r 0 0 1 " + token + "\r\nA\r\n"), "STORED\r\n");
  EXPECT_EQ(e_.Feed(*c2, "cas r 0 0 1 " + token + "\r\nB\r\n"), "EXISTS\r\n");
  EXPECT_EQ(e_.Feed(*c2, "get r\r\n"), "VALUE r 0 1\r\nA\r\nEND\r\n");
}

TEST_F(TextProtocol, IncrDecr) {
  EXPECT_EQ(Run("set n 0 0 2\r\n10\r\nincr n 5\r\ndecr n 6\r\nget n\r\n"),
            "STORED\r\n15\r\n9\r\nVALUE n 0 2\r\n9 \r\nEND\r\n");
  EXPECT_EQ(Run("decr n 100\r\n"), "0\r\n");
  EXPECT_EQ(Run("set w 0 0 20\r\n18446744073709551615\r\nincr w 2\r\nincr w 18446744073709551615\r\n"),
            "STORED\r\n1\r\n0\r\n");
  EXPECT_EQ(Run("incr none 1\r\ndecr none 1\r\n"), "NOT_FOUND\r\nNOT_FOUND\r\n");
  EXPECT_EQ(Run("set s 0 0 3\r\nabc\r\nincr s 1\r\n"),
            "STORED\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\n");
  EXPECT_EQ(Run("incr n abc\r\nincr n -1\r\nincr n\r\n"),
            "CLIENT_ERROR invalid numeric delta argument\r\nCLIENT_ERROR invalid numeric delta argument\r\n"
            "ERROR\r\n");
  EXPECT_EQ(Run("set big 0 0 4\r\n9999\r\nincr big 1\r\nget big\r\n"),
            "STORED\r\n10000\r\nVALUE big 0 5\r\n10000\r\nEND\r\n");
}

TEST_F(TextProtocol, DecrByMoreThanInt64Steps) {
  EXPECT_EQ(Run("set n 0 0 20\r\n18446744073709551615\r\ndecr n 9223372036854775809\r\n"),
            "STORED\r\n9223372036854775806\r\n");
}

TEST_F(TextProtocol, TouchGatAndExpiry) {
  EXPECT_EQ(Run("set a 0 0 1\r\nx\r\ntouch a 10\r\ntouch none 10\r\ntouch a abc\r\n"),
            "STORED\r\nTOUCHED\r\nNOT_FOUND\r\nCLIENT_ERROR invalid exptime argument\r\n");
  e_.clock.Advance(10000);
  EXPECT_EQ(Run("get a\r\n"), "END\r\n");
  EXPECT_EQ(Run("set a 0 2 1\r\nx\r\ngat 100 a none\r\n"), "STORED\r\nVALUE a 0 1\r\nx\r\nEND\r\n");
  e_.clock.Advance(50000);
  EXPECT_EQ(Run("get a\r\n"), "VALUE a 0 1\r\nx\r\nEND\r\n");  // gat moved the expiry to 100 s
  EXPECT_EQ(Run("gat -1 a\r\nget a\r\n"), "VALUE a 0 1\r\nx\r\nEND\r\nEND\r\n");
  EXPECT_EQ(Run("gat abc a\r\ngat 1\r\n"), "CLIENT_ERROR invalid exptime argument\r\nEND\r\n");
  // Absolute times: in the future, and in the past (stored, replaces the old value, never returned).
  std::string in_100s = std::to_string(e_.clock.unix_ms / 1000 + 100);
  EXPECT_EQ(Run("set b 0 " + in_100s + " 1\r\ny\r\nget b\r\n"), "STORED\r\nVALUE b 0 1\r\ny\r\nEND\r\n");
  e_.clock.Advance(100000);
  EXPECT_EQ(Run("get b\r\n"), "END\r\n");
  EXPECT_EQ(Run("set b 0 0 1\r\nz\r\nset b 0 1000000000 1\r\nw\r\nget b\r\n"), "STORED\r\nSTORED\r\nEND\r\n");
  EXPECT_EQ(Run("set c 0 -1 1\r\nw\r\nadd c 0 0 1\r\nv\r\nget c\r\n"),
            "STORED\r\nSTORED\r\nVALUE c 0 1\r\nv\r\nEND\r\n");
}

TEST_F(TextProtocol, Delete) {
  EXPECT_EQ(Run("set a 0 0 1\r\nx\r\ndelete a\r\ndelete a\r\n"), "STORED\r\nDELETED\r\nNOT_FOUND\r\n");
  EXPECT_EQ(Run("set a 0 0 1\r\nx\r\ndelete a 0\r\n"), "STORED\r\nDELETED\r\n");
  EXPECT_EQ(Run("delete a 1\r\n"), "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n");
  EXPECT_EQ(Run("delete a x noreply\r\n"), "");
  EXPECT_EQ(Run("delete\r\ndelete a b c d\r\n"), "ERROR\r\nERROR\r\n");
}

TEST_F(TextProtocol, FlushAllNowAndDelayed) {
  EXPECT_EQ(Run("set a 0 0 1\r\nx\r\nflush_all\r\nget a\r\n"), "STORED\r\nOK\r\nEND\r\n");
  EXPECT_EQ(Run("flush_all abc\r\nflush_all 0\r\nflush_all 1 2 3\r\n"),
            "CLIENT_ERROR invalid exptime argument\r\nOK\r\nERROR\r\n");
  EXPECT_EQ(Run("set b 0 0 1\r\ny\r\nflush_all 2\r\nget b\r\n"), "STORED\r\nOK\r\nVALUE b 0 1\r\ny\r\nEND\r\n");
  EXPECT_EQ(e_.gateway().RunDueFlush(), 2000);
  e_.clock.Advance(2000);
  EXPECT_EQ(e_.gateway().RunDueFlush(), -1);
  EXPECT_EQ(Run("get b\r\n"), "END\r\n");
  // A newer flush_all replaces a pending delayed one.
  EXPECT_EQ(Run("flush_all 5\r\nflush_all 0\r\n"), "OK\r\nOK\r\n");
  EXPECT_EQ(e_.gateway().RunDueFlush(), -1);
}

TEST_F(TextProtocol, ArgumentErrors) {
  EXPECT_EQ(Run("bogus\r\n\r\nx\r\nget\r\ngets\r\ngx a\r\nsets a\r\n   \r\nget\ta\r\n\r\r\n"),
            "ERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\n");
  EXPECT_EQ(Run("set\r\nset k 0 0\r\nset k 0 0 1 2 3\r\ncas a 0 0 1\r\ntouch a\r\nincr\r\n"),
            "ERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\n");
  const std::string bad = "CLIENT_ERROR bad command line format\r\n";
  EXPECT_EQ(Run("set k abc 0 1\r\nx\r\n"), bad + "ERROR\r\n");
  EXPECT_EQ(Run("set k 0 abc 1\r\nx\r\n"), bad + "ERROR\r\n");
  EXPECT_EQ(Run("set k 0 0 abc\r\n"), bad);
  EXPECT_EQ(Run("set k 0 0 -1\r\n"), bad);
  EXPECT_EQ(Run("set k -1 0 1\r\nx\r\n"), bad + "ERROR\r\n");
  EXPECT_EQ(Run("set k 0 0 2147483646\r\n"), bad);
  EXPECT_EQ(Run("verbosity 1\r\nverbosity\r\nverbosity x\r\nverbosity 1 2 3\r\n"),
            "OK\r\nERROR\r\n" + bad + "ERROR\r\n");
  EXPECT_EQ(Run("shutdown\r\n"), "ERROR: shutdown not enabled\r\n");
  EXPECT_EQ(Run("slabs reassign 1 2\r\nlru_crawler metadump all\r\nwatch\r\ncache_memlimit 100\r\nme a\r\n"),
            "ERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\n");
}

TEST_F(TextProtocol, BadDataChunk) {
  EXPECT_EQ(Run("set a 0 0 1\r\nabc\r\n"), "CLIENT_ERROR bad data chunk\r\nERROR\r\n");
  EXPECT_EQ(Run("set a 0 0 3\r\nabcde\r\n"), "CLIENT_ERROR bad data chunk\r\nERROR\r\n");
  EXPECT_EQ(Run("get a\r\n"), "END\r\n");
}

TEST_F(TextProtocol, KeyLength) {
  std::string k250(250, 'k'), k251(251, 'k');
  EXPECT_EQ(Run("set " + k250 + " 0 0 1\r\n1\r\nget " + k250 + "\r\n"),
            "STORED\r\nVALUE " + k250 + " 0 1\r\n1\r\nEND\r\n");
  const std::string bad = "CLIENT_ERROR bad command line format\r\n";
  EXPECT_EQ(Run("set " + k251 + " 0 0 1\r\n1\r\n"), bad + "ERROR\r\n");
  EXPECT_EQ(Run("get " + k251 + "\r\n"), bad);
  EXPECT_EQ(Run("get " + k250 + " " + k251 + "\r\n"), bad);  // what was found before is not sent
  EXPECT_EQ(Run("delete " + k251 + "\r\nincr " + k251 + " 1\r\ntouch " + k251 + " 1\r\n"), bad + bad + bad);
}

TEST_F(TextProtocol, GatTouchesKeysBeforeATooLongKey) {
  Run("set a 0 1 1\r\nx\r\n");
  EXPECT_EQ(Run("gat 100 a " + std::string(251, 'k') + "\r\n"), "CLIENT_ERROR bad command line format\r\n");
  e_.clock.Advance(5000);
  EXPECT_EQ(Run("get a\r\n"), "VALUE a 0 1\r\nx\r\nEND\r\n");
}

TEST_F(TextProtocol, KeysAreBytesExceptSpaceNewlineAndNul) {
  EXPECT_EQ(Run("set a\x01\x7f\xff\t 0 0 1\r\nz\r\nget a\x01\x7f\xff\t\r\n"),
            "STORED\r\nVALUE a\x01\x7f\xff\t 0 1\r\nz\r\nEND\r\n");
  // A NUL ends the command line: "set n" has too few tokens, and the data line is a command.
  EXPECT_EQ(Run(Bytes("set n\0x 0 0 1\r\nz\r\n")), "ERROR\r\nERROR\r\n");
  EXPECT_EQ(Run(Bytes("get a\x01\x7f\xff\t\0ignored\r\n")), "VALUE a\x01\x7f\xff\t 0 1\r\nz\r\nEND\r\n");
}

TEST_F(TextProtocol, ValueTooLargeIsSwallowedAndDropsTheOldValue) {
  Engine small(Limits(), 0, 100);
  std::string data(101, 'z');
  data.replace(10, 11, "\r\nget big\r\n");  // looks like a command, must be swallowed
  EXPECT_EQ(small.Run("set big 0 0 3\r\nold\r\nset big 0 0 101\r\n" + data + "\r\nget big\r\n"),
            "STORED\r\nSERVER_ERROR object too large for cache\r\nEND\r\n");
  EXPECT_EQ(small.Run("set b 0 0 101 noreply\r\n" + data + "\r\nget b\r\n"), "END\r\n");
  EXPECT_EQ(small.Run("set c 0 0 5\r\nhello\r\nadd c 0 0 101\r\n" + data + "\r\nget c\r\n"),
            "STORED\r\nSERVER_ERROR object too large for cache\r\nVALUE c 0 5\r\nhello\r\nEND\r\n");
  EXPECT_EQ(small.Run("append c 0 0 100\r\n" + std::string(100, 'q') + "\r\n"),
            "SERVER_ERROR object too large for cache\r\n");  // the backend refuses the result
}

TEST_F(TextProtocol, OutOfMemory) {
  Engine tiny(Limits(), 16, 100);
  EXPECT_EQ(tiny.Run("set a 0 0 10\r\n0123456789\r\nset b 0 0 10\r\n0123456789\r\n"),
            "STORED\r\nSERVER_ERROR out of memory storing object\r\n");
}

TEST_F(TextProtocol, VersionStatsQuit) {
  EXPECT_EQ(Run("version\r\n"), "VERSION 1.6.18-test\r\n");
  std::string stats = Run("set a 0 0 1\r\nx\r\nget a\r\nget b\r\nstats\r\n");
  EXPECT_NE(stats.find("STAT cmd_get 2\r\n"), std::string::npos) << stats;
  EXPECT_NE(stats.find("STAT get_hits 1\r\n"), std::string::npos);
  EXPECT_NE(stats.find("STAT get_misses 1\r\n"), std::string::npos);
  EXPECT_NE(stats.find("STAT curr_items 1\r\n"), std::string::npos);  // from the backend
  EXPECT_EQ(stats.substr(stats.size() - 5), "END\r\n");
  EXPECT_EQ(Run("stats reset\r\nstats bogus\r\n"), "RESET\r\nERROR\r\n");
  EXPECT_NE(Run("stats\r\n").find("STAT cmd_get 0\r\n"), std::string::npos);
  EXPECT_NE(Run("stats settings\r\n").find("STAT item_size_max 1048576\r\n"), std::string::npos);
  auto c = e_.Connect();
  EXPECT_EQ(e_.Feed(*c, "get a\r\nquit\r\nget a\r\n"), "VALUE a 0 1\r\nx\r\nEND\r\n");
  EXPECT_EQ(c->last, Session::Next::kCloseAfterWrite);
}

}  // namespace
}  // namespace shmemcached
