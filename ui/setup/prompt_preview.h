// The exact prompt one dataset row becomes, live: column template, system prompt and the model's
// chat template applied by the same PromptBuilder a run uses, with the token count. Problems
// (a missing field, a template that does not parse) are shown in place of the prompt.
#pragma once

#include <QString>
#include <QWidget>
#include <optional>
#include <vector>

#include "app/run_snapshots.h"
#include "engine/input/dataset_row.h"
#include "engine/input/field_discovery.h"
#include "engine/input/prompt_builder.h"

class QLabel;
class QPlainTextEdit;

namespace sluice::ui {

class PromptPreview final : public QWidget {
  Q_OBJECT

 public:
  explicit PromptPreview(QWidget* parent = nullptr);

  // The model whose tokenizer and chat template render the prompt.
  void setModel(const sluice::ModelSummary& summary);
  // Without a model the user turn is shown as plain text, without a token count.
  void clearModel();
  // The dataset's format and fields (they pick the default column template).
  void setDataset(sluice::DatasetFormat format, const std::vector<sluice::FieldInfo>& fields);
  void setOptions(const sluice::PromptOptions& options);
  void setRow(const sluice::DatasetRow& row);
  void clearRow();

  // Returns the prompt text shown ("" when there is an error or nothing to show).
  QString text() const { return m_text; }
  // Returns the prompt's token count, or -1 when no model is loaded or there is an error.
  int tokenCount() const { return m_tokenCount; }
  // Returns the problem shown instead of a prompt, or "".
  QString errorText() const { return m_error; }

 private:
  void render();
  void renderWithModel(const sluice::DatasetRow& row);
  void renderWithoutModel(const sluice::DatasetRow& row);
  void showResult(const QString& caption);

  sluice::ModelSummary m_model;
  bool m_hasModel = false;
  sluice::DatasetFormat m_format = sluice::DatasetFormat::Auto;
  std::vector<sluice::FieldInfo> m_fields;
  sluice::PromptOptions m_options;
  std::optional<sluice::DatasetRow> m_row;

  QString m_text;
  int m_tokenCount = -1;
  QString m_error;
  QLabel* m_caption = nullptr;
  QLabel* m_errorLabel = nullptr;
  QPlainTextEdit* m_view = nullptr;
};

}  // namespace sluice::ui
