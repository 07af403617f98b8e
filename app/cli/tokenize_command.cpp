#include <cstdio>

#include "app/cli/cli_command.h"

namespace sluice::cli {

int run_tokenize(const QStringList&) {
  std::fprintf(stderr, "sluice tokenize: not built yet\n");
  return 1;
}

}  // namespace sluice::cli
