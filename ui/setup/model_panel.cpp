#include "ui/setup/model_panel.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/common/number_format.h"
#include "ui/setup/file_drop.h"
#include "ui/setup/memory_plan_view.h"

namespace sluice::ui {

namespace {

// Long enough for any real template to show its shape, short enough for a tooltip.
constexpr int kTooltipTemplateChars = 1500;

QLabel* factLabel(QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return label;
}

}  // namespace

ModelPanel::ModelPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  m_remoteLabel = factLabel(this);
  m_remoteLabel->setStyleSheet("font-weight: bold;");
  m_remoteLabel->hide();
  layout->addWidget(m_remoteLabel);
  layout->addWidget(buildPathRows());
  layout->addWidget(buildProgressRow());
  m_errorLabel = new QLabel(this);
  m_errorLabel->setWordWrap(true);
  m_errorLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_errorLabel->setStyleSheet("color: #c0392b;");
  m_errorLabel->hide();
  layout->addWidget(m_errorLabel);
  layout->addWidget(buildFacts());
  auto* memoryBox = new QGroupBox("Memory", this);
  auto* memoryLayout = new QVBoxLayout(memoryBox);
  m_planView = new MemoryPlanView(memoryBox);
  memoryLayout->addWidget(m_planView);
  layout->addWidget(memoryBox);
  layout->addStretch(1);

  auto* drop = new FileDrop(this, /*acceptFolders=*/true);
  drop->addTarget(m_pathEdit);
  connect(drop, &FileDrop::pathDropped, this, &ModelPanel::openModel);
  showFacts(false);
}

QWidget* ModelPanel::buildPathRows() {
  auto* box = new QWidget(this);
  auto* form = new QFormLayout(box);
  form->setContentsMargins(0, 0, 0, 0);

  // Created in reading order, which is also the tab order.
  m_openButton = new QPushButton("Open model…", box);
  m_openButton->setToolTip(
      "Choose a .gguf or llama2.c .bin file (or a config.json for its folder)");
  m_folderButton = new QToolButton(box);
  m_folderButton->setText("Folder…");
  m_folderButton->setToolTip("Choose a Hugging Face model folder (config.json + safetensors)");
  m_pathEdit = new QLineEdit(box);
  m_pathEdit->setPlaceholderText("GGUF, llama2.c .bin or HF folder; or drop one here");
  m_pathEdit->setToolTip("The model to load. Press Enter to load a typed path.");
  auto* modelRow = new QHBoxLayout;
  modelRow->addWidget(m_openButton);
  modelRow->addWidget(m_folderButton);
  modelRow->addStretch(1);
  form->addRow(modelRow);
  form->addRow("Model", m_pathEdit);

  m_tokenizerEdit = new QLineEdit(box);
  m_tokenizerEdit->setPlaceholderText("the model's own");
  m_tokenizerEdit->setToolTip(
      "A tokenizer file apart from the model (llama2.c tok*.bin / tokenizer.model); empty: the "
      "model's own");
  auto* tokenizerButton = new QToolButton(box);
  tokenizerButton->setText("…");
  tokenizerButton->setToolTip("Choose a tokenizer file");
  auto* tokenizerRow = new QHBoxLayout;
  tokenizerRow->addWidget(m_tokenizerEdit, 1);
  tokenizerRow->addWidget(tokenizerButton);
  form->addRow("Tokenizer", tokenizerRow);

  connect(m_openButton, &QPushButton::clicked, this, &ModelPanel::openDialog);
  connect(m_folderButton, &QToolButton::clicked, this, &ModelPanel::browseModelFolder);
  connect(tokenizerButton, &QToolButton::clicked, this, &ModelPanel::browseTokenizer);
  connect(m_pathEdit, &QLineEdit::returnPressed, this,
          [this] { openModel(m_pathEdit->text().trimmed()); });
  return box;
}

QWidget* ModelPanel::buildProgressRow() {
  m_progressRow = new QWidget(this);
  auto* layout = new QVBoxLayout(m_progressRow);
  layout->setContentsMargins(0, 0, 0, 0);
  m_stageLabel = new QLabel(m_progressRow);
  m_stageLabel->setWordWrap(true);
  m_progress = new QProgressBar(m_progressRow);
  m_progress->setRange(0, 1000);
  m_cancelButton = new QPushButton("Cancel", m_progressRow);
  m_cancelButton->setToolTip("Stop loading this model");
  auto* row = new QHBoxLayout;
  row->addWidget(m_progress, 1);
  row->addWidget(m_cancelButton);
  layout->addWidget(m_stageLabel);
  layout->addLayout(row);
  m_progressRow->hide();
  connect(m_cancelButton, &QPushButton::clicked, this, [this] {
    m_cancelButton->setEnabled(false);
    m_stageLabel->setText("Cancelling…");
    emit cancelLoadRequested();
  });
  return m_progressRow;
}

