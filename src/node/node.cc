#include "node/node.h"

#include <cstring>
#include <string>

#include "core/backoff.h"
#include "core/config.h"
#include "core/cpu_share.h"
#include "core/guard.h"
#include "node/agreement.h"
#include "node/init_checks.h"

namespace smc {

namespace {

// The configuration this PE passes: the caller's, or defaults plus environment. A variable that does not parse
// is this PE's own rejection (LastError() names it); the PE still takes part in the agreement.
Status LoadConfig(const shmemcache_config_t* config, shmemcache_config_t* cfg) {
  if (config == nullptr) return ConfigDefaults(cfg);
  *cfg = *config;
  return SHMEMCACHE_OK;
}

// CONFIG_ERROR after a failed agreement, with this PE's explanation (ExplainVerdict).
Status Refuse(const Verdict& verdict, const shmemcache_config_t* config, const std::string& own_error,
              const char* step, int me) {
  return Fail(SHMEMCACHE_CONFIG_ERROR, ExplainVerdict(verdict, config, own_error, step, me));
}

}  // namespace

Status Node::Start(Transport* transport, const shmemcache_config_t* config, std::unique_ptr<Node>* node,
                   const TestHooks& hooks) {
  shmemcache_config_t cfg;
  Status local = LoadConfig(config, &cfg);
  const int n_pes = transport->NumPes(), me = transport->MyPe();

  // 1. The configuration. PEs compare what they were given; everything is sized from its resolved form.
  shmemcache_config_t resolved = cfg;
  ResolveAutoSettings(&resolved, n_pes);
  SymmetricLayout layout;
  if (local == SHMEMCACHE_OK)
    local = CheckLocally(resolved, n_pes, me < resolved.num_servers, transport->SymmetricHeapBytes(), &layout);
  Verdict verdict = AgreeAll(transport, local == SHMEMCACHE_OK, &cfg);
  if (!verdict.ok()) return Refuse(verdict, &cfg, LastError(), "rejected the configuration", me);
  cfg = resolved;

  // 2. The symmetric allocation.
  void* base = transport->SymmetricAlloc(layout.total_bytes);
  verdict = AgreeAll(transport, base != nullptr, nullptr);
  if (!verdict.ok()) {
    if (base != nullptr) transport->SymmetricFree(base);
    return Refuse(verdict, nullptr,
                  "shmem_malloc of " + std::to_string(layout.total_bytes) +
                      " bytes failed: raise SMA_SYMMETRIC_SIZE (and SHMEM_SYMMETRIC_SIZE) to at least " +
                      Mib(layout.total_bytes + kHeapHeadroom + (64ull << 20)) +
                      " or lower SHMEMCACHE_SERVER_MEMORY_BYTES",
                  "could not allocate their symmetric memory", me);
  }

  // 3. This PE's server or client.
  std::unique_ptr<Node> n(new Node(transport, cfg, layout, static_cast<uint8_t*>(base), hooks));
  local = n->SetUp();
  verdict = AgreeAll(transport, local == SHMEMCACHE_OK, nullptr);
  if (!verdict.ok()) {
    const std::string own_error = LastError();
    n->TearDown();
    return Refuse(verdict, nullptr, own_error,
                  "could not set up their server or client (an unusable spill_dir, SHMEMCACHE_SPILL_DIR, or no "
                  "memory left)",
                  me);
  }
  transport->Barrier();  // every PE's memory is zeroed before anyone sends
  *node = std::move(n);
  return SHMEMCACHE_OK;
}

Node::Node(Transport* transport, const shmemcache_config_t& config, const SymmetricLayout& layout,
           uint8_t* symmetric, const TestHooks& hooks)
    : transport_(transport),
      config_(config),
      hooks_(hooks),
      layout_(layout),
      symmetric_(symmetric),
      my_pe_(transport->MyPe()),
      n_pes_(transport->NumPes()),
      is_server_(my_pe_ < config.num_servers) {
  if (config.spill_dir != nullptr) {
    spill_dir_ = config.spill_dir;
    config_.spill_dir = spill_dir_.c_str();
  }
}

Node::~Node() {
  // Local state only: the symmetric allocation is freed collectively, by Finalize or TearDown.
  server_.reset();
  clients_.Clear();
  client_pe_.reset();
  ctx_.reset();
}

Status Node::SetUp() {
  try {
    // Zero what this PE will use of its symmetric allocation. Clients never touch the arena or the table.
    const SymmetricLayout& l = layout_;
    std::memset(symmetric_, 0, l.table_offset);
    std::memset(symmetric_ + l.inbox_offset, 0, l.inbox_bytes);
    if (is_server_) {
      std::memset(symmetric_ + l.table_offset, 0, l.table_bytes);
      std::memset(symmetric_ + l.arena_offset, 0, l.arena_bytes);
    }
    // Collective the first time: every PE here, before the client's policy asks it.
    const TransportDescription description = transport_->Describe();
    // How this PE's waits behave (core/cpu_share.h), set before any wait of this PE (process-wide). Collective
    // too: the union of every PE's affinity mask.
    std::vector<int64_t> cpus = AffinityFlags();
    if (!transport_->MaxAll(&cpus)) cpus.assign(cpus.size(), 0);
    oversubscribed_ = ResolveOversubscribed(config_.oversubscribed, description.pes_on_node, UsableCpus(cpus));
    Deadline::SetSpinNanos(oversubscribed_ ? 0 : Deadline::kSpinNanos);
    if (oversubscribed_) transport_->YieldWhenIdle();
    // CPU atomics on block words (store/block.h): only if no PE of the job can update them any other way, so
    // every PE must map every server and have the runtime run its atomics on the CPU. Collective, like the
    // steps of Start; this PE then uses them unless its local_access is 0.
    bool maps_every_server = true;
    for (int s = 0; s < config_.num_servers; ++s)
      maps_every_server = maps_every_server && transport_->LocalPointer(symmetric_ + l.arena_offset, s) != nullptr;
    cpu_word_atomics_ = AgreeAll(transport_, description.cpu_atomics && maps_every_server, nullptr).ok() &&
                        config_.local_access != 0;
    ctx_ = transport_->CreateContext(config_.private_context);
    if (!is_server_) {
      for (int s = 0; config_.local_access == 1 && s < config_.num_servers; ++s)
        if (transport_->LocalPointer(symmetric_ + l.arena_offset, s) == nullptr)
          return Fail(SHMEMCACHE_CONFIG_ERROR,
                      "local_access is 1 (SHMEMCACHE_LOCAL_ACCESS) but server PE " + std::to_string(s) +
                          " cannot be mapped into this PE (shmem_ptr gave none: another node, or a network "
                          "transport); use -1 (auto: the mapping where it exists) or 0");
      client_pe_ = std::make_unique<ClientPe>(config_, layout_, symmetric_, transport_, ctx_.get(), client_rank(),
                                              cpu_word_atomics_);
      client();  // the initialising thread's, now: a directory that does not fit fails init, not a later call
      return SHMEMCACHE_OK;
    }
    server_ = std::make_unique<Server>(config_, layout_, symmetric_, transport_, ctx_.get(), my_pe_, num_clients(),
                                       EpochClock(hooks_.clock_offset_ms), cpu_word_atomics_);
    if (oversubscribed_) server_->YieldEachPass();
    server_->WakeArmedClients(hooks_.refuse_completion_fd);
    std::string spill_error;
    if (config_.spill_dir != nullptr && server_->AttachSpill(hooks_, &spill_error) != SHMEMCACHE_OK)
      return Fail(SHMEMCACHE_CONFIG_ERROR, "spill_dir (SHMEMCACHE_SPILL_DIR) is unusable: " + spill_error);
    return SHMEMCACHE_OK;
  } catch (const std::exception& e) {  // std::bad_alloc above all: the sizes passed every check but this node
    return Fail(SHMEMCACHE_CONFIG_ERROR,
                std::string("could not set up this PE's ") + (is_server_ ? "server" : "client") + " (" + e.what() +
                    "): lower SHMEMCACHE_SERVER_MEMORY_BYTES, SHMEMCACHE_DIRECTORY_ENTRIES or "
                    "SHMEMCACHE_DIRECTORY_WAYS");
  }
}

std::unique_ptr<Client> Node::MakeClient() {
  Context* ctx = ctx_.get();
  std::unique_ptr<Context> own;
  if (transport_->thread_multiple()) {
    // Other threads may come: this one gets a context of its own only where the main one is the library's own
    // (never over UCX tcp: shmem/ucx_probe.h); otherwise, or when the runtime has none to spare, it shares the
    // main one behind its lock.
    if (ctx_->is_private()) {
      own = transport_->CreateContext(1);
      if (!own->is_private()) own.reset();
    }
    ctx = own ? own.get() : &client_pe_->ctx;
  }
  return std::make_unique<Client>(config_, layout_, symmetric_, transport_, client_pe_.get(), ctx, std::move(own),
                                  client_rank(), EpochClock(hooks_.clock_offset_ms));
}

void Node::TearDown() {
  server_.reset();
  clients_.Clear();  // every thread's context goes here, before the main one and before the runtime may stop
  client_pe_.reset();
  ctx_.reset();
  transport_->SymmetricFree(symmetric_);
  symmetric_ = nullptr;
}

Status Node::Serve() {
  if (!served_) {
    served_ = true;
    serve_status_ = Guarded("shmemcache_serve", SHMEMCACHE_NO_SPACE, [&] { return server_->Serve(); });
  }
  return serve_status_;
}

void Node::Finalize() {
  if (finalized_) return;
  if (is_server_) {
    Serve();  // clients still talk to this server until they finalize
  } else {
    // Every wait inside is bounded and a failed server is not waited for; an exception (no memory) must not
    // keep this PE from the collective steps below.
    Guarded("shmemcache_finalize", SHMEMCACHE_NO_SPACE, [&] {
      client()->EndWakeUps();
      client()->SayGoodbye();
      return SHMEMCACHE_OK;
    });
  }
  ctx_->Quiet();
  transport_->Barrier();
  FillStats(&final_stats_);
  TearDown();
  finalized_ = true;
}

void Node::FillStats(shmemcache_stats_t* stats) {
  if (finalized_) {
    *stats = final_stats_;
    return;
  }
  *stats = shmemcache_stats_t{};
  if (client_pe_) {
    if (Client* mine = client()) mine->PollNotices();
    clients_.ForEach([stats](const Client& c) { c.FillStats(stats); });  // every thread's, summed
    Client::FillPeStats(client_pe_.get(), stats);
  }
  if (server_) server_->FillStats(stats);
}

}  // namespace smc
