// Whole shmemcache jobs in one gtest process: every PE of a LoopbackJob (transport/loopback_transport.h) is a
// thread running a Node (node/node.h). Servers serve; clients run the test's body; everyone finalizes, so a
// client whose body fails an assertion still lets the job end.
#ifndef SHMEMCACHE_TESTS_UNIT_LOOPBACK_CLUSTER_H_
#define SHMEMCACHE_TESTS_UNIT_LOOPBACK_CLUSTER_H_

#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/config.h"
#include "node/node.h"
#include "transport/loopback_transport.h"

namespace smc {
namespace testing_loopback {

// A small configuration (the defaults, without the environment, scaled down for a test process).
inline shmemcache_config_t SmallConfig(int num_servers = 1) {
  shmemcache_config_t c;
  ConfigDefaults(&c);
  c.num_servers = num_servers;
  c.server_memory_bytes = 4u << 20;
  c.hash_sets = 256;
  c.hash_ways = 8;
  c.directory_entries = 64;
  c.max_value_len = 64 * 1024;
  c.slab_page_bytes = 64 * 1024;
  c.private_context = 1;
  c.op_timeout_ms = 60000;
  c.spill_dir = nullptr;
  return c;
}

// A barrier among some of the threads (clients only: servers sit in Serve and cannot join a job barrier).
class ThreadBarrier {
 public:
  explicit ThreadBarrier(int parties) : parties_(parties) {}
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t generation = generation_;
    if (++waiting_ == parties_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int parties_;
  int waiting_ = 0;
  uint64_t generation_ = 0;
};

inline shmemcache_stats_t StatsOf(Node& node) {
  shmemcache_stats_t st;
  node.FillStats(&st);
  return st;
}

struct ClusterHooks {
  // Runs on each client PE between Start and Finalize.
  std::function<void(Node& node)> client;
  // Runs on each server PE instead of Serve (it must serve, e.g. node.Serve()); default: node.Serve().
  std::function<void(Node& node)> server;
  // Runs on each server PE after serving, before Finalize (the store can be inspected there).
  std::function<void(Node& node)> after_serve;
};

// Runs a job of n_pes PEs with this configuration on `job` (or a fresh one): OK when every PE started. The
// nodes are finalized before it returns.
inline Status RunCluster(LoopbackJob* job, const shmemcache_config_t& config, const ClusterHooks& hooks) {
  std::vector<Status> started(static_cast<size_t>(job->n_pes()), SHMEMCACHE_OK);
  job->Run([&](int pe) {
    std::unique_ptr<Node> node;
    started[static_cast<size_t>(pe)] = Node::Start(job->transport(pe), &config, &node);
    if (started[static_cast<size_t>(pe)] != SHMEMCACHE_OK) return;
    if (node->is_server()) {
      if (hooks.server) hooks.server(*node);
      else node->Serve();
      if (hooks.after_serve) hooks.after_serve(*node);
    } else if (hooks.client) {
      hooks.client(*node);
    }
    node->Finalize();
  });
  for (Status s : started)
    if (s != SHMEMCACHE_OK) return s;
  return SHMEMCACHE_OK;
}

inline Status RunCluster(int n_pes, const shmemcache_config_t& config, const ClusterHooks& hooks) {
  LoopbackJob job(n_pes);
  return RunCluster(&job, config, hooks);
}

}  // namespace testing_loopback
}  // namespace smc

#endif  // SHMEMCACHE_TESTS_UNIT_LOOPBACK_CLUSTER_H_
