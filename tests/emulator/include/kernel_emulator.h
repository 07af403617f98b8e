// The CPU kernel emulator: the CUDA kernels of kernels/ compiled as host C++ and run on the CPU,
// so CI machines without a GPU test their logic against the CPU backend (tests/gpu, label
// emulator). This header runs kernels; emulated_streams.h orders work, emulated_runtime.h is the
// runtime API, and cuda_runtime.h, cuda_fp16.h, cuda_bf16.h, library_types.h and cublas_v2.h in
// this folder stand in for the toolkit's headers.
//
// A launch runs its blocks one after another. The threads of a block are fibers that switch only
// at barriers: __syncthreads (the block), __syncwarp and every warp shuffle (the warp). In each
// round the warps go in a fresh pseudo-random order and each runs as far as it can, so warps drift
// apart as on a GPU. What that catches:
// - a missing __syncthreads: a warp reads shared memory another warp has not written yet, or has
//   already overwritten for its next phase;
// - divergent barriers and shuffles (some threads never arrive): reported as a deadlock, abort;
// - reads of memory nobody wrote: cudaMalloc (up to 64 MiB; larger blocks start as zeros) and
//   dynamic shared memory are filled with 0xff bytes (NaN in every float type, -1 in integers);
// - launch configurations a GPU refuses, and dynamic shared memory over 48 KiB without the
//   cudaFuncSetAttribute opt-in (cudaErrorInvalidValue, as on a GPU).
// What it does not model: timing; memory ordering between blocks (they run in sequence); the
// lower precision of fast intrinsics (__sincosf, exp2f are exact here); bank conflicts; static
// __shared__ variables are not re-poisoned between blocks. x86-64 only (fiber_switch.S).
#pragma once

#include <math.h>
#include <time.h>
#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "emulated_streams.h"
#include "emulated_types.h"

extern "C" void emu_fiber_switch(void** save_sp, void* next_sp);

