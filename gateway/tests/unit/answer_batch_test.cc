// Cross-connection batching (protocol/answer_batch.h) over the reference backend with in-flight starts: answers
// of gets, stores, touch, incr/decr and delete/md wait in the batch; they are written in request order, in place, once it completes; a
// blocking call, a full batch, a later store or read of the same session complete it first; a batch's reads
// start before its writes, except a session's own; and every answer is byte for byte what the engine answers
// without batching.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "unit/engine_fixture.h"

namespace shmemcached {
namespace {

class AnswerBatchTest : public ::testing::Test {
 protected:
  explicit AnswerBatchTest(Limits limits = Limits()) : e_(limits) {
    e_.backend().set_in_flight_starts(true);
    e_.gateway().batch().set_enabled(true);
  }

  // Processes all of bytes on c without completing the batch; returns what c may send now.
  std::string Start(Engine::Conn& c, const std::string& bytes) {
    c.in.Append(bytes);
    c.last = c.session->Process(&c.in, &c.out);
    return c.session->answers_deferred() ? std::string(c.out.view().substr(0, 0)) : std::string(c.out.view());
  }
  std::string Output(Engine::Conn& c) {
    EXPECT_FALSE(c.session->answers_deferred());
    std::string out(c.out.view());
    c.out.Clear();
    return out;
  }

  // Runs setup, then each script on a connection of its own: every script's answers stay deferred and nothing
  // completes the batch until the event loop would; one Complete then answers them all, byte for byte as the
  // unbatched engine running the scripts one after the other (the order the batch started them in). Returns
  // the unbatched engine, for checks after.
  std::unique_ptr<Engine> ExpectBatchedAsUnbatched(const std::string& setup, const std::vector<std::string>& scripts) {
    auto setup_conn = e_.Connect();
    Start(*setup_conn, setup);
    e_.gateway().batch().Complete();
    Output(*setup_conn);
    const uint64_t batches = e_.gateway().batch().batches();
    std::vector<std::unique_ptr<Engine::Conn>> conns;
    for (const std::string& script : scripts) {
      conns.push_back(e_.Connect());
      EXPECT_EQ(Start(*conns.back(), script), "") << script;
      EXPECT_TRUE(conns.back()->session->answers_deferred()) << script;
    }
    EXPECT_EQ(e_.gateway().batch().batches(), batches);  // no command completed it
    e_.gateway().batch().Complete();
    EXPECT_EQ(e_.gateway().batch().batches() - batches, 1u);
    auto plain = std::make_unique<Engine>();
    plain->Run(setup);
    for (size_t i = 0; i < scripts.size(); ++i) EXPECT_EQ(Output(*conns[i]), plain->Run(scripts[i])) << scripts[i];
    return plain;
  }

