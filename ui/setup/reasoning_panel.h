// The "Reasoning" section of the prompt settings, for thinking models (issue 31): whether the
// model thinks (as the chat template renders it, on or off), the reasoning effort (gpt-oss), a
// budget of reasoning tokens, and the reasoning format (detected from the chat template unless
// chosen). Its values are PromptOptions::reasoning, so the prompt preview renders with them.
#pragma once

#include <QString>
#include <QWidget>
#include <optional>

#include "engine/reasoning/reasoning_prompt.h"

class QComboBox;
class QSpinBox;

namespace sluice::ui {

class ReasoningPanel final : public QWidget {
  Q_OBJECT

 public:
  // The budget spin box's upper end, in tokens.
  static constexpr int kMaxBudgetTokens = 1000000;

  explicit ReasoningPanel(QWidget* parent = nullptr);

  // Returns the controls as shown.
  sluice::ReasoningControls controls() const;
  // Shows controls (from a job being reopened); emits changed() once.
  void setControls(const sluice::ReasoningControls& controls);
  // Says in the format's "Auto" entry what the chat template's outputs take (nullopt: no template
  // known yet).
  void setDetectedFormat(std::optional<sluice::ReasoningFormat> detected);
  // Returns what differs from the defaults ("thinking off · budget 512 tokens"), or "".
  QString summary() const;

  QComboBox* thinkingCombo() const { return m_thinking; }
  QComboBox* effortCombo() const { return m_effort; }
  QSpinBox* budgetSpin() const { return m_budget; }
  QComboBox* formatCombo() const { return m_format; }

  // The format's name in the combo ("<think> tags").
  static QString formatLabel(sluice::ReasoningFormat format);

 signals:
  void changed();

 private:
  void onEdited();

  bool m_applying = false;
  QComboBox* m_thinking = nullptr;
  QComboBox* m_effort = nullptr;
  QSpinBox* m_budget = nullptr;
  QComboBox* m_format = nullptr;
};

}  // namespace sluice::ui