QWidget* ModelPanel::buildFacts() {
  m_facts = new QGroupBox("Loaded", this);
  auto* form = new QFormLayout(m_facts);
  form->setVerticalSpacing(2);
  m_architecture = factLabel(m_facts);
  m_parameters = factLabel(m_facts);
  m_dtypes = factLabel(m_facts);
  m_context = factLabel(m_facts);
  m_tokenizer = factLabel(m_facts);
  m_chatTemplateLabel = factLabel(m_facts);
  m_runsOn = factLabel(m_facts);
  m_viewTemplateButton = new QToolButton(m_facts);
  m_viewTemplateButton->setText("View…");
  m_viewTemplateButton->setToolTip("Show the model's chat template source");
  auto* templateRow = new QHBoxLayout;
  templateRow->addWidget(m_chatTemplateLabel, 1);
  templateRow->addWidget(m_viewTemplateButton);
  form->addRow("Architecture", m_architecture);
  form->addRow("Parameters", m_parameters);
  form->addRow("Weights", m_dtypes);
  form->addRow("Context", m_context);
  form->addRow("Tokenizer", m_tokenizer);
  form->addRow("Chat template", templateRow);
  form->addRow("Runs on", m_runsOn);
  connect(m_viewTemplateButton, &QToolButton::clicked, this, &ModelPanel::showChatTemplate);
  return m_facts;
}

QString ModelPanel::modelPath() const {
  return m_pathEdit->text().trimmed();
}

QString ModelPanel::tokenizerPath() const {
  return m_tokenizerEdit->text().trimmed();
}

QString ModelPanel::errorText() const {
  return m_errorLabel->isHidden() ? QString() : m_errorLabel->text();
}

QString ModelPanel::parameterText() const {
  return m_parameters->text();
}

QString ModelPanel::formatParameterCount(qint64 count) {
  static const char* const kSuffixes[] = {"", "K", "M", "B", "T"};
  double value = static_cast<double>(count);
  int suffix = 0;
  while (value >= 999.5 && suffix < 4) {
    value /= 1000.0;
    ++suffix;
  }
  // "7.2B" but "13B" and "7B": one decimal only below ten, and only when it says something.
  const bool oneDecimal = suffix > 0 && value < 9.95 && qRound(value * 10) % 10 != 0;
  return QString::number(value, 'f', oneDecimal ? 1 : 0) + kSuffixes[suffix];
}

void ModelPanel::setModelPath(const QString& path) {
  m_pathEdit->setText(path);
}

void ModelPanel::openModel(const QString& path) {
  if (path.isEmpty()) return;
  m_pathEdit->setText(path);
  m_errorLabel->hide();
  showFacts(false);
  m_planView->clear();
  emit modelPathChosen(path, tokenizerPath());
}

void ModelPanel::setLoading(double fraction, const QString& stage) {
  if (!m_loading) {
    m_loading = true;
    m_cancelButton->setEnabled(true);
    m_errorLabel->hide();
  }
  m_openButton->setEnabled(false);
  m_folderButton->setEnabled(false);
  m_progressRow->show();
  m_progress->setValue(qBound(0, qRound(fraction * 1000.0), 1000));
  if (m_cancelButton->isEnabled()) m_stageLabel->setText("Loading: " + stage);
}

void ModelPanel::setLoaded(const sluice::ModelSummary& summary) {
  endLoading();
  m_errorLabel->hide();
  if (!summary.path.isEmpty()) m_pathEdit->setText(summary.path);
  QString architecture = QString("%1 (%2)").arg(summary.architecture, summary.format);
  if (summary.numExperts > 0) {
    architecture +=
        QString(", %1 experts, %2 per token").arg(summary.numExperts).arg(summary.numExpertsUsed);
  }
  m_architecture->setText(architecture);
  m_architecture->setToolTip(summary.description);
  QString parameters = formatParameterCount(summary.parameterCount);
  if (summary.activeParameterCount < summary.parameterCount)
    parameters += QString(", %1 active").arg(formatParameterCount(summary.activeParameterCount));
  m_parameters->setText(parameters);
  m_dtypes->setText(
      QString("%1, %2").arg(summary.dtypes, MemoryPlanView::formatBytes(summary.weightBytes)));
  m_context->setText(QString("%1 tokens").arg(formatCount(summary.contextLength)));
  m_tokenizer->setText(summary.tokenizer);
  m_chatTemplate = summary.hasChatTemplate ? summary.chatTemplate : QString();
  m_chatTemplateLabel->setText(summary.hasChatTemplate ? "yes" : "none (prompts are plain text)");
  QString tip = m_chatTemplate.left(kTooltipTemplateChars);
  if (m_chatTemplate.size() > kTooltipTemplateChars) tip += "\n…";
  m_chatTemplateLabel->setToolTip(tip.isEmpty() ? QString()
                                                : "<pre>" + tip.toHtmlEscaped() + "</pre>");
  m_viewTemplateButton->setVisible(summary.hasChatTemplate);
  m_weightDtypes = summary.dtypes;
  setDevice(m_device);
  showFacts(true);
}

