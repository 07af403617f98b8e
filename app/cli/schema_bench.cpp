#include "app/cli/schema_bench.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/cli/bench_runner.h"
#include "engine/core/error.h"
#include "engine/core/mapped_file.h"
#include "engine/grammar/grammar_cache.h"
#include "engine/grammar/grammar_source.h"
#include "engine/grammar/output_check.h"

namespace sluice::cli {

namespace fs = std::filesystem;

namespace {

// A schema of the subset that compiled, kept for generation.
struct CompiledSchema {
  std::string path;
  std::shared_ptr<const GrammarSource> source;
  std::shared_ptr<const Grammar> grammar;
};

// Reads and compiles each schema through one cache, timing the compile; returns the first
// `keep` that compiled.
std::vector<CompiledSchema> compile_subset(const SchemaSubset& subset,
                                           const JsonGrammarOptions& options, size_t keep,
                                           SchemaSubsetResult& result) {
  GrammarCache grammars;  // the one way a grammar is compiled (as a job's service does)
  std::vector<CompiledSchema> kept;
  for (const std::string& path : subset.schema_paths) {
    ++result.num_schemas;
    GrammarSource source;
    try {
      source = with_json_options(
          GrammarSource{GrammarSourceKind::JsonSchema, path, read_text_file(path), {}}, options);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench schemas: %s\n", e.what());
      continue;
    }
    if (!nlohmann::json::accept(source.text)) {
      std::fprintf(stderr, "bench schemas: %s: not JSON, counted as not compiled\n", path.c_str());
      continue;
    }
    const auto begin = std::chrono::steady_clock::now();
    std::shared_ptr<const Grammar> grammar;
    try {
      grammar = grammars.get(source);
    } catch (const Error&) {
      continue;  // refused or unsatisfiable: not compiled (sluice grammar check says why)
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench schemas: %s: compile failed unexpectedly: %s\n", path.c_str(),
                   e.what());
      continue;
    }
    result.compile_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin)
            .count());
    ++result.num_compiled;
    if (kept.size() < keep)
      kept.push_back({path, std::make_shared<const GrammarSource>(std::move(source)), grammar});
  }
  return kept;
}

// Judges one finished row against its schema.
void judge_row(const FinishedRequest& f, const CompiledSchema& schema, const OutputCheck& check,
               SchemaSubsetResult& result) {
  ++result.num_rows;
  if (f.finish_reason == FinishReason::Error) {
    if (result.num_errors++ == 0)
      std::fprintf(stderr, "bench schemas: %s: a request failed: %s\n", schema.path.c_str(),
                   f.error.c_str());
    return;
  }
  if (f.finish_reason == FinishReason::Length) ++result.num_max_tokens;
  const OutputVerdict verdict = check.check(f.output_text);
  if (verdict.is_valid) {
    ++result.num_valid;
  } else if (f.is_valid.value_or(false)) {
    result.unsound.push_back({schema.path, f.output_text, verdict.reason});
  }
}

// Generates rows_per_schema rows (n samples of one request) per schema on one engine.
void generate_rows(const std::vector<CompiledSchema>& schemas, const SchemaBenchSpec& spec,
                   const ModelSession& session, SchemaSubsetResult& result) {
  if (schemas.empty()) return;
  BenchSpec bench_spec;
  bench_spec.engine = spec.engine;
  bench_spec.device = spec.device;
  bench_spec.num_threads = spec.num_threads;
  Engine engine(session.model->config, *session.tokenizer,
                make_bench_backend(*session.model, bench_spec), spec.engine);
  const std::vector<int32_t> prompt = session.tokenizer->encode(
      spec.prompt, EncodeOptions{.add_bos = session.tokenizer->add_bos_default()});
  std::vector<std::unique_ptr<OutputCheck>> checks;
  std::vector<RequestId> group_ids;
  for (size_t i = 0; i < schemas.size(); ++i) {
    SamplingParams sampling = spec.sampling;
    sampling.n = spec.rows_per_schema;
    sampling.grammar = schemas[i].source;
    group_ids.push_back(engine.add_request(prompt, sampling, i, schemas[i].grammar));
    checks.push_back(std::make_unique<OutputCheck>(*schemas[i].source, schemas[i].grammar));
  }
  result.num_generated_schemas = schemas.size();
  while (engine.has_unfinished()) {
    for (const FinishedRequest& f : engine.step().finished) {
      const auto it = std::find(group_ids.begin(), group_ids.end(), f.group_id);
      assert(it != group_ids.end());  // every group was added above
      const auto idx = static_cast<size_t>(it - group_ids.begin());
      judge_row(f, schemas[idx], *checks[idx], result);
    }
  }
  result.mask_us = engine.grammar_constraints().mask_times_us();
}

}  // namespace

std::vector<SchemaSubset> list_schema_subsets(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(dir, ": not a folder");
  std::vector<SchemaSubset> subsets;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_directory(ec)) continue;
    SchemaSubset subset{entry.path().filename().string(), {}};
    for (const fs::directory_entry& file : fs::directory_iterator(entry.path(), ec)) {
      if (file.is_regular_file(ec) && file.path().extension() == ".json")
        subset.schema_paths.push_back(file.path().string());
    }
    if (subset.schema_paths.empty()) continue;
    std::sort(subset.schema_paths.begin(), subset.schema_paths.end());
    subsets.push_back(std::move(subset));
  }
  if (ec) fail(dir, ": cannot list: ", ec.message());
  if (subsets.empty())
    fail(dir, ": no subfolder with .json schema files (expected DIR/<subset>/*.json)");
  std::sort(subsets.begin(), subsets.end(),
            [](const SchemaSubset& a, const SchemaSubset& b) { return a.name < b.name; });
  return subsets;
}

SchemaSubsetResult run_schema_subset(const SchemaSubset& subset, JsonWhitespace whitespace,
                                     const SchemaBenchSpec& spec, const ModelSession* session) {
  SchemaSubsetResult result;
  result.subset = subset.name;
  result.whitespace = whitespace;
  const JsonGrammarOptions options{.whitespace = whitespace, .mode = spec.schema_mode};
  const size_t keep = session ? spec.max_generated_schemas : 0;
  const std::vector<CompiledSchema> schemas = compile_subset(subset, options, keep, result);
  if (session) generate_rows(schemas, spec, *session, result);
  return result;
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const auto idx = static_cast<size_t>(q * static_cast<double>(values.size()));
  return values[std::min(values.size() - 1, idx)];
}

}  // namespace sluice::cli
