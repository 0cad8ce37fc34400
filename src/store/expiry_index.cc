#include "store/expiry_index.h"

#include <algorithm>

namespace smc {

void ExpiryIndex::Add(uint64_t expiry_ms, uint64_t offset) {
  heap_.push_back(Hint{expiry_ms, offset});
  std::push_heap(heap_.begin(), heap_.end(), Later);
}

bool ExpiryIndex::PopDue(uint64_t now_ms, uint64_t* offset) {
  if (!AnyDue(now_ms)) return false;
  std::pop_heap(heap_.begin(), heap_.end(), Later);
  *offset = heap_.back().offset;
  heap_.pop_back();
  return true;
}

}  // namespace smc