  Engine e_;
};

// The same script on a gateway without batching: the answers batching must reproduce.
std::string Unbatched(const std::string& setup, const std::string& script) {
  Engine plain;
  plain.Run(setup);
  return plain.Run(script);
}

TEST_F(AnswerBatchTest, AnswersKeepRequestOrderAndBytes) {
  const std::string setup = "set b 7 0 2\r\nbb\r\nset n 0 0 2\r\n10\r\n";
  const std::string script =
      "set a 0 0 1\r\n1\r\nget a\r\nversion\r\nget a b zz\r\nset q 0 0 1 noreply\r\nq\r\nbogus\r\n"
      "get q\r\nset a 0 0 3\r\n333\r\nget a\r\n";
  auto setup_conn = e_.Connect();
  Start(*setup_conn, setup);
  e_.gateway().batch().Complete();
  Output(*setup_conn);

  auto c = e_.Connect();
  EXPECT_EQ(Start(*c, script), "");
  EXPECT_TRUE(c->session->answers_deferred());
  e_.gateway().batch().Complete();
  EXPECT_EQ(Output(*c), Unbatched(setup, script));
}

TEST_F(AnswerBatchTest, ManySessionsOneBatch) {
  std::vector<std::unique_ptr<Engine::Conn>> conns;
  for (int i = 0; i < 8; ++i) {
    conns.push_back(e_.Connect());
    std::string k = "k" + std::to_string(i);
    Start(*conns.back(), "set " + k + " 0 0 " + std::to_string(k.size()) + "\r\n" + k + "\r\n");
  }
  uint64_t batches = e_.gateway().batch().batches();
  e_.gateway().batch().Complete();
  EXPECT_EQ(e_.gateway().batch().batches() - batches, 1u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(Output(*conns[i]), "STORED\r\n");
    std::string k = "k" + std::to_string(i);
    Start(*conns[i], "get " + k + "\r\n");
  }
  e_.gateway().batch().Complete();
  for (int i = 0; i < 8; ++i) {
    std::string k = "k" + std::to_string(i);
    EXPECT_EQ(Output(*conns[i]), "VALUE " + k + " 0 2\r\n" + k + "\r\nEND\r\n");
  }
  EXPECT_EQ(e_.gateway().counters().get_hits, 8u);
  EXPECT_EQ(e_.gateway().counters().cmd_set, 8u);
}

TEST_F(AnswerBatchTest, BlockingCallCompletesTheBatchFirst) {
  auto a = e_.Connect(), b = e_.Connect();
  Start(*a, "set n 0 0 1\r\n5\r\n");
  e_.gateway().batch().Complete();
  Output(*a);
  EXPECT_EQ(Start(*a, "get n\r\n"), "");
  // A gat with an expiry already passed is a blocking call (a fetch, then a delete): a's read is answered
  // (with the value before the delete) before it runs.
  Start(*b, "gat -1 n\r\n");
  EXPECT_FALSE(a->session->answers_deferred());
  EXPECT_EQ(Output(*a), "VALUE n 0 1\r\n5\r\nEND\r\n");
  EXPECT_EQ(Output(*b), "VALUE n 0 1\r\n5\r\nEND\r\n");
  Start(*a, "get n\r\n");
  e_.gateway().batch().Complete();
  EXPECT_EQ(Output(*a), "END\r\n");
}

TEST_F(AnswerBatchTest, ReadsOfTheBatchStartBeforeItsWrites) {
  auto a = e_.Connect(), b = e_.Connect();
  Start(*a, "set k 0 0 3\r\nold\r\n");
  e_.gateway().batch().Complete();
  Output(*a);
  // a's write is queued until the batch completes; b's read, processed later, starts first (both unanswered:
  // either order is one memcached could have produced). a's own read after its write sees the write.
  Start(*a, "set k 0 0 3\r\nnew\r\n");
  Start(*b, "get k\r\n");
  Start(*a, "get k\r\n");
  e_.gateway().batch().Complete();
  EXPECT_EQ(Output(*b), "VALUE k 0 3\r\nold\r\nEND\r\n");
  EXPECT_EQ(Output(*a), "STORED\r\nVALUE k 0 3\r\nnew\r\nEND\r\n");
}

// Records the order in which sessions' answers became ready to send.
class OrderListener final : public AnswerListener {
 public:
  OrderListener(std::vector<std::string>* log, std::string name) : log_(log), name_(std::move(name)) {}
  void AnswersReady() override { log_->push_back(name_); }

