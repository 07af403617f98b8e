#include "ui/setup/parameters_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QFrame>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QSpinBox>
#include <QVBoxLayout>

#include "engine/core/error.h"
#include "engine/runner/sampler.h"
#include "ui/setup/remote_servers_panel.h"
#include "ui/setup/structured_output_panel.h"

namespace sluice::ui {

namespace {

constexpr qint64 kMib = qint64{1} << 20;
const char* const kRemoteDevice = "remote";  // the device selector's "Remote server(s)…"

}  // namespace

ParametersPanel::ParametersPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(buildRestoredNote());
  layout->addWidget(buildSampling());
  auto* structured = new QGroupBox("Structured output", this);
  auto* structuredLayout = new QVBoxLayout(structured);
  m_structured = new StructuredOutputPanel(structured);
  structuredLayout->addWidget(m_structured);
  layout->addWidget(structured);
  connect(m_structured, &StructuredOutputPanel::changed, this, &ParametersPanel::onEdited);
  layout->addWidget(buildEngine());
  auto* remote = new QGroupBox("Remote servers", this);
  m_remoteBox = remote;
  auto* remoteLayout = new QVBoxLayout(remote);
  m_remote = new RemoteServersPanel(remote);
  remoteLayout->addWidget(m_remote);
  remote->hide();
  layout->addWidget(remote);
  connect(m_remote, &RemoteServersPanel::changed, this, &ParametersPanel::onEdited);
  m_problemLabel = new QLabel(this);
  m_problemLabel->setWordWrap(true);
  m_problemLabel->setStyleSheet("color: #c0392b;");
  m_problemLabel->hide();
  layout->addWidget(m_problemLabel);
  layout->addStretch(1);
  setFromSpec(GenerationSpec{});
}

QDoubleSpinBox* ParametersPanel::addDouble(const QString& label, double low, double high,
                                           double step, int decimals, const QString& tip) {
  auto* spin = new QDoubleSpinBox(this);
  spin->setRange(low, high);
  spin->setSingleStep(step);
  spin->setDecimals(decimals);
  spin->setToolTip(tip);
  spin->setKeyboardTracking(false);
  m_form->addRow(label, spin);
  connect(spin, &QDoubleSpinBox::valueChanged, this, &ParametersPanel::onEdited);
  return spin;
}

QSpinBox* ParametersPanel::addInt(const QString& label, int low, int high, const QString& tip) {
  auto* spin = new QSpinBox(this);
  spin->setRange(low, high);
  spin->setToolTip(tip);
  spin->setKeyboardTracking(false);
  m_form->addRow(label, spin);
  connect(spin, &QSpinBox::valueChanged, this, &ParametersPanel::onEdited);
  return spin;
}

QWidget* ParametersPanel::buildRestoredNote() {
  auto* box = new QFrame(this);
  box->setObjectName("restoredSettings");
  box->setFrameShape(QFrame::StyledPanel);
  m_restoredBox = box;
  auto* boxLayout = new QVBoxLayout(box);
  m_restoredLabel = new QLabel(box);
  m_restoredLabel->setWordWrap(true);
  m_restoredLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  boxLayout->addWidget(m_restoredLabel);
  m_useDefaults = new QPushButton("Use defaults", box);
  m_useDefaults->setToolTip("Put every setting on this page back to its default");
  boxLayout->addWidget(m_useDefaults, 0, Qt::AlignRight);
  connect(m_useDefaults, &QPushButton::clicked, this, [this] { setFromSpec(GenerationSpec{}); });
  box->hide();
  return box;
}

void ParametersPanel::setRestoredSettings(const QStringList& restored) {
  m_restoredLabel->setText(
      restored.isEmpty()
          ? QString()
          : QString("Restored from your last session: %1.").arg(restored.join(", ")));
  m_restoredBox->setVisible(!restored.isEmpty());
}

QString ParametersPanel::restoredNote() const {
  return m_restoredLabel->text();
}

