// What the test programs export to the emulated cuBLAS library (ENABLE_EXPORTS): queueing work
// on the program's emulated streams.
#include <functional>
#include <utility>

#include "cuda_runtime.h"

extern "C" void emu_submit_work(cudaStream_t stream, std::function<void()>* work) {
  emu::submit(stream, std::move(*work));
}
