// The options of a remote job (`sluice generate --endpoint URL ...`): which OpenAI-compatible
// servers, which model they serve, and how hard to push them. Bad values throw UsageError
// naming the option.
#pragma once

#include <QCommandLineParser>
#include <functional>
#include <optional>

#include "app/remote/remote_spec.h"

namespace sluice::cli {

// --endpoint (repeatable), --remote-model, --api-key-env, --concurrency, --requests-per-minute,
// --tokens-per-minute, --request-timeout, --retries.
void add_remote_options(QCommandLineParser& parser);
// Returns the remote spec when --endpoint is given; nullopt when it is not (then any other
// remote option is a UsageError: it would be silently ignored).
std::optional<RemoteSpec> read_remote_options(const QCommandLineParser& parser);
// Returns true when any remote option other than --endpoint is set.
bool has_remote_tuning(const QCommandLineParser& parser);
// Returns what applies the remote options given on the command line over a resumed job's
// stored ones (the result is checked again; it throws UsageError).
std::function<void(RemoteSpec&)> remote_overrides(const QCommandLineParser& parser);

}  // namespace sluice::cli
