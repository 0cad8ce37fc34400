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

// The lanes an endpoint between two workers of this process uses: "tcp" in any lane's "tl/device" = kTcp.
ContextTransport ProbeOnNode(const Ucp& ucp) {
  ucp_context_h context = NewContext(ucp, false);
  if (context == nullptr) return ContextTransport::kUnknown;
  ucp_worker_params_t worker_params;
  std::memset(&worker_params, 0, sizeof(worker_params));
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
  ucp_worker_h target = nullptr, origin = nullptr;
  ucp_address_t* address = nullptr;
  size_t address_len = 0;
  ucp_ep_h ep = nullptr;
  ContextTransport verdict = ContextTransport::kUnknown;
  if (ucp.worker_create(context, &worker_params, &target) == UCS_OK &&
      ucp.worker_create(context, &worker_params, &origin) == UCS_OK &&
      ucp.worker_get_address(target, &address, &address_len) == UCS_OK) {
    ucp_ep_params_t ep_params;
    std::memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address = address;
    if (ucp.ep_create(origin, &ep_params, &ep) == UCS_OK) {
      int lanes = 0, tcp_lanes = 0;
      // Each lane prints as "lane[i]: <rsc>:<tl>/<device> ...".
      ForLinesWith(Capture([&](FILE* f) { ucp.ep_print_info(ep, f); }), "lane[", [&](const std::string& line) {
        ++lanes;
        if (line.find(":tcp/") != std::string::npos) ++tcp_lanes;
      });
      if (lanes > 0) verdict = tcp_lanes > 0 ? ContextTransport::kTcp : ContextTransport::kNoTcp;
      // Nothing was sent, so the close completes once connection set-up (if any) settles; both ends are ours.
      void* request = ucp.ep_close_nb(ep, UCP_EP_CLOSE_MODE_FLUSH);
      if (UCS_PTR_IS_PTR(request)) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (ucp.request_check_status(request) == UCS_INPROGRESS &&
               std::chrono::steady_clock::now() < deadline) {
          ucp.worker_progress(origin);
          ucp.worker_progress(target);
        }
        if (ucp.request_check_status(request) == UCS_INPROGRESS) {
          // Cannot happen with both ends progressed; if it does, leak the probe rather than free in-use state.
          return verdict;
        }
        ucp.request_free(request);
      }
    }
  }
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

ContextTransport ProbeContextTransport(bool some_peer_off_node) {
  Ucp ucp;
  bool loaded = false;
  if (!ucp.Load(&loaded)) return loaded ? ContextTransport::kUnknown : ContextTransport::kNotUcx;
  ContextTransport on_node = ProbeOnNode(ucp);
  if (on_node != ContextTransport::kNoTcp || !some_peer_off_node) return on_node;
  return ProbeNetwork(ucp);
}

}  // namespace smc
