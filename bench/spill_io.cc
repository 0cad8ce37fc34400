// bench_spill_io: the measurement behind the SSD tier's adaptive I/O threshold (issue 5; paper 000 Fig. 4-5:
// mmap-ed I/O for small slab classes, buffered pread/pwrite for large ones). Plain POSIX, no SHMEM.
//
//   build/bench/bench_spill_io [--dir DIR] [--file-mb 128] [--sizes 64,128,...,1M] [--reads 2000]
//                              [--cold-reads 200] [--write] [--csv FILE] [--crossover-csv FILE]
//
// One file of --file-mb MiB is written in DIR (default $TMPDIR or /tmp; use the spill directory's file system)
// with pwrite of 1 MiB chunks and fdatasync'ed, then read back whole (page cache warm). For every record size
// (powers of two, 64 B .. 1 MiB by default) it times single random reads of that many bytes into a heap buffer:
//
//   pread       one pread(2) at the offset (what the spill store does today: one pread per record)
//   mmap_fault  memcpy from a MAP_SHARED/PROT_READ mapping of the whole file made fresh for each pass, so every
//               read touches pages this mapping has not mapped yet: the read pays its (minor, when the page cache
//               is warm) page faults. This is what a tier that maps its segments pays for a record it reads
//               once (a flash hit is promoted back to RAM and its flash copy dropped).
//   mmap_hot    memcpy from one mapping made with MAP_POPULATE and kept: no faults, the lower bound of mmap.
//
// Offsets: the file is cut into slots of max(2 MiB, 2 x size rounded to pages); each pass visits distinct
// slots in random order and reads at a random 8-byte-aligned offset inside the slot (records are 8-aligned), so
// no two reads of a pass share a page-cache folio (folios are naturally aligned and at most 2 MiB; on recent
// kernels one fault maps the whole folio, e.g. ext4 large folios). So `mmap_fault` is the worst case of mmap:
// every read takes a fault; a tier reading many records of one segment through one mapping pays fewer (between
// mmap_fault and mmap_hot). The page faults each read took (getrusage) are reported. Warm: the page cache holds the whole file (checked
// with mincore, `resident_pct`). Cold (--cold-reads N > 0): before each pass of each method and size the
// file is dropped from the page cache with posix_fadvise(POSIX_FADV_DONTNEED) (mappings unmapped first); mincore
// right after tells whether it took effect (resident_pct; `cold_effective` in the log). A cold read then waits
// for the device (plus whatever read-ahead / fault-around the kernel adds).
//
// --write adds the write side, 1 MiB per call into a second file of 32 MiB: pwrite, pwrite+fdatasync, memcpy
// into a MAP_SHARED mapping (first touch of each page), memcpy + msync(MS_SYNC).
//
// CSV (--csv FILE, else `csv,` lines on stdout):
//   cache,method,record_bytes,n,mean_us,p50_us,p99_us,min_us,resident_pct,minflt_per_read,majflt_per_read,
//   file_mb,fs_type
// cache = warm | cold | write. Crossover (--crossover-csv FILE, else `crossover,` lines):
//   cache,versus,statistic,pread_from_bytes,mmap_from_bytes,winners
// pread_from_bytes = the smallest measured size from which on (it and every larger size) pread is at least as
// fast as the mmap variant `versus` by `statistic` (mean or p50), 0 when none; mmap_from_bytes the same for
// mmap being faster; winners = one letter per size, smallest first (P = pread, M = mmap).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "runner.h"

namespace {

struct Options {
  std::string dir;
  size_t file_mb = 128;
  std::vector<size_t> sizes;
  size_t reads = 2000;
  size_t cold_reads = 200;
  bool write_side = false;
  std::string csv_path, crossover_path;