QWidget* ParametersPanel::buildSampling() {
  auto* box = new QGroupBox("Sampling", this);
  m_form = new QFormLayout(box);
  m_maxTokens = addInt("Max tokens", 1, 1 << 20, "New tokens per row at most");
  // The range reaches below zero so that a bad value from a job file is shown and refused
  // inline rather than silently clamped.
  m_temperature = addDouble("Temperature", -1.0, 10.0, 0.1, 3,
                            "Randomness: 0 picks the most likely token every time (greedy)");
  m_topP = addDouble("Top-p", 0.0, 1.0, 0.05, 3,
                     "Sample only from the most likely tokens covering this probability (1 = off)");
  m_topK = addInt("Top-k", 0, 1 << 20, "Sample only from this many most likely tokens (0 = off)");
  m_topK->setSpecialValueText("off");
  m_minP = addDouble("Min-p", 0.0, 1.0, 0.01, 3,
                     "Drop tokens less likely than this fraction of the best one (0 = off)");
  m_repetitionPenalty =
      addDouble("Repetition pen.", 0.0, 10.0, 0.05, 3,
                "Divides the odds of tokens already seen, prompt included (1 = off)");
  m_presencePenalty = addDouble("Presence pen.", -2.0, 2.0, 0.1, 3,
                                "Lowers tokens already generated once, by a flat amount (0 = off)");
  m_frequencyPenalty = addDouble("Frequency pen.", -2.0, 2.0, 0.1, 3,
                                 "Lowers tokens by how often they were generated (0 = off)");
  m_n = addInt("Samples (n)", 1, 1024, "Outputs per row; they share the prompt's KV blocks");
  m_seed = new QLineEdit(box);
  m_seed->setValidator(new QRegularExpressionValidator(QRegularExpression("[0-9]{1,20}"), m_seed));
  m_seed->setToolTip("Random seed; with the row it fixes every sampled output (0..2^64-1)");
  m_form->addRow("Seed", m_seed);
  connect(m_seed, &QLineEdit::textEdited, this, &ParametersPanel::onEdited);
  m_stop = new QPlainTextEdit(box);
  m_stop->setTabChangesFocus(true);
  m_stop->setPlaceholderText("one per line; \\n \\t \\\\ are escapes");
  m_stop->setToolTip(
      "Stop strings, one per line (not included in the output); write \\n for a newline");
  m_stop->setFixedHeight(m_stop->fontMetrics().lineSpacing() * 3 + 12);
  m_form->addRow("Stop strings", m_stop);
  connect(m_stop, &QPlainTextEdit::textChanged, this, &ParametersPanel::onEdited);
  return box;
}

QWidget* ParametersPanel::buildEngine() {
  auto* box = new QGroupBox("Engine", this);
  m_form = new QFormLayout(box);
  m_device = new QComboBox(box);
  m_device->addItem("CPU", "cpu");
  m_device->addItem("Auto (GPU when present)", "auto");
  m_device->addItem("Remote server(s)…", kRemoteDevice);
  m_device->setToolTip(
      "Where the model runs; GPUs are listed once they have been probed. Remote server(s): "
      "OpenAI-compatible servers run the job, no local model needed");
  m_form->addRow("Device", m_device);
  connect(m_device, &QComboBox::currentIndexChanged, this, &ParametersPanel::onDeviceChosen);
  m_gpuMemory = addDouble("GPU memory", 5.0, 99.0, 1.0, 0,
                          "Share of the GPU's memory for weights, activations and the KV cache "
                          "(--gpu-memory-utilization)");
  m_gpuMemory->setSuffix(" %");
  m_kvCacheType = new QComboBox(box);
  m_kvCacheType->addItem("Auto (BF16 on a GPU)", "auto");
  m_kvCacheType->addItem("FP8 E4M3 (about twice the rows)", "fp8");
  m_kvCacheType->setToolTip(
      "GPU: the KV cache's element type (--kv-cache-dtype). FP8 stores each K and V value in a "
      "byte with a scale per token and head: nearly twice the rows in flight for the same memory, "
      "at some cost in accuracy");
  m_form->addRow("KV cache", m_kvCacheType);
  connect(m_kvCacheType, &QComboBox::currentIndexChanged, this, &ParametersPanel::onEdited);
  m_maxNumSeqs =
      addInt("Max running", 1, 1 << 16,
             "Rows generated at once at most (max_num_seqs); fewer when the KV pool is full");
  m_kvBudgetMib = addInt("KV budget", 0, 1 << 22,
                         "Memory for the paged KV cache; auto sizes it for the running rows");
  m_kvBudgetMib->setSuffix(" MiB");
  m_kvBudgetMib->setSpecialValueText("auto");
  m_threads = addInt("CPU threads", 0, 1024, "Threads for the CPU backend (auto = every core)");
  m_threads->setSpecialValueText("auto");
  return box;
}

