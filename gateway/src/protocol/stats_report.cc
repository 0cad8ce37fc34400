#include "protocol/stats_report.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "protocol/numbers.h"

namespace shmemcached {

namespace {

// The rows of one report, in memcached's order.
class StatLines {
 public:
  explicit StatLines(StatsRows* rows) : rows_(rows) {}
  void Add(std::string_view name, uint64_t value) { rows_->emplace_back(std::string(name), Decimal(value)); }
  void Add(std::string_view name, std::string_view value) {
    rows_->emplace_back(std::string(name), std::string(value));
  }

 private:
  StatsRows* rows_;
};

std::string Seconds(const timeval& tv) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%ld.%06ld", static_cast<long>(tv.tv_sec), static_cast<long>(tv.tv_usec));
  return buf;
}

// The answer batch's bursts since start, all threads: the calling thread's from its batch, the others' as
// their event loops last published them (net/gateway_server.cc).
std::pair<uint64_t, uint64_t> Bursts(GatewayContext& g) {
  uint64_t bursts = 0, operations = 0;
  for (GatewayContext* t : g.shared().contexts()) {
    bursts += t == &g ? g.batch().batches() : t->counters().bursts.get();
    operations += t == &g ? g.batch().batched_operations() : t->counters().burst_operations.get();
  }
  return {bursts, operations};
}

// Every thread's backend's own counters (Backend::ThreadRows), summed by name, in the order first seen.
std::vector<StatRow> ThreadRowsSummed(const GatewayShared& shared) {
  std::vector<StatRow> sum;
  for (GatewayContext* t : shared.contexts()) {
    std::vector<StatRow> mine;
    t->backend().ThreadRows(&mine);
    for (const StatRow& r : mine) {
      auto same = std::find_if(sum.begin(), sum.end(), [&](const StatRow& x) { return x.first == r.first; });
      if (same == sum.end()) {
        sum.push_back(r);
      } else {
        same->second += r.second;
      }
    }
  }
  return sum;
}

void GeneralStats(GatewayContext& g, StatsRows* rows) {
  const GatewayShared& shared = g.shared();
  const Counters c = shared.Total();
  uint64_t now_ms = g.clock().NowUnixMs();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  StatLines s(rows);
  s.Add("pid", static_cast<uint64_t>(getpid()));
  s.Add("uptime", (now_ms - g.start_unix_ms()) / 1000);
  s.Add("time", now_ms / 1000);
  s.Add("version", g.version());
  s.Add("pointer_size", 8 * sizeof(void*));
  s.Add("rusage_user", Seconds(usage.ru_utime));
  s.Add("rusage_system", Seconds(usage.ru_stime));
  s.Add("max_connections", g.max_connections());
  s.Add("curr_connections", c.curr_connections);
  s.Add("total_connections", c.total_connections);
  s.Add("rejected_connections", c.rejected_connections);
  s.Add("cmd_get", c.cmd_get);
  s.Add("cmd_set", c.cmd_set);
  s.Add("cmd_flush", c.cmd_flush);
  s.Add("cmd_touch", c.cmd_touch);
  s.Add("cmd_meta", c.cmd_meta);
  s.Add("get_hits", c.get_hits);
  s.Add("get_misses", c.get_misses);
  s.Add("delete_misses", c.delete_misses);
  s.Add("delete_hits", c.delete_hits);
  s.Add("incr_misses", c.incr_misses);
  s.Add("incr_hits", c.incr_hits);
  s.Add("decr_misses", c.decr_misses);
  s.Add("decr_hits", c.decr_hits);
  s.Add("cas_misses", c.cas_misses);
  s.Add("cas_hits", c.cas_hits);
  s.Add("cas_badval", c.cas_badval);
  s.Add("touch_hits", c.touch_hits);
  s.Add("touch_misses", c.touch_misses);
  s.Add("store_too_large", c.store_too_large);
  s.Add("store_no_memory", c.store_no_memory);
  s.Add("bytes_read", c.bytes_read);
  s.Add("bytes_written", c.bytes_written);
  s.Add("threads", shared.threads());
  s.Add("total_items", c.total_items);
  s.Add("gateway_multiget_calls", c.multiget_calls);
  // Cross-connection batching since start: bursts waited for, and the operations they held (answer_batch.h).
  auto [bursts, burst_operations] = Bursts(g);
  s.Add("gateway_bursts", bursts);
  s.Add("gateway_burst_operations", burst_operations);
  s.Add("gateway_poll_turns", c.poll_turns);
  s.Add("gateway_poll_idle_turns", c.poll_idle_turns);
  s.Add("gateway_poll_sleeps", c.poll_sleeps);
  s.Add("gateway_completion_wakeups", c.completion_wakeups);
  s.Add("gateway_poll_sleeps_woken", c.poll_sleeps_woken);
  s.Add("gateway_poll_arm_fallbacks", c.poll_arm_fallbacks);
  s.Add("gateway_backend_errors", c.backend_errors);
  if (shared.threads() > 1) {
    // Each event-loop thread's share (--threads): connections are spread over them round-robin.
    for (size_t i = 0; i < shared.threads(); ++i) {
      Counters t = shared.OfThread(i);
      std::string prefix = "gateway_thread_" + std::to_string(i) + "_";
      s.Add(prefix + "curr_connections", t.curr_connections);
      s.Add(prefix + "total_connections", t.total_connections);
      s.Add(prefix + "bytes_read", t.bytes_read);
    }
  }
  std::vector<StatRow> job;
  if (g.backend().Stats(&job) == Status::kOk) {
    for (const StatRow& r : job) s.Add(r.first, r.second);
  } else {
    s.Add("gateway_backend_stats_unavailable", 1);
  }
  for (const StatRow& r : ThreadRowsSummed(g.shared())) s.Add(r.first, r.second);
}

void SettingsStats(GatewayContext& g, std::string_view protocol, StatsRows* rows) {
  const Limits& l = g.limits();
  StatLines s(rows);
  s.Add("maxconns", g.max_connections());
  s.Add("verbosity", g.verbosity());
  s.Add("item_size_max", l.max_value_length);
  s.Add("key_size_max", l.max_key_length);
  s.Add("cas_enabled", "yes");
  s.Add("flush_enabled", g.backend().CanFlushAll() ? "yes" : "no");
  s.Add("binding_protocol", protocol);
  s.Add("gateway_max_get_line", l.max_get_line);
  s.Add("gateway_output_high_water", l.output_high_water);
  s.Add("gateway_batch_keys", l.batch_keys);
  s.Add("gateway_batch_value_bytes", l.batch_value_bytes);
  s.Add("gateway_max_burst", l.max_burst);
}

}  // namespace

