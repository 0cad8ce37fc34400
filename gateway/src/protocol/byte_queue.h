// A byte FIFO for a connection's input and output: append at the back, consume from the front. Memory is
// compacted as the front is consumed and given back when the queue empties after a large burst, so an idle
// connection holds only a small buffer.
#ifndef SHMEMCACHED_PROTOCOL_BYTE_QUEUE_H_
#define SHMEMCACHED_PROTOCOL_BYTE_QUEUE_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace shmemcached {

class ByteQueue {
 public:
  ByteQueue() = default;
  ByteQueue(const ByteQueue&) = delete;
  ByteQueue& operator=(const ByteQueue&) = delete;

  size_t size() const { return buf_.size() - head_; }
  bool empty() const { return size() == 0; }
  std::string_view view() const { return std::string_view(buf_).substr(head_); }
  const char* data() const { return buf_.data() + head_; }
  // Bytes of memory held (for bounds checks in tests).
  size_t capacity() const { return buf_.capacity(); }

  void Append(std::string_view bytes) { buf_.append(bytes.data(), bytes.size()); }
  void Append(const char* bytes, size_t n) { buf_.append(bytes, n); }
  void Append(char c) { buf_.push_back(c); }
  // Keeps the first n bytes (n <= size()), drops the rest.
  void Truncate(size_t n) { buf_.resize(head_ + n); }
  // Removes the first n bytes (n <= size()).
  void Consume(size_t n);
  void Clear();

  // For reads straight from a socket: room for n more bytes at the back, then Commit what was written.
  char* PrepareAppend(size_t n);
  void CommitAppend(size_t written, size_t prepared);

 private:
  void Compact();

  std::string buf_;
  size_t head_ = 0;
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_BYTE_QUEUE_H_
