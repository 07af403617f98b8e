#include "app/run_snapshots.h"

#include "engine/backend/cuda/cuda_weight_layout.h"

namespace sluice {

ModelSummary summarize_model(std::shared_ptr<const ModelSession> session) {
  ModelSummary s;
  const Model& m = *session->model;
  s.path = QString::fromStdString(m.path);
  s.format = QString::fromStdString(m.format_name());
  s.architecture = QString::fromStdString(m.config.architecture);
  s.description = QString::fromStdString(m.config.describe());
  s.dtypes = QString::fromStdString(m.weight_dtypes());
  s.tokenizer = QString::fromStdString(session->tokenizer->describe());
  s.weightBytes = static_cast<qint64>(m.weight_bytes());
  const ModelConfig& c = m.config;
  s.parameterCount = static_cast<qint64>(m.parameter_count());
  s.activeParameterCount = static_cast<qint64>(m.active_parameter_count());
  s.numExperts = c.num_experts;
  s.numExpertsUsed = c.num_experts_used;
  s.gpuWeightBytes = static_cast<qint64>(cuda_weight_bytes(m.weights, c, /*element_bytes=*/2));
  s.contextLength = c.max_position_embeddings;
  s.hasChatTemplate = !m.chat_template.empty();
  s.chatTemplate = QString::fromStdString(m.chat_template);
  s.session = std::move(session);
  return s;
}

}  // namespace sluice
