#include "app/pipeline/pipeline_description.h"

#include <QStringList>
#include <filesystem>
#include <set>

#include "app/cli/cli_options.h"
#include "app/cli/generate_options.h"
#include "app/pipeline/yaml_subset.h"
#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/core/mapped_file.h"

namespace sluice {

namespace {

using Json = nlohmann::ordered_json;

// The `sluice generate` options whose values are files: resolved against the description's folder.
const std::set<std::string> kPathOptions = {"model",   "tokenizer",   "input",
                                            "grammar", "json-schema", "chat-template"};

// Where an error is: "<file>: step 2 (judge): ".
struct Place {
  std::string file;
  size_t index = 0;
  std::string name;
  std::string prefix() const { return str_cat(file, ": step ", index + 1, " (", name, "): "); }
};

std::string resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

// A step's "options" object as `sluice generate` arguments.
QStringList options_to_args(const Json& options, const std::string& base_dir, const Place& at) {
  if (!options.is_object()) fail(at.prefix(), "\"options\" must be an object of generate options");
  QStringList args;
  for (const auto& [raw_key, value] : options.items()) {
    std::string key = raw_key;
    for (char& c : key)
      if (c == '_') c = '-';
    const QString option = QString::fromStdString("--" + key);
    auto add_scalar = [&](const Json& v) {
      if (v.is_string()) {
        const std::string text = v.get<std::string>();
        args << option
             << QString::fromStdString(kPathOptions.count(key) ? resolve(text, base_dir) : text);
      } else if (v.is_number()) {
        args << option << QString::fromStdString(v.dump());
      } else {
        fail(at.prefix(), "options.", raw_key, " must be a string, a number, true or a list, not ",
             json_type_name(v));
      }
    };
    if (value.is_boolean()) {
      if (value.get<bool>()) args << option;
    } else if (value.is_array()) {
      for (const Json& v : value) add_scalar(v);
    } else {
      add_scalar(value);
    }
  }
  return args;
}

GenerationSpec spec_from(const QStringList& args, GrammarCache& grammars, const Place& at) {
  try {
    return cli::generation_spec_from_options(args, grammars);
  } catch (const std::exception& e) {
    fail(at.prefix(), "options: ", e.what());
  }
}

// Reads the keys of step (besides "step", "name", "options") through read, refusing any other.
class StepKeys {
 public:
  StepKeys(const Json& step, const Place& at) : step_(step), at_(at) {}

  template <typename T>
  void read(const char* key, T& out) {
    seen_.insert(key);
    if (!step_.contains(key)) return;
    try {
      out = step_.at(key).get<T>();
    } catch (const nlohmann::json::exception&) {
      fail(at_.prefix(), key, " has the wrong type (", json_type_name(step_.at(key)), ")");
    }
  }
  const Json* object(const char* key) {
    seen_.insert(key);
    if (!step_.contains(key)) return nullptr;
    if (!step_.at(key).is_object()) fail(at_.prefix(), key, " must be an object");
    return &step_.at(key);
  }
  void finish() const {
    for (const auto& [key, value] : step_.items()) {
      if (key == "step" || key == "name" || key == "options" || seen_.count(key)) continue;
      fail(at_.prefix(), "unknown key \"", key, "\"");
    }
  }

