// One block per row that wants log-probabilities: a pass for the row's largest logit, a pass for
// sum(exp(logit - max)) (each thread in double, then the block), and a pass in which each thread
// keeps its own num_top likeliest tokens in order; num_top rounds then pick the block's likeliest
// among the threads' heads (largest logit, then lowest id, as the host's ordering).
#include "kernels/logprobs.cuh"

#include <cmath>

#include "kernels/dtype_traits.cuh"

namespace sluice::kernels {
namespace {

constexpr int kThreads = 256;

// true when token a (logit la) comes before token b (logit lb): larger logit, then lower id.
__device__ __forceinline__ bool likelier(float la, int32_t a, float lb, int32_t b) {
  return la > lb || (la == lb && a < b);
}

__global__ void token_logprobs_kernel(const float* __restrict__ logits,
                                      const int32_t* __restrict__ chosen,
                                      const int32_t* __restrict__ num_top,
                                      float* __restrict__ out_chosen,
                                      int32_t* __restrict__ out_top_ids,
                                      float* __restrict__ out_top_logprobs, int vocab_size) {
  const int row = static_cast<int>(blockIdx.x);
  const int k = min(num_top[row], kMaxTopLogprobs);
  if (k < 0) return;  // the whole block: no barrier is reached
  const int tid = static_cast<int>(threadIdx.x);
  const float* x = logits + static_cast<int64_t>(row) * vocab_size;
  __shared__ float max_part[kThreads];
  __shared__ double sum_part[kThreads];
  __shared__ float head_logit[kThreads];
  __shared__ int32_t head_id[kThreads];

  float m = -INFINITY;
  for (int i = tid; i < vocab_size; i += kThreads) m = fmaxf(m, x[i]);
  max_part[tid] = m;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (tid < stride) max_part[tid] = fmaxf(max_part[tid], max_part[tid + stride]);
    __syncthreads();
  }
  const float max_logit = max_part[0];
  double s = 0.0;
  for (int i = tid; i < vocab_size; i += kThreads)
    s += exp(static_cast<double>(x[i]) - static_cast<double>(max_logit));
  sum_part[tid] = s;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (tid < stride) sum_part[tid] += sum_part[tid + stride];
    __syncthreads();
  }
  const double log_norm = static_cast<double>(max_logit) + log(sum_part[0]);
  const auto logprob_of = [log_norm](float logit) {
    return static_cast<float>(static_cast<double>(logit) - log_norm);
  };
  if (tid == 0) {
    const int32_t c = chosen[row];
    out_chosen[row] = c >= 0 && c < vocab_size ? logprob_of(x[c]) : NAN;
  }
  if (k == 0) return;

  // This thread's k likeliest, in order.
  float best_logit[kMaxTopLogprobs];
  int32_t best_id[kMaxTopLogprobs];
  int count = 0;
  for (int i = tid; i < vocab_size; i += kThreads) {
    const float v = x[i];
    if (count == k && !likelier(v, i, best_logit[k - 1], best_id[k - 1])) continue;
    int j = count < k ? count++ : k - 1;
    while (j > 0 && likelier(v, i, best_logit[j - 1], best_id[j - 1])) {
      best_logit[j] = best_logit[j - 1];
      best_id[j] = best_id[j - 1];
      --j;
    }
    best_logit[j] = v;
    best_id[j] = i;
  }
  int next = 0;  // this thread's first entry not yet taken
  for (int round = 0; round < k; ++round) {
    head_logit[tid] = next < count ? best_logit[next] : -INFINITY;
    head_id[tid] = next < count ? best_id[next] : INT32_MAX;
    __syncthreads();
    for (int stride = kThreads / 2; stride > 0; stride /= 2) {
      if (tid < stride && likelier(head_logit[tid + stride], head_id[tid + stride], head_logit[tid],
                                   head_id[tid])) {
        head_logit[tid] = head_logit[tid + stride];
        head_id[tid] = head_id[tid + stride];
      }
      __syncthreads();
    }
    const int32_t winner = head_id[0];
    const float winner_logit = head_logit[0];
    if (tid == 0) {
      out_top_ids[row * kMaxTopLogprobs + round] = winner;
      out_top_logprobs[row * kMaxTopLogprobs + round] = logprob_of(winner_logit);
    }
    if (next < count && best_id[next] == winner) ++next;
    __syncthreads();  // head_* is rewritten by the next round
  }
}

}  // namespace

KernelStatus token_logprobs(const float* logits, const int32_t* chosen, const int32_t* num_top,
                            float* out_chosen, int32_t* out_top_ids, float* out_top_logprobs,
                            int num_rows, int vocab_size, cudaStream_t stream) {
  if (num_rows < 0 || vocab_size <= 0) return detail::invalid_argument();
  if (num_rows == 0) return kKernelOk;
  detail::launch_kernel(token_logprobs_kernel, dim3(static_cast<unsigned int>(num_rows)),
                        dim3(kThreads), 0, stream, logits, chosen, num_top, out_chosen, out_top_ids,
                        out_top_logprobs, vocab_size);
  return detail::launch_status();
}

}  // namespace sluice::kernels
