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

// The answer line of one deferred update; owns its key until answered.
class UpdateAnswer : public DeferredAnswer {
 public:
  UpdateAnswer(GatewayContext& gateway, std::string_view key, bool noreply)
      : gateway_(gateway), key_(key), noreply_(noreply) {}

  void Write(ByteQueue& out) final {
    if (in_flight_ != nullptr) in_flight_->Finish();
    std::string line = Line(gateway_.counters());
    if (noreply_) return;
    out.Append(line.data(), line.size());
    out.Append("\r\n", 2);
  }

 protected:
  // The answer line once the operation finished (status_ and the operation's results are in place).
  virtual std::string Line(Counters& c) = 0;

  GatewayContext& gateway_;
  std::string key_;
  Status status_ = Status::kError;
  std::unique_ptr<InFlight> in_flight_;  // declared after what it writes: finished before they are freed

 private:
  bool noreply_;
};

class TouchAnswer final : public UpdateAnswer {
 public:
  TouchAnswer(GatewayContext& gateway, std::string_view key, uint64_t ttl_ms, bool noreply)
      : UpdateAnswer(gateway, key, noreply), ttl_ms_(ttl_ms) {}
  void Start() override { in_flight_ = gateway_.backend().StartTouch(key_, ttl_ms_, &status_); }

 private:
  std::string Line(Counters& c) override { return std::string(TouchAnswerLine(c, status_)); }
  uint64_t ttl_ms_;
};

class ArithmeticAnswer final : public UpdateAnswer {
 public:
  ArithmeticAnswer(GatewayContext& gateway, std::string_view key, bool incr, int64_t delta, bool noreply)
      : UpdateAnswer(gateway, key, noreply), incr_(incr), delta_(delta) {}
  void Start() override { in_flight_ = gateway_.backend().StartIncr(key_, delta_, &status_, &value_); }

 private:
  std::string Line(Counters& c) override { return ArithmeticAnswerLine(c, incr_, status_, value_); }
  bool incr_;
  int64_t delta_;
  uint64_t value_ = 0;
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

std::string ArithmeticAnswerLine(Counters& c, bool incr, Status st, uint64_t value) {
  switch (st) {
    case Status::kOk:
      ++(incr ? c.incr_hits : c.decr_hits);
      return Decimal(value);
    case Status::kNotNumeric: return "CLIENT_ERROR cannot increment or decrement non-numeric value";
    case Status::kNoSpace: return "SERVER_ERROR out of memory";
    case Status::kNotFound:
      ++(incr ? c.incr_misses : c.decr_misses);
      return "NOT_FOUND";
    default: return std::string(BackendFailureLine(st));
  }
}

bool DeferTouch(Session& s, std::string_view key, const Expiry& expiry) {
  if (expiry.expired) return false;  // TouchPair deletes, which cannot start without waiting
  DeferWrite(s, std::make_unique<TouchAnswer>(s.gateway(), key, expiry.ttl_ms, s.noreply()));
  return true;
}

bool DeferArithmetic(Session& s, std::string_view key, bool incr, uint64_t delta) {
  if (delta > (incr ? kMaxUp : kMaxUp + 1)) return false;  // ApplyDelta's steps
  int64_t signed_delta = incr ? static_cast<int64_t>(delta)
                         : delta == kMaxUp + 1 ? std::numeric_limits<int64_t>::min()
                                               : -static_cast<int64_t>(delta);
  DeferWrite(s, std::make_unique<ArithmeticAnswer>(s.gateway(), key, incr, signed_delta, s.noreply()));
  return true;
}

}  // namespace shmemcached