 private:
  const Json& step_;
  const Place& at_;
  std::set<std::string> seen_;
};

void check_range(const Place& at, const char* key, double value, double lo, double hi) {
  if (!(value >= lo && value <= hi)) fail(at.prefix(), key, " must be in [", lo, ", ", hi, "]");
}

JudgeStep read_judge(const Json& step, const PipelineStep* generate, const std::string& base_dir,
                     GrammarCache& grammars, const Place& at) {
  JudgeStep judge;
  StepKeys keys(step, at);
  std::string rubric = "ultrafeedback";
  keys.read("rubric", rubric);
  if (rubric == "ultrafeedback") {
    judge.rubric = JudgeRubric::Ultrafeedback;
  } else if (rubric == "pairwise") {
    judge.rubric = JudgeRubric::Pairwise;
  } else {
    fail(at.prefix(), "rubric must be ultrafeedback or pairwise, not \"", rubric, "\"");
  }
  keys.read("k", judge.k);
  check_range(at, "k", judge.k, 1, 16);
  keys.read("rationale_chars", judge.rationale_chars);
  check_range(at, "rationale_chars", judge.rationale_chars, 16, 20000);
  keys.read("instructions", judge.instructions);
  if (const Json* pairs = keys.object("pairs")) {
    StepKeys pair_keys(*pairs, at);
    std::string rule = "best_vs_worst";
    pair_keys.read("rule", rule);
    if (rule == "best_vs_worst") {
      judge.pairs.rule = PairRule::BestVsWorst;
    } else if (rule == "best_vs_random") {
      judge.pairs.rule = PairRule::BestVsRandom;
    } else {
      fail(at.prefix(), "pairs.rule must be best_vs_worst or best_vs_random, not \"", rule, "\"");
    }
    pair_keys.read("min_margin", judge.pairs.min_margin);
    check_range(at, "pairs.min_margin", judge.pairs.min_margin, 0, 1e6);
    pair_keys.read("drop_ties", judge.pairs.drop_ties);
    pair_keys.read("seed", judge.pairs.seed);
    pair_keys.finish();
  }
  keys.finish();

  // The judge's own options over the generate step's model (unless it names its own model or
  // servers); its input, n and grammar are the pipeline's.
  Json options = step.contains("options") ? step.at("options") : Json::object();
  if (!options.is_object()) fail(at.prefix(), "\"options\" must be an object of generate options");
  for (const char* key : {"input", "n", "json-schema", "json-object", "regex", "choice", "grammar",
                          "schema-column", "format", "limit", "prompt-template"}) {
    if (options.contains(key))
      fail(at.prefix(), "options.", key, " is set by the judge step itself");
  }
  const bool has_own_model = options.contains("model") || options.contains("endpoint");
  QStringList args = options_to_args(options, base_dir, at);
  if (!has_own_model) {
    const GenerationSpec& g = generate->generate;
    if (g.remote.is_remote())
      fail(at.prefix(),
           "the generate step runs on remote servers: give the judge its own "
           "options.model or options.endpoint");
    args << "--model" << QString::fromStdString(g.model_path);
    if (!g.tokenizer_path.empty() && !options.contains("tokenizer"))
      args << "--tokenizer" << QString::fromStdString(g.tokenizer_path);
  }
  // A placeholder input; the judge step writes its own file and sets it before each run.
  args << "--input" << QString::fromStdString(generate->generate.input_path);
  if (!options.contains("max-tokens") && !options.contains("max_tokens"))
    args << "--max-tokens"
         << "512";
  if (!options.contains("temperature")) args << "--temperature" << (judge.k > 1 ? "0.7" : "0");
  // Compact JSON: a judge that pads its answer with whitespace would run into max-tokens.
  if (!options.contains("json-whitespace") && !options.contains("json_whitespace"))
    args << "--json-whitespace"
         << "compact";
  judge.spec = spec_from(args, grammars, at);
  judge.spec.sampling.n = judge.k;
  return judge;
}

FilterStep read_filter(const Json& step, const Place& at) {
  FilterStep filter;
  StepKeys keys(step, at);
  keys.read("min_words", filter.min_words);
  keys.read("max_words", filter.max_words);
  keys.read("min_chars", filter.min_chars);
  keys.read("max_chars", filter.max_chars);
  keys.read("refusals", filter.default_refusals);
  keys.read("patterns", filter.patterns);
  keys.finish();
  for (const int bound : {filter.min_words, filter.max_words, filter.min_chars, filter.max_chars})
    if (bound < 0) fail(at.prefix(), "length bounds must be 0 (none) or more");
  for (const std::string& p : filter.patterns)
    if (p.empty() || p.size() > 1000) fail(at.prefix(), "a pattern must have 1 to 1000 bytes");
  return filter;
}

DedupStep read_dedup(const Json& step, const std::string& base_dir, const Place& at) {
  DedupStep dedup;
  StepKeys keys(step, at);
  keys.read("field", dedup.field);
  if (dedup.field != "prompt" && dedup.field != "output")
    fail(at.prefix(), "field must be prompt or output, not \"", dedup.field, "\"");
  keys.read("exact", dedup.exact);
  keys.read("near", dedup.near);
  keys.read("threshold", dedup.threshold);
  check_range(at, "threshold", dedup.threshold, 0.05, 1.0);
  keys.read("permutations", dedup.num_permutations);
  check_range(at, "permutations", dedup.num_permutations, 8, 1024);
  keys.read("shingle_words", dedup.shingle_words);
  check_range(at, "shingle_words", dedup.shingle_words, 1, 64);
  keys.read("decontaminate", dedup.decontaminate);
  dedup.decontaminate = resolve(dedup.decontaminate, base_dir);
  keys.read("ngram", dedup.contamination_ngram);
  check_range(at, "ngram", dedup.contamination_ngram, 3, 64);
  keys.finish();
  return dedup;
}

ExportStep read_export(const Json& step, const Place& at) {
  ExportStep out;
  StepKeys keys(step, at);
  keys.read("dir", out.dir);
  keys.read("license", out.license);
  keys.read("pretty_name", out.pretty_name);
  keys.finish();
  if (out.dir.empty()) fail(at.prefix(), "dir must not be empty");
  return out;
}

StepKind parse_step_kind(const std::string& name, const Place& at) {
  for (StepKind kind :
       {StepKind::Generate, StepKind::Judge, StepKind::Filter, StepKind::Dedup, StepKind::Export}) {
    if (name == to_string(kind)) return kind;
  }
  fail(at.prefix(), "\"step\" must be generate, judge, filter, dedup or export, not \"", name,
       "\"");
}

}  // namespace

const char* to_string(StepKind kind) {
  switch (kind) {
    case StepKind::Generate:
      return "generate";
    case StepKind::Judge:
      return "judge";
    case StepKind::Filter:
      return "filter";
    case StepKind::Dedup:
      return "dedup";
    case StepKind::Export:
      return "export";
  }
  return "?";
}

const PipelineStep* PipelineDescription::find(StepKind kind) const {
  for (const PipelineStep& step : steps)
    if (step.kind == kind) return &step;
  return nullptr;
}

PipelineDescription parse_pipeline_description(const std::string& text, const std::string& path,
                                               GrammarCache& grammars) {
  PipelineDescription d;
  d.path = path;
  d.text = text;
  const std::string base_dir = std::filesystem::path(path).parent_path().string();
  // JSON when it starts with "{", YAML (the subset yaml_subset.h reads) otherwise.
  const size_t first = text.find_first_not_of(" \t\r\n");
  const Json root = first != std::string::npos && text[first] == '{'
                        ? parse_json_text<Json>(text, path)
                        : parse_yaml_subset(text, path);
  if (!root.is_object())
    fail(path, ": a pipeline description is a mapping (JSON object) with \"steps\"");
  for (const auto& [key, value] : root.items()) {
    if (key != "name" && key != "steps")
      fail(path, ": unknown key \"", key, "\" (a description has name and steps)");
  }
  d.name = root.value("name", std::filesystem::path(path).stem().string());
  if (!root.contains("steps") || !root.at("steps").is_array() || root.at("steps").empty())
    fail(path, ": \"steps\" must be a non-empty list");
  const Json& steps = root.at("steps");
  if (steps.size() > 16) fail(path, ": ", steps.size(), " steps; a pipeline has at most 16");
  std::set<StepKind> seen;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Json& s = steps[i];
    Place at{path, i, "?"};
    if (!s.is_object() || !s.contains("step") || !s.at("step").is_string())
      fail(at.prefix(), "a step is an object with \"step\": its kind");
    PipelineStep step;
    step.kind = parse_step_kind(s.at("step").get<std::string>(), at);
    step.name = to_string(step.kind);
    step.source = s;
    at.name = step.name;
    if (seen.count(step.kind)) fail(at.prefix(), "a pipeline has one ", step.name, " step");
    if (i == 0 && step.kind != StepKind::Generate)
      fail(at.prefix(), "the first step must be generate");
    if (!seen.empty() && static_cast<uint8_t>(step.kind) < static_cast<uint8_t>(*seen.rbegin()))
      fail(at.prefix(), "steps run in the order generate, judge, filter, dedup, export");
    seen.insert(step.kind);
    switch (step.kind) {
      case StepKind::Generate: {
        StepKeys keys(s, at);
        keys.finish();
        if (!s.contains("options")) fail(at.prefix(), "needs \"options\" (model, input, ...)");
        step.generate = spec_from(options_to_args(s.at("options"), base_dir, at), grammars, at);
        break;
      }
      case StepKind::Judge:
        step.judge = read_judge(s, &d.steps.front(), base_dir, grammars, at);
        if (step.judge.rubric == JudgeRubric::Pairwise && d.steps.front().generate.sampling.n < 2)
          fail(at.prefix(), "a pairwise judge compares samples: the generate step needs n >= 2");
        break;
      case StepKind::Filter:
        step.filter = read_filter(s, at);
        break;
      case StepKind::Dedup:
        step.dedup = read_dedup(s, base_dir, at);
        break;
      case StepKind::Export:
        step.export_step = read_export(s, at);
        break;
    }
    d.steps.push_back(std::move(step));
  }
  return d;
}

PipelineDescription read_pipeline_description(const std::string& path, GrammarCache& grammars) {
  return parse_pipeline_description(read_text_file(path), path, grammars);
}

}  // namespace sluice
