// One client connection's protocol state: memcached's connection state machine (memcached.c: drive_machine)
// without the sockets. The connection feeds what it read into `in`; Process frames it into command lines,
// data blocks and bytes to swallow, runs each command against the backend in order, and appends every answer
// to `out` in request order (pipelining).
//
// Bounds (see Limits): a command line is at most 2048 bytes until its newline (a get/gets line up to
// max_get_line); a data block is copied out of `in` as it arrives and is at most max value + 2 bytes; a data
// block memcached would refuse (too large) is swallowed as it arrives, never held; no new command starts while
// `out` holds output_high_water bytes or more, and a multi-key get pauses between batches, so a client that
// does not read cannot make the session grow.
//
// Not thread-safe; one per connection.
#ifndef SHMEMCACHED_PROTOCOL_SESSION_H_
#define SHMEMCACHED_PROTOCOL_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/answer_batch.h"
#include "protocol/byte_queue.h"
#include "protocol/expiry.h"
#include "protocol/gateway_context.h"
#include "protocol/storage.h"

namespace shmemcached {

// A return flag of ms, in request order: 'O' (opaque, with its token), 'k' (key) or 'c' (CAS token).
struct MetaReturnFlag {
  char flag;
  std::string token;
};

// A storage command waiting for its data block.
struct PendingStore {
  bool meta = false;  // ms: answers HD/NS/EX/NF with return flags; else set/add/replace/append/prepend/cas
  bool binary = false;  // a binary Set/Add/Replace/Append/Prepend: the block is the value, without "\r\n"
  uint8_t opcode = 0;   // binary: the request's opcode and opaque, echoed in the response
  uint32_t opaque = 0;
  StoreVerb verb = StoreVerb::kSet;
  std::string key;
  bool key_binary = false;  // ms b: the key was base64; k returns it encoded
  uint32_t flags = 0;
  Expiry expiry;
  uint64_t cas = 0;
  bool quiet = false;       // ms q: HD is not sent; binary quiet opcode: success is not sent
  std::vector<MetaReturnFlag> returns;
  size_t block_len = 0;     // data length + 2 ("\r\n"); binary: the value's length
  std::string block;        // what has arrived of the data block

  // A complete block must end in "\r\n"; otherwise memcached answers "bad data chunk".
  bool block_ok() const {
    return binary || (block.size() >= 2 && block.compare(block.size() - 2, 2, "\r\n") == 0);
  }
  // The store this command asks for (valid while the PendingStore lives).
  StoreRequest request() const {
    StoreRequest r;
    r.verb = verb;
    r.key = key;
    r.value = std::string_view(block).substr(0, block.size() - (binary ? 0 : 2));
    r.flags = flags;
    r.expiry = expiry;
    r.cas = cas;
    return r;
  }
};

// A get/gets/gat/gats (or bget) in progress: keys are fetched in batches and the answer is written batch by
// batch, pausing while the output is above the high-water mark.
struct Retrieval {
  std::vector<std::string> keys;
  size_t next = 0;
  bool return_cas = false;
  bool touch = false;
  Expiry expiry;                  // touch: the new expiry
  bool key_too_long = false;      // a key after `keys` was too long: answer CLIENT_ERROR, not what was found
};

// Told when a session's deferred answers have been written, so that its connection can send them at once
// (before the rest of the batch is written). It must not run the session.
class AnswerListener {
 public:
  virtual ~AnswerListener() = default;
  virtual void AnswersReady() = 0;
};

class Session {
 public:
  enum class Next {
    kNeedInput,        // all complete input is processed; read more
    kOutputFull,       // paused while the output drains below the high-water mark; call Process again then
    kCloseAfterWrite,  // send what is queued, then close (quit, an oversized get line)
    kCloseNow,         // close without sending more (memcached's answer to garbage and HTTP)
  };

  explicit Session(GatewayContext* gateway) : gateway_(gateway) {}
  // Finishes the operations of answers still deferred (nothing is written).
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Processes what `in` holds, consuming it as it goes, and appends answers to `out`.
  Next Process(ByteQueue* in, ByteQueue* out);

