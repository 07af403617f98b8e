// Staging of a step's inputs through pinned host memory, double-buffered.
//
// A step's BatchInputs are packed into one pinned buffer (layout: cuda_batch_layout) and go to
// the device in a single cudaMemcpyAsync on the compute stream, so the host returns at once and
// the layers' kernels are enqueued behind the copy. Two pinned buffers alternate, each with an
// event recorded after the copy that reads it: packing step N+1 only waits for the copy of step
// N-1, never for step N's compute. Under today's synchronous Engine::step that wait is always
// already satisfied (forward() ends by downloading the logits), so the second buffer costs
// nothing; it is what lets a split submit/collect forward (or a scheduler that prepares the next
// step while the GPU runs) pack N+1 while N is in flight without a race on host memory.
//
// The device side is one buffer reused by every step (stream order makes that safe), so its
// address is stable and CUDA graphs captured against it stay valid until it has to grow.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <memory>

#include "engine/backend/batch_inputs.h"
#include "engine/backend/cuda/cuda_buffer.h"
#include "engine/backend/cuda/cuda_memory_plan.h"

namespace sluice {

// Device addresses of one staged step's inputs (see BatchInputs for their shapes).
struct DeviceBatch {
  const int32_t* token_ids = nullptr;        // [num_tokens]
  const int32_t* positions = nullptr;        // [num_tokens]
  const int64_t* slot_mapping = nullptr;     // [num_tokens]
  const int32_t* query_start_loc = nullptr;  // [num_requests + 1]
  const int32_t* seq_lens = nullptr;         // [num_requests]
  const int32_t* block_tables = nullptr;     // [num_requests, max_blocks_per_request]
  const int32_t* logits_indices = nullptr;   // [num_logits_rows]
  const int32_t* state_slots = nullptr;      // [num_requests] (hybrid models)
};

// Two pinned host buffers and one device buffer of raw bytes.
class PinnedStaging {
 public:
  PinnedStaging() = default;

  // Makes the device buffer hold at least bytes. Returns true when it was reallocated, which
  // makes every device address handed out before (and graphs captured with them) stale.
  bool reserve_device(size_t bytes, const char* what);

  // Returns the next pinned buffer, grown to at least bytes, once the device has finished
  // copying from it the last time it was used.
  unsigned char* acquire(size_t bytes);

  // Enqueues the copy of the first bytes of the buffer acquire() returned to the device buffer,
  // and records the buffer's event. Returns the device buffer. Precondition: reserve_device with
  // at least bytes.
  void* commit(size_t bytes, cudaStream_t stream);

  size_t device_bytes() const { return device_.bytes(); }
  size_t host_bytes() const { return slots_[0].host.bytes() + slots_[1].host.bytes(); }

 private:
  struct Slot {
    PinnedBuffer host;
    std::unique_ptr<CudaEvent> copied;  // made on first use, on the device current then
    bool has_pending_copy = false;
  };
  std::array<Slot, 2> slots_;
  int current_ = 1;  // the slot acquire() last returned
  DeviceBuffer device_;
};

// Packs `inputs` into host memory at the offsets of `layout` (which must be
// cuda_batch_layout of its counts).
void pack_batch_inputs(const BatchInputs& inputs, const CudaBatchLayout& layout,
                       unsigned char* host);

// Returns the device addresses of the fields of a batch packed with `layout` at `device`.
DeviceBatch device_batch(const CudaBatchLayout& layout, const void* device);

}  // namespace sluice
