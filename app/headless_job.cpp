#include "app/headless_job.h"

#include <QCommandLineParser>
#include <cstdio>

#include "app/generation_job.h"

namespace sluice {

int run_headless_job(const QStringList& args) {
  QCommandLineParser parser;
  parser.addOptions({{"model", "Model.", "PATH"},
                     {"dataset", "Instruction file.", "PATH"},
                     {"start", "Start at once (always, headless)."},
                     {"quit-when-done", "Quit when done (always, headless)."}});
  QStringList argv = args;
  argv.prepend("sluice gui");
  if (!parser.parse(argv) || !parser.isSet("model") || !parser.isSet("dataset")) {
    std::fprintf(stderr,
                 "sluice gui: no display; give --model and --dataset to run the job headless\n");
    return 2;
  }
  std::fprintf(stderr, "sluice gui: no display found; running the job headless\n");
  GenerationJobSpec spec;
  spec.model_path = parser.value("model").toStdString();
  spec.input_path = parser.value("dataset").toStdString();
  spec.sampling.max_tokens = 128;
  try {
    GenerationJob job(spec);
    job.load();
    std::fprintf(stderr, "model: %s\n", job.session().model->config.describe().c_str());
    const size_t failed = job.run(
        [](const RowOutcome& row) {
          std::printf("%s\n", dump_jsonl_row(row.json).c_str());
          std::fflush(stdout);
        },
        nullptr);
    std::fprintf(stderr, "done: %zu rows, %zu failed\n", job.rows().size(), failed);
    return failed > 0 ? 3 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice gui: %s\n", e.what());
    return 1;
  }
}

}  // namespace sluice
