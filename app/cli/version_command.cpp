#include <cstdio>
#include <string>

#include "app/cli/cli_command.h"
#include "engine/backend/cpu/cpu_gemm.h"
#include "engine/backend/cpu/cpu_quant_dot.h"
#include "engine/backend/cpu/cpu_quant_interleave.h"
#include "engine/backend/device.h"
#include "engine/core/build_info.h"
#include "engine/core/dtype.h"
#include "engine/core/error.h"
#include "engine/model/architecture.h"

namespace sluice::cli {

namespace {

// "8-bit integer kernels (AVX2); rows read from their blocks at 1-8 tokens: Q8_0, Q4_K, ...",
// and on AVX-512 VNNI the types whose matrices are copied into tiles at load.
std::string quantized_kernels_summary() {
  const QuantKernelIsa isa = best_quant_kernel_isa();
  std::string direct;
  for (const DTypeTraits& t : all_dtype_traits())
    if (has_direct_quant_kernel(t.dtype, isa))
      direct += (direct.empty() ? "" : ", ") + std::string(t.name);
  std::string tiled;
  for (const DTypeTraits& t : all_dtype_traits())
    if (has_interleaved_kernel(t.dtype, isa))
      tiled += (tiled.empty() ? "" : ", ") + std::string(t.name);
  std::string out = str_cat("8-bit integer kernels (", quant_kernel_isa_name(isa), ")");
  if (direct.empty()) return out + "; rows unpacked before multiplying";
  out = str_cat(out, "; rows read from their blocks at 1-", kQuantDirectMaxTokens,
                " tokens: ", direct, ", the other types unpacked first");
  if (tiled.empty()) return out;
  return str_cat(out, "; the layer matrices of ", tiled,
                 " copied into interleaved tiles at load, which replace their rows");
}

}  // namespace

int run_version() {
  namespace bi = sluice::build_info;
  std::printf("sluice %s\n", bi::kVersion);
  if (bi::kHasCuda) {
    std::printf("cuda: compiled in (nvcc %s, architectures %s)\n", bi::kCudaCompilerVersion,
                bi::kCudaArchitectures);
  } else {
    std::printf("cuda: not compiled in\n");
  }
  std::printf("device: %s\n", probe_devices().summary.c_str());
  std::printf("cpu: fixed-order fp32 kernels (%s)\n", cpu_kernel_isa());
  std::printf("cpu quantized: %s\n", quantized_kernels_summary().c_str());
  std::printf("models: %s (Hugging Face model_type); %s (GGUF); llama2.c\n",
              supported_hf_architectures().c_str(), supported_gguf_architectures().c_str());
  std::printf("mixture of experts: the CPU runs every layer's experts%s\n",
              bi::kHasCuda
                  ? "; a GPU holds them too, or leaves the first N layers' (--n-cpu-moe N, "
                    "--cpu-moe: all) in host memory for the CPU to run"
                  : "");
  std::string types;
  for (const DTypeTraits& t : all_dtype_traits())
    types += (types.empty() ? "" : ", ") + std::string(t.name);
  std::printf("weight types: %s\n", types.c_str());
  std::printf("tokenizer: %s\n", bi::kSentencePiece);
  std::printf("gui: %s\n", bi::kHasGui ? "yes (Qt Widgets, QCustomPlot)" : "no");
  std::printf("build: %s, %s%s%s\n", bi::kBuildType, bi::kCompiler,
              bi::kSanitizers[0] ? ", sanitizers " : "", bi::kSanitizers);
  return 0;
}

void print_usage() {
  std::printf(
      "Usage: sluice <command> [options]\n"
      "\n"
      "Generate datasets with a local LLM.\n"
      "\n"
      "Commands:\n"
      "  generate   run a model over an instruction file and write JSONL results\n"
      "  pipeline run FILE  a multi-step job from a description: generate, judge, filter,\n"
      "             dedup and export a Hub-ready dataset folder, each step resumable and cached\n"
      "  tokenize   print the token ids of a text\n"
      "  bench      compare sequential, static and continuous batching on a file\n"
      "  bench schemas  compile a folder of JSON Schema subsets as jobs do and generate rows\n"
      "             from them (compiled %%, compile and mask times, valid %%, max_tokens hits)\n"
      "  bench dedup    deduplicate synthetic rows with planted duplicates, timed\n"
      "  render-template  print a chat template rendered over a conversation\n"
      "  jobs       list, show, compare and export job files (list [DIR, default the app's jobs\n"
      "             folder] | show FILE | compare A B [--rows N] | export FILE ...)\n"
      "  serve      serve a model over an OpenAI-compatible HTTP API\n"
      "  grammar check  compile a schema, regex, choice list or GBNF grammar and check texts\n"
      "             through the sampler's token-level matcher\n"
      "  gui        open the desktop application (the default when a display is present)\n"
      "\n"
      "Options:\n"
      "  -h, --help      show this help (or `sluice <command> --help`)\n"
      "  -V, --version   show the version and the build's features\n");
}

}  // namespace sluice::cli
