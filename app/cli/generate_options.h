// `sluice generate`'s options as a spec, for whoever runs generations from options of its own: a
// pipeline step's description (app/pipeline) gives the same options as `sluice generate`.
#pragma once

#include <QStringList>

#include "app/generation_spec.h"

namespace sluice {
class GrammarCache;
}

namespace sluice::cli {

// Returns the spec `sluice generate` runs with for args (its options after the command name, e.g.
// {"--model", "m.gguf", "--n", "4"}), its grammar checked through grammars. The options about
// where results go (--output, --job, --resume, --export, ...) are refused. Throws UsageError (an
// unknown option, a bad value, a missing --model or --input) naming the option.
GenerationSpec generation_spec_from_options(const QStringList& args, GrammarCache& grammars);

}  // namespace sluice::cli
