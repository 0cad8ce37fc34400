#include "protocol/update_answer.h"

#include <limits>
#include <memory>
#include <utility>

#include "protocol/numbers.h"
#include "protocol/storage.h"
#include "protocol/store_answer.h"

namespace shmemcached {

namespace {

constexpr uint64_t kMaxUp = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// The answer of one deferred update; owns its key until answered.
class UpdateAnswer : public DeferredAnswer {
 public:
  UpdateAnswer(GatewayContext& gateway, std::string_view key) : gateway_(gateway), key_(key) {}

  bool Ready() final { return started_ && (in_flight_ == nullptr || in_flight_->Ready()); }
  void Write(ByteQueue& out) final {
    if (in_flight_ != nullptr) in_flight_->Finish();
    out.Append(Answer(gateway_.counters()));
  }

 protected:
  // The answer's bytes once the operation finished (status_ and the operation's results are in place).
  virtual std::string Answer(Counters& c) = 0;

  GatewayContext& gateway_;
  std::string key_;
  Status status_ = Status::kError;
  bool started_ = false;  // set by Start
  std::unique_ptr<InFlight> in_flight_;  // declared after what it writes: finished before they are freed
};

class TouchAnswer final : public UpdateAnswer {
 public:
  TouchAnswer(GatewayContext& gateway, std::string_view key, uint64_t ttl_ms, bool noreply)
      : UpdateAnswer(gateway, key), ttl_ms_(ttl_ms), noreply_(noreply) {}
  void Start() override {
    started_ = true;
    in_flight_ = gateway_.backend().StartTouch(key_, ttl_ms_, &status_);
  }

 private:
  std::string Answer(Counters& c) override {
    std::string_view line = TouchAnswerLine(c, status_);
    return noreply_ ? std::string() : std::string(line) + "\r\n";
  }
  uint64_t ttl_ms_;
  bool noreply_;
};

class ArithmeticAnswer final : public UpdateAnswer {
 public:
  ArithmeticAnswer(GatewayContext& gateway, std::string_view key, int64_t delta, ArithmeticAnswerFn answer)
      : UpdateAnswer(gateway, key), delta_(delta), answer_(std::move(answer)) {}
  void Start() override {
    started_ = true;
    in_flight_ = gateway_.backend().StartIncr(key_, delta_, &status_, &value_);
  }

 private:
  std::string Answer(Counters& c) override { return answer_(c, status_, value_); }
  int64_t delta_;
  ArithmeticAnswerFn answer_;
  uint64_t value_ = 0;
};

class DeleteAnswer final : public UpdateAnswer {
 public:
  DeleteAnswer(GatewayContext& gateway, std::string_view key, DeleteAnswerFn answer)
      : UpdateAnswer(gateway, key), answer_(std::move(answer)) {}
  void Start() override {
    started_ = true;
    in_flight_ = gateway_.backend().StartDelete(key_, &status_);
  }

 private:
  std::string Answer(Counters& c) override { return answer_(c, status_); }
  DeleteAnswerFn answer_;
};

}  // namespace

std::string_view TouchAnswerLine(Counters& c, Status st) {
  ++c.cmd_touch;
  if (st == Status::kOk) {
    ++c.touch_hits;
    return "TOUCHED";
  }
  if (st == Status::kNotFound) {
    ++c.touch_misses;
    return "NOT_FOUND";
  }
  return BackendFailureLine(st);
}

void CountArithmetic(Counters& c, bool incr, Status st) {
  if (st == Status::kOk) ++(incr ? c.incr_hits : c.decr_hits);
  if (st == Status::kNotFound) ++(incr ? c.incr_misses : c.decr_misses);
}

std::string ArithmeticAnswerLine(Counters& c, bool incr, Status st, uint64_t value) {
  CountArithmetic(c, incr, st);
  switch (st) {
    case Status::kOk: return Decimal(value);
    case Status::kNotNumeric: return "CLIENT_ERROR cannot increment or decrement non-numeric value";
    case Status::kNoSpace: return "SERVER_ERROR out of memory";
    case Status::kNotFound: return "NOT_FOUND";
    default: return std::string(BackendFailureLine(st));
  }
}

void CountDelete(Counters& c, Status st) {
  if (st == Status::kOk) ++c.delete_hits;
  if (st == Status::kNotFound) ++c.delete_misses;
}

std::string_view DeleteAnswerLine(Counters& c, Status st) {
  CountDelete(c, st);
  if (st == Status::kOk) return "DELETED";
  if (st == Status::kNotFound) return "NOT_FOUND";
  return BackendFailureLine(st);
}

bool DeferTouch(Session& s, std::string_view key, const Expiry& expiry) {
  if (expiry.expired) {
    // TouchPair's delete, answered as a touch: TOUCHED if the pair was there (it is gone now), else NOT_FOUND.
    DeferDelete(s, key, [noreply = s.noreply()](Counters& c, Status st) {
      std::string_view line = TouchAnswerLine(c, st);
      return noreply ? std::string() : std::string(line) + "\r\n";
    });
    return true;
  }
  DeferWrite(s, std::make_unique<TouchAnswer>(s.gateway(), key, expiry.ttl_ms, s.noreply()));
  return true;
}

bool DeferArithmetic(Session& s, std::string_view key, bool incr, uint64_t delta, ArithmeticAnswerFn answer) {
  if (delta > (incr ? kMaxUp : kMaxUp + 1)) return false;  // ApplyDelta's steps
  int64_t signed_delta = incr ? static_cast<int64_t>(delta)
                         : delta == kMaxUp + 1 ? std::numeric_limits<int64_t>::min()
                                               : -static_cast<int64_t>(delta);
  if (answer == nullptr) {
    answer = [incr, noreply = s.noreply()](Counters& c, Status st, uint64_t value) {
      std::string line = ArithmeticAnswerLine(c, incr, st, value);
      return noreply ? std::string() : line + "\r\n";
    };
  }
  DeferWrite(s, std::make_unique<ArithmeticAnswer>(s.gateway(), key, signed_delta, std::move(answer)));
  return true;
}

void DeferDelete(Session& s, std::string_view key, DeleteAnswerFn answer) {
  if (answer == nullptr) {
    answer = [noreply = s.noreply()](Counters& c, Status st) {
      std::string_view line = DeleteAnswerLine(c, st);
      return noreply ? std::string() : std::string(line) + "\r\n";
    };
  }
  DeferWrite(s, std::make_unique<DeleteAnswer>(s.gateway(), key, std::move(answer)));
}

}  // namespace shmemcached