  // Answers deferred (answer_batch.h): until the gateway's batch completes, the output holds only the answers
  // before the first of them, and must not be sent or consumed.
  bool answers_deferred() const { return !deferred_.empty(); }
  // Called by AnswerBatch::Complete: writes every deferred answer in place, in request order, then tells the
  // listener (if any).
  void WriteDeferredAnswers();
  // Whether every deferred answer could be written without waiting for the backend (DeferredAnswer::Ready).
  // Never blocks.
  bool DeferredAnswersReady();
  // Backend operations its deferred answers hold.
  size_t deferred_operations() const { return deferred_operations_; }
  void set_answer_listener(AnswerListener* listener) { listener_ = listener; }
  // Whether this session queued a write (DeferredAnswer::kWrite) since its answers were last written.
  bool writes_queued() const { return writes_queued_; }

  // The most input the connection should hold for this session before processing it (reads beyond it wait).
  size_t InputLimit() const;

  // ---- used by the command implementations (text_protocol, meta_protocol, retrieval) ----
  GatewayContext& gateway() { return *gateway_; }
  Backend& backend() { return gateway_->backend(); }
  const Limits& limits() const { return gateway_->limits(); }
  ByteQueue& out() { return *out_; }
  // memcached's c->noreply: set by a command's "noreply" or meta q; reset before every command.
  bool noreply() const { return noreply_; }
  void set_noreply(bool v) { noreply_ = v; }
  // memcached's out_string: the line and "\r\n", unless noreply.
  void OutString(std::string_view line);
  // memcached's out_errstring: always sent (meta protocol errors).
  void OutErrString(std::string_view line);
  // The data block of a storage command follows: read block_len bytes, then complete the command.
  void ExpectData(std::unique_ptr<PendingStore> pending);
  // Discard the next n bytes of input (a refused data block).
  void Swallow(uint64_t n);
  void StartRetrieval(std::unique_ptr<Retrieval> retrieval);
  // The answer of the command being processed (after whatever it has answered so far) waits for a backend
  // operation: started (a read) or queued (a write) now, written when the batch completes, or at once when the
  // gateway does not batch.
  void Defer(std::unique_ptr<DeferredAnswer> answer, DeferredAnswer::Kind kind);
  // Whether a deferred read of this session is in flight. Neither a store nor another read starts before it is
  // answered: a value too large for its batch buffer is fetched again when the answer is written
  // (retrieval.cc) and must not see a later command's store, and the output's bound needs the size of an
  // answer before the next read starts.
  bool reads_deferred() const { return reads_deferred_; }
  void CloseAfterWrite() { close_ = Next::kCloseAfterWrite; }
  void CloseNow() { close_ = Next::kCloseNow; }

 private:
  enum class State { kCommand, kData, kSwallow };

  // Frames one command line out of `in`; false when there is none yet (or the connection must close).
  bool TakeCommandLine(ByteQueue* in);
  void CompleteStore();

  GatewayContext* gateway_;
  ByteQueue* out_ = nullptr;
  State state_ = State::kCommand;
  Next close_ = Next::kNeedInput;  // kNeedInput = not closing
  bool negotiated_ = false;        // the first byte decided the protocol
  bool binary_ = false;            // it was 0x80: memcached's binary protocol (binary_protocol.h)
  bool noreply_ = false;
  std::string line_;
  std::unique_ptr<PendingStore> pending_;
  uint64_t swallow_left_ = 0;
  std::unique_ptr<Retrieval> retrieval_;
  struct Deferred {
    size_t at;  // the output's size when it was deferred: its answer goes there
    std::unique_ptr<DeferredAnswer> answer;
  };
  std::vector<Deferred> deferred_;  // in request order
  bool reads_deferred_ = false;
  size_t deferred_operations_ = 0;
  size_t ready_ = 0;  // deferred_[0, ready_) were found Ready
  bool writes_queued_ = false;  // a write of this session may still be queued in the batch
  AnswerListener* listener_ = nullptr;
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_SESSION_H_
