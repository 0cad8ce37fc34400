// YCSB 0.17 CoreWorkload for shmemcache: configuration from properties, key names, operation choice, key choice,
// and records serialised into one cache value. No SHMEM here (unit-tested in one process).
//
// Record format (one cache value per YCSB record), chosen with `recordformat`:
//   fields (default)  for each field in order field0..field{N-1}:
//                       u16 name length (little-endian), name bytes, u32 value length (little-endian), value bytes
//                     e.g. fieldcount=10, fieldlength=100: 10 * (2 + 6 + 4 + 100) = 1120 bytes.
//   raw               the field values concatenated, nothing else: fieldcount * fieldlength bytes (the paper's
//                     "128 B values" are fieldcount=1, fieldlength=128, recordformat=raw).
// Field values are random printable bytes (YCSB's RandomByteIterator) or, with dataintegrity=true, YCSB's
// deterministic value (key ':' field, then ':' + String.hashCode of everything so far, until fieldlength), which
// reads verify.
//
// Differences from YCSB that follow from a record being one value:
//   - UPDATE writes the whole record (YCSB's writeallfields=true); a single-field update would need a
//     read-modify-write of the value. READ always gets the whole record (readallfields=true).
//   - SCAN has no meaning on a hash cache: scanproportion > 0 is refused (workload E).
//   - Each client PE is one YCSB client thread. The load phase splits [insertstart, insertstart+insertcount)
//     into contiguous blocks, one per client; run-phase inserts of client r of C use key numbers
//     recordcount + r, recordcount + r + C, ... (YCSB threads share one counter), and a client's "latest" key
//     is the newest one it inserted itself, so it may pick another client's key that is not inserted yet
//     (counted as NOT_FOUND, as YCSB would report it).
#ifndef SHMEMCACHE_YCSB_WORKLOAD_H_
#define SHMEMCACHE_YCSB_WORKLOAD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "generators.h"
#include "properties.h"

namespace ycsb {

enum class OpType { kRead = 0, kUpdate, kInsert, kReadModifyWrite };
const char *OpTypeName(OpType op);  // "READ", "UPDATE", "INSERT", "READMODIFYWRITE" (trace-file spelling)
bool ParseOpType(const std::string &s, OpType *op);

struct WorkloadConfig {
  std::string table = "usertable";
  int64_t recordcount = 0;
  int64_t operationcount = 0;
  int64_t insertstart = 0;
  int64_t insertcount = 0;  // default recordcount - insertstart
  int64_t fieldcount = 10;
  std::string fieldnameprefix = "field";
  std::string fieldlengthdistribution = "constant";  // constant | uniform | zipfian
  int64_t fieldlength = 100;
  int64_t minfieldlength = 1;
  bool dataintegrity = false;
  double readproportion = 0.95;
  double updateproportion = 0.05;
  double insertproportion = 0.0;
  double readmodifywriteproportion = 0.0;
  std::string requestdistribution = "uniform";  // uniform | zipfian | latest | hotspot
  double zipfianconstant = ZipfianGenerator::kZipfianConstant;
  double hotspotdatafraction = 0.2;
  double hotspotopnfraction = 0.8;
  int64_t zeropadding = 1;
  bool orderedinserts = false;  // insertorder=ordered
  std::string keyprefix = "user";
  std::string recordformat = "fields";  // fields | raw
  uint64_t seed = 1;
  std::vector<std::string> fieldnames;
};

// Reads and validates the workload properties. Errors name the file and line (or -p) of the offending value.
// Unknown property names produce warnings ("FILE:LINE: unknown property 'x' (ignored)"); YCSB properties that
// do not apply here (db, threadcount, exporter, scan lengths, ...) are accepted silently.
bool ParseWorkloadConfig(const Properties &p, WorkloadConfig *config, std::vector<std::string> *warnings,
                         std::string *error);

// The YCSB key name of a key number: keyprefix + (orderedinserts ? n : fnvhash64(n)), zero-padded to zeropadding.
std::string BuildKeyName(const WorkloadConfig &c, int64_t keynum);

// [begin, end) of part `rank` of `parts` contiguous blocks of [start, start + count).
void SplitRange(int64_t start, int64_t count, int rank, int parts, int64_t *begin, int64_t *end);

class CoreWorkload {
 public:
  // One client's view: client `rank` of `clients`, random stream seeded from (seed, rank).
  CoreWorkload(const WorkloadConfig &config, int rank, int clients);

  const WorkloadConfig &config() const { return c_; }
  Random &rng() { return rng_; }

  // Key numbers this client inserts in the load phase.
  void LoadRange(int64_t *begin, int64_t *end) const;
  // This client's share of `total` run-phase operations.
  int64_t OperationShare(int64_t total) const;

  OpType NextOperation() { return static_cast<OpType>(operations_.Next(rng_)); }
  // A key number for READ/UPDATE/READMODIFYWRITE (YCSB nextKeynum: redraws keys not inserted yet).
  int64_t NextKeynum();
  // Run-phase insert: the next key number of this client, then Acknowledge it once the insert returned.
  int64_t NextInsertKeynum() { return inserts_.Next(); }
  void AcknowledgeInsert(int64_t keynum) { inserts_.Acknowledge(keynum); }
  int64_t LastInsertedKeynum() const { return inserts_.LastValue(); }

  std::string KeyName(int64_t keynum) const { return BuildKeyName(c_, keynum); }
  // A whole record for key, in the configured format.
  void BuildRecord(const std::string &key, std::string *out);
  // dataintegrity: true when `data` is exactly the record BuildRecord writes for key.
  bool VerifyRecord(const std::string &key, const char *data, size_t len) const;
  // The largest record BuildRecord can produce.
  size_t MaxRecordBytes() const;

 private:
  void AppendField(const std::string &key, size_t field, std::string *out);

  WorkloadConfig c_;
  int rank_, clients_;
  Random rng_;
  DiscreteGenerator operations_;
  AcknowledgedCounterGenerator inserts_;
  std::unique_ptr<NumberGenerator> keychooser_;
  std::unique_ptr<NumberGenerator> fieldlength_;
};

// Bytes of one record with constant field lengths (the largest one otherwise), in c's record format.
size_t RecordBytes(const WorkloadConfig &c);

// YCSB's buildDeterministicValue(key, fieldname) for a field of `size` bytes.
std::string DeterministicFieldValue(const std::string &key, const std::string &field, size_t size);

}  // namespace ycsb

#endif  // SHMEMCACHE_YCSB_WORKLOAD_H_
