#include "support/reference_backend.h"

#include <chrono>
#include <thread>
#include <utility>

#include "protocol/numbers.h"

namespace shmemcached {

namespace {
// memcached's do_add_delta: the value is numeric if strtoull reads it as memcached reads the item's data
// (which ends in "\r\n", so a number may run to the end of the value).
bool ParseCounter(const std::string& value, uint64_t* out) {
  if (value.empty()) return false;
  std::string text = value + "\r\n";
  return SafeStrtoull(text.c_str(), out);
}
}  // namespace

ReferenceBackend::ReferenceBackend(std::function<uint64_t()> now_ms, size_t max_value_length, size_t memory_limit)
    : now_ms_(std::move(now_ms)), max_value_length_(max_value_length), memory_limit_(memory_limit) {}

ReferenceBackend::Pair* ReferenceBackend::Find(std::string_view key) {
  auto it = pairs_.find(std::string(key));
  if (it == pairs_.end()) return nullptr;
  if (it->second.expires_at_ms != 0 && it->second.expires_at_ms <= now_ms_()) {
    bytes_ -= it->first.size() + it->second.value.size();
    pairs_.erase(it);
    return nullptr;
  }
  return &it->second;
}

bool ReferenceBackend::Fits(size_t old_bytes, size_t new_bytes) const {
  return memory_limit_ == 0 || bytes_ - old_bytes + new_bytes <= memory_limit_;
}

void ReferenceBackend::Put(std::string_view key, Pair pair) {
  pair.cas = next_cas_++;
  auto [it, inserted] = pairs_.try_emplace(std::string(key));
  if (!inserted) bytes_ -= it->first.size() + it->second.value.size();
  bytes_ += it->first.size() + pair.value.size();
  it->second = std::move(pair);
}

Status ReferenceBackend::Store(std::string_view key, std::string_view value, const StoreOptions& options,
                               uint64_t* cas_out) {
  store_calls_.store(store_calls_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (key.empty()) return Status::kError;
  if (key.size() > MaxKeyLength()) return Status::kKeyTooLong;
  if (value.size() > max_value_length_) return Status::kValueTooLarge;
  Pair* old = Find(key);
  if (options.cas != 0) {
    if (old == nullptr) return Status::kNotFound;
    if (old->cas != options.cas) return Status::kExists;
  }
  Pair next;
  switch (options.mode) {
    case StoreMode::kAdd:
      if (old != nullptr) return Status::kExists;
      break;
    case StoreMode::kReplace:
      if (old == nullptr) return Status::kNotStored;
      break;
    case StoreMode::kAppend:
    case StoreMode::kPrepend:
      if (old == nullptr) return Status::kNotStored;
      if (old->value.size() + value.size() > max_value_length_) return Status::kValueTooLarge;
      next.value = options.mode == StoreMode::kAppend ? old->value + std::string(value)
                                                      : std::string(value) + old->value;
      next.flags = old->flags;
      next.expires_at_ms = old->expires_at_ms;
      break;
    case StoreMode::kSet:
      break;
  }
  if (options.mode != StoreMode::kAppend && options.mode != StoreMode::kPrepend) {
    next.value.assign(value.data(), value.size());
    next.flags = options.flags;
    next.expires_at_ms = ExpiryAt(options.ttl_ms);
  }
  size_t old_bytes = old == nullptr ? 0 : key.size() + old->value.size();
  if (!Fits(old_bytes, key.size() + next.value.size())) return Status::kNoSpace;
  Put(key, std::move(next));
  if (cas_out != nullptr) *cas_out = next_cas_ - 1;
  return Status::kOk;
}

Status ReferenceBackend::Fetch(std::string_view key, std::string* value, uint32_t* flags, uint64_t* cas) {
  ++fetch_calls_;
  Pair* p = Find(key);
  if (p == nullptr) return Status::kNotFound;
  *value = p->value;
  if (flags != nullptr) *flags = p->flags;
  if (cas != nullptr) *cas = p->cas;
  return Status::kOk;
}

Status ReferenceBackend::Touch(std::string_view key, uint64_t ttl_ms) {
  Pair* p = Find(key);
  if (p == nullptr) return Status::kNotFound;
  p->expires_at_ms = ExpiryAt(ttl_ms);
  return Status::kOk;
}

Status ReferenceBackend::Incr(std::string_view key, int64_t delta, uint64_t* new_value) {
  Pair* p = Find(key);
  if (p == nullptr) return Status::kNotFound;
  uint64_t v;
  if (!ParseCounter(p->value, &v)) return Status::kNotNumeric;
  if (delta >= 0) {
    v += static_cast<uint64_t>(delta);  // wraps at 2^64
  } else {
    uint64_t d = static_cast<uint64_t>(-(delta + 1)) + 1;  // |delta| without overflow at INT64_MIN
    v = d > v ? 0 : v - d;
  }
  std::string text = Decimal(v);
  Pair next = *p;
  if (text.size() <= p->value.size()) text.resize(p->value.size(), ' ');
  next.value = std::move(text);
  Put(key, std::move(next));
  if (new_value != nullptr) *new_value = v;
  return Status::kOk;
}

Status ReferenceBackend::Delete(std::string_view key) {
  if (Find(key) == nullptr) return Status::kNotFound;
  auto it = pairs_.find(std::string(key));
  bytes_ -= it->first.size() + it->second.value.size();
  pairs_.erase(it);
  return Status::kOk;
}

Status ReferenceBackend::MultiGet(MultiGetItem* items, size_t count) {
  ++multiget_calls_;
  for (size_t i = 0; i < count; ++i) {
    MultiGetItem& item = items[i];
    Pair* p = Find(item.key);
    if (p == nullptr) {
      item.status = Status::kNotFound;
      item.value_len = 0;
      continue;
    }
    item.value_len = p->value.size();
    if (p->value.size() > item.buffer_len) {
      item.status = Status::kBufferTooSmall;
      continue;
    }
    item.value = p->value;
    item.flags = p->flags;
    item.cas = p->cas;
    item.status = Status::kOk;
  }
  return Status::kOk;
}

namespace {

// Results computed at start, handed over at Finish.
class DelayedResults final : public InFlight {
 public:
  DelayedResults(MultiGetItem* items, std::vector<MultiGetItem> results, Status* status, Status result,
                 uint64_t* cas_out = nullptr, uint64_t cas = 0, const std::atomic<bool>* held = nullptr)
      : items_(items), results_(std::move(results)), status_(status), result_(result), cas_out_(cas_out), cas_(cas),
        held_(held) {}
  ~DelayedResults() override { Finish(); }
  bool Ready() override { return done_ || held_ == nullptr || !held_->load(); }
  void Finish() override {
    if (done_) return;
    for (int i = 0; i < 20000 && !Ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    done_ = true;
    for (size_t i = 0; i < results_.size(); ++i) {
      items_[i].value = std::move(results_[i].value);
      items_[i].value_len = results_[i].value_len;
      items_[i].flags = results_[i].flags;
      items_[i].cas = results_[i].cas;
      items_[i].status = results_[i].status;
    }
    *status_ = result_;
    if (cas_out_ != nullptr && result_ == Status::kOk) *cas_out_ = cas_;
  }

 private:
  MultiGetItem* items_;
  std::vector<MultiGetItem> results_;
  Status* status_;
  Status result_;
  uint64_t* cas_out_;
  uint64_t cas_;
  const std::atomic<bool>* held_;  // while true, the results are not ready
  bool done_ = false;
};

}  // namespace

std::unique_ptr<InFlight> ReferenceBackend::StartMultiGet(MultiGetItem* items, size_t count, Status* status) {
  if (!in_flight_starts_) return Backend::StartMultiGet(items, count, status);
  std::vector<MultiGetItem> results(items, items + count);
  Status result = MultiGet(results.data(), count);
  *status = Status::kError;
  return std::make_unique<DelayedResults>(items, std::move(results), status, result);
}

std::unique_ptr<InFlight> ReferenceBackend::StartStore(std::string_view key, std::string_view value,
                                                       const StoreOptions& options, Status* status,
                                                       uint64_t* cas_out) {
  if (!in_flight_starts_) return Backend::StartStore(key, value, options, status, cas_out);
  uint64_t cas = 0;
  Status result = Store(key, value, options, &cas);
  *status = Status::kError;
  const bool hold = held_.load() && key == held_key_;
  if (hold) ++held_stores_;
  return std::make_unique<DelayedResults>(nullptr, std::vector<MultiGetItem>(), status, result, cas_out, cas,
                                          hold ? &held_ : nullptr);
}

std::unique_ptr<InFlight> ReferenceBackend::StartTouch(std::string_view key, uint64_t ttl_ms, Status* status) {
  if (!in_flight_starts_) return Backend::StartTouch(key, ttl_ms, status);
  Status result = Touch(key, ttl_ms);
  *status = Status::kError;
  return std::make_unique<DelayedResults>(nullptr, std::vector<MultiGetItem>(), status, result);
}

std::unique_ptr<InFlight> ReferenceBackend::StartIncr(std::string_view key, int64_t delta, Status* status,
                                                      uint64_t* new_value) {
  if (!in_flight_starts_) return Backend::StartIncr(key, delta, status, new_value);
  uint64_t value = 0;
  Status result = Incr(key, delta, &value);
  *status = Status::kError;
  *new_value = 0xdeadbeef;  // garbage until Finish
  return std::make_unique<DelayedResults>(nullptr, std::vector<MultiGetItem>(), status, result, new_value, value);
}

std::unique_ptr<InFlight> ReferenceBackend::StartDelete(std::string_view key, Status* status) {
  if (!in_flight_starts_) return Backend::StartDelete(key, status);
  Status result = Delete(key);
  *status = Status::kError;
  return std::make_unique<DelayedResults>(nullptr, std::vector<MultiGetItem>(), status, result);
}

Status ReferenceBackend::FlushAll() {
  pairs_.clear();
  bytes_ = 0;
  return Status::kOk;
}

Status ReferenceBackend::Stats(std::vector<StatRow>* rows) {
  rows->emplace_back("curr_items", pairs_.size());
  rows->emplace_back("bytes", bytes_);
  rows->emplace_back("evictions", evictions_);
  rows->emplace_back("limit_maxbytes", memory_limit_);
  return Status::kOk;
}

void ReferenceBackend::ThreadRows(std::vector<StatRow>* rows) const {
  rows->emplace_back("reference_thread_store_calls", store_calls_.load(std::memory_order_relaxed));
}

}  // namespace shmemcached
