// The automatic private-context choice (OpenShmemTransport::CreateContext(-1)) on the transport the job really
// uses.
//   pe_context_choice private|default|any
// Every PE builds the library's context the automatic way, checks the choice against the expected one, then does
// what makes OpenMPI 4.1.4 hang in shmem_finalize when a private context runs over UCX tcp (a get, a CAS and a
// fetch on every PE, itself included: ucx_probe.h) and finalizes. A wrong choice towards "private" therefore
// shows as a hung job (the launcher's timeout fails the test), a wrong choice towards "default" as a failed check.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>

#include <shmem.h>

#include "common/pe_test.h"
#include "shmem/openshmem_transport.h"

namespace {
uint64_t g_words[4];  // symmetric (static data of the executable)
}  // namespace

int main(int argc, char** argv) {
  const char* expect = argc > 1 ? argv[1] : "any";
  if (std::strcmp(expect, "private") != 0 && std::strcmp(expect, "default") != 0 &&
      std::strcmp(expect, "any") != 0) {
    std::fprintf(stderr, "usage: pe_context_choice private|default|any\n");
    return 2;
  }
  std::unique_ptr<smc::OpenShmemTransport> transport = smc::OpenShmemTransport::Start();
  int me = transport->MyPe(), n = transport->NumPes();
  pe_test::Begin(me);
  g_words[0] = static_cast<uint64_t>(me);
  transport->Barrier();
  {
    auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<smc::Context> context = transport->CreateContext(-1);
    smc::Context& ctx = *context;
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (me == 0) {
      std::printf("pe_context_choice: %s context (expected %s), chosen in %.1f ms\n",
                  ctx.is_private() ? "private" : "default", expect, ms);
    }
    if (std::strcmp(expect, "any") != 0) PE_CHECK(ctx.is_private() == (std::strcmp(expect, "private") == 0));
    for (int pe = 0; pe < n; ++pe) {
      uint64_t got = ~0ull;
      ctx.Get(&got, &g_words[0], sizeof(got), pe);
      PE_CHECK(got == static_cast<uint64_t>(pe));
      PE_CHECK(ctx.CompareSwap(&g_words[1], 0, 0, pe) == 0);
      PE_CHECK(ctx.Fetch(&g_words[0], pe) == static_cast<uint64_t>(pe));
    }
    ctx.Quiet();
    transport->Barrier();
  }
  int rc = pe_test::Finish("pe_context_choice");
  if (transport->owns_runtime()) transport->StopRuntime();
  return rc;
}
