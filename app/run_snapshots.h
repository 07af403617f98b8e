// Value snapshots the engine worker sends to the GUI through queued signals. Plain copyable
// values: the GUI never reaches into the engine.
#pragma once

#include <QMetaType>
#include <QString>
#include <QVector>
#include <memory>

#include "engine/backend/device.h"
#include "engine/engine_stats.h"
#include "engine/kv_block_map.h"
#include "engine/memory_plan.h"
#include "engine/model_session.h"

namespace sluice {

// One finished row, as the results table and the timeline show it.
struct RowSnapshot {
  qint64 rowIndex = 0;
  QString id;
  QString prompt;
  QString output;
  int promptTokens = 0;
  int outputTokens = 0;
  QString status;        // done, failed, skipped
  QString finishReason;  // stop, length, error, ...
  QString error;
  double arrivalS = 0.0;  // seconds since the run's engine started
  double queueMs = 0.0;   // arrival -> first scheduled (prefill starts)
  double ttftMs = 0.0;    // arrival -> first token (decode starts)
  double totalMs = 0.0;   // arrival -> finished
};

// Memory at one moment of a run: what the backend holds and what the process and system show.
struct MemorySample {
  double elapsedS = 0.0;
  qint64 weightBytes = 0;
  qint64 kvPoolBytes = 0;
  qint64 stateBytes = 0;  // a hybrid model's recurrent-state slots (0 for the others)
  qint64 activationBytes = 0;
  qint64 otherBytes =
      0;  // process resident memory beyond the above (CPU) or device use beyond it (GPU)
  qint64 freeBytes = 0;  // system memory available (CPU) or device memory free (GPU)
  bool isGpu = false;
};

// What was loaded, for the model panel.
struct ModelSummary {
  QString path;
  QString format;  // gguf, safetensors, llama2c, dummy
  QString architecture;
  QString description;        // ModelConfig::describe()
  QString dtypes;             // "F32", "Q8_0+F16+F32"
  QString tokenizer;          // Tokenizer::describe()
  qint64 weightBytes = 0;     // in host memory (the file's tensors)
  qint64 gpuWeightBytes = 0;  // on a GPU with BF16 activations (quantized blocks kept as they are)
  qint64 parameterCount = 0;
  qint64 activeParameterCount = 0;  // per token: below parameterCount for a mixture of experts
  int numExperts = 0;               // 0 for a dense model
  int numExpertsUsed = 0;
  int contextLength = 0;
  bool hasChatTemplate = false;
  QString chatTemplate;
  std::shared_ptr<const ModelSession> session;  // read-only use from any thread (tokenizer, config)
};

// Builds the summary of a loaded session.
ModelSummary summarize_model(std::shared_ptr<const ModelSession> session);

}  // namespace sluice

Q_DECLARE_METATYPE(sluice::RowSnapshot)
Q_DECLARE_METATYPE(sluice::MemorySample)
Q_DECLARE_METATYPE(sluice::ModelSummary)
Q_DECLARE_METATYPE(sluice::KvBlockMap)
Q_DECLARE_METATYPE(sluice::MemoryPlan)
Q_DECLARE_METATYPE(sluice::StepStats)
Q_DECLARE_METATYPE(sluice::DeviceReport)
