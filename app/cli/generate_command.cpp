#include <cstdio>

#include "app/cli/cli_command.h"

namespace sluice::cli {

int run_generate(const QStringList&) {
  std::fprintf(stderr, "sluice generate: not built yet\n");
  return 1;
}

}  // namespace sluice::cli
