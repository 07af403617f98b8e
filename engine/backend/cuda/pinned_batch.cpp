#include "engine/backend/cuda/pinned_batch.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <vector>

namespace sluice {

bool PinnedStaging::reserve_device(size_t bytes, const char* what) {
  if (device_.get() && device_.bytes() >= bytes) return false;
  // Growth by half again avoids a reallocation (and graph recapture) per slightly larger step.
  const size_t grown = std::max(bytes, device_.bytes() + device_.bytes() / 2);
  device_.reset();
  device_ = DeviceBuffer(align_256(grown), what);
  return true;
}

unsigned char* PinnedStaging::acquire(size_t bytes) {
  current_ ^= 1;
  Slot& slot = slots_[static_cast<size_t>(current_)];
  if (slot.has_pending_copy) {
    SLUICE_CUDA_CHECK(cudaEventSynchronize(slot.copied->get()));
    slot.has_pending_copy = false;
  }
  if (slot.host.bytes() < bytes) slot.host = PinnedBuffer(align_256(bytes + bytes / 2));
  return slot.host.data();
}

void* PinnedStaging::commit(size_t bytes, cudaStream_t stream) {
  assert(device_.bytes() >= bytes);  // reserve_device came first
  Slot& slot = slots_[static_cast<size_t>(current_)];
  if (bytes > 0) {
    SLUICE_CUDA_CHECK(
        cudaMemcpyAsync(device_.get(), slot.host.data(), bytes, cudaMemcpyHostToDevice, stream));
  }
  if (!slot.copied) slot.copied = std::make_unique<CudaEvent>();
  SLUICE_CUDA_CHECK(cudaEventRecord(slot.copied->get(), stream));
  slot.has_pending_copy = true;
  return device_.get();
}

namespace {

template <typename T>
void put(unsigned char* host, size_t offset, const std::vector<T>& values) {
  if (!values.empty()) std::memcpy(host + offset, values.data(), values.size() * sizeof(T));
}

}  // namespace

void pack_batch_inputs(const BatchInputs& in, const CudaBatchLayout& layout, unsigned char* host) {
  put(host, layout.token_ids, in.token_ids);
  put(host, layout.positions, in.positions);
  put(host, layout.slot_mapping, in.slot_mapping);
  put(host, layout.query_start_loc, in.query_start_loc);
  put(host, layout.seq_lens, in.seq_lens);
  put(host, layout.block_tables, in.block_tables);
  put(host, layout.logits_indices, in.logits_indices);
  put(host, layout.state_slots, in.state_slots);
}

DeviceBatch device_batch(const CudaBatchLayout& layout, const void* device) {
  const auto* base = static_cast<const unsigned char*>(device);
  auto at = [base](size_t offset) { return base + offset; };
  DeviceBatch d;
  d.token_ids = reinterpret_cast<const int32_t*>(at(layout.token_ids));
  d.positions = reinterpret_cast<const int32_t*>(at(layout.positions));
  d.slot_mapping = reinterpret_cast<const int64_t*>(at(layout.slot_mapping));
  d.query_start_loc = reinterpret_cast<const int32_t*>(at(layout.query_start_loc));
  d.seq_lens = reinterpret_cast<const int32_t*>(at(layout.seq_lens));
  d.block_tables = reinterpret_cast<const int32_t*>(at(layout.block_tables));
  d.logits_indices = reinterpret_cast<const int32_t*>(at(layout.logits_indices));
  d.state_slots = reinterpret_cast<const int32_t*>(at(layout.state_slots));
  return d;
}

}  // namespace sluice
