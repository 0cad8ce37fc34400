// Cross-connection batching: answers that wait for backend operations still in flight.
//
// A command whose backend operation can start without waiting (Backend::StartMultiGet, StartStore, StartTouch,
// StartIncr, StartDelete: a get/gets, a storage command, touch, incr/decr, delete/md) leaves a DeferredAnswer in its session instead of its answer; the answer's bytes are
// written later at the place in the session's output where they belong, so pipelined answers stay in request
// order. The gateway's event loop lets every ready connection start its commands, then completes the batch once
// (AnswerBatch::Complete): every operation in flight is waited for and every deferred answer written, session by
// session (those without writes first), each session's connection sending as soon as its answers are written.
// N connections' requests thus reach the servers as one burst. The event loop does not wait for the burst
// either: it polls (AnswerBatch::Poll), writing the answers of the sessions whose operations have completed,
// and goes on reading other connections meanwhile; a session's deferred answers are written all at once, in
// request order, when the last of them is ready.
//
// Invariants:
//   - every deferred answer is written before any blocking backend call is made (BatchedBackend completes the
//     batch first): a blocking call never overtakes an earlier command's answer, and counters are current when
//     `stats` reads them;
//   - a batch holds at most max_operations backend operations (all those in flight, however many polls they
//     have been waiting through): the command that reaches it completes it, which bounds the memory deferred
//     answers hold;
//   - while the batch is disabled (no event loop completes it: unit tests of the engine), an answer is written
//     as soon as its command is processed.
// Operations take effect in the order they were started (Backend's contract). Within a session they start in
// request order (a read first starts the session's queued writes), so a later command sees an earlier one's
// effect; across sessions a batch's reads start before its writes, a valid order for requests that are all
// still unanswered.
#ifndef SHMEMCACHED_PROTOCOL_ANSWER_BATCH_H_
#define SHMEMCACHED_PROTOCOL_ANSWER_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/backend.h"
#include "protocol/byte_queue.h"

namespace shmemcached {

class Session;

// One command's answer, waiting for its backend operation.
class DeferredAnswer {
 public:
  // A read starts at once; a write is queued and starts when the batch completes, after the reads of the
  // batch (shmemcache serves a get one-sided only while no request of the client to that server is in flight,
  // so reads started first stay one-sided), or earlier when a later read of its session must see it.
  enum Kind { kRead, kWrite };

  virtual ~DeferredAnswer() = default;
  // Starts the backend operation (Backend::StartMultiGet / StartStore / StartTouch / StartIncr / StartDelete).
  virtual void Start() = 0;
  // Finishes the operation and appends the command's answer to out (nothing, under noreply).
  virtual void Write(ByteQueue& out) = 0;
  // Backend operations it holds in flight.
  virtual size_t operations() const { return 1; }
  // Started, and Write would not wait for the backend (InFlight::Ready). Never blocks.
  virtual bool Ready() = 0;
};

class AnswerBatch {
 public:
  explicit AnswerBatch(size_t max_operations) : max_operations_(max_operations == 0 ? 1 : max_operations) {}
  AnswerBatch(const AnswerBatch&) = delete;
  AnswerBatch& operator=(const AnswerBatch&) = delete;

  // The backend told how many sessions a completion waits for (Backend::BeforeWaits); may be null.
  void set_backend(Backend* backend) { backend_ = backend; }
  // Enabled by the event loop, which then calls Complete after every wake-up.
  void set_enabled(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }

  // A session deferred its first answer since the last Complete.
  void Join(Session* session) { sessions_.push_back(session); }
  // A session is destroyed with answers deferred (it finished their operations; nothing is written).
  void Leave(Session* session);
  // n more operations are in flight or queued; completes the batch when it holds max_operations.
  void Started(size_t n);
  // A write to start later (DeferredAnswer::kWrite), and starting every queued write, in the order queued.
  void Queue(DeferredAnswer* write) { queued_.push_back(write); }
  void StartQueued();
  // Waits for every operation in flight and writes every deferred answer. Does nothing while it runs already
  // (a DeferredAnswer may make blocking backend calls).
  void Complete();
  // Starts the queued writes and writes the deferred answers of every session whose operations have all
  // completed, without waiting (Session::DeferredAnswersReady); the other sessions stay in the batch, their
  // operations in flight. True if it wrote any. Does nothing while Complete or Poll runs.
  bool Poll();
  bool empty() const { return sessions_.empty(); }

  // How many batches were completed and how many operations they held (tests, `stats`).
  uint64_t batches() const { return batches_; }
  uint64_t batched_operations() const { return batched_operations_; }

 private:
  size_t max_operations_;
  Backend* backend_ = nullptr;
  bool enabled_ = false;
  bool completing_ = false;
  size_t operations_ = 0;
  std::vector<Session*> sessions_;
  std::vector<Session*> ready_, waiting_;  // Poll's partition of sessions_, kept so polling turns allocate nothing
  std::vector<DeferredAnswer*> queued_;  // writes not started yet (owned by their sessions)
  uint64_t batches_ = 0, batched_operations_ = 0;
};

// The backend as the engine sees it: every blocking call first completes the batch; the Start calls pass
// through (their answers are deferred by the caller).
class BatchedBackend final : public Backend {
 public:
  BatchedBackend(Backend* inner, AnswerBatch* batch) : inner_(inner), batch_(batch) {}

  size_t MaxKeyLength() const override { return inner_->MaxKeyLength(); }
  size_t MaxValueLength() const override { return inner_->MaxValueLength(); }
  Status Store(std::string_view key, std::string_view value, const StoreOptions& options,
               uint64_t* cas_out) override;
  Status Fetch(std::string_view key, std::string* value, uint32_t* flags, uint64_t* cas) override;
  Status Touch(std::string_view key, uint64_t ttl_ms) override;
  Status Incr(std::string_view key, int64_t delta, uint64_t* new_value) override;
  Status Delete(std::string_view key) override;
  Status MultiGet(MultiGetItem* items, size_t count) override;
  std::unique_ptr<InFlight> StartMultiGet(MultiGetItem* items, size_t count, Status* status) override;
  std::unique_ptr<InFlight> StartStore(std::string_view key, std::string_view value, const StoreOptions& options,
                                       Status* status, uint64_t* cas_out) override;
  std::unique_ptr<InFlight> StartTouch(std::string_view key, uint64_t ttl_ms, Status* status) override;
  std::unique_ptr<InFlight> StartIncr(std::string_view key, int64_t delta, Status* status,
                                      uint64_t* new_value) override;
  std::unique_ptr<InFlight> StartDelete(std::string_view key, Status* status) override;
  Status FlushAll() override;
  bool CanFlushAll() const override { return inner_->CanFlushAll(); }
  void BeforeWaits(size_t sessions) override { inner_->BeforeWaits(sessions); }
  int CompletionFd() override { return inner_->CompletionFd(); }
  ArmResult Arm() override { return inner_->Arm(); }
  void ThreadRows(std::vector<StatRow>* rows) const override { inner_->ThreadRows(rows); }  // no Complete: any thread
  Status Stats(std::vector<StatRow>* rows) override;

 private:
  Backend* inner_;
  AnswerBatch* batch_;
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_ANSWER_BATCH_H_
