// The "Structured output" section of the parameters: what constrains every output (a JSON Schema,
// any JSON object, a regular expression, a choice among lines, a GBNF grammar, or each row's own
// schema in a dataset column) and an editor whose text is checked as you type by compiling it as
// the engine does (through a GrammarCache), on a pool thread: the GUI thread never compiles a
// grammar, and a check superseded by more typing is dropped. Until a check answers the text
// counts as valid (as during the debounce); the run's service checks it again before the job
// file exists.
#pragma once

#include <QFutureWatcher>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QWidget>
#include <memory>
#include <optional>

#include "app/generation_spec.h"
#include "engine/grammar/grammar_cache.h"

class QComboBox;
class QFormLayout;
class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace sluice::ui {

class StructuredOutputPanel final : public QWidget {
  Q_OBJECT

 public:
  // The order of the mode selector's entries.
  enum class Mode { FreeText, JsonSchema, JsonObject, Regex, Choice, Gbnf, SchemaColumn };
  // Texts longer than this are not checked as you type (the run checks them when it starts).
  static constexpr qsizetype kMaxCheckedBytes = 100 * 1024;
  // The pause after the last keystroke before the text is checked.
  static constexpr int kDebounceMs = 300;

  explicit StructuredOutputPanel(QWidget* parent = nullptr);

  Mode mode() const;
  void setMode(Mode mode);
  QString text() const;
  void setText(const QString& text);
  // Offers the dataset's columns for "Schema per row", keeping the current choice.
  void setColumns(const QStringList& columns);
  // Reads path into the editor (named in errors from then on); false and a message when it cannot.
  bool loadFile(const QString& path);

  // Returns the grammar as shown, or nothing for free text and a schema per row.
  std::optional<sluice::GrammarSource> grammarSource() const;
  // Writes the grammar and the schema column into spec.
  void applyToSpec(sluice::GenerationSpec& spec) const;
  // Shows spec's grammar or schema column (free text when it has neither).
  void setFromSpec(const sluice::GenerationSpec& spec);

  bool isValid() const { return m_problem.isEmpty(); }
  // Returns why the structured output settings would be refused, or "" when they are valid.
  QString validationError() const { return m_problem; }
  // Returns the line under the editor ("✓ valid JSON Schema", "Checking …" or the engine's
  // error).
  QString statusText() const;
  // Checks the text now rather than after the debounce (a grammar's compile answers later).
  void validateNow();
  // True while a grammar's check runs in the background.
  bool isChecking() const { return m_checkWatcher.isRunning(); }

  QComboBox* modeSelector() const { return m_mode; }
  QPlainTextEdit* editor() const { return m_editor; }

 signals:
  // The mode, text or column changed; validity follows the debounce (see validationError).
  void changed();

 private:
  // A background check's answer: the error ("" when the grammar compiles) for the check
  // numbered generation.
  struct GrammarCheck {
    quint64 generation = 0;
    QString error;
  };

  void onModeChanged();
  void onTextEdited();
  void validate();
  // Compiles source on a pool thread; onChecked takes the answer.
  void startCheck(quint64 generation, sluice::GrammarSource source);
  void onChecked();
  void showStatus(const QString& status);
  QString sourceName() const;

  QString m_loadedPath;  // the file the editor's text came from; "" when typed
  QString m_problem;
  bool m_updating = false;
  QTimer m_debounce;
  quint64 m_checkGeneration = 0;  // the latest check; an answer to an older one is dropped
  // The checks' compiles (shared with a check still running when the panel goes).
  std::shared_ptr<sluice::GrammarCache> m_checks = std::make_shared<sluice::GrammarCache>(8);
  QFutureWatcher<GrammarCheck> m_checkWatcher;

  QFormLayout* m_form = nullptr;
  QComboBox* m_mode = nullptr;
  QComboBox* m_column = nullptr;
  QPlainTextEdit* m_editor = nullptr;
  QPushButton* m_loadButton = nullptr;
  QLabel* m_status = nullptr;
};

}  // namespace sluice::ui