void ModelPanel::setDevice(const QString& device) {
  m_device = device;
  QString text = device == "cpu"    ? QString("CPU")
                 : device == "auto" ? QString("the GPU when there is one, else the CPU")
                                    : device;
  QStringList quantized;
  for (const QString& type : m_weightDtypes.split('+')) {
    if (type.startsWith('Q')) quantized << type;
  }
  if (!quantized.isEmpty()) {
    text += device == "cpu"
                ? QString(" (%1 weights stay quantized on the CPU, with 8-bit activations)")
                      .arg(quantized.join('+'))
                : QString(" (%1 weights stay quantized in VRAM)").arg(quantized.join('+'));
  }
  m_runsOn->setText(text);
  m_runsOn->setToolTip(QString());
}

void ModelPanel::setBackendDescription(const QString& description) {
  m_runsOn->setText(description);
  m_runsOn->setToolTip(description);
}

void ModelPanel::setRemote(const QString& text) {
  m_remoteLabel->setText(text);
  m_remoteLabel->setToolTip(text);
  m_remoteLabel->setVisible(!text.isEmpty());
}

QString ModelPanel::remoteText() const {
  return m_remoteLabel->isHidden() ? QString() : m_remoteLabel->text();
}

QString ModelPanel::runsOnText() const {
  return m_runsOn->text();
}

void ModelPanel::setLoadFailed(const QString& message) {
  endLoading();
  showFacts(false);
  m_errorLabel->setText("Could not load the model: " + message);
  m_errorLabel->show();
}

void ModelPanel::setLoadFailedKeeping(const QString& message, const sluice::ModelSummary& kept) {
  setLoaded(kept);
  m_errorLabel->setText(QString("Could not load the model: %1\nStill using %2.")
                            .arg(message, QDir::toNativeSeparators(kept.path)));
  m_errorLabel->show();
}

void ModelPanel::setLoadCancelled() {
  endLoading();
  m_errorLabel->hide();
  showFacts(false);
}

void ModelPanel::setMemoryPlan(const sluice::MemoryPlan& plan) {
  m_planView->setPlan(plan);
}

void ModelPanel::openDialog() {
  const QString path =
      QFileDialog::getOpenFileName(this, "Open model", QFileInfo(modelPath()).absolutePath(),
                                   "Models (*.gguf *.bin config.json);;All files (*)");
  if (path.isEmpty()) return;
  // A Hugging Face model is its folder; config.json is only how the dialog reaches it.
  openModel(QFileInfo(path).fileName() == "config.json" ? QFileInfo(path).absolutePath() : path);
}

void ModelPanel::browseModelFolder() {
  const QString path = QFileDialog::getExistingDirectory(this, "Open model folder", modelPath());
  if (!path.isEmpty()) openModel(path);
}

void ModelPanel::browseTokenizer() {
  const QString path =
      QFileDialog::getOpenFileName(this, "Choose tokenizer", QFileInfo(modelPath()).absolutePath(),
                                   "Tokenizers (*.bin *.model *.json);;All files (*)");
  if (!path.isEmpty()) m_tokenizerEdit->setText(path);
}

void ModelPanel::showChatTemplate() {
  auto* dialog = new QDialog(this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setWindowTitle("Chat template");
  auto* layout = new QVBoxLayout(dialog);
  auto* text = new QPlainTextEdit(m_chatTemplate, dialog);
  text->setReadOnly(true);
  text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  text->setLineWrapMode(QPlainTextEdit::NoWrap);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
  connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
  layout->addWidget(text);
  layout->addWidget(buttons);
  dialog->resize(640, 480);
  dialog->open();
}

void ModelPanel::endLoading() {
  m_loading = false;
  m_progressRow->hide();
  m_openButton->setEnabled(true);
  m_folderButton->setEnabled(true);
}

void ModelPanel::showFacts(bool visible) {
  m_facts->setVisible(visible);
}

}  // namespace sluice::ui
