#include "protocol/session.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "protocol/binary_protocol.h"
#include "protocol/meta_protocol.h"
#include "protocol/retrieval.h"
#include "protocol/text_protocol.h"

namespace shmemcached {

namespace {
constexpr size_t kReadChunk = 16 * 1024;  // memcached's READ_BUFFER_SIZE
constexpr unsigned char kBinaryRequestMagic = 0x80;

bool StartsWith(const char* p, size_t n, std::string_view prefix) {
  return n >= prefix.size() && std::memcmp(p, prefix.data(), prefix.size()) == 0;
}
}  // namespace

size_t Session::InputLimit() const {
  if (state_ != State::kCommand) return kReadChunk;
  return std::max(kReadChunk, limits().max_get_line + 1);
}

void Session::OutString(std::string_view line) {
  if (noreply_) return;
  out_->Append(line);
  out_->Append("\r\n", 2);
}

void Session::OutErrString(std::string_view line) {
  noreply_ = false;
  OutString(line);
}

void Session::ExpectData(std::unique_ptr<PendingStore> pending) {
  pending->block.reserve(pending->block_len);
  pending_ = std::move(pending);
  state_ = State::kData;
}

void Session::Swallow(uint64_t n) {
  swallow_left_ = n;
  state_ = State::kSwallow;
}

Session::~Session() {
  if (deferred_.empty()) return;
  AnswerBatch& batch = gateway_->batch();
  if (writes_queued_) batch.StartQueued();  // the client sent them: they take effect, unanswered
  batch.Leave(this);
  deferred_.clear();  // each answer's InFlight finishes its operation as it is destroyed
}

void Session::Defer(std::unique_ptr<DeferredAnswer> answer, DeferredAnswer::Kind kind) {
  AnswerBatch& batch = gateway_->batch();
  if (!batch.enabled()) {
    answer->Start();
    answer->Write(*out_);
    return;
  }
  if (kind == DeferredAnswer::kRead) {
    if (writes_queued_) batch.StartQueued();  // the read must see this session's earlier writes
    answer->Start();
    reads_deferred_ = true;
  } else {
    batch.Queue(answer.get());
    writes_queued_ = true;
  }
  if (deferred_.empty()) batch.Join(this);
  size_t operations = answer->operations();
  deferred_operations_ += operations;
  deferred_.push_back(Deferred{out_->size(), std::move(answer)});
  batch.Started(operations);  // may complete the batch, this session's answers included
}

void Session::WriteDeferredAnswers() {
  if (deferred_.empty()) return;
  // What was answered after the first deferred answer moves behind the answers written in between.
  const size_t base = deferred_.front().at;
  std::string after(out_->view().substr(base));
  out_->Truncate(base);
  size_t from = base;
  for (Deferred& d : deferred_) {
    out_->Append(std::string_view(after).substr(from - base, d.at - from));
    d.answer->Write(*out_);
    from = d.at;
  }
  out_->Append(std::string_view(after).substr(from - base));
  deferred_.clear();
  deferred_operations_ = 0;
  ready_ = 0;
  reads_deferred_ = false;
  writes_queued_ = false;
  if (listener_ != nullptr) listener_->AnswersReady();
}

bool Session::DeferredAnswersReady() {
  for (; ready_ < deferred_.size(); ++ready_) {
    if (!deferred_[ready_].answer->Ready()) return false;
  }
  return true;
}

void Session::StartRetrieval(std::unique_ptr<Retrieval> retrieval) { retrieval_ = std::move(retrieval); }

bool Session::TakeCommandLine(ByteQueue* in) {
  const char* data = in->data();
  size_t n = in->size();
  const char* nl = static_cast<const char*>(std::memchr(data, '\n', n));
  if (nl == nullptr) {
    if (n > Limits::kLineWithoutNewline) {
      // memcached (try_read_command_ascii): without a newline in 2 KB this must be a large multi-get, else the
      // connection is closed; a multi-get may grow (here up to max_get_line).
      size_t spaces = 0;
      while (spaces < n && data[spaces] == ' ') ++spaces;
      bool multiget = spaces <= 100 && (StartsWith(data + spaces, n - spaces, "get ") ||
                                        StartsWith(data + spaces, n - spaces, "gets "));
      if (!multiget) {
        CloseNow();
      } else if (n > limits().max_get_line) {
        // memcached's answer when it cannot grow its read buffer.
        OutErrString("SERVER_ERROR out of memory reading request");
        CloseAfterWrite();
      }
    }
    return false;
  }
  size_t len = static_cast<size_t>(nl - data);
  size_t keep = (len > 1 && data[len - 1] == '\r') ? len - 1 : len;
  line_.assign(data, keep);  // NUL-terminated: tokens end at the first NUL byte, as in memcached
  in->Consume(len + 1);
  return true;
}

void Session::CompleteStore() {
  std::unique_ptr<PendingStore> p = std::move(pending_);
  state_ = State::kCommand;
  if (p->binary) {
    CompleteBinaryStore(*this, std::move(p));
  } else if (p->meta) {
    CompleteMetaStore(*this, std::move(p));
  } else {
    CompleteTextStore(*this, std::move(p));
  }
}

Session::Next Session::Process(ByteQueue* in, ByteQueue* out) {
  out_ = out;
  while (close_ == Next::kNeedInput) {
    if (retrieval_ != nullptr) {
      if (!ContinueRetrieval(*this, *retrieval_)) return Next::kOutputFull;
      retrieval_.reset();
      continue;
    }
    switch (state_) {
      case State::kSwallow: {
        size_t n = static_cast<size_t>(std::min<uint64_t>(swallow_left_, in->size()));
        in->Consume(n);
        swallow_left_ -= n;
        if (swallow_left_ > 0) return Next::kNeedInput;
        state_ = State::kCommand;
        break;
      }
      case State::kData: {
        size_t n = std::min(pending_->block_len - pending_->block.size(), in->size());
        pending_->block.append(in->data(), n);
        in->Consume(n);
        if (pending_->block.size() < pending_->block_len) return Next::kNeedInput;
        CompleteStore();
        break;
      }
      case State::kCommand: {
        if (out->size() >= limits().output_high_water) return Next::kOutputFull;
        if (in->empty()) return Next::kNeedInput;
        if (!negotiated_) {
          negotiated_ = true;
          // memcached switches to its binary protocol on this byte, for the connection's life.
          binary_ = static_cast<unsigned char>(in->data()[0]) == kBinaryRequestMagic;
        }
        if (binary_) {
          if (!ProcessBinaryPacket(*this, in)) return Next::kNeedInput;
          break;
        }
        if (!TakeCommandLine(in)) {
          if (close_ != Next::kNeedInput) break;
          return Next::kNeedInput;
        }
        noreply_ = false;
        ProcessCommandLine(*this, line_.data());
        break;
      }
    }
  }
  return close_;
}

}  // namespace shmemcached
