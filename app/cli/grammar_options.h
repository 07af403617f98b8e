// The grammar options of the commands that constrain or check output (`generate`, `grammar
// check`): --json-schema FILE, --json-object, --regex RE, --choice TEXT (repeated) and --grammar
// FILE, at most one of them.
#pragma once

#include <QCommandLineParser>
#include <optional>

#include "engine/grammar/grammar_source.h"

namespace sluice::cli {

// Returns the source the options give (nullopt when none is given); the files are read, not
// compiled. Throws UsageError when two are given, sluice::Error naming a file it cannot read.
// Precondition: the parser defines the five options (under these names or with them as aliases).
std::optional<GrammarSource> read_grammar_source_options(const QCommandLineParser& parser);

}  // namespace sluice::cli
