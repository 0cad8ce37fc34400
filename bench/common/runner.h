// The one way a benchmark's main runs: the command line is parsed before anything else (so --help and bad
// options end the program outside oshrun too, before any SHMEM call), stdout and stderr are line-buffered (a job
// killed by its time limit keeps every line it printed: its log says how far it got), then the body runs.
//
//   struct Options { fields with their defaults; void Declare(bench::Cli *cli) { cli->Size(...); ... } };
//   int Measure(const Options &o);                                     // or (const Options &, const bench::Job &)
//   int main(int argc, char **argv) {
//     return bench::Main<Options>(argc, argv, "bench_x", kAbout, Measure);                  // no SHMEM
//     return bench::ShmemMain<Options>(argc, argv, "bench_x", kAbout, {2, "PE 0 serves, PE 1 measures"},
//                                      Measure);                                           // an oshrun job
//   }
#ifndef SHMEMCACHE_BENCH_RUNNER_H_
#define SHMEMCACHE_BENCH_RUNNER_H_

#include <functional>

#include "cli.h"

namespace bench {

// Exit status: body's; 0 after --help; 2 for a bad command line; 1 when body throws (its text is printed).
int Run(Cli &cli, int argc, char **argv, const std::function<int()> &body);

// A whole main: Options holds the defaults and declares them (Options::Declare(Cli *)); measure runs with the
// parsed options.
template <class Options>
int Main(int argc, char **argv, const char *program, const char *about, int (*measure)(const Options &)) {
  Options o;
  Cli cli(program, about);
  o.Declare(&cli);
  return Run(cli, argc, argv, [&] { return measure(o); });
}

}  // namespace bench

#endif  // SHMEMCACHE_BENCH_RUNNER_H_
