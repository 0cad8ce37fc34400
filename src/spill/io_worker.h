// One background I/O thread for the SSD tier: the server thread submits jobs (a pread, a batch pwrite) and
// keeps serving; the worker runs them in submission order; the server reaps the finished jobs when it likes.
// Jobs never touch SHMEM or the store: they only move bytes between a file and memory the job owns, so the
// worker needs no lock beyond its queues. Why a thread and not io_uring: see spill_store.h.
#ifndef SHMEMCACHE_SPILL_IO_WORKER_H_
#define SHMEMCACHE_SPILL_IO_WORKER_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace smc {

class IoWorker {
 public:
  struct Job {
    virtual ~Job() = default;
    virtual void Run() = 0;  // on the worker thread
  };

  IoWorker();
  ~IoWorker();  // runs every job still queued, then joins the thread (finished jobs are destroyed)
  IoWorker(const IoWorker&) = delete;
  IoWorker& operator=(const IoWorker&) = delete;

  void Submit(std::unique_ptr<Job> job);
  // Appends the jobs that have finished, in the order they finished, to *done. Never blocks.
  void Reap(std::vector<std::unique_ptr<Job>>* done);
  // True when a finished job waits to be reaped (one relaxed load: cheap enough for a polling loop).
  bool HasFinished() const { return finished_count_.load(std::memory_order_acquire) != 0; }
  // Blocks until every job submitted so far has finished (they then wait for Reap).
  void WaitIdle();

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::deque<std::unique_ptr<Job>> queue_;
  std::vector<std::unique_ptr<Job>> finished_;
  std::atomic<size_t> finished_count_{0};
  bool running_job_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_IO_WORKER_H_