  Options() {
    const char* tmp = std::getenv("TMPDIR");
    dir = (tmp && *tmp) ? tmp : "/tmp";
    for (size_t s = 64; s <= (1u << 20); s *= 2) sizes.push_back(s);
  }
  void Declare(bench::Cli* cli) {
    cli->Text("--dir", &dir, "DIR", "directory of the test file; use the spill dir's file system")
        .Default("$TMPDIR or /tmp");
    cli->Count("--file-mb", &file_mb, "test file size in MiB (>= 8 and >= 4x the largest size)");
    cli->SizeList("--sizes", &sizes, "record sizes").Default("64,128,...,1M");
    cli->Count("--reads", &reads, "warm reads per size and method", bench::Positive<size_t>());
    cli->Count("--cold-reads", &cold_reads, "cold reads per size and method, 0 = no cold run");
    cli->Flag("--write", &write_side, "also measure the write side (1 MiB pwrite vs memcpy into a mapping)");
    cli->Text("--csv", &csv_path, "FILE", "results CSV (default: csv, lines on stdout)");
    cli->Text("--crossover-csv", &crossover_path, "FILE", "crossover CSV (default: crossover, lines on stdout)");
    cli->Check([this] {
      std::sort(sizes.begin(), sizes.end());
      return file_mb < 8 || sizes.back() * 4 > (file_mb << 20)
                 ? std::string("need a file (--file-mb) of >= 8 MiB and >= 4x the largest size")
                 : std::string();
    });
  }
};

const char kAbout[] =
    "usage: bench_spill_io [options]   (no SHMEM: run it directly)\n"
    "Random reads of one record from a file: pread vs memcpy from mmap, warm and cold page cache (the SSD\n"
    "tier's adaptive I/O threshold); optionally the write side.\n";

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "bench_spill_io: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

// Share of the file's pages in the page cache (mincore on a mapping that is not touched).
double ResidentPct(int fd, size_t len) {
  void* m = mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return -1;
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> vec((len + page - 1) / page);
  double pct = -1;
  if (mincore(m, len, vec.data()) == 0) {
    size_t r = 0;
    for (unsigned char v : vec) r += v & 1;
    pct = 100.0 * static_cast<double>(r) / static_cast<double>(vec.size());
  }
  munmap(m, len);
  return pct;
}

struct Row {
  std::string cache, method;
  size_t bytes;
  bench::Summary s;
  double resident_pct;
  double minflt = -1, majflt = -1;  // page faults per read (getrusage deltas over the timed loops)
};

struct Faults {
  long min = 0, maj = 0;
  static Faults Now() {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return {u.ru_minflt, u.ru_majflt};
  }
  // Adds the faults taken since `since`.
  void AddSince(const Faults& since) {
    Faults now = Now();
    min += now.min - since.min;
    maj += now.maj - since.maj;
  }
};

volatile uint64_t g_sink;

// The measurement on one test file (unlinked at once: gone when the program exits, whatever happens).
class IoBench {
 public:
  explicit IoBench(const Options& o)
      : o_(o), file_bytes_(o.file_mb << 20), page_(static_cast<size_t>(sysconf(_SC_PAGESIZE))), rng_(12345),
        chunk_(1 << 20), buf_(o.sizes.back() + 64) {
    for (size_t i = 0; i < chunk_.size(); i += 8) {
      uint64_t x = rng_();
      std::memcpy(&chunk_[i], &x, 8);
    }
    std::string path = o.dir + "/shmemcache-spill-io-" + std::to_string(getpid()) + ".dat";
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd_ < 0) Die(path.c_str());
    unlink(path.c_str());
  }
  ~IoBench() { close(fd_); }

  // Creates the file: pwrite of 1 MiB chunks (timed: the write side's plain pwrite), fdatasync (clean pages, so
  // that DONTNEED can drop them later), then one read of the whole file (page cache warm).
  void CreateFile() {
    std::vector<uint64_t> t;
    for (size_t off = 0; off < file_bytes_; off += chunk_.size()) {
      chunk_[0] = static_cast<uint8_t>(off >> 20);
      uint64_t t0 = bench::now_ns();
      if (pwrite(fd_, chunk_.data(), chunk_.size(), static_cast<off_t>(off)) != static_cast<ssize_t>(chunk_.size()))
        Die("pwrite");
      t.push_back(bench::now_ns() - t0);
    }
    if (fdatasync(fd_) != 0) Die("fdatasync");
    if (o_.write_side) rows_.push_back({"write", "pwrite", chunk_.size(), bench::summarize_ns(t), -1});
    WarmAll();
  }

