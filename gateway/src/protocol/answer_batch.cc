#include "protocol/answer_batch.h"

#include <algorithm>
#include <utility>

#include "protocol/session.h"

namespace shmemcached {

void AnswerBatch::Leave(Session* session) {
  auto it = std::remove(sessions_.begin(), sessions_.end(), session);
  if (it == sessions_.end()) return;
  sessions_.erase(it, sessions_.end());
  operations_ -= std::min(operations_, session->deferred_operations());
}

void AnswerBatch::Started(size_t n) {
  operations_ += n;
  if (operations_ >= max_operations_) Complete();
}

void AnswerBatch::StartQueued() {
  std::vector<DeferredAnswer*> writes;
  writes.swap(queued_);
  for (DeferredAnswer* w : writes) w->Start();
}

void AnswerBatch::Complete() {
  if (completing_ || sessions_.empty()) return;
  StartQueued();
  completing_ = true;
  ++batches_;
  batched_operations_ += operations_;
  operations_ = 0;
  std::vector<Session*> sessions;
  sessions.swap(sessions_);
  // Sessions that only read first: their reads were mostly served one-sided at issue, and their answers go out
  // without waiting for the round trip of the batch's writes.
  std::stable_partition(sessions.begin(), sessions.end(), [](Session* s) { return !s->writes_queued(); });
  if (backend_ != nullptr) backend_->BeforeWaits(sessions.size());
  for (Session* s : sessions) s->WriteDeferredAnswers();
  completing_ = false;
}

bool AnswerBatch::Poll() {
  if (completing_ || sessions_.empty()) return false;
  StartQueued();
  completing_ = true;
  ready_.clear();
  waiting_.clear();
  for (Session* s : sessions_) (s->DeferredAnswersReady() ? ready_ : waiting_).push_back(s);
  sessions_.swap(waiting_);
  if (!ready_.empty()) ++batches_;
  for (Session* s : ready_) {
    operations_ -= std::min(operations_, s->deferred_operations());
    batched_operations_ += s->deferred_operations();
    s->WriteDeferredAnswers();
  }
  completing_ = false;
  return !ready_.empty();
}

Status BatchedBackend::Store(std::string_view key, std::string_view value, const StoreOptions& options,
                             uint64_t* cas_out) {
  batch_->Complete();
  return inner_->Store(key, value, options, cas_out);
}

Status BatchedBackend::Fetch(std::string_view key, std::string* value, uint32_t* flags, uint64_t* cas) {
  batch_->Complete();
  return inner_->Fetch(key, value, flags, cas);
}

Status BatchedBackend::Touch(std::string_view key, uint64_t ttl_ms) {
  batch_->Complete();
  return inner_->Touch(key, ttl_ms);
}

Status BatchedBackend::Incr(std::string_view key, int64_t delta, uint64_t* new_value) {
  batch_->Complete();
  return inner_->Incr(key, delta, new_value);
}

Status BatchedBackend::Delete(std::string_view key) {
  batch_->Complete();
  return inner_->Delete(key);
}

Status BatchedBackend::MultiGet(MultiGetItem* items, size_t count) {
  batch_->Complete();
  return inner_->MultiGet(items, count);
}

std::unique_ptr<InFlight> BatchedBackend::StartMultiGet(MultiGetItem* items, size_t count, Status* status) {
  return inner_->StartMultiGet(items, count, status);
}

std::unique_ptr<InFlight> BatchedBackend::StartStore(std::string_view key, std::string_view value,
                                                     const StoreOptions& options, Status* status,
                                                     uint64_t* cas_out) {
  return inner_->StartStore(key, value, options, status, cas_out);
}

std::unique_ptr<InFlight> BatchedBackend::StartTouch(std::string_view key, uint64_t ttl_ms, Status* status) {
  return inner_->StartTouch(key, ttl_ms, status);
}

std::unique_ptr<InFlight> BatchedBackend::StartIncr(std::string_view key, int64_t delta, Status* status,
                                                    uint64_t* new_value) {
  return inner_->StartIncr(key, delta, status, new_value);
}

std::unique_ptr<InFlight> BatchedBackend::StartDelete(std::string_view key, Status* status) {
  return inner_->StartDelete(key, status);
}

Status BatchedBackend::FlushAll() {
  batch_->Complete();
  return inner_->FlushAll();
}

Status BatchedBackend::Stats(std::vector<StatRow>* rows) {
  batch_->Complete();
  return inner_->Stats(rows);
}

}  // namespace shmemcached
