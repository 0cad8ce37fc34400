#include "net/connection.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "net/gateway_server.h"

namespace shmemcached {

namespace {
constexpr size_t kReadChunk = 16 * 1024;  // as memcached reads
constexpr int kReadsPerEvent = 4;         // then let other connections run (level-triggered: we come back)
constexpr size_t kWriteChunk = 1 << 20;
}  // namespace

Connection::Connection(int fd, GatewayServer* server, GatewayContext* gateway)
    : fd_(fd), server_(server), gateway_(gateway), session_(gateway) {
  session_.set_answer_listener(this);
}

Connection::~Connection() {
  if (fd_ >= 0) close(fd_);
}

bool Connection::Register(EventLoop* loop) {
  loop_ = loop;
  interest_ = EPOLLIN | EPOLLRDHUP;
  return loop_->Add(fd_, interest_, this);
}

void Connection::Close() {
  if (fd_ < 0) return;
  loop_->Remove(fd_);
  close(fd_);
  fd_ = -1;
  server_->Closed(this);
}

void Connection::OnEvents(uint32_t events) {
  if (dead()) return;
  if (events & EPOLLERR) {
    Close();
    return;
  }
  if (events & EPOLLOUT) Drive();
  if (!dead() && (events & (EPOLLIN | EPOLLRDHUP))) ReadAndProcess();
  // Hung up in both directions with nothing left to read: nothing can be answered any more.
  if (!dead() && (events & EPOLLHUP) && !(events & EPOLLIN)) Close();
  if (!dead()) UpdateInterest();
}

void Connection::ReadAndProcess() {
  for (int i = 0; i < kReadsPerEvent && !paused_ && !close_after_write_ && !eof_; ++i) {
    size_t limit = session_.InputLimit();
    if (in_.size() >= limit) break;
    size_t want = std::min(kReadChunk, limit - in_.size());
    char* p = in_.PrepareAppend(want);
    ssize_t n = recv(fd_, p, want, 0);
    in_.CommitAppend(n > 0 ? static_cast<size_t>(n) : 0, want);
    if (n > 0) {
      gateway_->counters().bytes_read += static_cast<uint64_t>(n);
      Drive();
      if (dead()) return;
      if (static_cast<size_t>(n) < want) break;
      continue;
    }
    if (n == 0) {
      // The client finished sending: answer every complete command it sent (resuming as the output drains),
      // then close.
      eof_ = true;
      Drive();
      return;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
    Close();
    return;
  }
}

void Connection::Drive() {
  const size_t resume_below = gateway_->limits().output_high_water / 2;
  while (!dead()) {
    if (!paused_ || out_.size() <= resume_below) {
      switch (session_.Process(&in_, &out_)) {
        case Session::Next::kNeedInput:
          paused_ = false;
          if (eof_) close_after_write_ = true;  // no more input will come; a partial command is dropped
          break;
        case Session::Next::kOutputFull:
          paused_ = true;
          break;
        case Session::Next::kCloseAfterWrite:
          paused_ = false;
          close_after_write_ = true;
          break;
        case Session::Next::kCloseNow:
          Close();
          return;
      }
    }
    if (session_.answers_deferred()) {
      if (!awaiting_answers_) {
        awaiting_answers_ = true;
        server_->AwaitAnswers(this);
      }
      return;
    }
    Flush();
    if (dead() || !paused_ || out_.size() > resume_below) return;
  }
}

void Connection::AnswersReady() {
  if (!dead()) Flush();
}

void Connection::AnswersWritten() {
  awaiting_answers_ = false;
  if (dead()) return;
  Drive();
  if (!dead()) UpdateInterest();
}

void Connection::Flush() {
  while (!out_.empty()) {
    ssize_t n = send(fd_, out_.data(), std::min(out_.size(), kWriteChunk), MSG_NOSIGNAL);
    if (n > 0) {
      gateway_->counters().bytes_written += static_cast<uint64_t>(n);
      out_.Consume(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
    Close();
    return;
  }
  if (out_.empty() && close_after_write_) Close();
}

void Connection::UpdateInterest() {
  uint32_t want = 0;
  if (!paused_ && !close_after_write_ && !eof_ && in_.size() < session_.InputLimit()) want |= EPOLLIN | EPOLLRDHUP;
  // Writable matters only for output that Flush could not send: output behind deferred answers is sent when the
  // batch completes (AnswersWritten), within this wake-up, so asking for EPOLLOUT then would cost two epoll_ctl
  // per request (on, then off once sent) for nothing.
  if (!out_.empty() && !session_.answers_deferred()) want |= EPOLLOUT;
  if (want == interest_) return;
  interest_ = want;
  if (!loop_->Modify(fd_, want, this)) Close();
}

}  // namespace shmemcached