namespace emu {

// ---- launch state ---------------------------------------------------------------------------

inline uint3 thread_idx, block_idx;
inline dim3 block_dim, grid_dim;

inline int pending_error = cudaSuccess;  // the sticky launch error cudaGetLastError returns
inline std::map<const void*, int>& max_dynamic_shared() {  // kernel -> opt-in bytes
  static std::map<const void*, int> opt_ins;
  return opt_ins;
}

constexpr size_t kDefaultDynamicSharedBytes = 48 * 1024;
constexpr int kMaxOptInSharedBytes = 227 * 1024;  // sm_90
constexpr unsigned char kPoison = 0xff;

// ---- fibers ---------------------------------------------------------------------------------

enum class Wait { kNone, kBlock, kWarp };

struct Fiber {
  void* sp = nullptr;
  bool is_done = false;
  Wait wait = Wait::kNone;                 // the barrier it waits at, if any
  unsigned long long wait_generation = 0;  // that barrier's generation when it arrived
  uint3 tid{};
};

constexpr size_t kStackBytes = 256 * 1024;

struct Block {
  std::vector<Fiber> fibers;
  std::vector<char*> stacks;
  unsigned int num_threads = 0;
  unsigned int current = 0;
  void* scheduler_sp = nullptr;
  const std::function<void()>* body = nullptr;
  unsigned long long progress = 0;  // arrivals at barriers and finished threads
  unsigned int block_arrived = 0;
  unsigned long long block_generation = 0;
  unsigned int warp_arrived[32] = {};
  unsigned long long warp_generation[32] = {};
  unsigned long long warp_slots[32][2][32] = {};  // double-buffered by shuffle parity
  unsigned int warp_shuffles[32] = {};
  std::vector<unsigned char> dynamic_shared;
  unsigned long long rng = 0x9E3779B97F4A7C15ull;
};
inline Block& block() {
  static Block b;
  return b;
}

inline void yield() {
  Block& b = block();
  emu_fiber_switch(&b.fibers[b.current].sp, b.scheduler_sp);
}

inline void fiber_entry() {
  Block& b = block();
  (*b.body)();
  b.fibers[b.current].is_done = true;
  ++b.progress;
  emu_fiber_switch(&b.fibers[b.current].sp, b.scheduler_sp);
  std::abort();  // a finished fiber is never resumed
}

// A waiting fiber is not resumed until its barrier's generation moves on (see run_block).
inline void syncthreads() {
  Block& b = block();
  const unsigned long long generation = b.block_generation;
  ++b.progress;
  if (++b.block_arrived == b.num_threads) {
    b.block_arrived = 0;
    ++b.block_generation;
    return;
  }
  b.fibers[b.current].wait = Wait::kBlock;
  b.fibers[b.current].wait_generation = generation;
  while (b.block_generation == generation) yield();
  b.fibers[b.current].wait = Wait::kNone;
}

inline void warp_barrier(unsigned int warp) {
  Block& b = block();
  const unsigned long long generation = b.warp_generation[warp];
  ++b.progress;
  const unsigned int warp_size = std::min(32u, b.num_threads - warp * 32);
  if (++b.warp_arrived[warp] == warp_size) {
    b.warp_arrived[warp] = 0;
    ++b.warp_generation[warp];
    return;
  }
  b.fibers[b.current].wait = Wait::kWarp;
  b.fibers[b.current].wait_generation = generation;
  while (b.warp_generation[warp] == generation) yield();
  b.fibers[b.current].wait = Wait::kNone;
}

// Every lane of the warp publishes value, then reads the one of lane source(lane). The slots
// alternate between two buffers, so one barrier per shuffle is enough: a lane that runs ahead to
// the next shuffle writes the other buffer, and cannot reach a third before every lane has
// passed the next barrier (and so has read this one).
template <typename T, typename Source>
T shuffle(unsigned int mask, T value, Source source) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>);
  Block& b = block();
  const unsigned int warp = b.current / 32, lane = b.current % 32;
  const unsigned int warp_size = std::min(32u, b.num_threads - warp * 32);
  if (mask != 0xffffffffu && mask != (warp_size == 32 ? 0xffffffffu : (1u << warp_size) - 1u)) {
    std::fprintf(stderr, "emu: a shuffle with mask %08x: only whole-warp shuffles are emulated\n",
                 mask);
    std::abort();
  }
  const unsigned int parity = b.warp_shuffles[warp] & 1u;
  unsigned long long bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  b.warp_slots[warp][parity][lane] = bits;
  if (b.warp_arrived[warp] + 1 == warp_size) ++b.warp_shuffles[warp];  // the last to arrive
  warp_barrier(warp);
  const unsigned int src = source(lane);
  const unsigned long long src_bits = b.warp_slots[warp][parity][src < warp_size ? src : lane];
  T out;
  std::memcpy(&out, &src_bits, sizeof(T));
  return out;
}

inline unsigned long long next_random(Block& b) {
  b.rng ^= b.rng << 13;
  b.rng ^= b.rng >> 7;
  b.rng ^= b.rng << 17;
  return b.rng;
}

inline void run_block(const std::function<void()>& body, unsigned int num_threads) {
  Block& b = block();
  b.fibers.assign(num_threads, Fiber{});
  while (b.stacks.size() < num_threads)
    b.stacks.push_back(static_cast<char*>(std::aligned_alloc(64, kStackBytes)));
  b.num_threads = num_threads;
  b.body = &body;
  b.block_arrived = 0;
  std::fill(std::begin(b.warp_arrived), std::end(b.warp_arrived), 0u);
  std::fill(std::begin(b.warp_shuffles), std::end(b.warp_shuffles), 0u);
  for (unsigned int i = 0; i < num_threads; ++i) {
    b.fibers[i].tid =
        uint3{i % block_dim.x, (i / block_dim.x) % block_dim.y, i / (block_dim.x * block_dim.y)};
    auto* top = reinterpret_cast<void**>(b.stacks[i] + kStackBytes);  // 16-byte aligned
    *--top = nullptr;                                // return address of fiber_entry's frame
    *--top = reinterpret_cast<void*>(&fiber_entry);  // where emu_fiber_switch returns to
    for (int r = 0; r < 6; ++r) *--top = nullptr;    // rbp, rbx, r12-r15
    b.fibers[i].sp = top;
  }
  const unsigned int num_warps = (num_threads + 31) / 32;
  std::vector<unsigned int> order(num_warps);
  for (unsigned int w = 0; w < num_warps; ++w) order[w] = w;
  unsigned int remaining = num_threads;
  int idle_rounds = 0;
  while (remaining > 0) {
    const unsigned long long round_start = b.progress;
    for (unsigned int w = num_warps; w > 1; --w) std::swap(order[w - 1], order[next_random(b) % w]);
    for (const unsigned int w : order) {
      const unsigned int end = std::min(num_threads, w * 32 + 32);
      while (true) {  // this warp runs until every lane waits at __syncthreads or is done
        const unsigned long long before = b.progress;
        for (unsigned int i = w * 32; i < end; ++i) {
          Fiber& f = b.fibers[i];
          if (f.is_done) continue;
          if (f.wait == Wait::kBlock && f.wait_generation == b.block_generation) continue;
          if (f.wait == Wait::kWarp && f.wait_generation == b.warp_generation[w]) continue;
          b.current = i;
          thread_idx = f.tid;
          emu_fiber_switch(&b.scheduler_sp, f.sp);
          if (f.is_done) --remaining;
        }
        if (b.progress == before) break;
      }
    }
    if (b.progress != round_start) {
      idle_rounds = 0;
    } else if (++idle_rounds > 2) {
      std::fprintf(stderr,
                   "emu: deadlock in block (%u,%u,%u): %u of %u threads wait at a barrier that "
                   "the others never reach (divergent __syncthreads or shuffle)\n",
                   block_idx.x, block_idx.y, block_idx.z, remaining, num_threads);
      std::abort();
    }
  }
}

