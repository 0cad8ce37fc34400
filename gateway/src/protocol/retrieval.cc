#include "protocol/retrieval.h"

#include <algorithm>
#include <string>
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

class Batch {
 public:
  Batch(Session& s, Retrieval& r) : s_(s), r_(r), c_(s.gateway().counters()), discard_(r.key_too_long) {}

  // Reads keys [begin, end) and writes what was found. False if the backend refused the whole command before
  // anything was written (the refusal has been answered).
  bool Run(size_t begin, size_t end) {
    return r_.touch ? RunTouch(begin, end) : RunGet(begin, end);
  }

 private:
  void Hit(std::string_view key, std::string_view value, uint32_t flags, uint64_t cas) {
    if (r_.touch) {
      ++c_.touch_hits;
    } else {
      ++c_.get_hits;
    }
    if (!discard_) AppendValue(s_.out(), key, value, flags, cas, r_.return_cas);
  }
  void Miss() { ++(r_.touch ? c_.touch_misses : c_.get_misses); }
  void Count() { ++(r_.touch ? c_.cmd_touch : c_.cmd_get); }

  bool RunGet(size_t begin, size_t end) {
    Backend& b = s_.backend();
    items_.resize(end - begin);
    for (size_t i = begin; i < end; ++i) {
      MultiGetItem& item = items_[i - begin];
      item.key = r_.keys[i];
      item.buffer_len = s_.limits().batch_value_bytes;
      item.status = Status::kError;
      item.value.clear();
    }
    ++c_.multiget_calls;
    if (b.MultiGet(items_.data(), items_.size()) != Status::kOk) {
      for (MultiGetItem& item : items_) item.status = Status::kError;
    }
    for (MultiGetItem& item : items_) {
      Count();
      if (item.status == Status::kBufferTooSmall) {
        // Larger than a batch buffer: read it alone, with a buffer of its size.
        item.status = b.Fetch(item.key, &item.value, &item.flags, &item.cas);
      }
      if (item.status == Status::kOk) {
        Hit(item.key, item.value, item.flags, item.cas);
      } else {
        if (item.status != Status::kNotFound) ++c_.backend_errors;  // faults read as misses
        Miss();
      }
    }
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
      Count();
      if (st == Status::kOk) {
        Hit(r_.keys[i], value, flags, cas);
      } else {
        if (st != Status::kNotFound) ++c_.backend_errors;
        Miss();
      }
    }
    return true;
  }

  Session& s_;
  Retrieval& r_;
  Counters& c_;
  bool discard_;
  std::vector<MultiGetItem> items_;
};

}  // namespace

bool ContinueRetrieval(Session& s, Retrieval& r) {
  Batch batch(s, r);
  while (r.next < r.keys.size()) {
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
