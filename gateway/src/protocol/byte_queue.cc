#include "protocol/byte_queue.h"

#include <algorithm>

namespace shmemcached {

namespace {
// An empty queue holding more than this gives its memory back.
constexpr size_t kKeepCapacity = 64 * 1024;
}  // namespace

void ByteQueue::Consume(size_t n) {
  head_ += n;
  if (head_ == end_) {
    Clear();
  } else if (head_ >= 4096 && head_ * 2 >= end_) {
    Compact();
  }
}

void ByteQueue::Clear() {
  head_ = 0;
  end_ = 0;
  if (buf_.capacity() > kKeepCapacity) {
    buf_.clear();
    buf_.shrink_to_fit();
  }
}

void ByteQueue::Compact() {
  std::memmove(&buf_[0], &buf_[head_], size());
  end_ -= head_;
  head_ = 0;
}

char* ByteQueue::Room(size_t n) {
  if (buf_.size() - end_ < n) buf_.resize(std::max(end_ + n, 2 * buf_.size()));
  return &buf_[end_];
}

char* ByteQueue::PrepareAppend(size_t n) {
  if (head_ != 0 && head_ * 2 >= end_) Compact();
  return Room(n);
}

void ByteQueue::CommitAppend(size_t written, size_t /*prepared*/) { end_ += written; }

}  // namespace shmemcached
