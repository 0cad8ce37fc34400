#include "workload.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace ycsb {

namespace {

// Properties this driver reads.
const char *const kKnown[] = {
    "table", "recordcount", "operationcount", "insertstart", "insertcount", "fieldcount", "fieldnameprefix",
    "fieldlengthdistribution", "fieldlength", "minfieldlength", "readallfields", "writeallfields",
    "dataintegrity", "readproportion", "updateproportion", "insertproportion", "scanproportion",
    "readmodifywriteproportion", "requestdistribution", "zipfianconstant", "hotspotdatafraction",
    "hotspotopnfraction", "zeropadding", "insertorder", "keyprefix", "recordformat", "seed",
    // driver-level (read in main)
    "histogram.csv", "histogram.cap_us", "hdrhistogram.percentiles", "strict",
};
// YCSB properties that have no meaning here; accepted without a warning so that YCSB's own workload files and
// command lines work unchanged.
const char *const kIgnored[] = {
    "workload", "db", "exporter", "exportfile", "measurementtype", "measurement.interval",
    "measurement.trackjvm", "measurement.raw.output_file", "measurement.raw.graph_output", "histogram.buckets",
    "timeseries.granularity", "reportlatencyforeacherror", "latencytrackederrors", "threadcount", "target",
    "maxexecutiontime", "status.interval", "maxscanlength", "minscanlength", "scanlengthdistribution",
    "fieldlengthhistogram", "core_workload_insertion_retry_limit", "core_workload_insertion_retry_interval",
    "exponential.percentile", "exponential.frac", "hdrhistogram.fileoutput", "hdrhistogram.output.path",
    "basicdb.verbose", "basicdb.simulatedelay", "basicdb.randomizedelay", "basicdb.count", "dotransactions",
    "debug", "fieldlengthhistogramfile", "insertionretrylimit", "insertionretryinterval",
};

bool Contains(const char *const *list, size_t n, const std::string &name) {
  for (size_t i = 0; i < n; ++i)
    if (name == list[i]) return true;
  return false;
}

void PutLe(std::string *out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetLe(const char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

}  // namespace

const char *OpTypeName(OpType op) {
  switch (op) {
    case OpType::kRead: return "READ";
    case OpType::kUpdate: return "UPDATE";
    case OpType::kInsert: return "INSERT";
    case OpType::kReadModifyWrite: return "READMODIFYWRITE";
  }
  return "?";
}

bool ParseOpType(const std::string &s, OpType *op) {
  if (s == "READ") *op = OpType::kRead;
  else if (s == "UPDATE") *op = OpType::kUpdate;
  else if (s == "INSERT") *op = OpType::kInsert;
  else if (s == "READMODIFYWRITE" || s == "READ-MODIFY-WRITE") *op = OpType::kReadModifyWrite;
  else return false;
  return true;
}

bool ParseWorkloadConfig(const Properties &p, WorkloadConfig *c, std::vector<std::string> *warnings,
                         std::string *error) {
  WorkloadConfig d;
  *c = d;
  for (const std::string &name : p.Names()) {
    if (Contains(kKnown, sizeof kKnown / sizeof *kKnown, name) ||
        Contains(kIgnored, sizeof kIgnored / sizeof *kIgnored, name))
      continue;
    if (warnings) warnings->push_back(p.Find(name)->origin + ": unknown property '" + name + "' (ignored)");
  }
  c->table = p.Get("table", d.table);
  if (!p.GetInt64("recordcount", 0, &c->recordcount, error)) return false;
  if (c->recordcount <= 0) {
    *error = p.Has("recordcount") ? BadValue(p, "recordcount", "must be a positive number of records")
                                  : "recordcount is not set: give it in the workload file or with -p recordcount=N";
    return false;
  }
  if (!p.GetInt64("operationcount", 0, &c->operationcount, error)) return false;
  if (c->operationcount < 0) {
    *error = BadValue(p, "operationcount", "must not be negative");
    return false;
  }
  if (!p.GetInt64("insertstart", 0, &c->insertstart, error)) return false;
  if (!p.GetInt64("insertcount", c->recordcount - c->insertstart, &c->insertcount, error)) return false;
  if (c->insertstart < 0 || c->insertcount <= 0 || c->insertstart + c->insertcount > c->recordcount) {
    *error = BadValue(p, p.Has("insertcount") ? "insertcount" : "insertstart",
                      "is invalid: need 0 <= insertstart, 0 < insertcount, insertstart + insertcount <= "
                      "recordcount (" + std::to_string(c->recordcount) + ")");
    return false;
  }
  if (!p.GetInt64("fieldcount", d.fieldcount, &c->fieldcount, error)) return false;
  if (c->fieldcount <= 0 || c->fieldcount > 65535) {
    *error = BadValue(p, "fieldcount", "must be between 1 and 65535");
    return false;
  }
  c->fieldnameprefix = p.Get("fieldnameprefix", d.fieldnameprefix);
  if (!p.GetChoice("fieldlengthdistribution", d.fieldlengthdistribution, {"constant", "uniform", "zipfian"},
                   &c->fieldlengthdistribution, error))
    return false;
  if (!p.GetInt64("fieldlength", d.fieldlength, &c->fieldlength, error)) return false;
  if (c->fieldlength <= 0 || c->fieldlength > (int64_t{1} << 30)) {
    *error = BadValue(p, "fieldlength", "must be between 1 and 2^30");
    return false;
  }
  if (!p.GetInt64("minfieldlength", d.minfieldlength, &c->minfieldlength, error)) return false;
  if (c->fieldlengthdistribution != "constant" && (c->minfieldlength < 1 || c->minfieldlength > c->fieldlength)) {
    *error = BadValue(p, "minfieldlength", "must be between 1 and fieldlength");
    return false;
  }
  bool readall = true, writeall = false;
  if (!p.GetBool("readallfields", true, &readall, error)) return false;
  if (!p.GetBool("writeallfields", false, &writeall, error)) return false;
  if (!p.GetBool("dataintegrity", false, &c->dataintegrity, error)) return false;
  if (c->dataintegrity && c->fieldlengthdistribution != "constant") {
    *error = BadValue(p, "fieldlengthdistribution", "must be constant when dataintegrity=true (as in YCSB)");
    return false;
  }
  double scan = 0;
  if (!p.GetDouble("readproportion", d.readproportion, &c->readproportion, error) ||
      !p.GetDouble("updateproportion", d.updateproportion, &c->updateproportion, error) ||
      !p.GetDouble("insertproportion", d.insertproportion, &c->insertproportion, error) ||
      !p.GetDouble("scanproportion", 0.0, &scan, error) ||
      !p.GetDouble("readmodifywriteproportion", d.readmodifywriteproportion, &c->readmodifywriteproportion,
                   error))
    return false;
  if (scan > 0) {
    *error = BadValue(p, "scanproportion",
                      "asks for SCAN operations, which do not map onto a hash cache (no key order to scan; YCSB "
                      "workload E): set scanproportion=0");
    return false;
  }
  for (const char *name : {"readproportion", "updateproportion", "insertproportion", "readmodifywriteproportion"}) {
    double v = 0;
    p.GetDouble(name, 0, &v, error);
    if (v < 0) {
      *error = BadValue(p, name, "must not be negative");
      return false;
    }
  }
  if (c->readproportion + c->updateproportion + c->insertproportion + c->readmodifywriteproportion <= 0) {
    *error = "every operation proportion is 0 (readproportion, updateproportion, insertproportion, "
             "readmodifywriteproportion): nothing to run";
    return false;
  }
  const PropertyValue *rd = p.Find("requestdistribution");
  if (rd && (rd->value == "sequential" || rd->value == "exponential")) {
    *error = BadValue(p, "requestdistribution", "is not supported by shmemcache_ycsb (use uniform, zipfian, "
                                                "latest or hotspot)");
    return false;
  }
  if (!p.GetChoice("requestdistribution", d.requestdistribution, {"uniform", "zipfian", "latest", "hotspot"},
                   &c->requestdistribution, error))
    return false;
  if (!p.GetDouble("zipfianconstant", d.zipfianconstant, &c->zipfianconstant, error)) return false;
  if (!(c->zipfianconstant > 0 && c->zipfianconstant < 1)) {
    *error = BadValue(p, "zipfianconstant", "must be strictly between 0 and 1 (Gray et al.'s generator)");
    return false;
  }
  if (!p.GetDouble("hotspotdatafraction", d.hotspotdatafraction, &c->hotspotdatafraction, error) ||
      !p.GetDouble("hotspotopnfraction", d.hotspotopnfraction, &c->hotspotopnfraction, error))
    return false;
  if (c->requestdistribution == "hotspot") {
    if (c->hotspotdatafraction < 0 || c->hotspotdatafraction > 1) {
      *error = BadValue(p, "hotspotdatafraction", "must be between 0 and 1");
      return false;
    }
    if (c->hotspotopnfraction < 0 || c->hotspotopnfraction > 1) {
      *error = BadValue(p, "hotspotopnfraction", "must be between 0 and 1");
      return false;
    }
    int64_t hot = static_cast<int64_t>(static_cast<double>(c->insertcount) * c->hotspotdatafraction);
    if ((hot == 0 && c->hotspotopnfraction > 0) || (hot == c->insertcount && c->hotspotopnfraction < 1)) {
      *error = BadValue(p, "hotspotdatafraction", "leaves the hot or the cold set empty for " +
                                                      std::to_string(c->insertcount) + " records");
      return false;
    }
  }
  if (!p.GetInt64("zeropadding", d.zeropadding, &c->zeropadding, error)) return false;
  if (c->zeropadding < 1 || c->zeropadding > 200) {
    *error = BadValue(p, "zeropadding", "must be between 1 and 200");
    return false;
  }
  std::string order;
  if (!p.GetChoice("insertorder", "hashed", {"hashed", "ordered"}, &order, error)) return false;
  c->orderedinserts = order == "ordered";
  c->keyprefix = p.Get("keyprefix", d.keyprefix);
  if (!p.GetChoice("recordformat", d.recordformat, {"fields", "raw"}, &c->recordformat, error)) return false;
  int64_t seed = 1;
  if (!p.GetInt64("seed", 1, &seed, error)) return false;
  c->seed = static_cast<uint64_t>(seed);
  (void)readall;
  (void)writeall;
  c->fieldnames.clear();
  for (int64_t i = 0; i < c->fieldcount; ++i) c->fieldnames.push_back(c->fieldnameprefix + std::to_string(i));
  return true;
}

std::string BuildKeyName(const WorkloadConfig &c, int64_t keynum) {
  if (!c.orderedinserts) keynum = FnvHash64(keynum);
  std::string value = std::to_string(keynum);
  std::string key = c.keyprefix;
  for (int64_t fill = c.zeropadding - static_cast<int64_t>(value.size()); fill > 0; --fill) key.push_back('0');
  return key + value;
}

void SplitRange(int64_t start, int64_t count, int rank, int parts, int64_t *begin, int64_t *end) {
  *begin = start + count * rank / parts;
  *end = start + count * (rank + 1) / parts;
}

std::string DeterministicFieldValue(const std::string &key, const std::string &field, size_t size) {
  std::string sb;
  sb.reserve(size + 16);
  sb += key;
  sb += ':';
  sb += field;
  while (sb.size() < size) {
    sb += ':';
    sb += std::to_string(JavaStringHash(sb));
  }
  sb.resize(size);
  return sb;
}

CoreWorkload::CoreWorkload(const WorkloadConfig &config, int rank, int clients)
    : c_(config),
      rank_(rank),
      clients_(clients),
      rng_(config.seed * 0x100000001B3ull + static_cast<uint64_t>(rank) + 1),
      inserts_(config.recordcount, clients, rank) {
  if (c_.readproportion > 0) operations_.Add(c_.readproportion, static_cast<int>(OpType::kRead));
  if (c_.updateproportion > 0) operations_.Add(c_.updateproportion, static_cast<int>(OpType::kUpdate));
  if (c_.insertproportion > 0) operations_.Add(c_.insertproportion, static_cast<int>(OpType::kInsert));
  if (c_.readmodifywriteproportion > 0)
    operations_.Add(c_.readmodifywriteproportion, static_cast<int>(OpType::kReadModifyWrite));

  const int64_t lo = c_.insertstart, hi = c_.insertstart + c_.insertcount - 1;
  if (c_.requestdistribution == "uniform") {
    keychooser_.reset(new UniformLongGenerator(lo, hi));
  } else if (c_.requestdistribution == "zipfian") {
    // YCSB sizes the scrambled keyspace for the inserts it expects (2 is YCSB's fudge factor), so that the
    // popular keys do not move as records are added; keys not inserted yet are redrawn.
    int64_t expectednewkeys =
        static_cast<int32_t>(static_cast<double>(c_.operationcount) * c_.insertproportion * 2.0);
    keychooser_.reset(new ScrambledZipfianGenerator(lo, c_.insertstart + c_.insertcount + expectednewkeys,
                                                    c_.zipfianconstant));
  } else if (c_.requestdistribution == "latest") {
    keychooser_.reset(new SkewedLatestGenerator(&inserts_));
  } else {  // hotspot
    keychooser_.reset(new HotspotIntegerGenerator(lo, hi, c_.hotspotdatafraction, c_.hotspotopnfraction));
  }
  if (c_.fieldlengthdistribution == "uniform") {
    fieldlength_.reset(new UniformLongGenerator(c_.minfieldlength, c_.fieldlength));
  } else if (c_.fieldlengthdistribution == "zipfian") {
    fieldlength_.reset(new ZipfianGenerator(c_.minfieldlength, c_.fieldlength));
  } else {
    fieldlength_.reset(new ConstantGenerator(c_.fieldlength));
  }
}

void CoreWorkload::LoadRange(int64_t *begin, int64_t *end) const {
  SplitRange(c_.insertstart, c_.insertcount, rank_, clients_, begin, end);
}

int64_t CoreWorkload::OperationShare(int64_t total) const {
  int64_t b, e;
  SplitRange(0, total, rank_, clients_, &b, &e);
  return e - b;
}

int64_t CoreWorkload::NextKeynum() {
  int64_t keynum;
  do {
    keynum = keychooser_->Next(rng_);
  } while (keynum > inserts_.LastValue());
  return keynum;
}

void CoreWorkload::AppendField(const std::string &key, size_t field, std::string *out) {
  const size_t len = static_cast<size_t>(fieldlength_->Next(rng_));
  const bool framed = c_.recordformat == "fields";
  if (framed) {
    PutLe(out, c_.fieldnames[field].size(), 2);
    out->append(c_.fieldnames[field]);
    PutLe(out, len, 4);
  }
  if (c_.dataintegrity) {
    out->append(DeterministicFieldValue(key, c_.fieldnames[field], len));
  } else {
    size_t at = out->size();
    out->resize(at + len);
    rng_.FillPrintable(&(*out)[at], len);
  }
}

void CoreWorkload::BuildRecord(const std::string &key, std::string *out) {
  out->clear();
  for (size_t f = 0; f < c_.fieldnames.size(); ++f) AppendField(key, f, out);
}

bool CoreWorkload::VerifyRecord(const std::string &key, const char *data, size_t len) const {
  const bool framed = c_.recordformat == "fields";
  size_t at = 0;
  for (const std::string &name : c_.fieldnames) {
    if (framed) {
      if (len - at < 2) return false;
      size_t nl = GetLe(data + at, 2);
      at += 2;
      if (len - at < nl + 4 || std::memcmp(data + at, name.data(), nl) != 0 || nl != name.size()) return false;
      at += nl;
      size_t vl = GetLe(data + at, 4);
      at += 4;
      if (vl != static_cast<size_t>(c_.fieldlength)) return false;
    }
    const size_t vl = static_cast<size_t>(c_.fieldlength);
    if (len - at < vl) return false;
    std::string expect = DeterministicFieldValue(key, name, vl);
    if (std::memcmp(data + at, expect.data(), vl) != 0) return false;
    at += vl;
  }
  return at == len;
}

size_t RecordBytes(const WorkloadConfig &c) {
  size_t per = static_cast<size_t>(c.fieldlength);
  size_t total = 0;
  for (const std::string &name : c.fieldnames) total += per + (c.recordformat == "fields" ? 6 + name.size() : 0);
  return total;
}

size_t CoreWorkload::MaxRecordBytes() const { return RecordBytes(c_); }

}  // namespace ycsb
