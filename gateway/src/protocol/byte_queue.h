// A byte FIFO for a connection's input and output: append at the back, consume from the front. Memory is
// compacted as the front is consumed and given back when the queue empties after a large burst, so an idle
// connection holds only a small buffer.
#ifndef SHMEMCACHED_PROTOCOL_BYTE_QUEUE_H_
#define SHMEMCACHED_PROTOCOL_BYTE_QUEUE_H_

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace shmemcached {

class ByteQueue {
 public:
  ByteQueue() = default;
  ByteQueue(const ByteQueue&) = delete;
  ByteQueue& operator=(const ByteQueue&) = delete;

  size_t size() const { return end_ - head_; }
  bool empty() const { return size() == 0; }
  std::string_view view() const { return std::string_view(buf_.data() + head_, size()); }
  const char* data() const { return buf_.data() + head_; }
  // Bytes of memory held (for bounds checks in tests).
  size_t capacity() const { return buf_.capacity(); }

  // bytes must not point into this queue: Room may move the storage before the copy.
  void Append(const char* bytes, size_t n) {
    if (n == 0) return;
    std::memcpy(Room(n), bytes, n);
    end_ += n;
  }
  void Append(std::string_view bytes) { Append(bytes.data(), bytes.size()); }
  void Append(char c) {
    *Room(1) = c;
    ++end_;
  }
  // Keeps the first n bytes (n <= size()), drops the rest.
  void Truncate(size_t n) { end_ = head_ + n; }
  // Removes the first n bytes (n <= size()).
  void Consume(size_t n);
  void Clear();

  // For reads straight from a socket: room for n more bytes at the back, then Commit what was written. The room
  // is not cleared: a read of up to 16 KiB per recv would otherwise zero 16 KiB each time (issue 17: 1-2% of the
  // gateway's CPU at 8 connections).
  char* PrepareAppend(size_t n);
  void CommitAppend(size_t written, size_t prepared);

 private:
  // At least n writable bytes at end_ (buf_ grows, at least doubling, when it has fewer).
  char* Room(size_t n);
  void Compact();

  // The queue is buf_[head_, end_); buf_[end_, buf_.size()) is room already allocated and initialised once, so
  // appends and reads into it clear nothing.
  std::string buf_;
  size_t head_ = 0;
  size_t end_ = 0;
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_BYTE_QUEUE_H_