sluice::SamplingParams ParametersPanel::samplingParams() const {
  SamplingParams params = m_baseSampling;
  params.max_tokens = m_maxTokens->value();
  params.temperature = static_cast<float>(m_temperature->value());
  params.top_p = static_cast<float>(m_topP->value());
  params.top_k = m_topK->value();
  params.min_p = static_cast<float>(m_minP->value());
  params.repetition_penalty = static_cast<float>(m_repetitionPenalty->value());
  params.presence_penalty = static_cast<float>(m_presencePenalty->value());
  params.frequency_penalty = static_cast<float>(m_frequencyPenalty->value());
  params.n = m_n->value();
  params.seed = m_seed->text().toULongLong();
  params.stop = parseStopStrings(m_stop->toPlainText());
  return params;
}

sluice::EngineConfig ParametersPanel::engineConfig() const {
  EngineConfig config = m_baseEngine;
  config.max_num_seqs = m_maxNumSeqs->value();
  config.gpu_memory_utilization = m_gpuMemory->value() / 100.0;
  // The CPU keeps its cache in float32 (an FP8 choice is kept for a GPU only).
  config.kv_cache_dtype =
      device() != "cpu" && !isRemote()
          ? parse_kv_cache_dtype(m_kvCacheType->currentData().toString().toStdString())
          : KvCacheDType::Auto;
  // An edited budget replaces whatever sized the pool before (a block count from a job file).
  if (m_kvBudgetMib->value() != m_specKvMib) {
    config.num_kv_blocks = 0;
    config.kv_cache_bytes = static_cast<size_t>(m_kvBudgetMib->value()) * kMib;
  }
  return config;
}

int ParametersPanel::numThreads() const {
  return m_threads->value();
}

std::string ParametersPanel::device() const {
  return isRemote() ? m_localDevice : m_device->currentData().toString().toStdString();
}

bool ParametersPanel::isRemote() const {
  return m_device->currentData().toString() == kRemoteDevice;
}

void ParametersPanel::setRemote(bool remote) {
  if (remote == isRemote()) return;
  if (remote)
    m_device->setCurrentIndex(m_device->findData(kRemoteDevice));
  else
    setDevice(m_localDevice);
}

void ParametersPanel::onDeviceChosen() {
  if (!isRemote()) m_localDevice = device();
  const bool remote = isRemote();
  m_remoteBox->setVisible(remote);
  // The local engine's limits do not apply to a remote job.
  m_gpuMemory->setEnabled(!remote && device() != "cpu");
  m_kvCacheType->setEnabled(!remote && device() != "cpu");
  for (QWidget* local : {static_cast<QWidget*>(m_maxNumSeqs), static_cast<QWidget*>(m_kvBudgetMib),
                         static_cast<QWidget*>(m_threads)})
    local->setEnabled(!remote);
  onEdited();
}

void ParametersPanel::setDevice(const std::string& id) {
  if (id == kRemoteDevice) {
    setRemote(true);
    return;
  }
  const QString wanted = QString::fromStdString(id);
  int index = m_device->findData(wanted);
  if (index < 0) {  // from a job or the settings, not found on this machine (yet): kept visible
    m_device->addItem(wanted + " (not found)", wanted);
    index = m_device->count() - 1;
  }
  m_localDevice = id;
  m_device->setCurrentIndex(index);
  onDeviceChosen();  // also when the index stays
}

std::optional<sluice::DeviceOption> ParametersPanel::selectedGpu() const {
  const std::string id = device();
  if (isRemote() || id == "cpu" || m_gpus.empty()) return std::nullopt;
  if (id == "auto") return m_gpus.front();
  for (const DeviceOption& gpu : m_gpus) {
    if (gpu.id == id) return gpu;
  }
  return std::nullopt;
}

void ParametersPanel::setDevices(const sluice::DeviceReport& report) {
  const bool wasUpdating = m_updating;
  m_updating = true;
  const std::string current = device();
  const bool wasRemote = isRemote();
  m_gpus = report.devices;
  while (m_device->count() > 2) m_device->removeItem(2);
  for (const DeviceOption& d : report.devices) {
    m_device->addItem(QString::fromStdString(d.label), QString::fromStdString(d.id));
  }
  m_device->addItem("Remote server(s)…", kRemoteDevice);
  m_device->setToolTip(QString::fromStdString(report.summary));
  setDevice(current);
  setRemote(wasRemote);
  m_updating = wasUpdating;
}

