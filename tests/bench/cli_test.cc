// bench::Cli (bench/common/cli.h), the command line every benchmark program declares: one process, no SHMEM.
#include "cli.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using Outcome = bench::Cli::Outcome;

// Parses the words as a command line (argv[0] = "prog").
Outcome ParseWords(bench::Cli *cli, std::vector<std::string> words) {
  words.insert(words.begin(), "prog");
  std::vector<char *> argv;
  for (std::string &w : words) argv.push_back(&w[0]);
  return cli->Parse(static_cast<int>(argv.size()), argv.data());
}

struct Options {
  int servers = 1;
  double seconds = 2;
  size_t keys = 1000;
  std::vector<size_t> sizes{32, 4096};
  std::string mode = "direct", csv;
  std::vector<std::string> ops{"get"}, files;
  bool verbose = false;

  void Declare(bench::Cli *cli) {
    cli->Int("--servers", &servers, "server PEs", bench::Positive<int>());
    cli->Real("--seconds", &seconds, "seconds", bench::Positive<double>());
    cli->Count("--keys", &keys, "keys");
    cli->SizeList("--sizes", &sizes, "value sizes");
    cli->Choice("--mode", &mode, {"direct", "active"}, "mode");
    cli->Text("--csv", &csv, "FILE", "csv file");
    cli->Words("--ops", &ops, "ops", [](const std::string &w) {
      return w == "get" || w == "set" ? std::string() : std::string("is not get or set");
    });
    cli->Repeated("-P", &files, "FILE", "property file");
    cli->Flag("--verbose", &verbose, "talk");
    cli->Refused("-target", true, "throttling is not supported");
  }
};

TEST(BenchCli, TheDefaultsStayWhenNothingIsGiven) {
  Options o;
  bench::Cli cli("prog", "usage: prog");
  o.Declare(&cli);
  EXPECT_EQ(ParseWords(&cli, {}), Outcome::kRun);
  EXPECT_EQ(o.servers, 1);
  EXPECT_EQ(o.sizes, (std::vector<size_t>{32, 4096}));
  EXPECT_EQ(o.mode, "direct");
}

