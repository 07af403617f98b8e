// MainWindow's setup steps: what each step's button says under its title, and whether the step
// is done ("1 Model: stories260K-f32.gguf · loaded", "2 Instructions: alpaca.json · 5,000 rows",
// then the reasoning controls set, if any: "· thinking off"; "3 Parameters: greedy · 256 tokens",
// "· n = 2" for more samples than one, a line naming any other setting changed from its default,
// and one more while the values are the last session's).
#include <QFileInfo>
#include <QFontMetrics>
#include <QPushButton>

#include "ui/common/number_format.h"
#include "ui/live/run_controls.h"
#include "ui/setup/changed_settings.h"
#include "ui/setup/dataset_panel.h"
#include "ui/setup/parameters_panel.h"
#include "ui/setup/reasoning_panel.h"
#include "ui/setup/remote_servers_panel.h"
#include "ui/setup/setup_steps.h"
#include "ui/window/main_window.h"

namespace sluice::ui {

namespace {

enum StepIndex { kModelStep = 0, kInstructionsStep = 1, kParametersStep = 2 };
// The widest a step's extra line gets: the setup column's narrowest, less the line's indent.
constexpr int kStepLineWidthPx = 290;

}  // namespace

void MainWindow::updateSetupSteps() {
  if (m_parameters->isRemote()) {
    m_setup->setStepState(kModelStep,
                          tr("remote: %1").arg(m_parameters->remoteServers()->summary()), true);
  } else if (m_runControls->state() == RunControls::State::Loading) {
    m_setup->setStepState(kModelStep, tr("loading…"), false);
  } else if (m_model) {
    m_setup->setStepState(kModelStep, tr("%1 · loaded").arg(QFileInfo(m_model->path).fileName()),
                          true);
  } else {
    m_setup->setStepState(kModelStep, tr("open a model file or folder"), false);
  }

  const QString dataset = QFileInfo(m_dataset->datasetPath()).fileName();
  // The reasoning controls a job asks for change every prompt: the step says so when set.
  const QString reasoning = m_dataset->reasoningPanel()->summary();
  const auto setInstructionsState = [&](const QString& state, bool isDone) {
    m_setup->setStepState(kInstructionsStep,
                          reasoning.isEmpty() ? state : tr("%1 · %2").arg(state, reasoning),
                          isDone);
  };
  if (dataset.isEmpty()) {
    m_setup->setStepState(kInstructionsStep, tr("open an instruction file"), false);
  } else if (!m_isDatasetLoaded) {
    setInstructionsState(tr("%1 · reading…").arg(dataset), false);
  } else if (m_numDatasetRows >= 0) {
    // The count stops at the panel's cap: more rows may follow.
    const bool isCapped = m_numDatasetRows >= DatasetPanel::kMaxCountedRows;
    setInstructionsState(tr("%1 · %2%3 rows")
                             .arg(dataset, formatCount(m_numDatasetRows),
                                  isCapped ? QStringLiteral("+") : QString()),
                         true);
  } else {
    setInstructionsState(tr("%1 · loaded").arg(dataset), true);
  }

  const QString problem = m_parameters->validationError();
  if (!problem.isEmpty()) {
    m_setup->setStepState(kParametersStep, problem, false);
    return;
  }
  const SamplingParams sampling = m_parameters->samplingParams();
  const QString how = sampling.temperature <= 0.0f
                          ? tr("greedy")
                          : tr("temperature %1").arg(formatDecimal(sampling.temperature, 2));
  QString state = tr("%1 · %2 tokens at most").arg(how, formatCount(sampling.max_tokens));
  if (sampling.n > 1) state += tr(" · n = %1").arg(sampling.n);
  // Every other setting that differs from the defaults (a penalty, a grammar, an engine limit) on
  // a line of its own, cut to the column; the model step names the device and the servers.
  GenerationSpec shown;
  m_parameters->applyToSpec(shown);
  const GenerationSpec defaults;
  shown.sampling.n = defaults.sampling.n;
  shown.sampling.temperature = defaults.sampling.temperature;
  shown.sampling.max_tokens = defaults.sampling.max_tokens;
  shown.device = defaults.device;
  shown.remote = defaults.remote;
  if (const QStringList others = describeChangedSettings(shown); !others.isEmpty()) {
    const QFontMetrics metrics = m_setup->stepButton(kParametersStep)->fontMetrics();
    state += '\n' + metrics.elidedText(others.join(tr(", ")), Qt::ElideRight, kStepLineWidthPx);
  }
  // An interactive launch showing the last session's values says so until they are replaced
  // (the page lists which ones).
  if (!m_parameters->restoredNote().isEmpty()) state += '\n' + tr("restored from last session");
  m_setup->setStepState(kParametersStep, state, true);
}

}  // namespace sluice::ui
