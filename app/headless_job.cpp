#include "app/headless_job.h"

#include <QCommandLineParser>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "app/generation_job.h"

namespace sluice {

int run_headless_job(const QStringList& args) {
  QCommandLineParser parser;
  parser.addOptions({{"model", "Model.", "PATH"},
                     {"dataset", "Instruction file.", "PATH"},
                     {"device", "cpu, cuda, cuda:N or auto.", "DEVICE"},
                     {"start", "Start at once (always, headless)."},
                     {"quit-when-done", "Quit when done (always, headless)."},
                     {"job", "(ignored headless)", "PATH"},
                     {"export", "(ignored headless)", "FORMAT:PATH"},
                     {"screenshot", "(ignored headless)", "DIR"},
                     {"screenshot-every", "(ignored headless)", "SECONDS"},
                     {"serve-port", "(ignored headless)", "PORT"}});
  QStringList argv = args;
  argv.prepend("sluice gui");
  if (!parser.parse(argv) || !parser.isSet("model") || !parser.isSet("dataset")) {
    std::fprintf(stderr,
                 "sluice gui: no display; give --model and --dataset to run the job headless\n");
    return 2;
  }
  std::fprintf(stderr, "sluice gui: no display found; running the job headless\n");
  GenerationSpec spec;
  spec.model_path = parser.value("model").toStdString();
  spec.input_path = parser.value("dataset").toStdString();
  spec.sampling.max_tokens = 128;
  if (parser.isSet("device")) spec.device = parser.value("device").toStdString();
  const std::string job_path =
      (std::filesystem::temp_directory_path() / ("sluice-headless-" + std::to_string(::getpid()) + ".sluicejob")).string();
  try {
    auto job = GenerationJob::create(spec, job_path);
    job->load();
    std::fprintf(stderr, "model: %s\n", job->session().model->config.describe().c_str());
    const RunSummary summary = job->run(
        [](const RowResult& row, double) {
          std::printf("%s\n", dump_jsonl_row(output_row_json(row)).c_str());
          std::fflush(stdout);
        },
        nullptr);
    job.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(job_path + suffix);
    const int64_t failed = summary.progress.rows_failed + summary.progress.rows_skipped;
    std::fprintf(stderr, "done: %lld rows, %lld failed\n", static_cast<long long>(summary.progress.rows_done),
                 static_cast<long long>(failed));
    if (!summary.stop_error.empty()) {
      std::fprintf(stderr, "sluice gui: %s\n", summary.stop_error.c_str());
      return 1;
    }
    return failed > 0 ? 3 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice gui: %s\n", e.what());
    return 1;
  }
}

}  // namespace sluice