 private:
  std::vector<std::string>* log_;
  std::string name_;
};

TEST_F(AnswerBatchTest, SessionsThatOnlyReadAreAnsweredFirst) {
  std::vector<std::string> log;
  OrderListener la(&log, "writer"), lb(&log, "reader");
  auto a = e_.Connect(), b = e_.Connect();
  a->session->set_answer_listener(&la);
  b->session->set_answer_listener(&lb);
  Start(*a, "set k 0 0 1\r\nv\r\n");
  Start(*b, "get k\r\n");
  e_.gateway().batch().Complete();
  EXPECT_EQ(log, (std::vector<std::string>{"reader", "writer"}));
  EXPECT_EQ(Output(*a), "STORED\r\n");
  EXPECT_EQ(Output(*b), "END\r\n");  // the read started before the batch's write
}

TEST_F(AnswerBatchTest, StatsCountsDeferredAnswers) {
  auto a = e_.Connect(), b = e_.Connect();
  Start(*a, "get x\r\nget y\r\n");
  Start(*b, "stats\r\n");
  EXPECT_NE(Output(*b).find("STAT get_misses 2\r\n"), std::string::npos);
  EXPECT_EQ(Output(*a), "END\r\nEND\r\n");
}

TEST_F(AnswerBatchTest, LargeValueIsReadBeforeALaterStoreOfTheSession) {
  const std::string big(30000, 'B');  // larger than a batch buffer (16K): read again when answered
  auto c = e_.Connect();
  Start(*c, "set big 0 0 30000\r\n" + big + "\r\n");
  e_.gateway().batch().Complete();
  Output(*c);
  Start(*c, "get big\r\nset big 0 0 1\r\nx\r\nget big\r\n");
  e_.gateway().batch().Complete();
  EXPECT_EQ(Output(*c), "VALUE big 0 30000\r\n" + big + "\r\nEND\r\nSTORED\r\nVALUE big 0 1\r\nx\r\nEND\r\n");
}

TEST_F(AnswerBatchTest, SessionClosedWithAnswersDeferred) {
  auto a = e_.Connect(), b = e_.Connect();
  Start(*a, "set k 0 0 1\r\nv\r\nget k\r\n");
  Start(*b, "get k\r\n");
  EXPECT_TRUE(a->session->answers_deferred());
  a.reset();  // its store still took effect; nothing is written for it
  e_.gateway().batch().Complete();
  EXPECT_EQ(Output(*b), "VALUE k 0 1\r\nv\r\nEND\r\n");
}

// Every storage command with flags, exptime, a mode or a token (text and ms) joins the batch: nothing completes
// it before the event loop does, and the answers are the unbatched engine's, byte for byte.
TEST_F(AnswerBatchTest, StoresWithOptionsJoinTheBatch) {
  const std::string setup = "set c 0 0 1\r\nc\r\nset r 3 0 1\r\nr\r\n";
  const std::vector<std::string> scripts = {
      "set a 5 100 2\r\naa\r\n",
      "add c 1 0 1\r\nx\r\nadd fresh 2 3600 1\r\nf\r\n",
      "replace r 9 0 2\r\nrr\r\nreplace none 1 0 1\r\nn\r\n",
      "append c 7 0 2\r\n++\r\nprepend c 7 0 2\r\n--\r\nappend none 0 0 1\r\nx\r\n",
      "cas c 4 0 1 1\r\ny\r\ncas none 0 0 1 5\r\nn\r\n",
      "ms m 2 F8 T60 c k O42\r\nmm\r\nms m 2 ME\r\nxx\r\nms m 1 MA q\r\n!\r\nmn\r\n",
      "set q 1 0 1 noreply\r\nq\r\nadd q 1 0 1 noreply\r\nq\r\n",
  };
  std::unique_ptr<Engine> plain = ExpectBatchedAsUnbatched(setup, scripts);
  auto check = e_.Connect();
  Start(*check, "gets a c r fresh m q\r\n");
  e_.gateway().batch().Complete();
  EXPECT_EQ(Output(*check), plain->Run("gets a c r fresh m q\r\n"));
}

// A session's reads after its own stores in one batch see them (flags, modes and tokens included); another
// session's read of the same batch, processed later, may see the value before (both unanswered).
TEST_F(AnswerBatchTest, ReadsAfterOwnStoresWithOptionsSeeThem) {
  auto a = e_.Connect(), b = e_.Connect();
  Start(*a, "set k 1 0 3\r\nold\r\n");
  e_.gateway().batch().Complete();
  Output(*a);
  Start(*a, "set k 9 100 3\r\nnew\r\nappend k 0 0 1\r\n!\r\nget k\r\nms k 2 F4 MP\r\n>>\r\ngets k\r\n");
  Start(*b, "get k\r\n");
  EXPECT_TRUE(a->session->answers_deferred());
  e_.gateway().batch().Complete();
  const std::string out = Output(*a);
  const std::string head = "STORED\r\nSTORED\r\nVALUE k 9 4\r\nnew!\r\nEND\r\nHD\r\nVALUE k 9 6 ";
  const std::string tail = "\r\n>>new!\r\nEND\r\n";
  ASSERT_GT(out.size(), head.size() + tail.size()) << out;
  EXPECT_EQ(out.substr(0, head.size()), head) << out;
  EXPECT_EQ(out.substr(out.size() - tail.size()), tail) << out;
  const std::string seen = Output(*b);
  EXPECT_TRUE(seen == "VALUE k 1 3\r\nold\r\nEND\r\n" || seen == "VALUE k 9 6\r\n>>new!\r\nEND\r\n") << seen;
}

// ms with a token and the c return flag: the token written at completion is the one gets then shows.
TEST_F(AnswerBatchTest, MetaStoreReturnsTheNewToken) {
  auto a = e_.Connect();
  Start(*a, "ms t 1 c\r\n1\r\ngets t\r\n");
  e_.gateway().batch().Complete();
  const std::string out = Output(*a);
  ASSERT_EQ(out.rfind("HD c", 0), 0u) << out;
  const std::string token = out.substr(4, out.find("\r\n") - 4);
  EXPECT_NE(token, "0");
  EXPECT_NE(out.find("VALUE t 0 1 " + token + "\r\n1\r\nEND\r\n"), std::string::npos) << out;
  // A stale token: EX, nothing changed; the current one: HD.
  Start(*a, "ms t 1 C999999 c\r\n2\r\nms t 1 C" + token + "\r\n3\r\nget t\r\n");
  e_.gateway().batch().Complete();
  EXPECT_EQ(Output(*a), "EX c0\r\nHD\r\nVALUE t 0 1\r\n3\r\nEND\r\n");
}

// incr/decr and touch from many sessions join the batch (nothing completes it before the event loop does), and
// every answer is the unbatched engine's: hits, NOT_FOUND, a non-numeric value, decr stopping at 0, incr
// wrapping at 2^64, noreply.
TEST_F(AnswerBatchTest, IncrDecrTouchJoinTheBatch) {
  const std::string setup =
      "set n 0 0 2\r\n10\r\nset d 0 0 1\r\n3\r\nset w 0 0 20\r\n18446744073709551615\r\n"
      "set s 0 0 3\r\nabc\r\nset t 5 0 1\r\nt\r\nset big 0 0 1\r\n1\r\nset p 0 0 1\r\np\r\n"
      "set q 0 0 1\r\nq\r\n";
  const std::vector<std::string> scripts = {
      "incr n 5\r\nincr n 1\r\n",
      "incr none 1\r\ndecr none 1\r\n",
      "incr s 1\r\ndecr s 1\r\n",
      "decr d 2\r\ndecr d 100\r\ndecr d 1\r\n",
      "incr w 1\r\nincr w 9223372036854775807\r\n",
      "decr big 9223372036854775808\r\nincr big 4\r\n",
      "touch t 100\r\ntouch none 100\r\ntouch t 0 noreply\r\n",
      "touch p -1\r\ntouch p -1\r\ntouch q -1 noreply\r\nmn\r\n",
      "incr n 1 noreply\r\ndecr none 1 noreply\r\nmn\r\n",
  };
  std::unique_ptr<Engine> plain = ExpectBatchedAsUnbatched(setup, scripts);
  // The answers themselves, as memcached gives them.
  Engine expect;
  expect.Run(setup);
  EXPECT_EQ(expect.Run(scripts[0]), "15\r\n16\r\n");
  EXPECT_EQ(expect.Run(scripts[1]), "NOT_FOUND\r\nNOT_FOUND\r\n");
  EXPECT_EQ(expect.Run(scripts[2]),
            "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
            "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n");
  EXPECT_EQ(expect.Run(scripts[3]), "1\r\n0\r\n0\r\n");
  EXPECT_EQ(expect.Run(scripts[4]), "0\r\n9223372036854775807\r\n");
  EXPECT_EQ(expect.Run(scripts[5]), "0\r\n4\r\n");
  EXPECT_EQ(expect.Run(scripts[6]), "TOUCHED\r\nNOT_FOUND\r\n");
  EXPECT_EQ(expect.Run(scripts[7]), "TOUCHED\r\nNOT_FOUND\r\nMN\r\n");  // a past time deletes
  EXPECT_EQ(expect.Run(scripts[8]), "MN\r\n");
  const Counters& c = e_.gateway().counters();
  EXPECT_EQ(c.cmd_touch, 6u);
  EXPECT_EQ(c.touch_hits, 4u);
  EXPECT_EQ(c.touch_misses, 2u);
  EXPECT_EQ(c.decr_misses, 2u);
  auto check = e_.Connect();
  Start(*check, "get n d w s t big p q\r\n");
  e_.gateway().batch().Complete();
  EXPECT_EQ(Output(*check), plain->Run("get n d w s t big p q\r\n"));
}

// A session's reads after its own incr/decr/touch see them (a write after a deferred read completes the batch
// first, as a store does: DeferWrite).
TEST_F(AnswerBatchTest, ReadsAfterOwnUpdatesSeeThem) {
  auto a = e_.Connect(), b = e_.Connect();
  const std::string setup = "set n 3 0 2\r\n10\r\n";
  Start(*a, setup);
  e_.gateway().batch().Complete();
  Output(*a);
  // In one batch: the read starts the session's queued incr first.
  const std::string first = "incr n 1\r\ntouch n 50\r\nget n\r\n";
  Start(*a, first);
  EXPECT_TRUE(a->session->answers_deferred());
  e_.gateway().batch().Complete();
  EXPECT_EQ(Output(*a), "11\r\nTOUCHED\r\nVALUE n 3 2\r\n11\r\nEND\r\n");
  Start(*a, "decr n 1\r\n");
  e_.gateway().batch().Complete();
  Output(*a);
  const std::string script = "incr n 5\r\nget n\r\ndecr n 100\r\ngets n\r\ntouch n 100\r\nmg n v f\r\n";
  Start(*a, script);
  Start(*b, "incr n 1\r\n");
  e_.gateway().batch().Complete();
  const std::string out = Output(*a);
  EXPECT_EQ(out.rfind("15\r\nVALUE n 3 2\r\n15\r\nEND\r\n0\r\n", 0), 0u) << out;
  EXPECT_EQ(out, Unbatched(setup + first + "decr n 1\r\n", script));
  EXPECT_EQ(Output(*b), "1\r\n");  // b's incr was processed after a's script
}

// Forms that cannot start without waiting stay blocking and complete the batch first, with the same answers:
// a delta beyond one Backend::Incr, a set whose value is too large (memcached drops the old pair: a blocking
// delete). (A touch with an expiry already passed joins the batch as a delete: IncrDecrTouchJoinTheBatch.)
TEST_F(AnswerBatchTest, UpdatesThatCannotStartCompleteTheBatch) {
  const std::string setup = "set n 0 0 1\r\n7\r\nset x 0 0 1\r\nx\r\n";
  auto a = e_.Connect(), b = e_.Connect();
  Start(*a, setup);
  e_.gateway().batch().Complete();
  Output(*a);
  const std::string too_large = std::to_string((1 << 20) + 1);
  for (const std::string& script :
       {std::string("incr n 18446744073709551615\r\n"),
        "set x 0 0 " + too_large + "\r\n" + std::string((1 << 20) + 1, 'v') + "\r\n"}) {
    Start(*a, "get n\r\n");
    EXPECT_TRUE(a->session->answers_deferred());
    Start(*b, script);
    EXPECT_FALSE(a->session->answers_deferred()) << script.substr(0, 20);
    EXPECT_FALSE(b->session->answers_deferred()) << script.substr(0, 20);
    Output(*a);
  }
  EXPECT_EQ(Output(*b), "6\r\nSERVER_ERROR object too large for cache\r\n");  // 7 + 2^64 - 1 wraps to 6
  Start(*b, "get x\r\n");  // a store too large removes the old value, as memcached's does
  e_.gateway().batch().Complete();
  EXPECT_EQ(Output(*b), "END\r\n");
}

// delete and md from many sessions join the batch (nothing completes it before the event loop does), and every
// answer is the unbatched engine's: DELETED, NOT_FOUND, noreply, the old "delete <key> 0", md's HD/NF with q,
// O (opaque), k and b (base64 key), and the errors answered before any delete (bad usage, key too long, opaque
// too long, an unsupported flag).
TEST_F(AnswerBatchTest, DeleteAndMetaDeleteJoinTheBatch) {
  const std::string setup =
      "set a 0 0 1\r\na\r\nset b 0 0 1\r\nb\r\nset c 0 0 1\r\nc\r\nset d 0 0 1\r\nd\r\n"
      "set e 0 0 1\r\ne\r\nset f 0 0 1\r\nf\r\nset bin 0 0 1\r\nz\r\n";
  const std::vector<std::string> scripts = {
      "delete a\r\ndelete a\r\n",
      "delete b noreply\r\ndelete none noreply\r\ndelete c 0\r\ndelete c 0 noreply\r\nmn\r\n",
      "delete d 5\r\ndelete " + std::string(251, 'k') + "\r\ndelete d\r\n",
      "md e\r\nmd e\r\nmd none q O7 k\r\n",
      "md f q O1 k\r\nmd f O2 k\r\nmd Ymlu b k O3\r\nmn\r\n",
      "md x\r\nmd x O" + std::string(40, 'o') + "\r\nmd x C5\r\nmd x I\r\n",
  };
  ExpectBatchedAsUnbatched(setup, scripts);
  Engine expect;
  expect.Run(setup);
  EXPECT_EQ(expect.Run(scripts[0]), "DELETED\r\nNOT_FOUND\r\n");
  EXPECT_EQ(expect.Run(scripts[1]), "DELETED\r\nMN\r\n");
  EXPECT_EQ(expect.Run(scripts[3]), "HD\r\nNF\r\nNF O7 knone\r\n");
  EXPECT_EQ(expect.Run(scripts[4]), "NF O2 kf\r\nHD kYmlu b O3\r\nMN\r\n");
  const Counters& c = e_.gateway().counters();
  EXPECT_EQ(c.delete_hits, 7u);  // a, b, c, d, e, f, bin
  EXPECT_EQ(c.delete_misses, 7u);  // a, none, c, e, none, f, x
  EXPECT_EQ(expect.Run(scripts[5]), "NF\r\nCLIENT_ERROR opaque token too long\r\n"
                                    "CLIENT_ERROR invalid or duplicate flag\r\nCLIENT_ERROR invalid or duplicate flag\r\n");
  auto check = e_.Connect();
  Start(*check, "get a b c d e f bin\r\n");
  e_.gateway().batch().Complete();
  EXPECT_EQ(Output(*check), "END\r\n");
}

// A session's own store, delete and get in one pipelined burst: the get sees the delete, a store after the delete
// sees the key absent (add stores), and another session's delete in the same batch is ordered after the reads
// that came before it.
TEST_F(AnswerBatchTest, ReadsAfterOwnDeletesSeeThem) {
  auto a = e_.Connect(), b = e_.Connect();
  const std::string script =
      "set k 0 0 3\r\nnew\r\ndelete k\r\nget k\r\nadd k 0 0 1\r\n1\r\nmd k q\r\nmg k v\r\n"
      "set k 0 0 2\r\nv2\r\nget k\r\ndelete k noreply\r\ndelete k\r\n";
  EXPECT_EQ(Start(*a, script), "");
  EXPECT_TRUE(a->session->answers_deferred());
  e_.gateway().batch().Complete();
  const std::string out = Output(*a);
  EXPECT_EQ(out,
            "STORED\r\nDELETED\r\nEND\r\nSTORED\r\nEN\r\nSTORED\r\nVALUE k 0 2\r\nv2\r\nEND\r\n"
            "NOT_FOUND\r\n");
  EXPECT_EQ(out, Unbatched("", script));
  // A delete after one of the session's deferred reads completes the batch first (DeferWrite): the read
  // answers the value before the delete.
  Start(*a, "set k 0 0 1\r\nx\r\n");
  e_.gateway().batch().Complete();
  Output(*a);
  Start(*b, "get k\r\n");
  Start(*a, "get k\r\ndelete k\r\nget k\r\n");
  EXPECT_FALSE(b->session->answers_deferred()) << "a's delete after its read completed the batch";
  EXPECT_EQ(Output(*b), "VALUE k 0 1\r\nx\r\nEND\r\n");
  e_.gateway().batch().Complete();
  EXPECT_EQ(Output(*a), "VALUE k 0 1\r\nx\r\nEND\r\nDELETED\r\nEND\r\n");
}

TEST_F(AnswerBatchTest, SessionClosedWithUpdatesDeferred) {
  auto a = e_.Connect(), b = e_.Connect();
  Start(*a, "set n 0 0 1\r\n1\r\n");
  e_.gateway().batch().Complete();
  Output(*a);
  Start(*a, "incr n 4\r\ntouch n 10\r\n");
  EXPECT_TRUE(a->session->answers_deferred());
  a.reset();  // the client sent them: they take effect, unanswered
  Start(*b, "get n\r\n");
  e_.gateway().batch().Complete();
  EXPECT_EQ(Output(*b), "VALUE n 0 1\r\n5\r\nEND\r\n");
}

// ma with one delta and no creation or touch joins the batch too; its answers (HD, VA, NF, q, O, k, errors)
// are the unbatched engine's. ma N (creation) and ma T stay blocking.
TEST_F(AnswerBatchTest, MetaArithmeticJoinsTheBatch) {
  const std::string setup = "set m 0 0 1\r\n5\r\nset s 0 0 1\r\ns\r\n";
  const std::string script =
      "ma m\r\nma m v\r\nma m MD D100 v O9 k\r\nma none\r\nma none q O1\r\nma s\r\nma m q O5\r\n"
      "ma m MI D9223372036854775807 v\r\nmn\r\n";
  auto a = e_.Connect(), b = e_.Connect();
  Start(*a, setup);
  e_.gateway().batch().Complete();
  Output(*a);
  const uint64_t batches = e_.gateway().batch().batches();
  EXPECT_EQ(Start(*a, script), "");
  EXPECT_TRUE(a->session->answers_deferred());
  EXPECT_EQ(e_.gateway().batch().batches(), batches);
  e_.gateway().batch().Complete();
  const std::string out = Output(*a);
  EXPECT_EQ(out, Unbatched(setup, script));
  EXPECT_EQ(out,
            "HD\r\nVA 1\r\n7\r\nVA 1 O9 km\r\n0\r\nNF\r\nNF O1\r\n"
            "CLIENT_ERROR cannot increment or decrement non-numeric value\r\nVA 19\r\n9223372036854775808\r\nMN\r\n");
  // Creation and touch are blocking: they complete b's deferred read first.
  Start(*b, "get m\r\n");
  Start(*a, "ma fresh N0 J3 v\r\n");
  EXPECT_FALSE(b->session->answers_deferred());
  EXPECT_EQ(Output(*a), "VA 1\r\n3\r\n");
  Start(*b, "get m\r\n");
  Start(*a, "ma fresh T60 v\r\n");
  EXPECT_FALSE(b->session->answers_deferred());
  EXPECT_EQ(Output(*a), "VA 1\r\n4\r\n");
}


class SmallBurst : public AnswerBatchTest {
 protected:
  static Limits Burst4() {
    Limits l;
    l.max_burst = 4;
    return l;
  }
  SmallBurst() : AnswerBatchTest(Burst4()) {}
};

TEST_F(SmallBurst, FullBatchCompletes) {
  std::vector<std::unique_ptr<Engine::Conn>> conns;
  uint64_t batches = e_.gateway().batch().batches();
  for (int i = 0; i < 6; ++i) {
    conns.push_back(e_.Connect());
    Start(*conns.back(), "get k" + std::to_string(i) + "\r\n");
  }
  EXPECT_EQ(e_.gateway().batch().batches() - batches, 1u);  // the 4th read filled it
  for (int i = 0; i < 4; ++i) EXPECT_EQ(Output(*conns[i]), "END\r\n");
  EXPECT_TRUE(conns[4]->session->answers_deferred());
  e_.gateway().batch().Complete();
  EXPECT_EQ(Output(*conns[4]), "END\r\n");
  EXPECT_EQ(Output(*conns[5]), "END\r\n");
}

}  // namespace
}  // namespace shmemcached
