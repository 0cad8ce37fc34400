// The requests in flight to one server, oldest first: a ring of pointers that grows only when a new high-water
// mark is reached (never more than max_outstanding), so issuing and completing allocate nothing in steady state
// (a std::deque allocates and frees a block every few dozen push/pop pairs). Its capacity is a power of two (8,
// doubled as it grows), so a position wraps with a mask, not a divide (issue 14: three per request, each tens of
// cycles, where the mask is one).
// Changed only under its server's lock (ClientPe::active); its size is also published for readers without the
// lock (SizeUnlocked: Client::Arm), one relaxed store per change, never a read-modify-write.
#ifndef SHMEMCACHE_CLIENT_REQUEST_QUEUE_H_
#define SHMEMCACHE_CLIENT_REQUEST_QUEUE_H_

#include <atomic>
#include <cstddef>
#include <vector>

#include "client/request.h"

namespace smc {

class RequestQueue {
 public:
  bool empty() const { return size() == 0; }
  size_t size() const { return size_.load(std::memory_order_relaxed); }
  // Any thread, without the lock: a value size() had at some point. Every change is a store made under the
  // lock, so the stores are in lock order: a reader that the push of a request happens before reads that store
  // or a later one, so 0 only once the queue was empty after the push (that request left it; perhaps only for a
  // moment, re-posted within the same hold by its completion, which moves the completion count there:
  // conduit/completion_wake.h).
  size_t SizeUnlocked() const { return size_.load(std::memory_order_relaxed); }
  // i-th oldest (0 = front), i < size().
  shmemcache_request* at(size_t i) const { return slots_[Wrap(head_ + i)]; }
  shmemcache_request* front() const { return at(0); }

  void push_back(shmemcache_request* r) {
    if (size() == slots_.size()) Grow();
    slots_[Wrap(head_ + size())] = r;
    Resize(size() + 1);
  }
  // Removes the i-th oldest, keeping the order of the others (i is 0 but for replies that overtook).
  void erase(size_t i) {
    if (i == 0) {
      pop_front();
      return;
    }
    for (; i + 1 < size(); ++i) slots_[Wrap(head_ + i)] = slots_[Wrap(head_ + i + 1)];
    Resize(size() - 1);
    if (empty()) head_ = 0;
  }
  void pop_front() {
    head_ = Wrap(head_ + 1);
    Resize(size() - 1);
    if (empty()) head_ = 0;
  }
  void clear() {
    Resize(0);
    head_ = 0;
  }

 private:
  size_t Wrap(size_t position) const { return position & (slots_.size() - 1); }  // slots_ not empty
  void Resize(size_t n) { size_.store(n, std::memory_order_relaxed); }  // under the lock: one writer at a time
  void Grow() {
    std::vector<shmemcache_request*> bigger(slots_.empty() ? 8 : 2 * slots_.size());
    for (size_t i = 0; i < size(); ++i) bigger[i] = at(i);
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<shmemcache_request*> slots_;
  size_t head_ = 0;
  std::atomic<size_t> size_{0};
};

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_REQUEST_QUEUE_H_