  // Warm page cache: pread, a fresh mapping per pass (mmap_fault), one populated mapping (mmap_hot), pass by
  // pass interleaved so that drift on a shared machine hits all three alike.
  void MeasureWarm() {
    const double resident = ResidentPct(fd_, file_bytes_);
    std::printf("# warm: %.1f%% of the file resident in the page cache\n", resident);
    const uint8_t* hot = Map(true);
    for (size_t size : o_.sizes) {
      size_t count = o_.reads;
      if (size >= (256u << 10)) count = std::max<size_t>(count / 4, 64);  // keep the big sizes quick
      std::vector<uint64_t> tp, tf, th;
      Faults fp, ff, fh;
      for (const auto& offs : Passes(size, count)) {
        Faults a = Faults::Now();
        TimePread(offs, size, &tp);
        fp.AddSince(a);
        const uint8_t* m = Map(false);
        a = Faults::Now();
        TimeMmap(m, offs, size, &tf);
        ff.AddSince(a);
        Unmap(m);
        a = Faults::Now();
        TimeMmap(hot, offs, size, &th);
        fh.AddSince(a);
      }
      double n = static_cast<double>(tp.size());
      rows_.push_back({"warm", "pread", size, bench::summarize_ns(tp), resident, fp.min / n, fp.maj / n});
      rows_.push_back({"warm", "mmap_fault", size, bench::summarize_ns(tf), resident, ff.min / n, ff.maj / n});
      rows_.push_back({"warm", "mmap_hot", size, bench::summarize_ns(th), resident, fh.min / n, fh.maj / n});
    }
    Unmap(hot);
  }

  // Cold page cache: posix_fadvise(DONTNEED) before each pass of each method and size; mincore right after says
  // whether it took effect. Returns whether it did (at most 5% resident); the file is warm again afterwards.
  bool MeasureCold() {
    double worst = 0;
    for (size_t size : o_.sizes) {
      size_t count = o_.cold_reads;
      if (size >= (256u << 10)) count = std::max<size_t>(count / 4, 16);
      for (int method = 0; method < 2; ++method) {
        std::vector<uint64_t> t;
        double res_sum = 0;
        int npass = 0;
        Faults f;
        for (const auto& offs : Passes(size, count)) {
          posix_fadvise(fd_, 0, static_cast<off_t>(file_bytes_), POSIX_FADV_DONTNEED);
          double res = ResidentPct(fd_, file_bytes_);
          res_sum += res;
          ++npass;
          worst = std::max(worst, res);
          const uint8_t* m = method == 0 ? nullptr : Map(false);
          Faults a = Faults::Now();
          if (method == 0) TimePread(offs, size, &t);
          else TimeMmap(m, offs, size, &t);
          f.AddSince(a);
          if (m) Unmap(m);
        }
        double n = static_cast<double>(t.size());
        rows_.push_back({"cold", method == 0 ? "pread" : "mmap_fault", size, bench::summarize_ns(t),
                         npass ? res_sum / npass : -1, f.min / n, f.maj / n});
      }
    }
    const bool effective = worst < 5.0;
    std::printf("# cold: posix_fadvise(DONTNEED) before each pass; resident afterwards at most %.1f%% -> %s\n",
                worst, effective ? "cold_effective=yes" : "cold_effective=no (numbers are not cold reads)");
    WarmAll();
    return effective;
  }

  // 1 MiB per call into a second file of 32 MiB: pwrite+fdatasync, memcpy into a MAP_SHARED mapping (first
  // touch of each page), memcpy + msync(MS_SYNC).
  void MeasureWrite() {
    const size_t wbytes = 32u << 20, n = wbytes / chunk_.size();
    std::string p2 = o_.dir + "/shmemcache-spill-io-" + std::to_string(getpid()) + ".w";
    int fd2 = open(p2.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd2 < 0) Die(p2.c_str());
    unlink(p2.c_str());
    std::vector<uint64_t> t;
    for (size_t i = 0; i < n; ++i) {
      uint64_t t0 = bench::now_ns();
      if (pwrite(fd2, chunk_.data(), chunk_.size(), static_cast<off_t>(i * chunk_.size())) < 0) Die("pwrite");
      if (fdatasync(fd2) != 0) Die("fdatasync");
      t.push_back(bench::now_ns() - t0);
    }
    rows_.push_back({"write", "pwrite+fdatasync", chunk_.size(), bench::summarize_ns(t), -1});
    for (int sync = 0; sync < 2; ++sync) {
      if (ftruncate(fd2, 0) != 0 || ftruncate(fd2, static_cast<off_t>(wbytes)) != 0) Die("ftruncate");
      void* m = mmap(nullptr, wbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, 0);
      if (m == MAP_FAILED) Die("mmap (write)");
      t.clear();
      for (size_t i = 0; i < n; ++i) {
        uint8_t* dst = static_cast<uint8_t*>(m) + i * chunk_.size();
        uint64_t t0 = bench::now_ns();
        std::memcpy(dst, chunk_.data(), chunk_.size());
        if (sync && msync(dst, chunk_.size(), MS_SYNC) != 0) Die("msync");
        t.push_back(bench::now_ns() - t0);
      }
      munmap(m, wbytes);
      rows_.push_back({"write", sync ? "mmap_memcpy+msync" : "mmap_memcpy", chunk_.size(), bench::summarize_ns(t), -1});
    }
    close(fd2);
  }

