// The CLI subcommands. Each takes the arguments after its name and returns the process exit
// code; errors are printed to stderr as one clear line.
#pragma once

#include <QStringList>

namespace sluice::cli {

int run_version();
int run_generate(const QStringList& args);
// `sluice pipeline`: a multi-step job (generate, judge, filter, dedup, export) from a description
// file (app/pipeline).
int run_pipeline(const QStringList& args);
int run_tokenize(const QStringList& args);
int run_bench(const QStringList& args);
// `sluice bench schemas`: JSON Schema subsets compiled and generated from (schema_bench.h).
int run_bench_schemas(const QStringList& args);
int run_render_template(const QStringList& args);
int run_jobs(const QStringList& args);
int run_serve(const QStringList& args);
// `sluice grammar <subcommand>`: today only `check` (grammar_check_command.cpp).
int run_grammar(const QStringList& args);
int run_grammar_check(const QStringList& args);

// Prints the top-level usage to stdout.
void print_usage();

}  // namespace sluice::cli
