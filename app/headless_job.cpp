#include "app/headless_job.h"

#include <unistd.h>
#include <QCommandLineParser>

#include <cstdio>
#include <filesystem>

#include "app/generation_job.h"
#include "app/model_host.h"
#include "app/remote/remote_spec.h"

namespace sluice {

int run_headless_job(const QStringList& args) {
  QCommandLineParser parser;
  parser.addOptions({{"model", "Model.", "PATH"},
                     {"endpoint", "An OpenAI-compatible server's base URL (repeatable).", "URL"},
                     {"remote-model", "With --endpoint: the model to ask the servers for.", "NAME"},
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
  const bool parsed = parser.parse(argv);
  const bool is_remote = parsed && parser.isSet("endpoint");
  if (!parsed || !(parser.isSet("model") || is_remote) || !parser.isSet("dataset")) {
    std::fprintf(stderr,
                 "sluice gui: no display; give --model (or --endpoint) and --dataset to run the "
                 "job headless\n");
    return 2;
  }
  if (is_remote && (parser.isSet("model") || parser.isSet("device"))) {
    std::fprintf(stderr,
                 "sluice gui: --endpoint sends the rows to servers; it takes no --model or "
                 "--device\n");
    return 2;
  }
  std::fprintf(stderr, "sluice gui: no display found; running the job headless\n");
  GenerationSpec spec;
  spec.model_path = parser.value("model").toStdString();
  for (const QString& url : parser.values("endpoint"))
    spec.remote.endpoints.push_back(url.toStdString());
  spec.remote.model = parser.value("remote-model").toStdString();
  spec.input_path = parser.value("dataset").toStdString();
  spec.sampling.max_tokens = 128;
  if (parser.isSet("device")) spec.device = parser.value("device").toStdString();
  const std::string job_path = (std::filesystem::temp_directory_path() /
                                ("sluice-headless-" + std::to_string(::getpid()) + ".sluicejob"))
                                   .string();
  try {
    if (is_remote) check_remote_spec(spec.remote);
    auto job = GenerationJob::create(spec, job_path);
    ModelHost host;
    job->load(host.lend_for_job(job->spec()));
    if (is_remote) {
      std::fprintf(stderr, "remote: model %s on %zu endpoint(s)\n", job->lease().model_name.c_str(),
                   spec.remote.endpoints.size());
    } else {
      std::fprintf(stderr, "model: %s\n", job->session().model->config.describe().c_str());
    }
    const RunSummary summary = job->run(
        [](const RowResult& row, double) {
          std::printf("%s\n", dump_jsonl_row(output_row_json(row)).c_str());
          std::fflush(stdout);
        },
        nullptr);
    job.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(job_path + suffix);
    const int64_t failed = summary.progress.rows_failed + summary.progress.rows_skipped;
    std::fprintf(stderr, "done: %lld rows, %lld failed\n",
                 static_cast<long long>(summary.progress.rows_done),
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