  const std::vector<Row>& rows() const { return rows_; }

 private:
  void WarmAll() {
    for (size_t off = 0; off < file_bytes_; off += chunk_.size())
      if (pread(fd_, chunk_.data(), chunk_.size(), static_cast<off_t>(off)) < 0) Die("pread");
  }

  // Offsets for `count` reads in passes of distinct slots of max(2 MiB, 2 x size in pages): page-cache folios
  // are naturally aligned and at most PMD-sized, so two reads of a pass never share a folio (a fault maps the
  // whole folio on recent kernels, e.g. ext4 large folios). Reads are at random 8-aligned offsets in the slot.
  std::vector<std::vector<size_t>> Passes(size_t size, size_t count) {
    size_t rounded = (size + page_ - 1) / page_ * page_;
    size_t slot = std::max<size_t>(2u << 20, 2 * rounded), nslots = file_bytes_ / slot;
    std::vector<std::vector<size_t>> passes;
    std::vector<size_t> perm(nslots);
    for (size_t i = 0; i < nslots; ++i) perm[i] = i;
    while (count > 0) {
      std::shuffle(perm.begin(), perm.end(), rng_);
      size_t n = std::min(count, nslots);
      std::vector<size_t> p(n);
      for (size_t i = 0; i < n; ++i) {
        size_t room = (slot - size) / 8;
        p[i] = perm[i] * slot + (room ? (rng_() % room) * 8 : 0);
      }
      passes.push_back(std::move(p));
      count -= n;
    }
    return passes;
  }

  void TimePread(const std::vector<size_t>& offs, size_t size, std::vector<uint64_t>* t) {
    for (size_t off : offs) {
      uint64_t t0 = bench::now_ns();
      ssize_t r = pread(fd_, buf_.data(), size, static_cast<off_t>(off));
      uint64_t t1 = bench::now_ns();
      if (r != static_cast<ssize_t>(size)) Die("pread (short)");
      g_sink += buf_[0] ^ buf_[size - 1];
      t->push_back(t1 - t0);
    }
  }
  void TimeMmap(const uint8_t* m, const std::vector<size_t>& offs, size_t size, std::vector<uint64_t>* t) {
    for (size_t off : offs) {
      uint64_t t0 = bench::now_ns();
      std::memcpy(buf_.data(), m + off, size);
      uint64_t t1 = bench::now_ns();
      g_sink += buf_[0] ^ buf_[size - 1];
      t->push_back(t1 - t0);
    }
  }
  const uint8_t* Map(bool populate) {
    void* m = mmap(nullptr, file_bytes_, PROT_READ, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd_, 0);
    if (m == MAP_FAILED) Die("mmap");
    return static_cast<const uint8_t*>(m);
  }
  void Unmap(const uint8_t* m) { munmap(const_cast<uint8_t*>(m), file_bytes_); }

  const Options& o_;
  const size_t file_bytes_, page_;
  std::mt19937_64 rng_;
  std::vector<uint8_t> chunk_, buf_;
  int fd_ = -1;
  std::vector<Row> rows_;
};

void PrintTable(const std::vector<Row>& rows) {
  std::printf("\n%-6s %-18s %9s %6s %10s %10s %10s %8s %8s\n", "cache", "method", "bytes", "n", "mean_us",
              "p50_us", "p99_us", "minflt/r", "majflt/r");
  for (const Row& r : rows)
    std::printf("%-6s %-18s %9s %6zu %10.3f %10.3f %10.3f %8.2f %8.2f\n", r.cache.c_str(), r.method.c_str(),
                bench::format_size(r.bytes).c_str(), r.s.n, r.s.mean_us, r.s.p50_us, r.s.p99_us, r.minflt,
                r.majflt);
}

