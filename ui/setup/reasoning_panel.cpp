#include "ui/setup/reasoning_panel.h"

#include <QComboBox>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QSpinBox>
#include <QStringList>
#include <QVBoxLayout>
#include <algorithm>
#include <initializer_list>
#include <utility>

#include "ui/common/number_format.h"

namespace sluice::ui {
namespace {

// The thinking combo's data: -1 as the template renders it, 0 off, 1 on.
constexpr int kThinkingAsTemplate = -1;
// The format combo's data for Auto; the others hold the ReasoningFormat.
constexpr int kFormatAuto = -1;
// Characters a combo keeps when the panel is narrow.
constexpr int kMinComboChars = 10;

constexpr sluice::ReasoningFormat kFormats[] = {
    sluice::ReasoningFormat::None, sluice::ReasoningFormat::ThinkTags,
    sluice::ReasoningFormat::ThoughtChannel, sluice::ReasoningFormat::Harmony};

}  // namespace

ReasoningPanel::ReasoningPanel(QWidget* parent) : QWidget(parent) {
  m_thinking = new QComboBox(this);
  m_thinking->addItem(tr("As the template renders it"), kThinkingAsTemplate);
  m_thinking->addItem(tr("On"), 1);
  m_thinking->addItem(tr("Off"), 0);
  m_thinking->setToolTip(
      tr("Whether a thinking model reasons before it answers (the template's enable_thinking; "
         "off closes the reasoning block the prompt would open)"));

  m_effort = new QComboBox(this);
  m_effort->addItem(tr("Template default"), QString());
  m_effort->addItem(tr("Low"), QStringLiteral("low"));
  m_effort->addItem(tr("Medium"), QStringLiteral("medium"));
  m_effort->addItem(tr("High"), QStringLiteral("high"));
  m_effort->setToolTip(tr("The template's reasoning_effort (gpt-oss reads it)"));

  m_budget = new QSpinBox(this);
  m_budget->setRange(-1, kMaxBudgetTokens);
  m_budget->setSpecialValueText(tr("No limit"));  // shown for -1, the minimum
  m_budget->setSuffix(tr(" tokens"));
  m_budget->setValue(-1);
  m_budget->setToolTip(
      tr("Reasoning tokens at most: then the reasoning is closed and the answer follows "
         "(0: the model answers at once)"));

  m_format = new QComboBox(this);
  m_format->addItem(tr("Auto"), kFormatAuto);
  for (const sluice::ReasoningFormat format : kFormats)
    m_format->addItem(formatLabel(format), static_cast<int>(format));
  m_format->setToolTip(
      tr("How the reasoning is told apart from the answer; Auto: as the chat template writes it"));
  setDetectedFormat(std::nullopt);

  // Titled once, the labels stay short; one field a row, so the section fits the setup column
  // at 1280 px (two fields a row made the Instructions page wider than its column, cut off on
  // the right); the combos may shrink (their texts elide) so the section does not widen the panel.
  auto* box = new QGroupBox(tr("Reasoning (thinking models)"), this);
  for (QComboBox* combo : {m_thinking, m_effort, m_format}) {
    combo->setParent(box);
    combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    combo->setMinimumContentsLength(kMinComboChars);
  }
  m_budget->setParent(box);
  auto* grid = new QGridLayout(box);
  int row = 0;
  for (const auto& [label, field] :
       std::initializer_list<std::pair<QString, QWidget*>>{{tr("Thinking"), m_thinking},
                                                           {tr("Effort"), m_effort},
                                                           {tr("Budget"), m_budget},
                                                           {tr("Format"), m_format}}) {
    grid->addWidget(new QLabel(label, box), row, 0);
    grid->addWidget(field, row, 1);
    ++row;
  }
  grid->setColumnStretch(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(box);

  for (QComboBox* combo : {m_thinking, m_effort, m_format})
    connect(combo, &QComboBox::currentIndexChanged, this, &ReasoningPanel::onEdited);
  connect(m_budget, &QSpinBox::valueChanged, this, &ReasoningPanel::onEdited);
}

QString ReasoningPanel::formatLabel(sluice::ReasoningFormat format) {
  switch (format) {
    case sluice::ReasoningFormat::None:
      return tr("None");
    case sluice::ReasoningFormat::ThinkTags:
      return tr("<think> tags");
    case sluice::ReasoningFormat::ThoughtChannel:
      return tr("Gemma thought channel");
    case sluice::ReasoningFormat::Harmony:
      return tr("gpt-oss harmony");
  }
  return QString();
}

sluice::ReasoningControls ReasoningPanel::controls() const {
  sluice::ReasoningControls controls;
  const int thinking = m_thinking->currentData().toInt();
  if (thinking != kThinkingAsTemplate) controls.thinking = thinking == 1;
  controls.effort = m_effort->currentData().toString().toStdString();
  controls.budget = m_budget->value();
  const int format = m_format->currentData().toInt();
  if (format != kFormatAuto) controls.format = static_cast<sluice::ReasoningFormat>(format);
  return controls;
}

void ReasoningPanel::setControls(const sluice::ReasoningControls& controls) {
  m_applying = true;
  m_thinking->setCurrentIndex(
      m_thinking->findData(controls.thinking ? (*controls.thinking ? 1 : 0) : kThinkingAsTemplate));
  // An effort the combo lacks (a job file written by hand) shows as the default; the CLI and the
  // job file refuse any other word, so none reaches a run from here.
  m_effort->setCurrentIndex(
      std::max(0, m_effort->findData(QString::fromStdString(controls.effort))));
  m_budget->setValue(controls.budget);
  m_format->setCurrentIndex(
      m_format->findData(controls.format ? static_cast<int>(*controls.format) : kFormatAuto));
  m_applying = false;
  emit changed();
}

void ReasoningPanel::setDetectedFormat(std::optional<sluice::ReasoningFormat> detected) {
  m_format->setItemText(0, detected ? tr("Auto (%1)").arg(formatLabel(*detected)) : tr("Auto"));
}

QString ReasoningPanel::summary() const {
  const sluice::ReasoningControls shown = controls();
  QStringList parts;
  if (shown.thinking) parts << (*shown.thinking ? tr("thinking on") : tr("thinking off"));
  if (!shown.effort.empty()) parts << tr("effort %1").arg(QString::fromStdString(shown.effort));
  if (shown.budget >= 0) parts << tr("reasoning ≤ %1 tokens").arg(formatCount(shown.budget));
  if (shown.format) parts << tr("reasoning as %1").arg(formatLabel(*shown.format));
  return parts.join(QStringLiteral(" · "));
}

void ReasoningPanel::onEdited() {
  if (!m_applying) emit changed();
}

}  // namespace sluice::ui
