// CoreWorkload pieces: key names (as YCSB builds them), records and their verification, the split over
// clients, and the YCSB-format report.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>

#include "measurements.h"
#include "workload.h"

namespace ycsb {
namespace {

WorkloadConfig Config(const std::string &text) {
  Properties p;
  std::string err;
  EXPECT_TRUE(p.ParseText(text, "t", &err)) << err;
  WorkloadConfig c;
  std::vector<std::string> w;
  EXPECT_TRUE(ParseWorkloadConfig(p, &c, &w, &err)) << err;
  return c;
}

TEST(Keys, HashedAndOrderedNamesLikeYcsb) {
  WorkloadConfig c = Config("recordcount=100\n");
  EXPECT_EQ(BuildKeyName(c, 0), "user6284781860667377211");
  EXPECT_EQ(BuildKeyName(c, 12345), "user1792800413050876852");
  c = Config("recordcount=100\ninsertorder=ordered\nzeropadding=6\nkeyprefix=k\n");
  EXPECT_EQ(BuildKeyName(c, 42), "k000042");
  EXPECT_EQ(BuildKeyName(c, 1234567), "k1234567");
}

TEST(Records, DeterministicValueMatchesYcsb) {
  // Printed by YCSB 0.17's buildDeterministicValue("user6284781860667377211", "field3") with fieldlength 100.
  EXPECT_EQ(DeterministicFieldValue("user6284781860667377211", "field3", 100),
            "user6284781860667377211:field3:-56807784:-1874878672:1967282817:-1787301858:-652319809:-382740913:-6");
  EXPECT_EQ(DeterministicFieldValue("user1", "field0", 5), "user1");
}

TEST(Records, FieldsFormatLayoutAndVerification) {
  WorkloadConfig c = Config("recordcount=10\nfieldcount=3\nfieldlength=20\ndataintegrity=true\n");
  CoreWorkload w(c, 0, 1);
  std::string rec;
  w.BuildRecord("user7", &rec);
  ASSERT_EQ(rec.size(), 3 * (2 + 6 + 4 + 20u));
  EXPECT_EQ(rec.size(), w.MaxRecordBytes());
  EXPECT_EQ(static_cast<unsigned char>(rec[0]), 6);  // u16 name length, little-endian
  EXPECT_EQ(rec.substr(2, 6), "field0");
  EXPECT_EQ(static_cast<unsigned char>(rec[8]), 20);  // u32 value length
  EXPECT_EQ(rec.substr(12, 20), DeterministicFieldValue("user7", "field0", 20));
  EXPECT_TRUE(w.VerifyRecord("user7", rec.data(), rec.size()));
  EXPECT_FALSE(w.VerifyRecord("user8", rec.data(), rec.size()));
  std::string bad = rec;
  bad[40] ^= 1;
  EXPECT_FALSE(w.VerifyRecord("user7", bad.data(), bad.size()));
  EXPECT_FALSE(w.VerifyRecord("user7", rec.data(), rec.size() - 1));
}

TEST(Records, RawFormatIsExactlyTheFieldBytes) {
  WorkloadConfig c = Config("recordcount=10\nfieldcount=1\nfieldlength=128\nrecordformat=raw\n");
  CoreWorkload w(c, 0, 1);
  std::string rec;
  w.BuildRecord("user1", &rec);
  EXPECT_EQ(rec.size(), 128u);
  for (char ch : rec) EXPECT_TRUE(ch >= ' ' && ch <= '~');
  c.dataintegrity = true;
  CoreWorkload v(c, 0, 1);
  v.BuildRecord("user1", &rec);
  EXPECT_TRUE(v.VerifyRecord("user1", rec.data(), rec.size()));
}

TEST(Split, LoadRangesAndOperationsCoverEverythingOnce) {
  WorkloadConfig c = Config("recordcount=1003\noperationcount=10\n");
  int64_t next = 0, ops = 0;
  for (int r = 0; r < 4; ++r) {
    CoreWorkload w(c, r, 4);
    int64_t b, e;
    w.LoadRange(&b, &e);
    EXPECT_EQ(b, next);
    next = e;
    ops += w.OperationShare(1001);
  }
  EXPECT_EQ(next, 1003);
  EXPECT_EQ(ops, 1001);
}

TEST(Inserts, ClientsUseDisjointKeysAndReadOnlyWhatTheyInserted) {
  WorkloadConfig c = Config("recordcount=1000\noperationcount=1000\nreadproportion=0.5\ninsertproportion=0.5\n"
                            "updateproportion=0\nrequestdistribution=latest\n");
  std::set<int64_t> seen;
  for (int r = 0; r < 3; ++r) {
    CoreWorkload w(c, r, 3);
    for (int i = 0; i < 200; ++i) {
      if (w.NextOperation() == OpType::kInsert) {
        int64_t k = w.NextInsertKeynum();
        EXPECT_GE(k, 1000);
        EXPECT_EQ((k - 1000) % 3, r);
        EXPECT_TRUE(seen.insert(k).second);
        w.AcknowledgeInsert(k);
      } else {
        EXPECT_LE(w.NextKeynum(), w.LastInsertedKeynum());
      }
    }
  }
}

TEST(Inserts, ZipfianKeyspaceIncludesExpectedInsertsButReadsStayBelowTheLastInsert) {
  WorkloadConfig c = Config("recordcount=100\noperationcount=1000\nreadproportion=0.9\ninsertproportion=0.1\n"
                            "updateproportion=0\nrequestdistribution=zipfian\n");
  CoreWorkload w(c, 0, 1);
  for (int i = 0; i < 5000; ++i) EXPECT_LE(w.NextKeynum(), 99);
}

TEST(Histogram, BucketsAndPercentiles) {
  for (uint64_t v : {0ull, 1ull, 255ull, 256ull, 1000ull, 123456ull, 99999999ull}) {
    size_t b = LatencyHistogram::BucketOf(v);
    EXPECT_GE(LatencyHistogram::BucketHighest(b), v);
    EXPECT_LE(LatencyHistogram::BucketHighest(b), v + v / 128 + 1);
    if (b > 0) {
      EXPECT_LT(LatencyHistogram::BucketHighest(b - 1), v);
    }
  }
  LatencyHistogram h(100);
  for (int i = 1; i <= 100; ++i) h.Record(static_cast<uint64_t>(i) * 1000);  // 1..100 us
  EXPECT_EQ(h.count(), 100u);
  EXPECT_NEAR(h.MeanUs(), 50.5, 1e-9);
  EXPECT_EQ(h.MinUs(), 1.0);
  EXPECT_EQ(h.MaxUs(), 100.0);
  EXPECT_NEAR(h.PercentileUs(95), 95.0, 95 * 0.008);
  EXPECT_NEAR(h.PercentileUs(99), 99.0, 99 * 0.008);
  EXPECT_EQ(h.PercentileUs(100), 100.0);
  EXPECT_EQ(h.us_buckets()[5], 1u);
  EXPECT_EQ(h.us_buckets()[100], 1u);  // overflow bucket: >= cap
  std::vector<int64_t> words(h.SumWords());
  h.ExportSums(words.data());
  LatencyHistogram g(100);
  g.ImportSums(words.data());
  g.SetMinMax(h.min_ns(), h.max_ns());
  EXPECT_EQ(g.PercentileUs(95), h.PercentileUs(95));
  EXPECT_EQ(PercentileLabel(95), "95th");
  EXPECT_EQ(PercentileLabel(99), "99th");
  EXPECT_EQ(PercentileLabel(1), "1st");
  EXPECT_EQ(PercentileLabel(11), "11th");
  EXPECT_EQ(PercentileLabel(99.9), "99.9");
}

TEST(Report, YcsbFormat) {
  PhaseMeasurements m(10);
  m.runtime_ns = 2000000000;  // 2 s
  m.operations = 3;
  m.Measure(kMRead, 1500);
  m.Report(kMRead, kOk);
  m.Measure(kMRead, 2500);
  m.Report(kMRead, kNotFound);
  m.Measure(kMUpdate, 3000);
  m.Report(kMUpdate, kOk);
  char *buf = nullptr;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  WriteReport(f, m, {95, 99});
  std::fclose(f);
  std::string out(buf, len);
  free(buf);
  EXPECT_NE(out.find("[OVERALL], RunTime(ms), 2000\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[OVERALL], Throughput(ops/sec), 1.500\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[READ], Operations, 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[READ], AverageLatency(us), 2.000\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[READ], MinLatency(us), 1.500\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[READ], MaxLatency(us), 2.500\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[READ], 95thPercentileLatency(us), "), std::string::npos) << out;
  EXPECT_NE(out.find("[READ], 99thPercentileLatency(us), "), std::string::npos) << out;
  EXPECT_NE(out.find("[READ], Return=OK, 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[READ], Return=NOT_FOUND, 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[UPDATE], Return=OK, 1\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("[INSERT]"), std::string::npos) << out;

  f = open_memstream(&buf, &len);
  WriteHistogramCsv(f, "run", m, true);
  std::fclose(f);
  std::string csv(buf, len);
  free(buf);
  EXPECT_EQ(csv.rfind("phase,operation,latency_us_low,latency_us_high,count,fraction\n", 0), 0u);
  EXPECT_NE(csv.find("run,READ,1,2,1,0.500000000\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("run,READ,2,3,1,0.500000000\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("run,UPDATE,3,4,1,1.000000000\n"), std::string::npos) << csv;
}

}  // namespace
}  // namespace ycsb
