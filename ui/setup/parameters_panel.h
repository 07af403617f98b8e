// Generation settings: the sampling knobs of SamplingParams, the structured output section
// (StructuredOutputPanel) and the engine limits a person is likely to touch (device, GPU memory
// share, running requests, KV budget, threads), or, with the device "Remote server(s)…", the
// servers a remote job's requests go to (RemoteServersPanel). Values are checked with the engine's
// own validate_sampling_params and grammar compile (on a pool thread, StructuredOutputPanel) and
// problems are shown inline, so a run never starts on settings the engine would refuse.
#pragma once

#include <QString>
#include <QWidget>
#include <optional>
#include <string>
#include <vector>

#include "app/generation_spec.h"
#include "engine/backend/device.h"

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace sluice::ui {

class RemoteServersPanel;
class StructuredOutputPanel;

class ParametersPanel final : public QWidget {
  Q_OBJECT

 public:
  explicit ParametersPanel(QWidget* parent = nullptr);

  // Returns the sampling settings as shown (fields the panel has no control for keep the values
  // of the last setFromSpec). May be invalid: check isValid() before a run.
  sluice::SamplingParams samplingParams() const;
  // Returns the engine limits as shown over the last setFromSpec's engine config.
  sluice::EngineConfig engineConfig() const;
  // Returns the CPU threads (0 = every core).
  int numThreads() const;
  // Returns the local device to run on: "cpu", "auto" or "cuda:N" (with "Remote server(s)…"
  // chosen: the local device chosen last).
  std::string device() const;
  // True when "Remote server(s)…" is chosen: a run goes to remoteServers()'s endpoints.
  bool isRemote() const;
  // Chooses "Remote server(s)…" (true) or the local device chosen last (false).
  void setRemote(bool remote);
  // Offers the probed devices (besides CPU and auto), keeping the current choice; the report's
  // summary becomes the selector's tooltip.
  void setDevices(const sluice::DeviceReport& report);
  // Returns the GPU the run would use, as probed (a cuda:N choice, or the first GPU for auto),
  // or nothing for the CPU or a device not found.
  std::optional<sluice::DeviceOption> selectedGpu() const;
  // Selects a device by id (kept visible as "not found" until a probe lists it).
  void setDevice(const std::string& id);
  // Writes the panel's sampling, structured output, engine and thread settings into spec, and
  // the remote servers' settings when "Remote server(s)…" is chosen (else none).
  void applyToSpec(sluice::GenerationSpec& spec) const;
  // Shows spec's sampling, structured output, device, remote servers, engine and thread settings.
  // A plain method, not a slot: a slot would make this header's moc code instantiate
  // GenerationSpec's metatype before app/engine_worker.h declares it (Q_DECLARE_METATYPE).
  void setFromSpec(const sluice::GenerationSpec& spec);
  // Says above the settings that they are the last session's, naming the ones that differ from
  // the defaults ("n = 2", "temperature 0.9"), with a button that puts the defaults back; an
  // empty list hides it. setFromSpec hides it too (the panel then shows another spec).
  void setRestoredSettings(const QStringList& restored);
  // Returns the note as shown ("Restored from your last session: n = 2, …"), "" when hidden.
  QString restoredNote() const;
  QPushButton* useDefaultsButton() const { return m_useDefaults; }

  bool isValid() const { return validationError().isEmpty(); }
  // Returns why the settings are invalid (sampling first, then structured output, then the remote
  // servers when chosen), or "" when they are valid.
  QString validationError() const;
  // The "Structured output" section (its grammar reaches the spec through applyToSpec).
  StructuredOutputPanel* structuredOutput() const { return m_structured; }
  // The "Remote servers" section (shown while "Remote server(s)…" is chosen).
  RemoteServersPanel* remoteServers() const { return m_remote; }
  QComboBox* deviceSelector() const { return m_device; }

  // Returns stop strings as the editor shows them: one per line, with \n, \t and \\ escaped.
  static QString formatStopStrings(const std::vector<std::string>& stops);
  // Parses the editor's text back: one stop string per line, escapes undone, empty lines skipped.
  static std::vector<std::string> parseStopStrings(const QString& text);

 signals:
  void changed();

 private:
  QWidget* buildRestoredNote();
  QWidget* buildSampling();
  QWidget* buildEngine();
  QDoubleSpinBox* addDouble(const QString& label, double low, double high, double step,
                            int decimals, const QString& tip);
  QSpinBox* addInt(const QString& label, int low, int high, const QString& tip);
  void onEdited();
  void validate();
  void onDeviceChosen();

  sluice::SamplingParams m_baseSampling;
  sluice::EngineConfig m_baseEngine;
  int m_specKvMib = 0;  // the budget setFromSpec showed; while unchanged its exact bytes are kept
  QString m_problem;
  bool m_updating = false;

  QFormLayout* m_form = nullptr;  // the form addDouble/addInt append to
  QSpinBox* m_maxTokens = nullptr;
  QDoubleSpinBox* m_temperature = nullptr;
  QDoubleSpinBox* m_topP = nullptr;
  QSpinBox* m_topK = nullptr;
  QDoubleSpinBox* m_minP = nullptr;
  QDoubleSpinBox* m_repetitionPenalty = nullptr;
  QDoubleSpinBox* m_presencePenalty = nullptr;
  QDoubleSpinBox* m_frequencyPenalty = nullptr;
  QSpinBox* m_n = nullptr;
  QLineEdit* m_seed = nullptr;
  QPlainTextEdit* m_stop = nullptr;
  std::vector<sluice::DeviceOption> m_gpus;  // as last probed
  QComboBox* m_device = nullptr;
  QDoubleSpinBox* m_gpuMemory = nullptr;
  QComboBox* m_kvCacheType = nullptr;
  QSpinBox* m_maxNumSeqs = nullptr;
  QSpinBox* m_kvBudgetMib = nullptr;
  QSpinBox* m_threads = nullptr;
  QLabel* m_problemLabel = nullptr;
  QWidget* m_restoredBox = nullptr;  // the last session's note and its "Use defaults"
  QLabel* m_restoredLabel = nullptr;
  QPushButton* m_useDefaults = nullptr;
  StructuredOutputPanel* m_structured = nullptr;
  QWidget* m_remoteBox = nullptr;
  RemoteServersPanel* m_remote = nullptr;
  std::string m_localDevice = "cpu";  // the local device chosen last
};

}  // namespace sluice::ui
