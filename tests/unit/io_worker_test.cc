// IoWorker (src/spill/io_worker.h): jobs run on its thread in submission order; their completions run on the
// owner's thread, only when it asks.
#include "spill/io_worker.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

namespace smc {
namespace {

struct Log {
  std::vector<int> ran, completed;
  std::thread::id run_thread, complete_thread;
};

struct TestJob : IoWorker::Job {
  TestJob(Log* log, int id) : log(log), id(id) {}
  void Run() override {
    log->ran.push_back(id);  // the worker runs one job at a time
    log->run_thread = std::this_thread::get_id();
  }
  void Complete() override {
    log->completed.push_back(id);
    log->complete_thread = std::this_thread::get_id();
  }
  Log* log;
  int id;
};

TEST(IoWorker, RunsInOrderAndCompletesOnTheOwnersThread) {
  Log log;
  IoWorker worker;
  for (int i = 0; i < 100; ++i) worker.Submit(std::make_unique<TestJob>(&log, i));
  worker.WaitIdle();
  EXPECT_TRUE(worker.HasFinished());
  EXPECT_TRUE(log.completed.empty());  // nothing completes until the owner asks
  worker.RunCompletions();
  EXPECT_FALSE(worker.HasFinished());
  std::vector<int> want(100);
  for (int i = 0; i < 100; ++i) want[i] = i;
  EXPECT_EQ(log.ran, want);
  EXPECT_EQ(log.completed, want);
  EXPECT_NE(log.run_thread, std::this_thread::get_id());
  EXPECT_EQ(log.complete_thread, std::this_thread::get_id());
  worker.RunCompletions();  // nothing left: nothing happens
  EXPECT_EQ(log.completed.size(), 100u);
}

// A completion may submit more work (a write retried after ENOSPC does).
struct ResubmittingJob : IoWorker::Job {
  ResubmittingJob(IoWorker* worker, Log* log, int left) : worker(worker), log(log), left(left) {}
  void Run() override { log->ran.push_back(left); }
  void Complete() override {
    log->completed.push_back(left);
    if (left > 0) worker->Submit(std::make_unique<ResubmittingJob>(worker, log, left - 1));
  }
  IoWorker* worker;
  Log* log;
  int left;
};

TEST(IoWorker, ACompletionMaySubmitMore) {
  Log log;
  IoWorker worker;
  worker.Submit(std::make_unique<ResubmittingJob>(&worker, &log, 3));
  for (int round = 0; round < 4; ++round) {
    worker.WaitIdle();
    worker.RunCompletions();
  }
  EXPECT_EQ(log.completed, (std::vector<int>{3, 2, 1, 0}));
}

TEST(IoWorker, DestructionRunsWhatIsQueued) {
  Log log;
  {
    IoWorker worker;
    for (int i = 0; i < 10; ++i) worker.Submit(std::make_unique<TestJob>(&log, i));
  }
  EXPECT_EQ(log.ran.size(), 10u);
  EXPECT_TRUE(log.completed.empty());
}

}  // namespace
}  // namespace smc
