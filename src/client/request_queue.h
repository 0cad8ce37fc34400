// The requests in flight to one server, oldest first: a ring of pointers that grows only when a new high-water
// mark is reached (never more than max_outstanding), so issuing and completing allocate nothing in steady state
// (a std::deque allocates and frees a block every few dozen push/pop pairs). Its capacity is a power of two (8,
// doubled as it grows), so a position wraps with a mask, not a divide (issue 14: three per request, each tens of
// cycles, where the mask is one).
#ifndef SHMEMCACHE_CLIENT_REQUEST_QUEUE_H_
#define SHMEMCACHE_CLIENT_REQUEST_QUEUE_H_

#include <cstddef>
#include <vector>

#include "client/request.h"

namespace smc {

class RequestQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // i-th oldest (0 = front), i < size().
  shmemcache_request* at(size_t i) const { return slots_[Wrap(head_ + i)]; }
  shmemcache_request* front() const { return at(0); }

  void push_back(shmemcache_request* r) {
    if (size_ == slots_.size()) Grow();
    slots_[Wrap(head_ + size_)] = r;
    ++size_;
  }
  // Removes the i-th oldest, keeping the order of the others (i is 0 but for replies that overtook).
  void erase(size_t i) {
    if (i == 0) {
      pop_front();
      return;
    }
    for (; i + 1 < size_; ++i) slots_[Wrap(head_ + i)] = slots_[Wrap(head_ + i + 1)];
    --size_;
    if (size_ == 0) head_ = 0;
  }
  void pop_front() {
    head_ = Wrap(head_ + 1);
    if (--size_ == 0) head_ = 0;
  }
  void clear() { size_ = head_ = 0; }

 private:
  size_t Wrap(size_t position) const { return position & (slots_.size() - 1); }  // slots_ not empty
  void Grow() {
    std::vector<shmemcache_request*> bigger(slots_.empty() ? 8 : 2 * slots_.size());
    for (size_t i = 0; i < size_; ++i) bigger[i] = at(i);
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<shmemcache_request*> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_REQUEST_QUEUE_H_
