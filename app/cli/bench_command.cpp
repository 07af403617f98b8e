// sluice bench: the seed article's experiment on one instruction file. Runs sequential, static
// batching and continuous batching over the same rows and prints one table (or --json).
#include <QCommandLineParser>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/cli/batched_bench.h"
#include "app/cli/bench_http.h"
#include "app/cli/bench_runner.h"
#include "app/cli/cli_command.h"
#include "app/cli/cli_options.h"
#include "app/cli/dedup_bench.h"
#include "engine/backend/device.h"
#include "engine/core/error.h"
#include "engine/core/mapped_file.h"
#include "engine/grammar/grammar_cache.h"
#include "engine/input/dataset_reader.h"
#include "engine/input/field_discovery.h"
#include "engine/input/prompt_builder.h"
#include "engine/model/dummy_model.h"
#include "engine/model/gguf_writer.h"

namespace sluice::cli {

namespace {

constexpr const char* kCommand = "bench";

struct BenchArgs {
  std::string model_path, tokenizer_path, input_path, dummy_preset, save_gguf_path;
  DType dummy_dtype = DType::F32;  // BF16 when not given and the run may go to a GPU
  bool dummy_dtype_given = false;
  int dummy_layers = 0;  // 0: the preset's
  size_t limit = 500;
  std::vector<BenchMode> modes;
  bool as_json = false;
  bool roofline = false;
  std::vector<int> roofline_batches{1, 8, 32, 64, 128, 256};
  std::vector<int> batched;  // --batched: batch sizes of the llama-batched-bench-style sweep
  int prompt_tokens = 128;
  BenchSpec spec;
  std::string schema_path;  // --json-schema: each mode runs unconstrained, then constrained
};

// f32, f16, bf16 or a GGUF block type by its name in any case (q8_0, Q4_K, ...).
DType parse_dummy_dtype(const QString& name) {
  std::string names;
  for (const DTypeTraits& t : all_dtype_traits()) {
    if (name.compare(QString::fromLatin1(t.name), Qt::CaseInsensitive) == 0) return t.dtype;
    names += (names.empty() ? "" : ", ") + QString::fromLatin1(t.name).toLower().toStdString();
  }
  throw UsageError("--dummy-dtype must be one of " + names);
}

// A comma-separated list of batch sizes such as 1,8,32.
std::vector<int> parse_batch_sizes(const QString& list, const char* option) {
  std::vector<int> sizes;
  for (const QString& b : list.split(',', Qt::SkipEmptyParts)) {
    bool ok = false;
    const int batch = b.trimmed().toInt(&ok);
    if (!ok || batch < 1 || batch > (1 << 16))
      throw UsageError(std::string(option) + " expects batch sizes such as 1,8,32");
    sizes.push_back(batch);
  }
  if (sizes.empty()) throw UsageError(std::string(option) + " names no batch size");
  return sizes;
}

void add_bench_options(QCommandLineParser& parser) {
  parser.setApplicationDescription(
      "Compare sequential, static and continuous batching on one instruction file.\n"
      "sluice bench schemas --dir DIR: compile and generate from a folder of JSON Schemas "
      "(see sluice bench schemas --help).\n"
      "sluice bench dedup: deduplicate synthetic rows with planted duplicates "
      "(see sluice bench dedup --help).");
  parser.addHelpOption();
  parser.addOptions({
      {"model", "Model: a Hugging Face directory, a .gguf file or a llama2.c .bin.", "PATH"},
      {"tokenizer", "Tokenizer file, when not beside or inside the model.", "PATH"},
      {"input", "Instruction file (JSONL with \"prompt\", or an Alpaca JSON array).", "FILE"},
      {"limit", "Rows to run (default 500).", "N"},
      {"modes", "Comma-separated: sequential,static,continuous (default all).", "LIST"},
      {"static-batch", "Batch size of static batching (default 32).", "B"},
      {"json", "Print the results as JSON instead of a table."},
      {"dummy-weights",
       "Instead of --model: random weights of a published shape (" + QString::fromStdString([] {
         std::string names;
         for (const auto& n : dummy_model_presets()) names += (names.empty() ? "" : ", ") + n;
         return names;
       }()) +
           ").",
       "PRESET"},
      {"dummy-dtype",
       "Weight type of --dummy-weights: f32, f16, bf16 or a GGUF block type such as q8_0 or "
       "q4_k (random valid blocks; norms stay f32) (default: bf16 on a GPU, else f32).",
       "TYPE"},
      {"dummy-layers",
       "Keep only the first N layers of --dummy-weights (e.g. an 8-layer qwen3-30b-a3b: the "
       "real layer's cost in a file of a few GiB) (default: all).",
       "N"},
      {"save-gguf",
       "With --dummy-weights: write the model as a GGUF file that llama.cpp loads (its tensor "
       "names and keys, a synthetic vocabulary; the same weights this command benchmarks) and "
       "exit without benchmarking (--input is not needed). llama.cpp's llama-quantize makes "
       "a Q4_K_M file of it.",
       "FILE"},
      {"roofline",
       "GPU: measure memory bandwidth and the BF16 tensor rate, then decode fixed batches and "
       "the whole file (with --ignore-eos implied) and report each step against the roofline. "
       "Runs instead of --modes; --device defaults to cuda."},
      {"roofline-batches", "Batch sizes of --roofline (default 1,8,32,64,128,256).", "LIST"},
      {"batched",
       "Measure as llama.cpp's llama-batched-bench does: for each batch size B in LIST, B "
       "prompts of --prompt-tokens random token ids prefilled together, then --max-tokens "
       "decode steps (ignore_eos); prefill and decode tokens/s apart. Runs instead of --modes; "
       "--input is not needed.",
       "LIST"},
      {"prompt-tokens", "Prompt length of --batched (default 128).", "N"},
      {"activations", "CUDA: activation and KV cache type, bf16 (default), fp16 or fp32.", "TYPE"},
      {"no-cuda-graphs", "CUDA: launch decode steps one kernel at a time instead of as graphs."},
      {"endpoint",
       "Benchmark an OpenAI-compatible server at URL (its /v1 base) over HTTP instead of the "
       "engine in this process; see sluice bench --endpoint URL --help.",
       "URL"},
      {"json-schema",
       "Run each mode twice, free and constrained to the JSON Schema in FILE; report the "
       "schema's compile time and the grammar mask time per token per row (p50, p99).",
       "FILE"},
  });
  add_sampling_options(parser);
  add_engine_options(parser);
}

// What is benchmarked: a model, random weights of a preset (or a GGUF file written of them).
void read_model_args(const QCommandLineParser& parser, BenchArgs& a) {
  a.dummy_preset = parser.value("dummy-weights").toStdString();
  if (a.dummy_preset.empty()) {
    a.model_path = required_option(parser, "model").toStdString();
  } else if (parser.isSet("model")) {
    throw UsageError("give --model or --dummy-weights, not both");
  }
  a.dummy_dtype_given = parser.isSet("dummy-dtype");
  if (a.dummy_dtype_given) a.dummy_dtype = parse_dummy_dtype(parser.value("dummy-dtype"));
  if (parser.isSet("dummy-layers")) {
    if (a.dummy_preset.empty()) throw UsageError("--dummy-layers needs --dummy-weights PRESET");
    a.dummy_layers = static_cast<int>(option_int(parser, "dummy-layers", 0, 1, kMaxNumLayers));
  }
  a.save_gguf_path = parser.value("save-gguf").toStdString();
  if (parser.isSet("save-gguf") && a.save_gguf_path.empty())
    throw UsageError("--save-gguf needs a file name");
  if (!a.save_gguf_path.empty() && a.dummy_preset.empty())
    throw UsageError("--save-gguf writes a --dummy-weights model; give --dummy-weights PRESET");
  a.tokenizer_path = parser.value("tokenizer").toStdString();
}

// What is measured: the modes over an instruction file, or a batched sweep.
void read_mode_args(const QCommandLineParser& parser, BenchArgs& a) {
  if (parser.isSet("batched")) {
    if (parser.isSet("modes") || parser.isSet("roofline"))
      throw UsageError("give --batched, --roofline or --modes, not two of them");
    a.batched = parse_batch_sizes(parser.value("batched"), "--batched");
    a.prompt_tokens = static_cast<int>(option_int(parser, "prompt-tokens", 128, 1, 1 << 20));
  }
  if (a.save_gguf_path.empty() && a.batched.empty())
    a.input_path = required_option(parser, "input").toStdString();
  a.limit = static_cast<size_t>(option_int(parser, "limit", 500, 1, 1LL << 40));
  const QString modes =
      parser.isSet("modes") ? parser.value("modes") : "sequential,static,continuous";
  for (const QString& m : modes.split(',', Qt::SkipEmptyParts)) {
    try {
      a.modes.push_back(parse_bench_mode(m.trimmed().toStdString()));
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  if (a.modes.empty()) throw UsageError("--modes names no mode");
  a.as_json = parser.isSet("json");
  a.schema_path = parser.value("json-schema").toStdString();
}

// How it runs: sampling, engine and device options, and the roofline's.
void read_run_args(const QCommandLineParser& parser, BenchArgs& a) {
  a.spec.sampling = read_sampling_options(parser);
  if (!parser.isSet("max-tokens")) a.spec.sampling.max_tokens = 128;
  a.spec.engine = read_engine_options(parser);
  a.spec.static_batch = static_cast<int>(option_int(parser, "static-batch", 32, 1, 1 << 16));
  a.spec.num_threads = read_thread_count(parser);
  a.spec.device = read_device(parser);
  a.roofline = parser.isSet("roofline");
  if (a.roofline) {
    if (!parser.isSet("device")) a.spec.device = "cuda";
    if (a.spec.device == "cpu")
      throw UsageError("--roofline measures a GPU; use --device cuda[:N]");
    if (parser.isSet("modes")) throw UsageError("give --roofline or --modes, not both");
    if (parser.isSet("roofline-batches"))
      a.roofline_batches =
          parse_batch_sizes(parser.value("roofline-batches"), "--roofline-batches");
  }
  a.spec.activations = parser.isSet("activations")
                           ? parser.value("activations").toLower().toStdString()
                           : std::string("bf16");
  if (a.spec.activations != "bf16" && a.spec.activations != "fp16" && a.spec.activations != "fp32")
    throw UsageError("--activations must be bf16, fp16 or fp32");
  a.spec.cuda_graphs = !parser.isSet("no-cuda-graphs");
}

BenchArgs parse_args(const QStringList& args) {
  QCommandLineParser parser;
  add_bench_options(parser);
  parse_command_line(parser, args, "bench");
  BenchArgs a;
  read_model_args(parser, a);
  read_mode_args(parser, a);
  read_run_args(parser, a);
  return a;
}

// The first `limit` rows of the file as token ids, built as `sluice generate` builds them
// (default column template, the model's chat template); bad rows are left out.
std::vector<std::vector<int32_t>> read_prompts(const std::string& path, size_t limit,
                                               const ModelSession& session) {
  auto reader = open_dataset(path);
  const PromptBuilder builder(PromptOptions{}, session.model->chat_template, *session.tokenizer,
                              reader->format(), discover_fields(path, reader->format()),
                              session.model->chat_template_origin);
  std::vector<std::vector<int32_t>> prompts;
  while (prompts.size() < limit) {
    try {
      const auto row = reader->next();
      if (!row) break;
      prompts.push_back(builder.build(*row).token_ids);
    } catch (const DatasetRowError&) {
      continue;
    }
  }
  if (prompts.empty()) fail(path, ": no usable rows");
  return prompts;
}

void print_table(const std::vector<BenchResult>& results, const BenchArgs& a,
                 const ModelSession& session) {
  std::printf(
      "model: %s%s (%s)\nrows: %zu from %s, max_tokens %d, temperature %g%s, block size %d, %s\n\n",
      a.dummy_preset.empty() ? "" : "random weights, ", session.model->config.describe().c_str(),
      session.model->weight_dtypes().c_str(), results.front().num_requests, a.input_path.c_str(),
      a.spec.sampling.max_tokens, static_cast<double>(a.spec.sampling.temperature),
      a.spec.sampling.ignore_eos ? ", ignore_eos" : "", a.spec.engine.block_size,
      a.spec.device.c_str());
  std::printf(
      "| mode | batch cap | wall s | req/s | out tok/s | speedup | mean batch | occupancy | peak "
      "KV blocks | "
      "KV reserved MiB | reserved/used peak | reserved/used mean | max-len reservation MiB | "
      "preemptions |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  const double base = results.front().output_tokens_per_s();
  for (const auto& r : results) {
    std::printf(
        "| %s | %d | %.2f | %.1f | %.0f | %.1fx | %.1f | %.0f%% | %d | %.2f | %.3f | %.3f | %.1f | "
        "%lld |\n",
        (std::string(to_string(r.mode)) + (r.is_constrained ? " + schema" : "")).c_str(),
        r.batch_cap, r.wall_s, r.requests_per_s(), r.output_tokens_per_s(),
        base > 0 ? r.output_tokens_per_s() / base : 0.0, r.mean_batch, 100.0 * r.mean_occupancy,
        r.peak_kv_blocks, static_cast<double>(r.peak_kv_reserved_bytes) / (1 << 20),
        r.kv_reserved_over_used_at_peak, r.kv_reserved_over_used,
        static_cast<double>(r.naive_reserved_bytes) / (1 << 20),
        static_cast<long long>(r.num_preemptions));
  }
  std::printf(
      "\nspeedup: output tokens/s relative to the first mode. reserved/used: KV block slots held "
      "over\n"
      "token slots in use, at the step holding the most blocks (peak) and summed over all steps "
      "(mean).\n"
      "max-len reservation: peak concurrent requests x max_model_len (%d) tokens, what a cache "
      "that\n"
      "reserves the maximum length per request would hold.\n",
      a.spec.engine.max_model_len > 0 ? a.spec.engine.max_model_len
                                      : session.model->config.max_position_embeddings);
  // A hybrid model's state slots, beside the KV blocks of the table.
  for (const auto& r : results) {
    if (r.num_state_slots == 0) continue;
    std::printf("state slots (%s): %d x %.2f MiB = %.1f MiB, peak %d held\n", to_string(r.mode),
                r.num_state_slots, static_cast<double>(r.state_slot_bytes) / (1 << 20),
                static_cast<double>(r.state_slot_bytes) * r.num_state_slots / (1 << 20),
                r.peak_state_slots);
  }
}

// --json-schema: the compile time, and per mode the mask times and constrained / free speed.
void print_grammar_lines(const std::vector<BenchResult>& results, const std::string& schema_path,
                         double compile_ms) {
  std::printf(
      "\nschema %s: compiled in %.2f ms (masks are computed per stack context on first "
      "use and show in the p99)\n",
      schema_path.c_str(), compile_ms);
  for (size_t i = 1; i < results.size(); ++i) {
    const BenchResult& free_run = results[i - 1];
    const BenchResult& r = results[i];
    if (!r.is_constrained || free_run.is_constrained) continue;
    std::printf(
        "%s: mask per token per row p50 %.1f us, p99 %.1f us over %lld masks; "
        "constrained / free output tokens/s %.3f\n",
        to_string(r.mode), r.mask_p50_us, r.mask_p99_us, static_cast<long long>(r.num_masks),
        free_run.output_tokens_per_s() > 0
            ? r.output_tokens_per_s() / free_run.output_tokens_per_s()
            : 0.0);
  }
}

void print_json(const std::vector<BenchResult>& results, const BenchArgs& a,
                const ModelSession& session) {
  nlohmann::ordered_json out;
  out["model"] = session.model->config.describe();
  out["input"] = a.input_path;
  out["max_tokens"] = a.spec.sampling.max_tokens;
  out["modes"] = nlohmann::ordered_json::array();
  for (const auto& r : results) {
    out["modes"].push_back({{"mode", to_string(r.mode)},
                            {"batch_cap", r.batch_cap},
                            {"requests", r.num_requests},
                            {"wall_s", r.wall_s},
                            {"requests_per_s", r.requests_per_s()},
                            {"prompt_tokens", r.prompt_tokens},
                            {"output_tokens", r.output_tokens},
                            {"output_tokens_per_s", r.output_tokens_per_s()},
                            {"steps", r.num_steps},
                            {"mean_batch", r.mean_batch},
                            {"mean_occupancy", r.mean_occupancy},
                            {"peak_kv_blocks", r.peak_kv_blocks},
                            {"num_state_slots", r.num_state_slots},
                            {"peak_state_slots", r.peak_state_slots},
                            {"state_slot_bytes", r.state_slot_bytes},
                            {"kv_pool_bytes", r.kv_pool_bytes},
                            {"peak_kv_reserved_bytes", r.peak_kv_reserved_bytes},
                            {"kv_reserved_over_used_at_peak", r.kv_reserved_over_used_at_peak},
                            {"kv_reserved_over_used", r.kv_reserved_over_used},
                            {"max_len_reservation_bytes", r.naive_reserved_bytes},
                            {"preemptions", r.num_preemptions},
                            {"constrained", r.is_constrained},
                            {"grammar_masks", r.num_masks},
                            {"mask_p50_us", r.mask_p50_us},
                            {"mask_p99_us", r.mask_p99_us}});
  }
  std::printf("%s\n", out.dump(2).c_str());
}

}  // namespace

void print_roofline_table(const RooflineReport& report, const BenchArgs& a,
                          const ModelSession& session) {
  std::printf("model: %s%s (%s)\nbackend: %s\n", a.dummy_preset.empty() ? "" : "random weights, ",
              session.model->config.describe().c_str(), session.model->weight_dtypes().c_str(),
              report.backend.c_str());
  std::printf(
      "GPU: %s, memory %.0f GB/s (a %.0f MiB device-to-device copy, read + write), BF16 %.1f "
      "TFLOP/s (a %d^3 cuBLAS product)\n",
      report.gpu.device.c_str(), report.gpu.memory_bytes_per_s / 1e9,
      static_cast<double>(report.gpu.copy_bytes) / (1 << 20), report.gpu.bf16_flops_per_s / 1e12,
      report.gpu.gemm_size);
  std::printf("max_tokens %d per request, ignore_eos, block size %d\n\n",
              a.spec.sampling.max_tokens, a.spec.engine.block_size);
  std::printf(
      "| run | steps | step ms | out tok/s | MB moved/step | GFLOP/step | roofline ms | bound | "
      "of roofline |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---|---:|\n");
  for (const auto& p : report.points) {
    std::printf("| %s | %lld | %.3f | %.0f | %.1f | %.2f | %.3f | %s | %.0f%% |\n", p.label.c_str(),
                static_cast<long long>(p.num_steps), p.step_ms, p.output_tokens_per_s,
                p.bytes_per_step / 1e6, p.flops_per_step / 1e9, p.roofline_ms,
                p.is_memory_bound ? "memory" : "compute", 100.0 * p.fraction());
  }
  std::printf(
      "\nstep ms: mean engine step (host scheduling and sampling included) over decode-only\n"
      "steps with the whole batch running (continuous: every decode-only step, or every step).\n"
      "roofline: max(bytes / bandwidth, flops / BF16 rate), bytes = every weight matrix once\n"
      "+ the K and V of each context token read.\n");
}

void print_roofline_json(const RooflineReport& report, const BenchArgs& a,
                         const ModelSession& session) {
  nlohmann::ordered_json out;
  out["model"] = session.model->config.describe();
  out["backend"] = report.backend;
  out["gpu"] = {{"device", report.gpu.device},
                {"memory_bytes_per_s", report.gpu.memory_bytes_per_s},
                {"bf16_flops_per_s", report.gpu.bf16_flops_per_s}};
  out["max_tokens"] = a.spec.sampling.max_tokens;
  out["runs"] = nlohmann::ordered_json::array();
  for (const auto& p : report.points) {
    out["runs"].push_back({{"run", p.label},
                           {"batch_size", p.batch_size},
                           {"steps", p.num_steps},
                           {"step_ms", p.step_ms},
                           {"output_tokens_per_s", p.output_tokens_per_s},
                           {"bytes_per_step", p.bytes_per_step},
                           {"flops_per_step", p.flops_per_step},
                           {"roofline_ms", p.roofline_ms},
                           {"bound", p.is_memory_bound ? "memory" : "compute"},
                           {"fraction_of_roofline", p.fraction()}});
  }
  std::printf("%s\n", out.dump(2).c_str());
}

// The floor step over the measured decode step: 1 when a step only streams its weights at the
// measured bandwidth (KV reads and compute make it less).
double share_of_floor(const BatchedReport& report, const BatchedPoint& p) {
  return p.decode_step_ms() > 0 ? report.floor_step_ms() / p.decode_step_ms() : 0.0;
}

void print_batched(const BatchedReport& report, const BenchArgs& a, const ModelSession& session) {
  const std::vector<BatchedPoint>& points = report.points;
  const std::string& backend = report.backend;
  if (a.as_json) {
    nlohmann::ordered_json out;
    out["model"] = session.model->config.describe();
    out["weights"] = session.model->weight_dtypes();
    out["backend"] = backend;
    out["max_tokens"] = a.spec.sampling.max_tokens;
    out["runs"] = nlohmann::ordered_json::array();
    for (const auto& p : points) {
      out["runs"].push_back({{"batch", p.batch},
                             {"prompt_length", p.prompt_tokens},
                             {"prefill_tokens", p.prefill_tokens},
                             {"prefill_s", p.prefill_s},
                             {"prefill_tokens_per_s", p.prefill_tokens_per_s()},
                             {"decode_steps", p.decode_steps},
                             {"decode_step_ms", p.decode_step_ms()},
                             {"decode_tokens_per_s", p.decode_tokens_per_s()},
                             {"total_s", p.total_s},
                             {"total_tokens_per_s", p.total_tokens_per_s()},
                             {"decode_share_of_floor", share_of_floor(report, p)}});
    }
    out["read_bandwidth_bytes_per_s"] = report.bandwidth.bytes_per_s;
    out["read_bandwidth_probe"] = report.bandwidth.how;
    out["weight_bytes_per_step"] = report.weight_bytes_per_step;
    out["weight_bytes_held"] = report.weight_bytes_held;
    out["floor_step_ms"] = report.floor_step_ms();
    out["kv_pool_bytes"] = report.kv_pool_bytes;
    out["kv_pool_tokens"] = report.kv_pool_tokens;
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf(
      "model: %s%s (%s)\nbackend: %s\nprompts of %d random ids, max_tokens %d, ignore_eos\n\n",
      a.dummy_preset.empty() ? "" : "random weights, ", session.model->config.describe().c_str(),
      session.model->weight_dtypes().c_str(), backend.c_str(), a.prompt_tokens,
      a.spec.sampling.max_tokens);
  std::printf(
      "weights held: %.1f MB; KV pool (last batch): %.1f MB, %lld tokens\nread bandwidth %.1f GB/s "
      "(%s); a decode step streams %.1f MB of weights: floor %.2f ms\n\n",
      static_cast<double>(report.weight_bytes_held) / 1e6,
      static_cast<double>(report.kv_pool_bytes) / 1e6,
      static_cast<long long>(report.kv_pool_tokens), report.bandwidth.bytes_per_s / 1e9,
      report.bandwidth.how.c_str(), report.weight_bytes_per_step / 1e6, report.floor_step_ms());
  std::printf(
      "| batch | prompt tokens | prefill s | prefill tok/s | decode steps | decode step ms | "
      "decode tok/s | total s | total tok/s | of floor |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& p : points) {
    std::printf("| %d | %lld | %.3f | %.1f | %lld | %.2f | %.1f | %.2f | %.1f | %.0f%% |\n",
                p.batch, static_cast<long long>(p.prefill_tokens), p.prefill_s,
                p.prefill_tokens_per_s(), static_cast<long long>(p.decode_steps),
                p.decode_step_ms(), p.decode_tokens_per_s(), p.total_s, p.total_tokens_per_s(),
                100.0 * share_of_floor(report, p));
  }
  std::printf(
      "\nprefill: the steps that computed prompt tokens (llama-batched-bench's S_PP); decode: "
      "the\nsteps without (S_TG); total: prompt and generated tokens over the wall time (S); "
      "of floor:\nthe floor step (weights streamed / read bandwidth) over the decode step.\n");
}

// Runs each mode over the prompts (and again constrained to --json-schema's schema, compiled once
// and timed) and prints the results.
void run_modes(const BenchArgs& a, const ModelSession& session,
               const std::vector<std::vector<int32_t>>& prompts) {
  BenchSpec constrained = a.spec;
  double compile_ms = 0.0;
  if (!a.schema_path.empty()) {
    constrained.sampling.grammar = std::make_shared<const GrammarSource>(GrammarSource{
        GrammarSourceKind::JsonSchema, a.schema_path, read_text_file(a.schema_path), {}});
    GrammarCache grammars;  // the one way a grammar is compiled, timed here
    const auto begin = std::chrono::steady_clock::now();
    constrained.grammar = grammars.get(*constrained.sampling.grammar);
    compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
  }
  std::vector<BenchResult> results;
  for (const BenchMode mode : a.modes) {
    std::fprintf(stderr, "bench: %s...\n", to_string(mode));
    results.push_back(run_bench_mode(mode, session, prompts, a.spec));
    if (constrained.grammar) {
      std::fprintf(stderr, "bench: %s with the schema...\n", to_string(mode));
      results.push_back(run_bench_mode(mode, session, prompts, constrained));
    }
  }
  if (a.as_json) {
    print_json(results, a, session);
  } else {
    print_table(results, a, session);
    if (constrained.grammar) print_grammar_lines(results, a.schema_path, compile_ms);
  }
}

// --save-gguf: builds the dummy model as a benchmark would (same seed and type) and writes it.
void save_dummy_gguf(const BenchArgs& a) {
  std::fprintf(stderr, "bench: building %s with %s weights...\n", a.dummy_preset.c_str(),
               std::string(dtype_name(a.dummy_dtype)).c_str());
  const auto model = make_dummy_model(a.dummy_preset, a.dummy_dtype, 0, a.dummy_layers);
  write_gguf_model(*model, a.save_gguf_path);
  std::fprintf(stderr, "bench: wrote %s (%s, %.1f MiB of weights)\n", a.save_gguf_path.c_str(),
               model->config.describe().c_str(),
               static_cast<double>(model->weight_bytes()) / (1 << 20));
}

int run_bench(const QStringList& args) {
  if (!args.isEmpty() && args.first() == "schemas") return run_bench_schemas(args.mid(1));
  if (!args.isEmpty() && args.first() == "dedup") return run_bench_dedup(args.mid(1));
  if (wants_http_bench(args)) return run_http_bench(args);
  BenchArgs a;
  try {
    a = parse_args(args);
  } catch (const UsageError& e) {
    print_error(kCommand, std::string(e.what()) + " (see sluice bench --help)");
    return 2;
  }
  try {
    if (!a.save_gguf_path.empty()) {
      save_dummy_gguf(a);
      return 0;
    }
    // The device first: a missing GPU is reported before minutes of loading or building weights.
    const bool on_gpu = resolve_device(a.spec.device) >= 0;
    if (on_gpu && !a.dummy_dtype_given) a.dummy_dtype = DType::BF16;
    const ModelSession session =
        a.dummy_preset.empty()
            ? open_model_session(a.model_path, a.tokenizer_path)
            : open_dummy_session(a.dummy_preset, a.tokenizer_path, a.dummy_dtype, a.dummy_layers);
    if (!a.batched.empty()) {
      std::fprintf(stderr, "bench: %zu batch sizes of %d-token prompts...\n", a.batched.size(),
                   a.prompt_tokens);
      print_batched(run_batched_bench(session, a.spec, a.batched, a.prompt_tokens), a, session);
      return 0;
    }
    const auto prompts = read_prompts(a.input_path, a.limit, session);
    if (a.roofline) {
      std::fprintf(stderr, "bench: measuring the GPU and decoding %zu batch sizes...\n",
                   a.roofline_batches.size());
      const RooflineReport report =
          run_roofline_bench(session, prompts, a.spec, a.roofline_batches);
      if (a.as_json) {
        print_roofline_json(report, a, session);
      } else {
        print_roofline_table(report, a, session);
      }
      return 0;
    }
    run_modes(a, session, prompts);
    return 0;
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
}

}  // namespace sluice::cli