StatsKind CollectStats(GatewayContext& g, std::string_view sub, std::string_view protocol, StatsRows* rows) {
  g.batch().Complete();  // the counters include every command before this one (and `stats reset` clears them)
  if (sub.empty()) {
    GeneralStats(g, rows);
    return StatsKind::kRows;
  }
  if (sub == "reset") {
    g.shared().Reset();
    return StatsKind::kReset;
  }
  if (sub == "settings") {
    SettingsStats(g, protocol, rows);
    return StatsKind::kRows;
  }
  return StatsKind::kUnknown;
}

void ProcessStats(Session& s, Token* tokens, size_t ntokens) {
  StatsRows rows;
  std::string_view sub = ntokens == 2 ? std::string_view() : std::string_view(tokens[1].value);
  switch (CollectStats(s.gateway(), sub, "ascii", &rows)) {
    case StatsKind::kRows: {
      std::string text;
      for (const auto& row : rows) {
        text.append("STAT ");
        text.append(row.first);
        text.push_back(' ');
        text.append(row.second);
        text.append("\r\n");
      }
      text.append("END\r\n");
      s.out().Append(text);
      break;
    }
    case StatsKind::kReset: s.OutString("RESET"); break;
    case StatsKind::kUnknown: s.OutString("ERROR"); break;
  }
}

}  // namespace shmemcached
