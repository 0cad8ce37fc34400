// Operation traces: one operation per line, "OP KEY", OP one of READ, UPDATE, INSERT, READMODIFYWRITE
// ('#' comments and blank lines are skipped). record-trace.sh writes them from the real YCSB's BasicDB output;
// `ycsb_trace_tool gen` writes them from the native generators; shmemcache_ycsb -trace replays them.
#ifndef SHMEMCACHE_YCSB_TRACE_H_
#define SHMEMCACHE_YCSB_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "workload.h"

namespace ycsb {

struct TraceOp {
  OpType op;
  std::string key;
};

// Reads the operations of `path` whose index i (counting operations, not lines) has i % parts == rank.
// Errors name the file and line. *total receives the number of operations in the whole file.
bool ReadTrace(const std::string &path, int rank, int parts, std::vector<TraceOp> *ops, int64_t *total,
               std::string *error);

}  // namespace ycsb

#endif  // SHMEMCACHE_YCSB_TRACE_H_
