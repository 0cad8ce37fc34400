#include "spill/io_worker.h"

namespace smc {

IoWorker::IoWorker() : thread_([this] { Loop(); }) {}

IoWorker::~IoWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_one();
  thread_.join();
}

void IoWorker::Submit(std::unique_ptr<Job> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
  }
  work_cv_.notify_one();
}

void IoWorker::RunCompletions() {
  if (!HasFinished()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    completing_.swap(finished_);
    finished_count_.store(0, std::memory_order_release);
  }
  for (auto& job : completing_) job->Complete();
  completing_.clear();
}

void IoWorker::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return queue_.empty() && !running_job_; });
}

void IoWorker::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and nothing left
    std::unique_ptr<Job> job = std::move(queue_.front());
    queue_.pop_front();
    running_job_ = true;
    lock.unlock();
    job->Run();
    lock.lock();
    running_job_ = false;
    finished_.push_back(std::move(job));
    finished_count_.store(finished_.size(), std::memory_order_release);
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace smc