// Queues kernel(args...) over the grid on stream, or records the error a GPU would give for the
// launch (at once, as a launch error is reported).
template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block_shape, size_t shared_bytes,
            cudaStream_t stream, Args&&... args) {
  const unsigned long long threads =
      static_cast<unsigned long long>(block_shape.x) * block_shape.y * block_shape.z;
  if (threads == 0 || threads > 1024 || block_shape.z > 64 || grid.x == 0 || grid.y == 0 ||
      grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535) {
    if (pending_error == cudaSuccess) pending_error = cudaErrorInvalidConfiguration;
    return;
  }
  const auto opt_in = max_dynamic_shared().find(reinterpret_cast<const void*>(kernel));
  const size_t shared_limit = opt_in == max_dynamic_shared().end()
                                  ? kDefaultDynamicSharedBytes
                                  : static_cast<size_t>(opt_in->second);
  if (shared_bytes > shared_limit) {
    if (pending_error == cudaSuccess) pending_error = cudaErrorInvalidValue;
    return;
  }
  // The kernel's parameters are copies made at launch, as on a GPU.
  submit(stream, [kernel, grid, block_shape, shared_bytes, threads,
                  params = std::tuple<Params...>(std::forward<Args>(args)...)] {
    const std::function<void()> body = [&] { std::apply(kernel, params); };
    grid_dim = grid;
    block_dim = block_shape;
    for (unsigned int z = 0; z < grid.z; ++z)
      for (unsigned int y = 0; y < grid.y; ++y)
        for (unsigned int x = 0; x < grid.x; ++x) {
          block_idx = uint3{x, y, z};
          block().dynamic_shared.assign(shared_bytes + 16, kPoison);
          run_block(body, static_cast<unsigned int>(threads));
        }
  });
}

template <typename T>
T* dynamic_shared() {
  return reinterpret_cast<T*>(block().dynamic_shared.data());
}

}  // namespace emu

#define threadIdx (::emu::thread_idx)
#define blockIdx (::emu::block_idx)
#define blockDim (::emu::block_dim)
#define gridDim (::emu::grid_dim)

// ---- device functions -----------------------------------------------------------------------

inline void __syncthreads() {
  emu::syncthreads();
}

// A warp's barrier (whole warps only, as the shuffles).
inline void __syncwarp(unsigned int mask = 0xffffffffu) {
  emu::shuffle(mask, 0, [](unsigned int lane) { return lane; });
}

template <typename T>
T __shfl_xor_sync(unsigned int mask, T value, int lane_mask, int width = 32) {
  return emu::shuffle(mask, value, [=](unsigned int lane) {
    const unsigned int src = lane ^ static_cast<unsigned int>(lane_mask);
    // A lane may read from its own or an earlier group of width lanes, not a later one.
    const unsigned int group_end = (lane / width + 1) * width;
    return src < group_end ? src : lane;
  });
}

