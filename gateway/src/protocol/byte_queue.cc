#include "protocol/byte_queue.h"

namespace shmemcached {

namespace {
// An empty queue holding more than this gives its memory back.
constexpr size_t kKeepCapacity = 64 * 1024;
}  // namespace

void ByteQueue::Consume(size_t n) {
  head_ += n;
  if (head_ == buf_.size()) {
    Clear();
  } else if (head_ >= 4096 && head_ * 2 >= buf_.size()) {
    Compact();
  }
}

void ByteQueue::Clear() {
  buf_.clear();
  head_ = 0;
  if (buf_.capacity() > kKeepCapacity) buf_.shrink_to_fit();
}

void ByteQueue::Compact() {
  buf_.erase(0, head_);
  head_ = 0;
}

char* ByteQueue::PrepareAppend(size_t n) {
  if (head_ != 0 && head_ * 2 >= buf_.size()) Compact();
  size_t old = buf_.size();
  buf_.resize(old + n);
  return &buf_[old];
}

void ByteQueue::CommitAppend(size_t written, size_t prepared) { buf_.resize(buf_.size() - (prepared - written)); }

}  // namespace shmemcached