void ParametersPanel::applyToSpec(sluice::GenerationSpec& spec) const {
  spec.sampling = samplingParams();
  m_structured->applyToSpec(spec);
  spec.engine = engineConfig();
  spec.num_threads = numThreads();
  spec.device = device();
  spec.remote = isRemote() ? m_remote->remoteSpec() : RemoteSpec{};
}

void ParametersPanel::setFromSpec(const sluice::GenerationSpec& spec) {
  setRestoredSettings({});
  m_updating = true;
  m_baseSampling = spec.sampling;
  m_baseEngine = spec.engine;
  const SamplingParams& s = spec.sampling;
  m_maxTokens->setValue(s.max_tokens);
  m_temperature->setValue(s.temperature);
  m_topP->setValue(s.top_p);
  m_topK->setValue(std::max(0, s.top_k));
  m_minP->setValue(s.min_p);
  m_repetitionPenalty->setValue(s.repetition_penalty);
  m_presencePenalty->setValue(s.presence_penalty);
  m_frequencyPenalty->setValue(s.frequency_penalty);
  m_n->setValue(s.n);
  m_seed->setText(QString::number(static_cast<quint64>(s.seed)));
  m_stop->setPlainText(formatStopStrings(s.stop));
  setDevice(spec.device);
  if (spec.remote.is_remote()) m_remote->setRemoteSpec(spec.remote);
  setRemote(spec.remote.is_remote());
  m_gpuMemory->setValue(spec.engine.gpu_memory_utilization * 100.0);
  m_kvCacheType->setCurrentIndex(spec.engine.kv_cache_dtype == KvCacheDType::Fp8 ? 1 : 0);
  m_maxNumSeqs->setValue(spec.engine.max_num_seqs);
  m_specKvMib =
      static_cast<int>((static_cast<qint64>(spec.engine.kv_cache_bytes) + kMib - 1) / kMib);
  m_kvBudgetMib->setValue(m_specKvMib);
  m_specKvMib = m_kvBudgetMib->value();  // as clamped by the spin box
  m_threads->setValue(spec.num_threads);
  m_structured->setFromSpec(spec);
  m_updating = false;
  onEdited();
}

void ParametersPanel::onEdited() {
  if (m_updating) return;
  validate();
  emit changed();
}

QString ParametersPanel::validationError() const {
  if (!m_problem.isEmpty()) return m_problem;
  if (!m_structured->isValid()) return m_structured->validationError();
  return isRemote() ? m_remote->validationError() : QString();
}

void ParametersPanel::validate() {
  m_problem.clear();
  bool seedOk = false;
  m_seed->text().toULongLong(&seedOk);
  if (!seedOk) {
    m_problem = "seed must be a whole number from 0 to 18446744073709551615";
  } else {
    try {
      validate_sampling_params(samplingParams());
    } catch (const Error& e) {
      m_problem = QString::fromUtf8(e.what());
    }
  }
  m_problemLabel->setText(m_problem);
  m_problemLabel->setVisible(!m_problem.isEmpty());
}

QString ParametersPanel::formatStopStrings(const std::vector<std::string>& stops) {
  QStringList lines;
  for (const std::string& stop : stops) {
    QString line = QString::fromStdString(stop);
    line.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r");
    lines << line;
  }
  return lines.join('\n');
}

std::vector<std::string> ParametersPanel::parseStopStrings(const QString& text) {
  std::vector<std::string> stops;
  for (const QString& line : text.split('\n')) {
    QString stop;
    for (qsizetype i = 0; i < line.size(); ++i) {
      const QChar c = line[i];
      if (c != '\\' || i + 1 == line.size()) {
        stop += c;
        continue;
      }
      const QChar next = line[++i];
      if (next == 'n')
        stop += '\n';
      else if (next == 't')
        stop += '\t';
      else if (next == 'r')
        stop += '\r';
      else if (next == '\\')
        stop += '\\';
      else
        stop += QString('\\') + next;  // not an escape: kept as written
    }
    if (!stop.isEmpty()) stops.push_back(stop.toStdString());
  }
  return stops;
}

}  // namespace sluice::ui
