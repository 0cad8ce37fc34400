// A KvStore on a plain arena with a fake server clock, and helpers that speak the contract (store/contract.h).
// Shared by the single-threaded contract tests and the races against a Direct peer thread.
#ifndef SHMEMCACHE_TESTS_UNIT_CONTRACT_FIXTURE_H_
#define SHMEMCACHE_TESTS_UNIT_CONTRACT_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "store/kv_store.h"

namespace smc {

// LocalWordAtomics that counts how often the store found a block locked (by a Direct peer) and waited.
class CountingAtomics final : public WordAtomics {
 public:
  uint64_t CompareSwap(uint64_t* word, uint64_t expected, uint64_t desired) override {
    return local_.CompareSwap(word, expected, desired);
  }
  uint64_t Fetch(uint64_t* word) override { return local_.Fetch(word); }
  void Set(uint64_t* word, uint64_t value) override { local_.Set(word, value); }
  void Fence() override { local_.Fence(); }
  bool WaitWhileEqual(uint64_t* word, uint64_t value) override {
    ++waits_;
    return local_.WaitWhileEqual(word, value);
  }
  uint64_t waits() const { return waits_; }

 private:
  LocalWordAtomics local_;
  uint64_t waits_ = 0;  // the store's thread only
};

class ContractFixture : public ::testing::Test {
 protected:
  struct Fetched {
    Status status = SHMEMCACHE_NOT_FOUND;
    std::string value;
    uint32_t flags = 0;
    uint64_t expiry_ms = 0;
    uint64_t token = 0;
    BlockPointer pointer;
  };

  void Make(size_t arena_bytes = 1 << 20, size_t max_value_len = 2000, size_t sets = 64, unsigned ways = 4) {
    StoreOptions o;
    o.arena_bytes = arena_bytes;
    o.page_bytes = 4096;
    o.growth_factor = 1.25;
    o.max_key_len = 64;
    o.max_value_len = max_value_len;
    o.sets = sets;
    o.ways = ways;
    arena_words_.assign((o.arena_bytes + 7) / 8, 0);
    table_.assign(o.sets * o.ways, HashWay{0, 0});
    store_.reset(new KvStore(arena(), table_.data(), o, &atomics_));
  }
  uint8_t* arena() { return reinterpret_cast<uint8_t*>(arena_words_.data()); }
  size_t arena_bytes() const { return arena_words_.size() * 8; }
  static KeyLocation Loc(const std::string& key) { return Locate(key.data(), key.size(), 1); }
  AccessTime At() const { return AccessTime{now_ms_, recency_}; }

  static StoreRequest Req(StoreMode mode, uint32_t flags = 0, uint64_t ttl_ms = 0, uint64_t cas = 0) {
    StoreRequest r;
    r.mode = mode;
    r.flags = flags;
    r.ttl_ms = ttl_ms;
    r.cas = cas;
    return r;
  }
  Status Put(const std::string& key, const std::string& value, const StoreRequest& request = StoreRequest{},
             BlockPointer* pointer = nullptr) {
    return store_->Store(Loc(key), key.data(), key.size(), value.data(), value.size(), request, At(), pointer);
  }
  Fetched Fetch(const std::string& key) {
    Fetched f;
    std::vector<uint8_t> scratch;
    BlockView view;
    f.status = store_->Get(Loc(key), key.data(), key.size(), At(), &scratch, &view, &f.pointer);
    if (f.status == SHMEMCACHE_OK) {
      f.value.assign(reinterpret_cast<const char*>(view.value), view.value_len);
      f.flags = view.flags;
      f.expiry_ms = view.expiry_ms;
      f.token = view.token;
    }
    return f;
  }
  Status Touch(const std::string& key, uint64_t ttl_ms, BlockPointer* pointer = nullptr) {
    return store_->Touch(Loc(key), key.data(), key.size(), ttl_ms, At(), pointer);
  }
  Status Incr(const std::string& key, int64_t delta, uint64_t* number = nullptr, BlockPointer* pointer = nullptr) {
    return store_->Incr(Loc(key), key.data(), key.size(), delta, At(), number, pointer);
  }
  Status Del(const std::string& key) { return store_->Delete(Loc(key), key.data(), key.size(), now_ms_); }

  std::vector<uint64_t> arena_words_;  // uint64_t storage: an 8-byte aligned arena
  std::vector<HashWay> table_;
  CountingAtomics atomics_;
  std::unique_ptr<KvStore> store_;
  uint64_t now_ms_ = 1000000;  // the fake server clock
  uint64_t recency_ = 1;
};

}  // namespace smc

#endif  // SHMEMCACHE_TESTS_UNIT_CONTRACT_FIXTURE_H_