template <typename T>
T __shfl_sync(unsigned int mask, T value, int src_lane, int width = 32) {
  return emu::shuffle(mask, value, [=](unsigned int lane) {
    return lane / static_cast<unsigned int>(width) * static_cast<unsigned int>(width) +
           static_cast<unsigned int>(src_lane) % static_cast<unsigned int>(width);
  });
}

template <typename T>
T __shfl_up_sync(unsigned int mask, T value, unsigned int delta, int width = 32) {
  return emu::shuffle(mask, value, [=](unsigned int lane) {
    const unsigned int group_start = lane / width * width;
    return lane >= group_start + delta ? lane - delta : lane;
  });
}

// Threads never interleave inside one of these (fibers switch at barriers only), so a plain
// read-modify-write is atomic.
template <typename T>
T atomicAdd(T* address, T value) {
  const T old = *address;
  *address = old + value;
  return old;
}

inline unsigned int __float_as_uint(float x) {
  return std::bit_cast<unsigned int>(x);
}
inline float __uint_as_float(unsigned int x) {
  return std::bit_cast<float>(x);
}
inline int __float_as_int(float x) {
  return std::bit_cast<int>(x);
}
inline float __int_as_float(int x) {
  return std::bit_cast<float>(x);
}
// The SIMD-in-a-word integer intrinsics: four signed bytes' products summed into c, a per-byte
// subtraction that wraps within each byte, and a byte permutation (the default mode).
inline int __dp4a(int a, int b, int c) {
  for (int i = 0; i < 4; ++i) {
    c += static_cast<int>(static_cast<int8_t>(a >> (8 * i))) *
         static_cast<int>(static_cast<int8_t>(b >> (8 * i)));
  }
  return c;
}
inline unsigned int __vsub4(unsigned int a, unsigned int b) {
  unsigned int out = 0;
  for (int i = 0; i < 4; ++i)
    out |= ((((a >> (8 * i)) & 0xFFu) - ((b >> (8 * i)) & 0xFFu)) & 0xFFu) << (8 * i);
  return out;
}
// Byte i of the result is byte (s >> 4 i) & 7 of the eight bytes y:x (x bytes 0-3).
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  const unsigned long long bytes = static_cast<unsigned long long>(y) << 32 | x;
  unsigned int out = 0;
  for (int i = 0; i < 4; ++i) out |= ((bytes >> (8 * ((s >> (4 * i)) & 7u))) & 0xFFu) << (8 * i);
  return out;
}
inline float __fmul_rn(float a, float b) {
  return a * b;
}
inline float __fadd_rn(float a, float b) {
  return a + b;
}
inline float __fsub_rn(float a, float b) {
  return a - b;
}
inline float __fdiv_rn(float a, float b) {
  return a / b;
}
inline double __dmul_rn(double a, double b) {
  return a * b;
}
inline double __dadd_rn(double a, double b) {
  return a + b;
}
inline double __dsub_rn(double a, double b) {
  return a - b;
}
inline double __ddiv_rn(double a, double b) {
  return a / b;
}
inline float __double2float_rn(double x) {
  return static_cast<float>(x);
}
inline unsigned long long __double2ull_rn(double x) {
  return static_cast<unsigned long long>(std::nearbyint(x));
}
inline double __ull2double_rn(unsigned long long x) {
  return static_cast<double>(x);
}
inline float __int2float_rn(int x) {
  return static_cast<float>(x);
}
inline float rsqrtf(float x) {
  return 1.0f / std::sqrt(x);
}
inline void __sincosf(float x, float* s, float* c) {
  sincosf(x, s, c);
}
inline float __expf(float x) {
  return std::exp(x);
}

inline int min(int a, int b) {
  return a < b ? a : b;
}
inline int max(int a, int b) {
  return a < b ? b : a;
}
inline unsigned int min(unsigned int a, unsigned int b) {
  return a < b ? a : b;
}
inline unsigned int max(unsigned int a, unsigned int b) {
  return a < b ? b : a;
}
inline long long min(long long a, long long b) {
  return a < b ? a : b;
}
inline long long max(long long a, long long b) {
  return a < b ? b : a;
}
inline float min(float a, float b) {
  return std::fmin(a, b);
}
inline float max(float a, float b) {
  return std::fmax(a, b);
}
