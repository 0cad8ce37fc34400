// The one way a benchmark's main runs: the command line is parsed before anything else (so --help and bad
// options end the program outside oshrun too, before any SHMEM call), stdout and stderr are line-buffered (a job
// killed by its time limit keeps every line it printed: its log says how far it got), then the body runs.
//
//   int main(int argc, char **argv) {
//     Options o;
//     bench::Cli cli("bench_x", kAbout);
//     Declare(&cli, &o);
//     return bench::Run(cli, argc, argv, [&] { return Measure(o); });          // no SHMEM
//     return bench::RunShmem(cli, argc, argv, {2, "PE 0 serves, PE 1 measures"},  // an oshrun job
//                            [&](const bench::Job &job) { return Measure(o, job); });
//   }
#ifndef SHMEMCACHE_BENCH_RUNNER_H_
#define SHMEMCACHE_BENCH_RUNNER_H_

#include <functional>

#include "cli.h"

namespace bench {

// Exit status: body's; 0 after --help; 2 for a bad command line; 1 when body throws (its text is printed).
int Run(Cli &cli, int argc, char **argv, const std::function<int()> &body);

}  // namespace bench

#endif  // SHMEMCACHE_BENCH_RUNNER_H_
