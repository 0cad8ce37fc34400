#include "spill/segment_file.h"

namespace smc {

SegmentFile::~SegmentFile() {
  if (map_ != nullptr) ops_->Unmap(map_, segment_bytes_);
  if (fd_ >= 0) ops_->Close(fd_);
}

const uint8_t* SegmentFile::Map() {
  if (map_ == nullptr) map_ = ops_->Map(fd_, segment_bytes_);
  return map_;
}

}  // namespace smc
