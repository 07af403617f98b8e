// Options shared by the CLI commands (engine limits, sampling, model) and their parsing into
// engine structs. Bad values throw UsageError with a message naming the option.
#pragma once

#include <QCommandLineParser>
#include <QString>
#include <stdexcept>
#include <string>

#include "engine/engine.h"
#include "engine/grammar/json_schema_grammar.h"
#include "engine/reasoning/reasoning_prompt.h"
#include "engine/sched/sampling_params.h"

namespace sluice::cli {

// A command-line mistake: the command prints it with a hint to --help and exits with 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses a subcommand's arguments (those after its name). With --help, prints the help text
// and `epilogue` and exits 0; throws UsageError on an unknown option or a stray argument.
void parse_command_line(QCommandLineParser& parser, const QStringList& args, const char* command,
                        const char* epilogue = "");

// Returns the option's integer value, or fallback when absent; throws UsageError outside
// [min_value, max_value] or when not a number.
long long option_int(const QCommandLineParser& parser, const QString& name, long long fallback,
                     long long min_value, long long max_value);
// Returns the option's number, or fallback when absent; throws UsageError when not finite.
double option_double(const QCommandLineParser& parser, const QString& name, double fallback);
// Parses a byte count with an optional K/M/G/T suffix (powers of 1024): "512M", "2G", "4096".
size_t parse_bytes(const QString& text, const QString& option_name);
// Returns a required option's value; throws UsageError when it is missing.
QString required_option(const QCommandLineParser& parser, const QString& name);

// --max-num-seqs, --max-num-batched-tokens, --kv-cache-bytes, --kv-blocks, --block-size,
// --max-model-len, --no-prefix-caching, --threads, --device.
void add_engine_options(QCommandLineParser& parser);
EngineConfig read_engine_options(const QCommandLineParser& parser);
int read_thread_count(const QCommandLineParser& parser);
std::string read_device(const QCommandLineParser& parser);

// --max-tokens, --temperature, --top-p, --top-k, --min-p, penalties, --seed, --stop,
// --stop-token-id, --ignore-eos, --n.
void add_sampling_options(QCommandLineParser& parser);
SamplingParams read_sampling_options(const QCommandLineParser& parser);

// --thinking on|off, --reasoning-effort low|medium|high, --reasoning-budget N,
// --reasoning-format auto|none|think|thought-channel|harmony (a thinking model's reasoning).
void add_reasoning_options(QCommandLineParser& parser);
// Throws Error naming the option for a value it does not take.
ReasoningControls read_reasoning_options(const QCommandLineParser& parser);

// --schema-mode strict|best-effort and --json-whitespace flexible|compact (each command adds
// them with its own help). Throws UsageError naming the option and the accepted values.
JsonGrammarOptions read_json_grammar_options(const QCommandLineParser& parser);

// Prints "sluice <command>: <message>" to stderr.
void print_error(const char* command, const std::string& message);

}  // namespace sluice::cli
