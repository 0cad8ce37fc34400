#include "protocol/retrieval.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "protocol/numbers.h"
#include "protocol/storage.h"

namespace shmemcached {

namespace {

// "VALUE <key> <flags> <bytes>[ <cas>]\r\n<data>\r\n"
void AppendValue(ByteQueue& out, std::string_view key, std::string_view value, uint32_t flags, uint64_t cas,
                 bool return_cas) {
  std::string head;
  head.reserve(key.size() + 48);
  head.append("VALUE ");
  head.append(key);
  head.push_back(' ');
  AppendDecimal(&head, flags);
  head.push_back(' ');
  AppendDecimal(&head, value.size());
  if (return_cas) {
    head.push_back(' ');
    AppendDecimal(&head, cas);
  }
  head.append("\r\n");
  out.Append(head);
  out.Append(value);
  out.Append("\r\n", 2);
}

// One batch of a get/gets (or of a run of binary gets): a burst of backend reads whose answer (one entry per key,
// written by the command's GetItemWriter) is deferred until the burst completes (answer_batch.h). A value larger
// than its batch buffer is fetched alone when the answer is written; the session starts no store before that
// (Session::reads_deferred).
class DeferredGet final : public DeferredAnswer {
 public:
  DeferredGet(GatewayContext& gateway, std::vector<std::string> keys, GetItemWriter writer)
      : gateway_(gateway), keys_(std::move(keys)), items_(keys_.size()), writer_(std::move(writer)) {}

  void Start() override {
    started_ = true;
    for (size_t i = 0; i < keys_.size(); ++i) {
      items_[i].key = keys_[i];
      items_[i].buffer_len = gateway_.limits().batch_value_bytes;
    }
    ++gateway_.counters().multiget_calls;
    in_flight_ = gateway_.backend().StartMultiGet(items_.data(), items_.size(), &status_);
  }

  size_t operations() const override { return items_.size(); }
  bool Ready() override { return started_ && (in_flight_ == nullptr || in_flight_->Ready()); }

  void Write(ByteQueue& out) override {
    if (in_flight_ != nullptr) in_flight_->Finish();
    Counters& c = gateway_.counters();
    for (size_t i = 0; i < items_.size(); ++i) {
      MultiGetItem& item = items_[i];
      if (status_ != Status::kOk) item.status = Status::kError;
      ++c.cmd_get;
      if (item.status == Status::kBufferTooSmall) {
        // Larger than a batch buffer: read it alone, with a buffer of its size.
        item.status = gateway_.backend().Fetch(item.key, &item.value, &item.flags, &item.cas);
      }
      if (item.status == Status::kOk) {
        ++c.get_hits;
      } else {
        if (item.status != Status::kNotFound) ++c.backend_errors;  // faults read as misses
        ++c.get_misses;
      }
      writer_(out, i, item);
    }
  }

 private:
  GatewayContext& gateway_;
  std::vector<std::string> keys_;
  std::vector<MultiGetItem> items_;  // keys point into keys_
  GetItemWriter writer_;
  bool started_ = false;
  Status status_ = Status::kOk;
  std::unique_ptr<InFlight> in_flight_;  // declared last: destroyed (finished) before the buffers it fills
};

class Batch {
 public:
  Batch(Session& s, Retrieval& r) : s_(s), r_(r), c_(s.gateway().counters()), discard_(r.key_too_long) {}

  // Reads keys [begin, end) and writes (or defers) what was found. False if the backend refused the whole
  // command before anything was written (the refusal has been answered).
  bool Run(size_t begin, size_t end) {
    return r_.touch ? RunTouch(begin, end) : RunGet(begin, end);
  }

 private:
  void Hit(std::string_view key, std::string_view value, uint32_t flags, uint64_t cas) {
    ++c_.touch_hits;
    if (!discard_) AppendValue(s_.out(), key, value, flags, cas, r_.return_cas);
  }

  bool RunGet(size_t begin, size_t end) {
    std::vector<std::string> keys(std::make_move_iterator(r_.keys.begin() + static_cast<ptrdiff_t>(begin)),
                                  std::make_move_iterator(r_.keys.begin() + static_cast<ptrdiff_t>(end)));
    DeferGets(s_, std::move(keys),
              [return_cas = r_.return_cas, discard = discard_](ByteQueue& out, size_t, const MultiGetItem& item) {
                // A later key was too long: counted, but the command answers CLIENT_ERROR instead.
                if (item.status == Status::kOk && !discard) {
                  AppendValue(out, item.key, item.value, item.flags, item.cas, return_cas);
                }
              });
    return true;
  }

  bool RunTouch(size_t begin, size_t end) {
    std::string value;
    for (size_t i = begin; i < end; ++i) {
      uint32_t flags = 0;
      uint64_t cas = 0;
      Status st = TouchAndFetch(s_.backend(), r_.keys[i], r_.expiry, &value, &flags, &cas);
      if (st == Status::kUnsupported && i == 0) {
        s_.OutString(kUnsupportedLine);
        return false;
      }
      ++c_.cmd_touch;
      if (st == Status::kOk) {
        Hit(r_.keys[i], value, flags, cas);
      } else {
        if (st != Status::kNotFound) ++c_.backend_errors;
        ++c_.touch_misses;
      }
    }
    return true;
  }

  Session& s_;
  Retrieval& r_;
  Counters& c_;
  bool discard_;
};

}  // namespace

void DeferGets(Session& s, std::vector<std::string> keys, GetItemWriter writer) {
  s.Defer(std::make_unique<DeferredGet>(s.gateway(), std::move(keys), std::move(writer)), DeferredAnswer::kRead);
}

bool ContinueRetrieval(Session& s, Retrieval& r) {
  Batch batch(s, r);
  while (r.next < r.keys.size()) {
    // At most one read of a session in flight: its answer is written before the output is measured against the
    // high-water mark, which then bounds the output as without batching.
    if (s.reads_deferred()) s.gateway().batch().Complete();
    if (!r.key_too_long && s.out().size() >= s.limits().output_high_water) return false;
    size_t end = std::min(r.keys.size(), r.next + s.limits().batch_keys);
    if (!batch.Run(r.next, end)) return true;
    r.next = end;
  }
  if (r.key_too_long) {
    s.OutString("CLIENT_ERROR bad command line format");
  } else {
    s.out().Append("END\r\n", 5);
  }
  return true;
}

}  // namespace shmemcached
