#include "shmem/ucx_probe.h"

#include <dlfcn.h>
#include <ucp/api/ucp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

namespace smc {
namespace {

// The UCP entry points the probe needs, taken from the libucp the runtime already loaded (RTLD_NOLOAD): the
// answer is about the UCX this job runs on (a relocated OpenMPI may bring its own), and libshmemcache needs no
// link-time dependency on UCX. Types come from libucx-dev's header.
struct Ucp {
  void* handle = nullptr;
  decltype(&ucp_config_read) config_read = nullptr;
  decltype(&ucp_config_modify) config_modify = nullptr;
  decltype(&ucp_config_release) config_release = nullptr;
  decltype(&ucp_init_version) init_version = nullptr;
  decltype(&ucp_cleanup) cleanup = nullptr;
  decltype(&ucp_context_print_info) context_print_info = nullptr;
  decltype(&ucp_worker_create) worker_create = nullptr;
  decltype(&ucp_worker_destroy) worker_destroy = nullptr;
  decltype(&ucp_worker_get_address) worker_get_address = nullptr;
  decltype(&ucp_worker_release_address) worker_release_address = nullptr;
  decltype(&ucp_worker_progress) worker_progress = nullptr;
  decltype(&ucp_ep_create) ep_create = nullptr;
  decltype(&ucp_ep_close_nb) ep_close_nb = nullptr;
  decltype(&ucp_ep_print_info) ep_print_info = nullptr;
  decltype(&ucp_request_check_status) request_check_status = nullptr;
  decltype(&ucp_request_free) request_free = nullptr;

  ~Ucp() {
    if (handle != nullptr) dlclose(handle);
  }
  // False when UCX is not loaded in this process (*loaded = false) or lacks a symbol (*loaded = true).
  bool Load(bool* loaded) {
    handle = dlopen("libucp.so.0", RTLD_NOLOAD | RTLD_LAZY);
    *loaded = handle != nullptr;
    if (handle == nullptr) return false;
    bool ok = true;
    auto sym = [&](auto* fn, const char* name) {
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(handle, name));
      ok = ok && *fn != nullptr;
    };
    sym(&config_read, "ucp_config_read");
    sym(&config_modify, "ucp_config_modify");
    sym(&config_release, "ucp_config_release");
    sym(&init_version, "ucp_init_version");
    sym(&cleanup, "ucp_cleanup");
    sym(&context_print_info, "ucp_context_print_info");
    sym(&worker_create, "ucp_worker_create");
    sym(&worker_destroy, "ucp_worker_destroy");
    sym(&worker_get_address, "ucp_worker_get_address");
    sym(&worker_release_address, "ucp_worker_release_address");
    sym(&worker_progress, "ucp_worker_progress");
    sym(&ep_create, "ucp_ep_create");
    sym(&ep_close_nb, "ucp_ep_close_nb");
    sym(&ep_print_info, "ucp_ep_print_info");
    sym(&request_check_status, "ucp_request_check_status");
    sym(&request_free, "ucp_request_free");
    return ok;
  }
};

// Text a UCX print function writes to a FILE*.
template <typename Print>
std::string Capture(Print print) {
  char* buffer = nullptr;
  size_t size = 0;
  FILE* stream = open_memstream(&buffer, &size);
  if (stream == nullptr) return std::string();
  print(stream);
  std::fclose(stream);
  std::string text(buffer != nullptr ? buffer : "", size);
  std::free(buffer);
  return text;
}

// Calls each(line) for every line of text that contains marker.
template <typename Each>
void ForLinesWith(const std::string& text, const char* marker, Each each) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (line.find(marker) != std::string::npos) each(line);
    start = end + 1;
  }
}

// A UCP context as OpenMPI's spml builds it (prefix "OSHMEM", RMA + 32/64-bit AMO), with the given devices
// switched off. nullptr on failure.
ucp_context_h NewContext(const Ucp& ucp, bool network_only) {
  ucp_config_t* config = nullptr;
  if (ucp.config_read("OSHMEM", nullptr, &config) != UCS_OK) return nullptr;
  if (network_only) {
    for (const char* devices : {"SHM_DEVICES", "SELF_DEVICES", "ACC_DEVICES"}) ucp.config_modify(config, devices, "");
  }
  ucp_params_t params;
  std::memset(&params, 0, sizeof(params));
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64;
  ucp_context_h context = nullptr;
  ucs_status_t status = ucp.init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &context);
  ucp.config_release(config);
  return status == UCS_OK ? context : nullptr;
}

// The transport of a lane line "lane[i]: <rsc>:<tl>/<device> ...", or "" when the line is not understood.
std::string LaneTransport(const std::string& line) {
  size_t at = line.find("]:", line.find("lane["));
  if (at == std::string::npos) return std::string();
  at = line.find(':', at + 2);  // after the resource index
  const size_t slash = at == std::string::npos ? at : line.find('/', at);
  if (slash == std::string::npos) return std::string();
  return line.substr(at + 1, slash - at - 1);
}

// What ep_print_info says of an endpoint's lanes.
struct Lanes {
  int lanes = 0;
  int tcp_lanes = 0;
  int amo_lanes = 0;      // lanes marked "amo#N": they carry the endpoint's atomics
  int cpu_amo_lanes = 0;  // of those, shared-memory or self transports: UCX runs the atomic as a CPU atomic on
                          // the mapped (or own) memory
};

