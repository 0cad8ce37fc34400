#include "runner.h"

#include <cstdio>
#include <exception>

namespace bench {

int Run(Cli &cli, int argc, char **argv, const std::function<int()> &body) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  setvbuf(stderr, nullptr, _IOLBF, 0);
  Cli::Outcome parsed = cli.Parse(argc, argv);
  if (parsed != Cli::Outcome::kRun) return Cli::ExitStatus(parsed);
  try {
    return body();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: %s\n", cli.program().c_str(), e.what());
    return 1;
  }
}

}  // namespace bench