void WriteCsv(const Options& o, const std::string& fs, const std::vector<Row>& rows) {
  FILE* csv = o.csv_path.empty() ? stdout : std::fopen(o.csv_path.c_str(), "w");
  if (!csv) Die(o.csv_path.c_str());
  const char* pre = o.csv_path.empty() ? "csv," : "";
  std::fprintf(csv, "%scache,method,record_bytes,n,mean_us,p50_us,p99_us,min_us,resident_pct,minflt_per_read,"
               "majflt_per_read,file_mb,fs_type\n",
               pre);
  for (const Row& r : rows)
    std::fprintf(csv, "%s%s,%s,%zu,%zu,%.4f,%.4f,%.4f,%.4f,%.1f,%.3f,%.3f,%zu,%s\n", pre, r.cache.c_str(),
                 r.method.c_str(), r.bytes, r.s.n, r.s.mean_us, r.s.p50_us, r.s.p99_us, r.s.min_us, r.resident_pct,
                 r.minflt, r.majflt, o.file_mb, fs.c_str());
  bench::CloseOutput(csv);
}

// Crossover: pread_from = the smallest size from which on (it and every larger size) pread is at least as fast
// as the mmap variant; mmap_from = the same for mmap being faster; winners = P/M per size, smallest first.
void WriteCrossover(const Options& o, const std::vector<Row>& rows) {
  FILE* xc = o.crossover_path.empty() ? stdout : std::fopen(o.crossover_path.c_str(), "w");
  if (!xc) Die(o.crossover_path.c_str());
  const char* xpre = o.crossover_path.empty() ? "crossover," : "";
  std::fprintf(xc, "%scache,versus,statistic,pread_from_bytes,mmap_from_bytes,winners\n", xpre);
  std::printf("\n");
  for (std::string cache : {"warm", "cold"}) {
    for (std::string versus : {"mmap_fault", "mmap_hot"}) {
      for (int stat = 0; stat < 2; ++stat) {
        std::map<size_t, double> pr, mm;
        for (const Row& r : rows) {
          if (r.cache != cache) continue;
          double v = stat ? r.s.p50_us : r.s.mean_us;
          if (r.method == "pread") pr[r.bytes] = v;
          else if (r.method == versus) mm[r.bytes] = v;
        }
        if (pr.empty() || mm.empty()) continue;
        size_t pread_from = 0, mmap_from = 0;
        bool p_run = true, m_run = true;
        std::string winners;
        for (auto it = pr.rbegin(); it != pr.rend(); ++it) {
          auto m = mm.find(it->first);
          if (m == mm.end()) continue;
          bool p_wins = it->second <= m->second;
          winners.insert(winners.begin(), p_wins ? 'P' : 'M');
          p_run = p_run && p_wins;
          m_run = m_run && !p_wins;
          if (p_run) pread_from = it->first;
          if (m_run) mmap_from = it->first;
        }
        const char* sname = stat ? "p50" : "mean";
        std::fprintf(xc, "%s%s,%s,%s,%zu,%zu,%s\n", xpre, cache.c_str(), versus.c_str(), sname, pread_from,
                     mmap_from, winners.c_str());
        std::printf("# crossover (%s, pread vs %s, by %s): winners by size %s (P = pread, M = mmap); pread from "
                    "%s, mmap from %s\n",
                    cache.c_str(), versus.c_str(), sname, winners.c_str(),
                    pread_from ? bench::format_size(pread_from).c_str() : "-",
                    mmap_from ? bench::format_size(mmap_from).c_str() : "-");
      }
    }
  }
  bench::CloseOutput(xc);
}

int Measure(const Options& o) {
  const std::string fs = bench::fs_type(o.dir);
  IoBench io(o);
  std::printf("# bench_spill_io: commit=%s cpu=%s cores=%ld host=%s date=%s loadavg=%s\n",
              bench::git_commit().c_str(), bench::cpu_model().c_str(), sysconf(_SC_NPROCESSORS_ONLN),
              bench::hostname().c_str(), bench::utc_timestamp().c_str(), bench::load_average().c_str());
  std::printf("# dir=%s fs_type=%s file=%zu MiB page=%ld timer_overhead_ns=%.0f\n", o.dir.c_str(), fs.c_str(),
              o.file_mb, sysconf(_SC_PAGESIZE), bench::timer_overhead_ns());
  io.CreateFile();
  io.MeasureWarm();
  const bool cold_effective = o.cold_reads > 0 && io.MeasureCold();
  if (o.write_side) io.MeasureWrite();
  PrintTable(io.rows());
  WriteCsv(o, fs, io.rows());
  WriteCrossover(o, io.rows());
  std::printf("# cold_effective=%s loadavg_end=%s\n", o.cold_reads ? (cold_effective ? "yes" : "no") : "not run",
              bench::load_average().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return bench::Main<Options>(argc, argv, "bench_spill_io", kAbout, Measure); }