Lanes ReadLanes(const std::string& text) {
  Lanes l;
  ForLinesWith(text, "lane[", [&](const std::string& line) {
    ++l.lanes;
    if (line.find(":tcp/") != std::string::npos) ++l.tcp_lanes;
    if (line.find(" amo#") == std::string::npos) return;
    ++l.amo_lanes;
    const std::string tl = LaneTransport(line);
    if (tl == "sysv" || tl == "posix" || tl == "xpmem" || tl == "self") ++l.cpu_amo_lanes;
  });
  return l;
}

// Connects `origin` to the worker at `address`, reads its lanes and closes it (flush mode; both workers are
// this process's and progressed here). An endpoint that cannot be made has no lanes. False only when the close
// did not finish: the caller then leaks the probe rather than free state in use (cannot happen with both ends
// progressed).
bool EndpointLanes(const Ucp& ucp, ucp_worker_h origin, ucp_worker_h target, const ucp_address_t* address,
                   Lanes* lanes) {
  ucp_ep_params_t ep_params;
  std::memset(&ep_params, 0, sizeof(ep_params));
  ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  ep_params.address = address;
  ucp_ep_h ep = nullptr;
  *lanes = Lanes{};
  if (ucp.ep_create(origin, &ep_params, &ep) != UCS_OK) return true;
  *lanes = ReadLanes(Capture([&](FILE* f) { ucp.ep_print_info(ep, f); }));
  // Nothing was sent, so the close completes once connection set-up (if any) settles.
  void* request = ucp.ep_close_nb(ep, UCP_EP_CLOSE_MODE_FLUSH);
  if (!UCS_PTR_IS_PTR(request)) return true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (ucp.request_check_status(request) == UCS_INPROGRESS && std::chrono::steady_clock::now() < deadline) {
    ucp.worker_progress(origin);
    if (target != origin) ucp.worker_progress(target);
  }
  if (ucp.request_check_status(request) == UCS_INPROGRESS) return false;
  ucp.request_free(request);
  return true;
}

// The lanes an endpoint between two workers of this process uses: "tcp" in any lane's "tl/device" = kTcp. With
// *cpu_atomics: whether that endpoint's atomics, and those of a worker's endpoint to itself, all run on the CPU.
ContextTransport ProbeOnNode(const Ucp& ucp, bool* cpu_atomics) {
  *cpu_atomics = false;
  ucp_context_h context = NewContext(ucp, false);
  if (context == nullptr) return ContextTransport::kUnknown;
  ucp_worker_params_t worker_params;
  std::memset(&worker_params, 0, sizeof(worker_params));
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
  ucp_worker_h target = nullptr, origin = nullptr;
  ucp_address_t* address = nullptr;
  ucp_address_t* own_address = nullptr;
  size_t address_len = 0, own_address_len = 0;
  ContextTransport verdict = ContextTransport::kUnknown;
  if (ucp.worker_create(context, &worker_params, &target) == UCS_OK &&
      ucp.worker_create(context, &worker_params, &origin) == UCS_OK &&
      ucp.worker_get_address(target, &address, &address_len) == UCS_OK &&
      ucp.worker_get_address(origin, &own_address, &own_address_len) == UCS_OK) {
    Lanes peer, self;
    if (!EndpointLanes(ucp, origin, target, address, &peer)) return verdict;  // leaked (above)
    if (peer.lanes > 0) verdict = peer.tcp_lanes > 0 ? ContextTransport::kTcp : ContextTransport::kNoTcp;
    // A PE's atomics on its own words (a server's) go through its endpoint to itself: the self transport, or
    // whatever the atomic mode picked (a NIC's loopback under device atomics).
    if (!EndpointLanes(ucp, origin, origin, own_address, &self)) return verdict;
    *cpu_atomics = peer.amo_lanes > 0 && peer.cpu_amo_lanes == peer.amo_lanes && self.amo_lanes > 0 &&
                   self.cpu_amo_lanes == self.amo_lanes;
  }
  if (own_address != nullptr) ucp.worker_release_address(origin, own_address);
  if (address != nullptr) ucp.worker_release_address(target, address);
  if (origin != nullptr) ucp.worker_destroy(origin);
  if (target != nullptr) ucp.worker_destroy(target);
  ucp.cleanup(context);
  return verdict;
}

// With shared memory, self and accelerators off, every resource left is a network transport; each prints as
// "resource i : md m dev d flags xx <tl>/<device>". Only "tcp" ones = kTcp.
ContextTransport ProbeNetwork(const Ucp& ucp) {
  ucp_context_h context = NewContext(ucp, true);
  if (context == nullptr) return ContextTransport::kUnknown;
  int resources = 0, tcp_resources = 0;
  ForLinesWith(Capture([&](FILE* f) { ucp.context_print_info(context, f); }), "resource",
               [&](const std::string& line) {
                 ++resources;
                 if (line.find(" tcp/") != std::string::npos) ++tcp_resources;
               });
  ucp.cleanup(context);
  if (resources == 0) return ContextTransport::kUnknown;
  return tcp_resources == resources ? ContextTransport::kTcp : ContextTransport::kNoTcp;
}

}  // namespace

ContextTransport ProbeContextTransport(bool some_peer_off_node, bool* cpu_atomics) {
  *cpu_atomics = false;
  Ucp ucp;
  bool loaded = false;
  if (!ucp.Load(&loaded)) return loaded ? ContextTransport::kUnknown : ContextTransport::kNotUcx;
  ContextTransport on_node = ProbeOnNode(ucp, cpu_atomics);
  if (on_node != ContextTransport::kNoTcp || !some_peer_off_node) return on_node;
  return ProbeNetwork(ucp);
}

}  // namespace smc
