// Kernel launchers return a KernelStatus: 0 on success, otherwise the cudaError_t value of the
// failed launch, so callers turn it into text with cudaGetErrorString.
//
// Conventions for every header in kernels/:
// - Launchers are host functions that take a cudaStream_t and never synchronise.
// - Each op has one templated kernel body; the element types T it is instantiated for are
//   float, __nv_bfloat16 and __half (activations and the KV cache), all in the op's .cu file.
// - Arithmetic accumulates in float whatever T is.
// - Headers are includable from plain C++ (g++): they declare launchers only.
// - The KV cache of one layer is laid out [num_blocks, block_size, num_kv_heads, head_dim] for
//   K and for V, so that one block is one contiguous chunk per layer (copy-on-write copies it
//   whole) and a token's K row for one KV head is head_dim contiguous elements.
#pragma once

namespace sluice::kernels {

using KernelStatus = int;
inline constexpr KernelStatus kKernelOk = 0;

}  // namespace sluice::kernels
