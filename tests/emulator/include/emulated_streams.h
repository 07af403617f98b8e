// The CPU kernel emulator's streams: work (kernels, copies, cuBLAS products, event records) is
// queued per stream and runs only when the host waits for it: cudaStreamSynchronize,
// cudaEventSynchronize (up to the event), cudaDeviceSynchronize, a synchronous copy or
// cudaFree. So the emulated GPU lags the host as far as the program allows, and a host that reads
// a result before waiting for it, or rewrites pinned memory a queued copy still has to read,
// gets the wrong data, as on a GPU under load.
//
// Stream semantics kept: work on one stream runs in order; the legacy stream (nullptr) waits for
// the blocking streams and they for it; streams made with cudaStreamNonBlocking order with
// nothing else. A stream in capture mode records its work into a graph instead of queueing it.
#pragma once

#include <deque>
#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "emulated_types.h"

struct CUstream_st {
  bool is_non_blocking = false;
  std::deque<std::function<void()>> queue;
};

struct CUevent_st {
  CUstream_st* stream = nullptr;      // where it was last recorded
  unsigned long long generation = 0;  // which record the stream reached last
  unsigned long long recorded = 0;    // the latest record
  double ms = 0.0;                    // host time when the stream reached it
};

struct CUgraph_st {
  std::vector<std::function<void()>> nodes;
};

struct CUgraphExec_st {
  std::vector<std::function<void()>> nodes;
};

namespace emu {

inline CUstream_st& legacy_stream() {
  static CUstream_st stream;
  return stream;
}

inline std::set<CUstream_st*>& live_streams() {
  static std::set<CUstream_st*> streams;
  return streams;
}

inline CUstream_st& stream_of(cudaStream_t stream) {
  return stream != nullptr ? *stream : legacy_stream();
}

struct Capture {
  CUstream_st* stream = nullptr;  // the stream in capture mode, if any
  bool is_invalidated = false;    // an operation that may not be captured was attempted
  std::vector<std::function<void()>> nodes;
};
inline Capture& capture() {
  static Capture c;
  return c;
}

// Runs the queued work of stream, in order, until it is empty or is_reached() holds.
template <typename Until>
void run_stream(CUstream_st& stream, Until is_reached) {
  while (!stream.queue.empty() && !is_reached()) {
    std::function<void()> work = std::move(stream.queue.front());
    stream.queue.pop_front();
    work();
  }
}

inline void flush(CUstream_st& stream) {
  run_stream(stream, [] { return false; });
}

inline void flush_all() {
  flush(legacy_stream());
  for (CUstream_st* stream : live_streams()) flush(*stream);
}

// Queues work on stream (or records it, when the stream is being captured).
inline void submit(cudaStream_t handle, std::function<void()> work) {
  CUstream_st& stream = stream_of(handle);
  if (capture().stream == &stream) {
    capture().nodes.push_back(std::move(work));
    return;
  }
  // Implicit synchronisation with the legacy stream: run what it must wait for first.
  if (&stream == &legacy_stream()) {
    for (CUstream_st* other : live_streams())
      if (!other->is_non_blocking) flush(*other);
  } else if (!stream.is_non_blocking) {
    flush(legacy_stream());
  }
  stream.queue.push_back(std::move(work));
}

}  // namespace emu

// For the emulated cuBLAS (a separate shared library, loaded with dlopen as the real one is):
// queues *work on stream in the test program's emulator. Defined in emulated_exports.cpp.
extern "C" void emu_submit_work(cudaStream_t stream, std::function<void()>* work);
