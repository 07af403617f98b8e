// The kernel emulator's own tests: it must catch what it claims to catch (a missing barrier, a
// divergent barrier, a launch a GPU refuses) and keep CUDA's ordering rules for streams, copies
// and graphs, or the emulated GPU tests could pass where a GPU fails.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

constexpr int kThreads = 128;  // four warps

// Warp 0 publishes a per-block value in shared memory; every thread copies it out. With
// is_synced false the readers do not wait for it.
__global__ void publish_kernel(int* out, bool is_synced) {
  __shared__ int value;
  if (threadIdx.x == 0) value = static_cast<int>(blockIdx.x) + 1;
  if (is_synced) __syncthreads();
  out[blockIdx.x * kThreads + threadIdx.x] = value;
}

int count_wrong_reads(bool is_synced) {
  constexpr int kBlocks = 64;
  int* out = nullptr;
  EXPECT_EQ(cudaMalloc(&out, sizeof(int) * kBlocks * kThreads), cudaSuccess);
  emu::launch(publish_kernel, dim3(kBlocks), dim3(kThreads), 0, nullptr, out, is_synced);
  std::vector<int> host(static_cast<size_t>(kBlocks) * kThreads);
  EXPECT_EQ(cudaMemcpy(host.data(), out, host.size() * sizeof(int), cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(out);
  int wrong = 0;
  for (int b = 0; b < kBlocks; ++b)
    for (int t = 0; t < kThreads; ++t)
      wrong += host[static_cast<size_t>(b) * kThreads + t] != b + 1;
  return wrong;
}

TEST(KernelEmulator, AMissingBarrierGivesWrongReads) {
  EXPECT_EQ(count_wrong_reads(/*is_synced=*/true), 0);
  EXPECT_GT(count_wrong_reads(/*is_synced=*/false), 0);
}

__global__ void divergent_barrier_kernel() {
  if (threadIdx.x < 32) __syncthreads();  // the other warps never arrive
}

TEST(KernelEmulatorDeathTest, ADivergentBarrierIsReportedAsADeadlock) {
  EXPECT_DEATH(
      {
        emu::launch(divergent_barrier_kernel, dim3(1), dim3(kThreads), 0, nullptr);
        cudaDeviceSynchronize();
      },
      "deadlock");
}

// out[lane] = value of lane (lane ^ 5) and of lane - 3 within groups of 8 lanes.
__global__ void shuffle_kernel(int* xor_out, int* up_out) {
  const int lane = static_cast<int>(threadIdx.x);
  xor_out[lane] = __shfl_xor_sync(0xffffffffu, lane * 10, 5);
  up_out[lane] = __shfl_up_sync(0xffffffffu, lane * 10, 3, 8);
}

TEST(KernelEmulator, ShufflesFollowCudaLaneRules) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, sizeof(int) * 64), cudaSuccess);
  emu::launch(shuffle_kernel, dim3(1), dim3(32), 0, nullptr, d, d + 32);
  std::vector<int> host(64);
  ASSERT_EQ(cudaMemcpy(host.data(), d, sizeof(int) * 64, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d);
  for (int lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(host[static_cast<size_t>(lane)], (lane ^ 5) * 10) << lane;
    const int source = lane % 8 >= 3 ? lane - 3 : lane;  // below the group start: its own value
    EXPECT_EQ(host[32 + static_cast<size_t>(lane)], source * 10) << lane;
  }
}

__global__ void fill_kernel(int* out, int value) {
  out[threadIdx.x] = value;
}

TEST(KernelEmulator, LaunchesAGpuRefusesFail) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, sizeof(int) * 64), cudaSuccess);
  emu::launch(fill_kernel, dim3(1), dim3(2048), 0, nullptr, d, 1);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  emu::launch(fill_kernel, dim3(1), dim3(32), 64 * 1024, nullptr, d, 1);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);  // over 48 KiB without the opt-in
  ASSERT_EQ(
      cudaFuncSetAttribute(fill_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024),
      cudaSuccess);
  emu::launch(fill_kernel, dim3(1), dim3(32), 64 * 1024, nullptr, d, 1);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  cudaFree(d);
}

// A non-blocking stream, 32 ints of device memory and 32 of pinned host memory.
class EmulatedStream : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&d, sizeof(int) * 32), cudaSuccess);
    ASSERT_EQ(cudaMallocHost(&pinned, sizeof(int) * 32), cudaSuccess);
  }
  void TearDown() override {
    cudaFree(d);
    cudaFreeHost(pinned);
    cudaStreamDestroy(stream);
  }
  cudaStream_t stream = nullptr;
  int* d = nullptr;
  int* pinned = nullptr;
};

TEST_F(EmulatedStream, WorkRunsWhenTheHostWaits) {
  pinned[0] = 0;
  emu::launch(fill_kernel, dim3(1), dim3(32), 0, stream, d, 7);
  ASSERT_EQ(cudaMemcpyAsync(pinned, d, sizeof(int) * 32, cudaMemcpyDeviceToHost, stream),
            cudaSuccess);
  EXPECT_EQ(pinned[0], 0);  // not yet: a copy to pinned memory lands when the stream runs it
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(pinned[31], 7);

  // A copy from pinned memory reads it when the stream gets there; from pageable memory, at
  // the call.
  std::vector<int> pageable(32, 1);
  pinned[0] = 2;
  ASSERT_EQ(cudaMemcpyAsync(d, pinned, sizeof(int), cudaMemcpyHostToDevice, stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(d + 1, pageable.data(), sizeof(int), cudaMemcpyHostToDevice, stream),
            cudaSuccess);
  pinned[0] = 3;
  pageable[0] = 4;
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  int got[2] = {};
  ASSERT_EQ(cudaMemcpy(got, d, sizeof got, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got[0], 3);
  EXPECT_EQ(got[1], 1);
}

TEST_F(EmulatedStream, GraphsReplayCapturedWorkAndRefuseAllocations) {
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(d, pinned, sizeof(int), cudaMemcpyHostToDevice, stream), cudaSuccess);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (const int value : {5, 6}) {  // each replay reads the pinned input as it is then
    *pinned = value;
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    int got = 0;
    ASSERT_EQ(cudaMemcpy(&got, d, sizeof got, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(got, value);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);

  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  void* during = nullptr;
  EXPECT_EQ(cudaMalloc(&during, 16), cudaErrorStreamCaptureUnsupported);
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(graph, nullptr);
}

}  // namespace
