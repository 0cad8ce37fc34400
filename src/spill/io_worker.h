// One background I/O thread for the SSD tier: the server thread submits jobs (a pread, a batch pwrite) and
// keeps serving; the worker runs them in submission order; the server takes the finished ones in when it likes
// (RunCompletions), on its own thread. Jobs only move bytes between a file and memory the job owns, so the
// worker needs no lock beyond its queues, and the tier's state is touched by the server thread only.
//
// A thread rather than io_uring: io_uring_setup is refused by the seccomp profile of common container runtimes
// (Docker's default blocks it), which is where HPC jobs increasingly run, and the handoff costs a few
// microseconds against a flash read's ~100 (bench/README.md, part `hybrid`); io_uring would save the handoff
// where it is allowed.
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
    virtual void Run() = 0;       // on the worker thread
    virtual void Complete() = 0;  // on the owner's thread, from RunCompletions, after Run
  };

  IoWorker();
  ~IoWorker();  // runs every job still queued, then joins the thread (finished jobs are destroyed, not completed)
  IoWorker(const IoWorker&) = delete;
  IoWorker& operator=(const IoWorker&) = delete;

  void Submit(std::unique_ptr<Job> job);
  // Completes the jobs that have finished, in the order they finished, then destroys them. Never blocks on I/O.
  // A Complete may submit new jobs (they are completed by a later call) but must not call RunCompletions.
  void RunCompletions();
  // True when a finished job waits to be completed (one acquire load: cheap enough for a polling loop).
  bool HasFinished() const { return finished_count_.load(std::memory_order_acquire) != 0; }
  // Blocks until every job submitted so far has finished (they then wait for RunCompletions).
  void WaitIdle();

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::deque<std::unique_ptr<Job>> queue_;
  std::vector<std::unique_ptr<Job>> finished_;
  std::vector<std::unique_ptr<Job>> completing_;  // owner thread only
  std::atomic<size_t> finished_count_{0};
  bool running_job_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_IO_WORKER_H_
