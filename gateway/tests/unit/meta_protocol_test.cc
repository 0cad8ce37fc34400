// memcached's meta protocol through the engine: the answers are memcached 1.6.18's, except for the flags the
// backend contract cannot serve (meta_protocol.h), whose documented answers are pinned at the end.
#include <gtest/gtest.h>

#include "engine_fixture.h"

namespace shmemcached {
namespace {

class MetaProtocol : public ::testing::Test {
 protected:
  Engine e_;
  std::string Run(const std::string& in) { return e_.Run(in); }
  uint64_t Cas(const std::string& key) {
    std::string v;
    uint64_t cas = 0;
    e_.backend().Fetch(key, &v, nullptr, &cas);
    return cas;
  }
};

TEST_F(MetaProtocol, GetFlagsInRequestOrder) {
  EXPECT_EQ(Run("ms a 2 T0 F7\r\nhi\r\nmg a\r\nmg a v\r\nmg a s f v k O123\r\nmg missing v k Oabc\r\n"),
            "HD\r\nHD\r\nVA 2\r\nhi\r\nVA 2 s2 f7 ka O123\r\nhi\r\nEN kmissing Oabc\r\n");
  EXPECT_EQ(Run("mg a c\r\n"), "HD c" + std::to_string(Cas("a")) + "\r\n");
  // q hides a miss, never a hit.
  EXPECT_EQ(Run("mg missing q v\r\nmg a q v\r\nmn\r\n"), "VA 2\r\nhi\r\nMN\r\n");
}

TEST_F(MetaProtocol, GetErrors) {
  Run("ms a 2\r\nhi\r\n");
  std::string o33 = "O" + std::string(33, 'o');
  std::string tokens18;
  for (int i = 0; i < 18; ++i) tokens18 += " O" + std::to_string(i);
  EXPECT_EQ(Run("mg a v v\r\nmg a x\r\nmg a Tabc\r\nmg a " + o33 + "\r\nmg missing " + o33 + "\r\nmg " +
                std::string(251, 'y') + " v\r\nmg\r\nmg a" + tokens18 + "\r\nmg a \x80\r\n"),
            "CLIENT_ERROR duplicate flag\r\nCLIENT_ERROR invalid flag\r\n"
            "CLIENT_ERROR bad token in command line format\r\nCLIENT_ERROR opaque token too long\r\n"
            "CLIENT_ERROR opaque token too long\r\nCLIENT_ERROR bad command line format\r\nERROR\r\n"
            "CLIENT_ERROR options flags are too long\r\nCLIENT_ERROR duplicate flag\r\n");
  // Errors are sent even in quiet mode.
  EXPECT_EQ(Run("mg missing q " + o33 + "\r\n"), "CLIENT_ERROR opaque token too long\r\n");
}

TEST_F(MetaProtocol, GetWithTouch) {
  Run("ms a 1 T2\r\nx\r\n");
  EXPECT_EQ(Run("mg a T100 v\r\n"), "VA 1\r\nx\r\n");
  e_.clock.Advance(50000);
  EXPECT_EQ(Run("mg a v u\r\n"), "VA 1\r\nx\r\n");
  EXPECT_EQ(Run("mg a T-1 v\r\nmg a v\r\n"), "VA 1\r\nx\r\nEN\r\n");
}

TEST_F(MetaProtocol, SetModes) {
  EXPECT_EQ(Run("ms b 1 ME\r\n1\r\nms b 1 ME\r\n2\r\nms c 1 MR\r\n1\r\nms b 1 MA\r\n3\r\nms b 1 MP\r\n0\r\n"
                "ms b 1 MS q\r\n9\r\nmg b v\r\n"),
            "HD\r\nNS\r\nNS\r\nHD\r\nHD\r\nVA 1\r\n9\r\n");
  std::string out = Run("ms a 2 F9 T100 c k O55\r\nyo\r\nmg a v f\r\n");
  EXPECT_EQ(out, "HD c" + std::to_string(Cas("a")) + " ka O55\r\nVA 2 f9\r\nyo\r\n");
}

TEST_F(MetaProtocol, SetErrorsSwallowTheDataOnceItsLengthIsKnown) {
  EXPECT_EQ(Run("ms b 1 MX\r\n1\r\nms b 1 MEE\r\n1\r\nms b 1 F\r\n1\r\nms b 1 Tx\r\n1\r\nms b 1 q q\r\n1\r\n"
                "ms b 1 x\r\n1\r\nms b x\r\n1\r\nms b\r\nms b -1\r\nms b 1 O" + std::string(33, 'o') +
                "\r\n1\r\nms b 2\r\nabc\r\n"),
            "CLIENT_ERROR invalid mode for ms M token\r\nCLIENT_ERROR incorrect length for M token\r\n"
            "CLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad token in command line format\r\n"
            "CLIENT_ERROR duplicate flag\r\nCLIENT_ERROR invalid flag\r\nCLIENT_ERROR bad command line format\r\n"
            "ERROR\r\nCLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\n"
            "CLIENT_ERROR opaque token too long\r\nCLIENT_ERROR bad data chunk\r\nERROR\r\n");
  Engine small(Limits(), 0, 10);
  EXPECT_EQ(small.Run("ms k 1\r\n1\r\nms k 11 ME\r\n01234567890\r\nmg k v\r\n"),
            "HD\r\nSERVER_ERROR object too large for cache\r\nEN\r\n");  // any mode drops the old pair
}

TEST_F(MetaProtocol, SetWithCas) {
  Run("ms a 1\r\n1\r\n");
  std::string cas = std::to_string(Cas("a"));
  std::string bad = std::to_string(Cas("a") + 1000);
  EXPECT_EQ(Run("ms a 1 C" + bad + "\r\n3\r\nms nope 1 C1\r\n3\r\nms nope 1 C1 MA\r\n3\r\nms a 1 C" + bad +
                " MA\r\n3\r\nms a 1 C" + bad + " ME\r\n3\r\nms a 1 C0\r\n4\r\nms a 1 C" + bad + " c\r\n5\r\n"),
            "EX\r\nNF\r\nNS\r\nEX\r\nNS\r\nEX\r\nEX c0\r\n");
  EXPECT_EQ(Run("ms a 1 C" + cas + " MA\r\n5\r\nmg a v\r\n"), "HD\r\nVA 2\r\n15\r\n");
}

TEST_F(MetaProtocol, Base64Keys) {
  EXPECT_EQ(Run("ms Zm9v 3 b k\r\nbar\r\nmg Zm9v b v k\r\nget foo\r\nmd Zm9v b k q\r\nmg Zm9v b v\r\n"
                "ms !!! 1 b\r\nx\r\nmg YQ b\r\n"),
            "HD kZm9v b\r\nVA 3 kZm9v b\r\nbar\r\nVALUE foo 0 3\r\nbar\r\nEND\r\nEN\r\n"
            "CLIENT_ERROR error decoding key\r\nCLIENT_ERROR error decoding key\r\n");
  EXPECT_EQ(Run(Bytes("ms AAH/ 2 b\r\nhi\r\nget \0\x01\xff\r\nmg AAH/ b k v\r\n")),
            "HD\r\nERROR\r\nVA 2 kAAH/ b\r\nhi\r\n");  // a NUL ends a text line ("get "); meta reaches it
}

TEST_F(MetaProtocol, Delete) {
  EXPECT_EQ(Run("ms d 1\r\n1\r\nmd d\r\nmd d\r\nmd d q k O1\r\nms d 1\r\n1\r\nmd d q\r\nmg d\r\nmd d T10\r\n"
                "md d x\r\nmd d q q\r\nmd\r\nmd " + std::string(251, 'y') + "\r\n"),
            "HD\r\nHD\r\nNF\r\nNF kd O1\r\nHD\r\nEN\r\nNF\r\nCLIENT_ERROR invalid or duplicate flag\r\n"
            "CLIENT_ERROR invalid or duplicate flag\r\nERROR\r\nCLIENT_ERROR bad command line format\r\n");
}

TEST_F(MetaProtocol, Arithmetic) {
  std::string o33 = "O" + std::string(33, 'o');
  EXPECT_EQ(Run("ma n\r\nma n N0 J5 v\r\nma n v\r\nma n q\r\nma n v k O9\r\nma n MD D100 v\r\nma n M- v\r\n"
                "ma n M+ D3 v\r\nma n MI v\r\nma n MZ\r\nma n Dx\r\nma n Jx\r\nma n q q\r\nms s 3\r\nabc\r\n"
                "ma s\r\nma f N100 q v\r\nma f q v\r\nma none q\r\nmn\r\nma n T100 v\r\nma n " + o33 +
                "\r\nma n q " + o33 + "\r\n"),
            "NF\r\nVA 1\r\n5\r\nVA 1\r\n6\r\nVA 1 kn O9\r\n8\r\nVA 1\r\n0\r\nVA 1\r\n0\r\nVA 1\r\n3\r\n"
            "VA 1\r\n4\r\nCLIENT_ERROR invalid mode for ma M token\r\nCLIENT_ERROR invalid or duplicate flag\r\n"
            "CLIENT_ERROR invalid or duplicate flag\r\nCLIENT_ERROR invalid or duplicate flag\r\nHD\r\n"
            "CLIENT_ERROR cannot increment or decrement non-numeric value\r\nVA 1\r\n0\r\nNF\r\nMN\r\n"
            "VA 1\r\n5\r\nCLIENT_ERROR opaque token too long\r\nCLIENT_ERROR opaque token too long\r\n");
}

TEST_F(MetaProtocol, ArithmeticAutoCreateTtl) {
  EXPECT_EQ(Run("ma t N2 J7 v\r\n"), "VA 1\r\n7\r\n");
  e_.clock.Advance(2000);
  EXPECT_EQ(Run("mg t v\r\n"), "EN\r\n");
  EXPECT_EQ(Run("ma t N2 T100 v\r\n"), "VA 1\r\n0\r\n");  // T after N: the created pair lives 100 s
  e_.clock.Advance(50000);
  EXPECT_EQ(Run("ma t v\r\n"), "VA 1\r\n1\r\n");
}

TEST_F(MetaProtocol, NoopAndQuietPipelines) {
  EXPECT_EQ(Run("mn\r\nms a 1 q\r\n1\r\nms b 1 q\r\n2\r\nmg a q v k\r\nmg x q v k\r\nmg b q v k\r\nmn\r\n"),
            "MN\r\nVA 1 ka\r\n1\r\nVA 1 kb\r\n2\r\nMN\r\n");
}

// Flags the backend contract has no call for: refused as memcached refuses a flag it does not know.
TEST_F(MetaProtocol, UnsupportedFlagsAreRefusedAsUnknown) {
  Run("ms a 1\r\n1\r\n");
  for (const char* f : {"h", "l", "t", "N10", "R10"}) {
    EXPECT_EQ(Run(std::string("mg a v ") + f + "\r\n"), "CLIENT_ERROR invalid flag\r\n") << f;
  }
  EXPECT_EQ(Run("ms a 1 I\r\n2\r\nmg a v\r\n"), "CLIENT_ERROR invalid flag\r\nVA 1\r\n1\r\n");
  EXPECT_EQ(Run("md a C1\r\nmd a I\r\nma a C1\r\nma a c\r\nma a t\r\n"),
            "CLIENT_ERROR invalid or duplicate flag\r\nCLIENT_ERROR invalid or duplicate flag\r\n"
            "CLIENT_ERROR invalid or duplicate flag\r\nCLIENT_ERROR invalid or duplicate flag\r\n"
            "CLIENT_ERROR invalid or duplicate flag\r\n");
  EXPECT_EQ(Run("me a\r\n"), "ERROR\r\n");
  EXPECT_EQ(Run("mg a v\r\n"), "VA 1\r\n1\r\n");  // nothing above changed it
}

}  // namespace
}  // namespace shmemcached
