// The command line of a benchmark program, declared once: every option is a name, a destination, a help line
// and a value parser. `--help` lists every option with its default and exits 0; an unknown option or a value
// that does not parse ends the program with one line naming the option and what it accepts (exit 2).
// Nothing here touches SHMEM, so `--help` and bad options work anywhere, inside or outside oshrun.
//
//   Options o;                                       // defaults are the fields' initial values
//   bench::Cli cli("bench_x", "usage: bench_x [options]\n  what it measures");
//   cli.SizeList("--sizes", &o.sizes, "value sizes (K/M/G = powers of 1024)");
//   cli.Choice("--mode", &o.mode, {"direct", "active"}, "how operations are served");
//   cli.Real("--seconds", &o.seconds, "measured seconds per phase", bench::Positive<double>());
//   cli.Check([&] { return o.a <= o.b ? "" : "--a must not exceed --b"; });
//   switch (cli.Parse(argc, argv)) { ... }           // or bench::Run / bench::RunShmem (runner.h)
//
// Syntax: `--name value` or `--name=value`; flags take no value; repeated options keep the last value except
// Repeated(), which collects every occurrence. At most one positional argument, declared with Command().
#ifndef SHMEMCACHE_BENCH_CLI_H_
#define SHMEMCACHE_BENCH_CLI_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace bench {

// A value rule: "" when the value is acceptable, else what is wrong with it ("must be > 0").
template <class T>
using Rule = std::function<std::string(const T &)>;

template <class T>
Rule<T> Positive() {
  return [](const T &v) { return v > T(0) ? std::string() : std::string("must be > 0"); };
}
template <class T>
Rule<T> Between(T lo, T hi) {
  return [lo, hi](const T &v) {
    std::ostringstream why;
    if (v < lo || v > hi) why << "must be between " << lo << " and " << hi;
    return why.str();
  };
}

class Cli {
 public:
  enum class Outcome { kRun, kHelp, kError };

  // `about`: the first lines of --help (a usage line, then what the program does and how it is launched).
  Cli(std::string program, std::string about);
  Cli(const Cli &) = delete;
  Cli &operator=(const Cli &) = delete;
  ~Cli();

  Cli &Flag(const std::string &name, bool *out, const std::string &help);
  Cli &Text(const std::string &name, std::string *out, const std::string &meta, const std::string &help);
  Cli &Choice(const std::string &name, std::string *out, const std::vector<std::string> &choices,
              const std::string &help);
  Cli &Int(const std::string &name, int *out, const std::string &help, Rule<int> rule = {});
  // A count: decimal, optionally with K/M/G (powers of 1024).
  Cli &Count(const std::string &name, size_t *out, const std::string &help, Rule<size_t> rule = {});
  // A byte size: decimal with an optional K/M/G suffix (powers of 1024); shown as 4K, 1M in --help.
  Cli &Size(const std::string &name, size_t *out, const std::string &help, Rule<size_t> rule = {});
  Cli &Real(const std::string &name, double *out, const std::string &help, Rule<double> rule = {});
  // Comma-separated byte sizes ("8,64,4K,1M"); at least one.
  Cli &SizeList(const std::string &name, std::vector<size_t> *out, const std::string &help);
  // Comma-separated words; `rule` checks each word. `none_clears`: the word "none" stands for the empty list.
  Cli &Words(const std::string &name, std::vector<std::string> *out, const std::string &help,
             Rule<std::string> rule = {}, bool none_clears = false);
  // Comma-separated numbers; "none" stands for the empty list.
  Cli &Reals(const std::string &name, std::vector<double> *out, const std::string &help, Rule<double> rule = {});
  // Every occurrence appends its value (e.g. -P FILE -P FILE).
  Cli &Repeated(const std::string &name, std::vector<std::string> *out, const std::string &meta,
                const std::string &help);
  // An option the program refuses with `why` (kept so that the message is better than "unknown option").
  Cli &Refused(const std::string &name, bool takes_value, const std::string &why);
  // The positional argument (one of `choices`, required).
  Cli &Command(std::string *out, const std::vector<std::string> &choices, const std::string &help);
  // Replaces the default shown in --help for the option declared last (e.g. a long list).
  Cli &Default(const std::string &shown);
  // A rule over several options, checked after parsing: "" or the error.
  Cli &Check(std::function<std::string()> rule);

  // Parses argv. kHelp: the help text went to stdout. kError: one line went to stderr. Only the first process
  // of a launcher's job prints (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID), so N PEs that parse
  // the same arguments print once.
  Outcome Parse(int argc, char **argv);
  // The exit status for a parse outcome that ends the program: 0 after --help, 2 after an error.
  static int ExitStatus(Outcome o) { return o == Outcome::kHelp ? 0 : 2; }

  std::string HelpText() const;
  const std::string &program() const { return program_; }
  // What the last Parse found wrong ("" after kRun or kHelp).
  const std::string &error() const { return error_; }

 private:
  struct Option;
  Option &Add(const std::string &name, const std::string &meta, const std::string &help);
  Option *Find(const std::string &name);
  std::string ParseArgs(int argc, char **argv, bool *help);

  std::string program_, about_, error_;
  std::vector<std::unique_ptr<Option>> options_;
  std::vector<std::function<std::string()>> checks_;
  std::string *command_ = nullptr;
  std::vector<std::string> command_choices_;
  std::string command_help_;
};

// True in the first process of a launcher's job (or outside any launcher): the one that should print
// messages every process would print alike.
bool FirstProcessOfJob();

}  // namespace bench

#endif  // SHMEMCACHE_BENCH_CLI_H_
