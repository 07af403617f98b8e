#include "ui/setup/prompt_preview.h"

#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>

#include "engine/input/column_template.h"
#include "engine/input/dataset_format.h"
#include "engine/input/dataset_reader.h"
#include "ui/common/number_format.h"

namespace sluice::ui {

PromptPreview::PromptPreview(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  m_caption = new QLabel(this);
  m_caption->setWordWrap(true);
  m_errorLabel = new QLabel(this);
  m_errorLabel->setWordWrap(true);
  m_errorLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_errorLabel->setStyleSheet("color: #c0392b;");
  m_errorLabel->hide();
  m_view = new QPlainTextEdit(this);
  m_view->setReadOnly(true);
  m_view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_view->setToolTip("The exact text the model is given for the selected row");
  m_view->setMinimumHeight(80);
  layout->addWidget(m_caption);
  layout->addWidget(m_errorLabel);
  layout->addWidget(m_view, 1);
  render();
}

void PromptPreview::setModel(const sluice::ModelSummary& summary) {
  m_model = summary;
  m_hasModel = summary.session != nullptr;
  render();
}

void PromptPreview::clearModel() {
  m_model = {};
  m_hasModel = false;
  render();
}

void PromptPreview::setDataset(sluice::DatasetFormat format,
                               const std::vector<sluice::FieldInfo>& fields) {
  m_format = format;
  m_fields = fields;
  render();
}

void PromptPreview::setOptions(const sluice::PromptOptions& options) {
  m_options = options;
  render();
}

void PromptPreview::setRow(const sluice::DatasetRow& row) {
  m_row = row;
  render();
}

void PromptPreview::clearRow() {
  m_row.reset();
  render();
}

void PromptPreview::render() {
  m_text.clear();
  m_tokenCount = -1;
  m_error.clear();
  if (!m_row) {
    showResult("Open an instruction file and pick a row to see its prompt.");
    return;
  }
  if (m_hasModel) {
    renderWithModel(*m_row);
  } else {
    renderWithoutModel(*m_row);
  }
}

// The same PromptBuilder a run uses, so the preview is the prompt, not an imitation of it.
void PromptPreview::renderWithModel(const sluice::DatasetRow& row) {
  const ModelSession& session = *m_model.session;
  const QString rowName = QString("Row %1").arg(row.row_index);
  try {
    const PromptBuilder builder(m_options, session.model->chat_template, *session.tokenizer,
                                m_format, m_fields);
    const BuiltPrompt prompt = builder.build(row);
    m_text = QString::fromStdString(prompt.text);
    m_tokenCount = static_cast<int>(prompt.token_ids.size());
    const QString how = builder.uses_chat_template() ? "chat template applied" : "plain text";
    showResult(QString("%1 · %2 tokens · %3").arg(rowName, formatCount(m_tokenCount), how));
  } catch (const DatasetRowError& e) {
    m_error =
        QString("%1 (line %2): %3").arg(rowName).arg(row.line).arg(QString::fromUtf8(e.what()));
    showResult(rowName);
  } catch (const Error& e) {
    m_error = "Cannot build prompts: " + QString::fromUtf8(e.what());
    showResult(rowName);
  }
}

// Without a tokenizer only the user turn can be shown: the column template (or a chat row's
// messages) joined as plain text, which is also what a model without a chat template sees.
void PromptPreview::renderWithoutModel(const sluice::DatasetRow& row) {
  const QString rowName = QString("Row %1").arg(row.row_index);
  try {
    std::string text = m_options.system_prompt;
    const auto append = [&text](const std::string& part) {
      if (!text.empty()) text += "\n\n";
      text += part;
    };
    if (!row.messages.empty()) {
      for (const ChatMessage& message : row.messages) append(message.content);
    } else {
      const std::string source = m_options.column_template.empty()
                                     ? default_column_template(m_format, m_fields)
                                     : m_options.column_template;
      if (source.empty()) sluice::fail("no column template fits this row; write one");
      append(ColumnTemplate::parse(source).render(row.fields));
    }
    m_text = QString::fromStdString(text);
    showResult(rowName + " · load a model for its chat template and the token count");
  } catch (const Error& e) {
    m_error =
        QString("%1 (line %2): %3").arg(rowName).arg(row.line).arg(QString::fromUtf8(e.what()));
    showResult(rowName);
  }
}

void PromptPreview::showResult(const QString& caption) {
  m_caption->setText(caption);
  m_errorLabel->setText(m_error);
  m_errorLabel->setVisible(!m_error.isEmpty());
  m_view->setPlainText(m_text);
  m_view->setEnabled(m_error.isEmpty());
}

}  // namespace sluice::ui
