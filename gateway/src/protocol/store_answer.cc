#include "protocol/store_answer.h"

#include <string_view>
#include <utility>

#include "protocol/binary_protocol.h"
#include "protocol/meta_protocol.h"
#include "protocol/storage.h"

namespace shmemcached {

namespace {

// The answer of one storage command; it owns the command (key and value) until then.
class StoreAnswer final : public DeferredAnswer {
 public:
  StoreAnswer(GatewayContext& gateway, std::unique_ptr<PendingStore> p, bool noreply)
      : gateway_(gateway), p_(std::move(p)), noreply_(noreply) {}

  void Start() override { store_.Start(gateway_, p_->request()); }
  bool Ready() override { return store_.Ready(); }
  void Write(ByteQueue& out) override {
    StoreOutcome outcome = store_.Finish();
    if (p_->binary) {
      AppendBinaryStoreAnswer(out, *p_, outcome, store_.cas());
      return;
    }
    if (p_->meta) {
      AppendMetaStoreAnswer(out, *p_, outcome, store_.cas());
      return;
    }
    if (noreply_) return;
    out.Append(StoreOutcomeLine(outcome));
    out.Append("\r\n", 2);
  }

 private:
  GatewayContext& gateway_;
  std::unique_ptr<PendingStore> p_;
  bool noreply_;  // text noreply (ms answers as its q flag says)
  StartedStore store_;  // declared last: finished before the value it sends is freed
};

}  // namespace

bool DeferStore(Session& s, std::unique_ptr<PendingStore>& p) {
  if (!StartedStore::Startable(p->request())) return false;
  DeferWrite(s, std::make_unique<StoreAnswer>(s.gateway(), std::move(p), s.noreply()));
  return true;
}

void DeferWrite(Session& s, std::unique_ptr<DeferredAnswer> answer) {
  // A value too large for a deferred get's buffer is read again when that get is answered: it must not see
  // this write (Session::reads_deferred).
  if (s.reads_deferred()) s.gateway().batch().Complete();
  s.Defer(std::move(answer), DeferredAnswer::kWrite);
}

}  // namespace shmemcached