TEST(BenchCli, ValuesComeSeparateOrAfterAnEqualsSign) {
  Options o;
  bench::Cli cli("prog", "usage: prog");
  o.Declare(&cli);
  ASSERT_EQ(ParseWords(&cli, {"--servers", "3", "--seconds=0.5", "--keys", "4K", "--sizes=8,1M", "--mode",
                              "active", "--ops", "get,set", "-P", "a", "-P", "b", "--verbose", "--csv=x.csv"}),
            Outcome::kRun)
      << cli.error();
  EXPECT_EQ(o.servers, 3);
  EXPECT_DOUBLE_EQ(o.seconds, 0.5);
  EXPECT_EQ(o.keys, 4096u);
  EXPECT_EQ(o.sizes, (std::vector<size_t>{8, 1u << 20}));
  EXPECT_EQ(o.mode, "active");
  EXPECT_EQ(o.ops, (std::vector<std::string>{"get", "set"}));
  EXPECT_EQ(o.files, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(o.verbose);
  EXPECT_EQ(o.csv, "x.csv");
}

TEST(BenchCli, HelpListsEveryOptionWithItsDefault) {
  Options o;
  bench::Cli cli("prog", "usage: prog [options]");
  o.Declare(&cli);
  EXPECT_EQ(ParseWords(&cli, {"--servers", "2", "--help"}), Outcome::kHelp);
  EXPECT_EQ(bench::Cli::ExitStatus(Outcome::kHelp), 0);
  const std::string help = cli.HelpText();
  for (const char *name : {"--servers N", "--seconds X", "--keys N", "--sizes LIST", "--mode direct|active",
                           "--csv FILE", "--ops LIST", "-P FILE", "--verbose", "-target", "-h, --help"})
    EXPECT_NE(help.find(name), std::string::npos) << name << " missing from\n" << help;
  EXPECT_NE(help.find("(default 32,4K)"), std::string::npos) << help;
  EXPECT_NE(help.find("(default direct)"), std::string::npos) << help;
  EXPECT_EQ(help.find("usage: prog [options]"), 0u);
}

TEST(BenchCli, UnknownOptionsAndBadValuesFailNamingTheOption) {
  struct Case {
    std::vector<std::string> words;
    std::string says;
  } cases[] = {
      {{"--bogus"}, "unknown option '--bogus'"},
      {{"stray"}, "unexpected argument 'stray'"},
      {{"--servers"}, "--servers needs a value (N)"},
      {{"--servers", "0"}, "--servers '0' must be > 0"},
      {{"--servers", "two"}, "--servers 'two' is not a whole number"},
      {{"--seconds", "-1"}, "--seconds '-1' must be > 0"},
      {{"--keys", "many"}, "--keys 'many' is not a count"},
      {{"--sizes", "4X"}, "bad size '4X'"},
      {{"--mode", "fast"}, "--mode 'fast' must be one of direct|active"},
      {{"--ops", "get,put"}, "--ops 'put' is not get or set"},
      {{"--verbose=yes"}, "--verbose takes no value"},
      {{"--csv", ""}, "--csv '' needs a non-empty value"},
      {{"-target", "5"}, "-target: throttling is not supported"},
  };
  for (const Case &c : cases) {
    Options o;
    bench::Cli cli("prog", "usage: prog");
    o.Declare(&cli);
    EXPECT_EQ(ParseWords(&cli, c.words), Outcome::kError) << c.words[0];
    EXPECT_NE(cli.error().find(c.says), std::string::npos) << "got: " << cli.error() << "\nwant: " << c.says;
    EXPECT_EQ(bench::Cli::ExitStatus(Outcome::kError), 2);
  }
}

TEST(BenchCli, ABadValueLeavesTheDefault) {
  Options o;
  bench::Cli cli("prog", "usage: prog");
  o.Declare(&cli);
  EXPECT_EQ(ParseWords(&cli, {"--servers", "-4"}), Outcome::kError);
  EXPECT_EQ(o.servers, 1);
}

TEST(BenchCli, ACommandIsRequiredAndChecked) {
  std::string cmd;
  int n = 0;
  bench::Cli cli("prog", "usage: prog a|b");
  cli.Command(&cmd, {"a", "b"}, "what to do").Int("--n", &n, "n");
  EXPECT_EQ(ParseWords(&cli, {"--n", "1"}), Outcome::kError);
  EXPECT_NE(cli.error().find("needs a command: a, b"), std::string::npos) << cli.error();
  EXPECT_EQ(ParseWords(&cli, {"c"}), Outcome::kError);
  EXPECT_NE(cli.error().find("unknown command 'c'"), std::string::npos) << cli.error();
  EXPECT_EQ(ParseWords(&cli, {"--n", "2", "b"}), Outcome::kRun) << cli.error();
  EXPECT_EQ(cmd, "b");
  EXPECT_EQ(n, 2);
}

TEST(BenchCli, ChecksOverSeveralOptionsRunAfterParsing) {
  size_t lo = 1, hi = 10;
  bench::Cli cli("prog", "usage: prog");
  cli.Size("--lo", &lo, "low").Size("--hi", &hi, "high").Check([&] {
    return hi < lo ? std::string("--hi must be at least --lo") : std::string();
  });
  EXPECT_EQ(ParseWords(&cli, {"--lo", "20"}), Outcome::kError);
  EXPECT_EQ(cli.error(), "--hi must be at least --lo");
  EXPECT_EQ(ParseWords(&cli, {"--lo", "2", "--hi", "4K"}), Outcome::kRun);
  EXPECT_EQ(hi, 4096u);
}

TEST(BenchCli, NoneClearsAListThatAllowsIt) {
  std::vector<std::string> patterns{"uniform"};
  std::vector<double> factors{1.5};
  bench::Cli cli("prog", "usage: prog");
  cli.Words("--patterns", &patterns, "patterns", {}, true).Reals("--factors", &factors, "factors");
  EXPECT_EQ(ParseWords(&cli, {"--patterns", "none", "--factors", "none"}), Outcome::kRun);
  EXPECT_TRUE(patterns.empty());
  EXPECT_TRUE(factors.empty());
  EXPECT_EQ(ParseWords(&cli, {"--factors", "1,x"}), Outcome::kError);
  EXPECT_NE(cli.error().find("'x' is not a number"), std::string::npos) << cli.error();
}

}  // namespace
