#include "trace.h"

#include <fstream>
#include <sstream>

namespace ycsb {

bool ReadTrace(const std::string &path, int rank, int parts, std::vector<TraceOp> *ops, int64_t *total,
               std::string *error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot open the trace file";
    return false;
  }
  ops->clear();
  std::string line;
  int64_t lineno = 0, index = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line[b] == '#') continue;
    std::istringstream ls(line);
    std::string op, key, extra;
    ls >> op >> key;
    const std::string where = path + ":" + std::to_string(lineno);
    if (key.empty()) {
      *error = where + ": expected 'OP KEY', got '" + line + "'";
      return false;
    }
    if (ls >> extra) {
      *error = where + ": expected 'OP KEY', got more: '" + line + "'";
      return false;
    }
    TraceOp t;
    if (!ParseOpType(op, &t.op)) {
      if (op == "SCAN") {
        *error = where + ": SCAN operations do not map onto a hash cache (no key order); record traces with "
                         "scanproportion=0";
      } else {
        *error = where + ": unknown operation '" + op + "' (READ, UPDATE, INSERT or READMODIFYWRITE)";
      }
      return false;
    }
    if (index % parts == rank) {
      t.key = key;
      ops->push_back(std::move(t));
    }
    ++index;
  }
  if (in.bad()) {
    *error = path + ": read error";
    return false;
  }
  *total = index;
  return true;
}

}  // namespace ycsb
