// Property files and workload configuration: syntax, precedence, and errors that name the file and line.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "properties.h"
#include "workload.h"

namespace ycsb {
namespace {

std::string WriteTemp(const std::string &name, const std::string &text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Properties, ParsesYcsbSyntax) {
  Properties p;
  std::string err;
  ASSERT_TRUE(p.ParseText("# comment\n! also a comment\n\nrecordcount=1000\n  operationcount : 20 \n"
                          "requestdistribution=zipfian\r\nlong=a\\\n  b\nkeyprefix=us\\=er\n",
                          "w", &err))
      << err;
  EXPECT_EQ(p.Get("recordcount", ""), "1000");
  EXPECT_EQ(p.Get("operationcount", ""), "20");
  EXPECT_EQ(p.Get("requestdistribution", ""), "zipfian");
  EXPECT_EQ(p.Get("long", ""), "ab");
  EXPECT_EQ(p.Get("keyprefix", ""), "us=er");
  EXPECT_EQ(p.Find("operationcount")->origin, "w:5");
  EXPECT_EQ(p.Get("missing", "dflt"), "dflt");
}

TEST(Properties, CommandLineOverridesEveryFileAndLaterFilesOverrideEarlier) {
  Properties p;
  std::string err;
  ASSERT_TRUE(p.SetFromArg("recordcount=7", &err));
  ASSERT_TRUE(p.ParseText("recordcount=1\nfieldcount=2\n", "a", &err));
  ASSERT_TRUE(p.ParseText("fieldcount=3\n", "b", &err));
  EXPECT_EQ(p.Get("recordcount", ""), "7");
  EXPECT_EQ(p.Find("recordcount")->origin, "-p");
  EXPECT_EQ(p.Get("fieldcount", ""), "3");
  EXPECT_EQ(p.Find("fieldcount")->origin, "b:1");
  EXPECT_FALSE(p.SetFromArg("novalue", &err));
  EXPECT_NE(err.find("expected -p name=value"), std::string::npos) << err;
}

TEST(Properties, BadLineNamesFileAndLine) {
  Properties p;
  std::string err;
  EXPECT_FALSE(p.ParseText("recordcount=10\n# fine\nrecordcount 1000\n", "workloads/bad", &err));
  EXPECT_EQ(err, "workloads/bad:3: expected 'name=value', got 'recordcount 1000'");
  EXPECT_FALSE(p.ParseText("\n=5\n", "f", &err));
  EXPECT_EQ(err.rfind("f:2: missing property name", 0), 0u) << err;
  EXPECT_FALSE(p.ParseText("read proportion=5\n", "f", &err));
  EXPECT_EQ(err.rfind("f:1: property name 'read proportion' contains whitespace", 0), 0u) << err;
}

TEST(Properties, MissingFileIsNamed) {
  Properties p;
  std::string err;
  EXPECT_FALSE(p.LoadFile("/nonexistent/workloadz", &err));
  EXPECT_EQ(err, "/nonexistent/workloadz: cannot open the property file");
}

TEST(Properties, TypedGettersReportOriginOfBadValues) {
  std::string path = WriteTemp("typed", "a=12\nb=1.5\nc=TRUE\nd=5M\ne=maybe\nf=x1\n");
  Properties p;
  std::string err;
  ASSERT_TRUE(p.LoadFile(path, &err)) << err;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  EXPECT_TRUE(p.GetInt64("a", 0, &i, &err));
  EXPECT_EQ(i, 12);
  EXPECT_TRUE(p.GetDouble("b", 0, &d, &err));
  EXPECT_EQ(d, 1.5);
  EXPECT_TRUE(p.GetBool("c", false, &b, &err));
  EXPECT_TRUE(b);
  EXPECT_FALSE(p.GetInt64("d", 0, &i, &err));
  EXPECT_EQ(err, path + ":4: d: '5M' is not an integer");
  EXPECT_FALSE(p.GetBool("e", false, &b, &err));
  EXPECT_EQ(err, path + ":5: e: 'maybe' is not true or false");
  EXPECT_FALSE(p.GetDouble("f", 0, &d, &err));
  EXPECT_EQ(err, path + ":6: f: 'x1' is not a number");
  EXPECT_TRUE(p.GetInt64("zzz", 99, &i, &err));
  EXPECT_EQ(i, 99);
}

bool Parse(const std::string &text, WorkloadConfig *c, std::string *err, std::vector<std::string> *warnings = nullptr) {
  Properties p;
  if (!p.ParseText(text, "wl", err)) return false;
  std::vector<std::string> w;
  return ParseWorkloadConfig(p, c, warnings ? warnings : &w, err);
}

TEST(WorkloadConfig, BadValuesNameTheLine) {
  WorkloadConfig c;
  std::string err;
  EXPECT_FALSE(Parse("recordcount=100\noperationcount=10\nrequestdistribution=zipf\n", &c, &err));
  EXPECT_EQ(err, "wl:3: requestdistribution: 'zipf' is not one of: uniform, zipfian, latest, hotspot");
  EXPECT_FALSE(Parse("recordcount=abc\n", &c, &err));
  EXPECT_EQ(err, "wl:1: recordcount: 'abc' is not an integer");
  EXPECT_FALSE(Parse("operationcount=5\n", &c, &err));
  EXPECT_NE(err.find("recordcount is not set"), std::string::npos) << err;
  EXPECT_FALSE(Parse("recordcount=10\nzipfianconstant=1.2\n", &c, &err));
  EXPECT_EQ(err.rfind("wl:2: zipfianconstant: '1.2' must be strictly between 0 and 1", 0), 0u) << err;
  EXPECT_FALSE(Parse("recordcount=10\ninsertorder=random\n", &c, &err));
  EXPECT_EQ(err, "wl:2: insertorder: 'random' is not one of: hashed, ordered");
  EXPECT_FALSE(Parse("recordcount=10\nrequestdistribution=exponential\n", &c, &err));
  EXPECT_NE(err.find("wl:2: requestdistribution: 'exponential' is not supported"), std::string::npos) << err;
  EXPECT_FALSE(Parse("recordcount=10\nreadproportion=0\nupdateproportion=0\n", &c, &err));
  EXPECT_NE(err.find("nothing to run"), std::string::npos) << err;
  EXPECT_FALSE(Parse("recordcount=10\ninsertstart=5\ninsertcount=6\n", &c, &err));
  EXPECT_NE(err.find("wl:3: insertcount: '6' is invalid"), std::string::npos) << err;
  EXPECT_FALSE(Parse("recordcount=10\nfieldlengthdistribution=uniform\ndataintegrity=true\n", &c, &err));
  EXPECT_NE(err.find("must be constant when dataintegrity=true"), std::string::npos) << err;
}

TEST(WorkloadConfig, ScansAreRefusedWithTheReason) {
  WorkloadConfig c;
  std::string err;
  EXPECT_FALSE(Parse("recordcount=10\n\nreadproportion=0\nscanproportion=0.95\ninsertproportion=0.05\n", &c, &err));
  EXPECT_EQ(err.rfind("wl:4: scanproportion: '0.95' asks for SCAN operations, which do not map onto a hash cache",
                      0),
            0u)
      << err;
  // scanproportion=0 (as in every other YCSB workload file) is fine.
  EXPECT_TRUE(Parse("recordcount=10\nscanproportion=0\n", &c, &err)) << err;
}

TEST(WorkloadConfig, UnknownPropertiesWarnYcsbOnesDoNot) {
  WorkloadConfig c;
  std::string err;
  std::vector<std::string> warnings;
  ASSERT_TRUE(Parse("recordcount=10\nworkload=site.ycsb.workloads.CoreWorkload\nmaxscanlength=100\nrecordcont=5\n",
                    &c, &err, &warnings))
      << err;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "wl:4: unknown property 'recordcont' (ignored)");
}

TEST(WorkloadConfig, DefaultsAreYcsbs) {
  WorkloadConfig c;
  std::string err;
  ASSERT_TRUE(Parse("recordcount=10\n", &c, &err)) << err;
  EXPECT_EQ(c.fieldcount, 10);
  EXPECT_EQ(c.fieldlength, 100);
  EXPECT_EQ(c.readproportion, 0.95);
  EXPECT_EQ(c.updateproportion, 0.05);
  EXPECT_EQ(c.requestdistribution, "uniform");
  EXPECT_EQ(c.zipfianconstant, 0.99);
  EXPECT_EQ(c.hotspotdatafraction, 0.2);
  EXPECT_EQ(c.hotspotopnfraction, 0.8);
  EXPECT_FALSE(c.orderedinserts);
  EXPECT_EQ(c.keyprefix, "user");
  EXPECT_EQ(c.insertcount, 10);
  ASSERT_EQ(c.fieldnames.size(), 10u);
  EXPECT_EQ(c.fieldnames[9], "field9");
}

struct Shipped {
  const char *file;
  double read, update, insert, rmw;
  const char *distribution;
};

TEST(ShippedWorkloads, ParseWithTheirStandardContents) {
  const Shipped kAll[] = {
      {"workloada", 0.5, 0.5, 0, 0, "zipfian"},         {"workloadb", 0.95, 0.05, 0, 0, "zipfian"},
      {"workloadc", 1, 0, 0, 0, "zipfian"},             {"workloadd", 0.95, 0, 0.05, 0, "latest"},
      {"workloadf", 0.5, 0, 0, 0.5, "zipfian"},         {"paper-set-only", 0, 1, 0, 0, "zipfian"},
      {"paper-get-only", 1, 0, 0, 0, "zipfian"},        {"paper-get95-set5", 0.95, 0.05, 0, 0, "zipfian"},
      {"paper-get50-set50", 0.5, 0.5, 0, 0, "zipfian"},
  };
  for (const Shipped &s : kAll) {
    Properties p;
    std::string err;
    ASSERT_TRUE(p.LoadFile(std::string(YCSB_WORKLOADS_DIR) + "/" + s.file, &err)) << err;
    WorkloadConfig c;
    std::vector<std::string> warnings;
    ASSERT_TRUE(ParseWorkloadConfig(p, &c, &warnings, &err)) << s.file << ": " << err;
    EXPECT_TRUE(warnings.empty()) << s.file << ": " << warnings[0];
    EXPECT_EQ(c.readproportion, s.read) << s.file;
    EXPECT_EQ(c.updateproportion, s.update) << s.file;
    EXPECT_EQ(c.insertproportion, s.insert) << s.file;
    EXPECT_EQ(c.readmodifywriteproportion, s.rmw) << s.file;
    EXPECT_EQ(c.requestdistribution, s.distribution) << s.file;
    if (std::string(s.file).rfind("paper-", 0) == 0) {
      EXPECT_EQ(c.recordcount, 5000000) << s.file;
      EXPECT_EQ(c.operationcount, 5000000) << s.file;
      EXPECT_EQ(RecordBytes(c), 128u) << s.file;
    } else {
      EXPECT_EQ(c.recordcount, 1000) << s.file;
      EXPECT_EQ(c.fieldcount, 10) << s.file;
    }
  }
}

}  // namespace
}  // namespace ycsb
