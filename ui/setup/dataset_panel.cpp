#include "ui/setup/dataset_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPromise>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "engine/input/column_template.h"
#include "engine/input/dataset_reader.h"
#include "engine/input/field_value.h"
#include "engine/reasoning/reasoning_parser.h"
#include "ui/common/length_histogram.h"
#include "ui/common/number_format.h"
#include "ui/setup/file_drop.h"
#include "ui/setup/prompt_preview.h"
#include "ui/setup/reasoning_panel.h"

namespace sluice::ui {

namespace {

constexpr size_t kPreviewRows = 20;
constexpr size_t kFieldSampleRows = 1000;
constexpr int kCellChars = 60;
constexpr int kTooltipChars = 2000;
constexpr int kChipColumns = 4;
// Typing pauses shorter than this do not restart the count over the whole file.
constexpr int kCountDelayMs = 400;

const DatasetFormat kFormats[] = {
    DatasetFormat::Auto, DatasetFormat::Jsonl, DatasetFormat::Json,     DatasetFormat::Csv,
    DatasetFormat::Tsv,  DatasetFormat::Text,  DatasetFormat::ShareGpt, DatasetFormat::OpenAiChat};

// One line, cut to max_chars, with newlines shown as ↵ so a cell reads as its text.
QString elideCell(const QString& text, int max_chars) {
  QString flat = text;
  flat.replace('\n', QChar(0x21B5));
  return flat.size() > max_chars ? flat.left(max_chars) + QChar(0x2026) : flat;
}

// Reads the format, the fields and the first rows of a file. Runs on the thread pool.
DatasetScan scanDataset(quint64 generation, const QString& path, DatasetFormat requested) {
  DatasetScan scan;
  scan.generation = generation;
  scan.path = path;
  const std::string file = path.toStdString();
  try {
    scan.format = requested == DatasetFormat::Auto ? detect_dataset_format(file) : requested;
    scan.fields = discover_fields(file, scan.format, kFieldSampleRows);
    const std::unique_ptr<DatasetReader> reader = open_dataset(file, scan.format);
    // Bad rows count toward the cap too, so a file of nothing but bad rows ends quickly.
    for (size_t seen = 0; scan.rows.size() < kPreviewRows && seen < kFieldSampleRows; ++seen) {
      try {
        std::optional<DatasetRow> row = reader->next();
        if (!row) break;
        scan.rows.push_back(std::move(*row));
      } catch (const DatasetRowError&) {
        ++scan.numBadRows;
      }
    }
  } catch (const Error& e) {
    scan.error = QString::fromUtf8(e.what());
  }
  return scan;
}

// Returns whether the reader holds another row, malformed or not.
bool hasMoreRows(DatasetReader& reader) {
  try {
    return reader.next().has_value();
  } catch (const DatasetRowError&) {
    return true;
  }
}

struct CountRequest {
  quint64 generation = 0;
  QString path;
  DatasetFormat format = DatasetFormat::Auto;
  std::vector<FieldInfo> fields;
  PromptOptions options;
  std::shared_ptr<const ModelSession> session;  // keeps the tokenizer alive while counting
};

// Builds and tokenizes the prompts of the first kMaxCountedRows rows. Runs on the thread pool;
// returns early without a result when cancelled.
void countPromptLengths(QPromise<PromptLengthCount>& promise, const CountRequest& request) {
  PromptLengthCount count;
  count.generation = request.generation;
  promise.setProgressRange(0, 100);
  try {
    const PromptBuilder builder(request.options, request.session->model->chat_template,
                                *request.session->tokenizer, request.format, request.fields);
    const std::unique_ptr<DatasetReader> reader =
        open_dataset(request.path.toStdString(), request.format);
    int seen = 0;
    for (; seen < DatasetPanel::kMaxCountedRows; ++seen) {
      if (promise.isCanceled()) return;
      try {
        std::optional<DatasetRow> row = reader->next();
        if (!row) break;
        count.lengths.push_back(static_cast<int>(builder.build(*row).token_ids.size()));
      } catch (const DatasetRowError& e) {
        if (count.numFailedRows++ == 0) {
          count.firstRowError = QString("line %1: %2").arg(e.line).arg(QString::fromUtf8(e.what()));
        }
      }
      if (seen % 256 == 0) {
        const double byRows = static_cast<double>(seen) / DatasetPanel::kMaxCountedRows;
        promise.setProgressValue(static_cast<int>(100 * std::max(byRows, reader->progress())));
      }
    }
    if (seen == DatasetPanel::kMaxCountedRows) count.isTruncated = hasMoreRows(*reader);
  } catch (const Error& e) {
    count.error = QString::fromUtf8(e.what());
  }
  promise.addResult(std::move(count));
}

}  // namespace

DatasetPanel::DatasetPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(buildFileRows());
  auto* tabs = new QTabWidget(this);
  m_previewModel = new QStandardItemModel(this);
  m_table = new QTableView(tabs);
  m_table->setModel(m_previewModel);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->setTextElideMode(Qt::ElideRight);
  m_table->setWordWrap(false);
  m_table->horizontalHeader()->setDefaultSectionSize(140);
  m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
  m_table->setToolTip("The first rows of the file; pick one to preview its prompt");
  tabs->addTab(m_table, "Rows");
  tabs->addTab(buildPromptTab(), "Prompt");
  m_histogram = new LengthHistogram(tabs);
  tabs->addTab(m_histogram, "Lengths");
  tabs->setCurrentIndex(1);
  layout->addWidget(tabs, 1);

  m_countTimer = new QTimer(this);
  m_countTimer->setSingleShot(true);
  m_countTimer->setInterval(kCountDelayMs);
  connect(m_countTimer, &QTimer::timeout, this, &DatasetPanel::startCount);
  connect(&m_scanWatcher, &QFutureWatcher<DatasetScan>::finished, this, &DatasetPanel::onScanned);
  connect(&m_lengthWatcher, &QFutureWatcher<PromptLengthCount>::finished, this,
          &DatasetPanel::onCounted);
  connect(&m_lengthWatcher, &QFutureWatcher<PromptLengthCount>::progressValueChanged, this,
          &DatasetPanel::onCountProgress);
  connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &DatasetPanel::onSelectedRowChanged);
  auto* drop = new FileDrop(this, /*acceptFolders=*/false);
  drop->addTarget(m_pathEdit);
  connect(drop, &FileDrop::pathDropped, this, &DatasetPanel::setDatasetPath);
  updateTemplateEnabled();
}

DatasetPanel::~DatasetPanel() {
  // The tasks hold no pointer to the panel, but waiting keeps them from outliving the app.
  m_lengthFuture.cancel();
  m_lengthFuture.waitForFinished();
  m_scanFuture.waitForFinished();
}

QWidget* DatasetPanel::buildFileRows() {
  auto* box = new QWidget(this);
  auto* form = new QFormLayout(box);
  form->setContentsMargins(0, 0, 0, 0);
  m_pathEdit = new QLineEdit(box);
  m_pathEdit->setPlaceholderText("an instruction file; or drop one here");
  m_pathEdit->setToolTip("The instruction file. Press Enter to open a typed path.");
  auto* openButton = new QPushButton("Open instructions…", box);
  openButton->setToolTip(
      "Choose an instruction file (JSONL, JSON, CSV, TSV, text, ShareGPT, OpenAI)");
  auto* pathRow = new QHBoxLayout;
  pathRow->addWidget(m_pathEdit, 1);
  pathRow->addWidget(openButton);
  form->addRow("File", pathRow);
  m_formatCombo = new QComboBox(box);
  for (const DatasetFormat format : kFormats) {
    m_formatCombo->addItem(to_string(format), static_cast<int>(format));
  }
  m_formatCombo->setToolTip("How the file is read; auto detects it from the content");
  m_badRowCombo = new QComboBox(box);
  m_badRowCombo->addItem("stop the run", static_cast<int>(BadRowPolicy::Stop));
  m_badRowCombo->addItem("skip the row", static_cast<int>(BadRowPolicy::Skip));
  m_badRowCombo->setToolTip("What a run does with a malformed row or one missing a field");
  form->addRow("Format", m_formatCombo);
  form->addRow("Bad row", m_badRowCombo);
  m_statusLabel = new QLabel(box);
  m_statusLabel->setWordWrap(true);
  m_statusLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  form->addRow(m_statusLabel);

  connect(openButton, &QPushButton::clicked, this, &DatasetPanel::openDialog);
  connect(m_pathEdit, &QLineEdit::returnPressed, this,
          [this] { setDatasetPath(m_pathEdit->text().trimmed()); });
  connect(m_formatCombo, &QComboBox::currentIndexChanged, this, &DatasetPanel::startScan);
  return box;
}

QWidget* DatasetPanel::buildPromptTab() {
  auto* tab = new QWidget(this);
  auto* layout = new QVBoxLayout(tab);
  const int lineHeight = fontMetrics().lineSpacing();
  m_templateEdit = new QPlainTextEdit(tab);
  m_templateEdit->setTabChangesFocus(true);
  m_templateEdit->setFixedHeight(lineHeight * 3 + 12);
  m_templateEdit->setToolTip(
      "{field} inserts a field; [ ... ] is dropped when a field in it is empty");
  m_defaultTemplateButton = new QPushButton("Default", tab);
  m_defaultTemplateButton->setToolTip("Go back to the template chosen for this file's fields");
  auto* templateHeader = new QHBoxLayout;
  templateHeader->addWidget(new QLabel("Column template", tab), 1);
  templateHeader->addWidget(m_defaultTemplateButton);
  m_chips = new QWidget(tab);
  m_chipsLayout = new QGridLayout(m_chips);
  m_chipsLayout->setContentsMargins(0, 0, 0, 0);
  m_chipsLayout->setSpacing(2);
  m_chipsLayout->setColumnStretch(kChipColumns, 1);  // chips stay left, at their own width
  m_systemEdit = new QPlainTextEdit(tab);
  m_systemEdit->setTabChangesFocus(true);
  m_systemEdit->setPlaceholderText("System prompt (optional)");
  m_systemEdit->setToolTip(
      "Sent as the system turn before every row (rows with their own keep theirs)");
  m_systemEdit->setFixedHeight(lineHeight * 2 + 12);
  m_chatTemplateCheck = new QCheckBox("Use the model's chat template", tab);
  m_chatTemplateCheck->setChecked(true);
  m_chatTemplateCheck->setToolTip("Off: the prompt is the plain text, as a completion");
  m_reasoning = new ReasoningPanel(tab);
  m_preview = new PromptPreview(tab);
  layout->addLayout(templateHeader);
  layout->addWidget(m_templateEdit);
  layout->addWidget(m_chips);
  layout->addWidget(m_systemEdit);
  layout->addWidget(m_chatTemplateCheck);
  layout->addWidget(m_reasoning);
  layout->addWidget(m_preview, 1);

  connect(m_templateEdit, &QPlainTextEdit::textChanged, this, &DatasetPanel::onOptionsEdited);
  connect(m_systemEdit, &QPlainTextEdit::textChanged, this, &DatasetPanel::onOptionsEdited);
  connect(m_chatTemplateCheck, &QCheckBox::toggled, this, &DatasetPanel::onOptionsEdited);
  connect(m_reasoning, &ReasoningPanel::changed, this, &DatasetPanel::onOptionsEdited);
  connect(m_defaultTemplateButton, &QPushButton::clicked, this,
          [this] { m_templateEdit->setPlainText(m_defaultTemplate); });
  return tab;
}

QAbstractItemModel* DatasetPanel::previewModel() const {
  return m_previewModel;
}

sluice::DatasetFormat DatasetPanel::format() const {
  const auto chosen = static_cast<DatasetFormat>(m_formatCombo->currentData().toInt());
  return chosen == DatasetFormat::Auto ? m_scan.format : chosen;
}

sluice::PromptOptions DatasetPanel::promptOptions() const {
  PromptOptions options;
  options.column_template = columnTemplate().toStdString();
  options.system_prompt = m_systemEdit->toPlainText().toStdString();
  options.use_chat_template = m_chatTemplateCheck->isChecked();
  options.chat_template = m_chatTemplateSource.toStdString();
  options.reasoning = m_reasoning->controls();
  return options;
}

sluice::BadRowPolicy DatasetPanel::onBadRow() const {
  return static_cast<BadRowPolicy>(m_badRowCombo->currentData().toInt());
}

QString DatasetPanel::columnTemplate() const {
  // Chat rows carry their own messages; a template left in the editor would not be used.
  return is_chat_format(format()) ? QString() : m_templateEdit->toPlainText();
}

void DatasetPanel::setDatasetPath(const QString& path) {
  if (path.isEmpty()) return;
  m_path = path;
  m_pathEdit->setText(path);
  emit datasetChosen(path);
  startScan();
}

void DatasetPanel::setPromptOptions(const sluice::PromptOptions& options) {
  m_applyingOptions = true;
  m_templateEdit->setPlainText(QString::fromStdString(options.column_template));
  m_systemEdit->setPlainText(QString::fromStdString(options.system_prompt));
  m_chatTemplateCheck->setChecked(options.use_chat_template);
  m_chatTemplateSource = QString::fromStdString(options.chat_template);
  m_reasoning->setControls(options.reasoning);
  m_applyingOptions = false;
  updateChatTemplateCheck();
  updateDetectedReasoningFormat();
  onOptionsEdited();
}

void DatasetPanel::setOnBadRow(sluice::BadRowPolicy policy) {
  m_badRowCombo->setCurrentIndex(m_badRowCombo->findData(static_cast<int>(policy)));
}

void DatasetPanel::setModel(const sluice::ModelSummary& summary) {
  m_model = summary;
  m_hasModel = summary.session != nullptr;
  updateChatTemplateCheck();
  updateDetectedReasoningFormat();
  if (m_hasModel) {
    m_preview->setModel(summary);
  } else {
    m_preview->clearModel();
  }
  startCount();
}

// The checkbox means nothing when there is no template to use; before a model is loaded it
// stays enabled, since the model may bring one.
void DatasetPanel::updateChatTemplateCheck() {
  const bool hasTemplate =
      !m_hasModel || m_model.hasChatTemplate || !m_chatTemplateSource.isEmpty();
  m_chatTemplateCheck->setEnabled(hasTemplate);
  m_chatTemplateCheck->setToolTip(hasTemplate
                                      ? "Off: the prompt is the plain text, as a completion"
                                      : "This model has no chat template: prompts are plain text");
}

// The format's "Auto" entry names what the template in use writes, as the run will detect it.
void DatasetPanel::updateDetectedReasoningFormat() {
  if (!m_hasModel && m_chatTemplateSource.isEmpty()) {
    m_reasoning->setDetectedFormat(std::nullopt);  // the model may bring a template
    return;
  }
  const QString source =
      m_chatTemplateSource.isEmpty() ? m_model.chatTemplate : m_chatTemplateSource;
  m_reasoning->setDetectedFormat(detect_reasoning_format(source.toStdString()));
}

void DatasetPanel::clearModel() {
  setModel(ModelSummary{});
}

void DatasetPanel::openDialog() {
  const QString path = QFileDialog::getOpenFileName(
      this, "Open instructions", QFileInfo(m_path).absolutePath(),
      "Instruction files (*.jsonl *.json *.csv *.tsv *.txt);;All files (*)");
  if (!path.isEmpty()) setDatasetPath(path);
}

void DatasetPanel::startScan() {
  if (m_path.isEmpty()) return;
  const auto requested = static_cast<DatasetFormat>(m_formatCombo->currentData().toInt());
  m_statusLabel->setStyleSheet(QString());
  m_statusLabel->setText("Reading " + QFileInfo(m_path).fileName() + "…");
  m_lengthFuture.cancel();
  m_histogram->showMessage("Waiting for the file to be read…");
  const quint64 generation = ++m_scanGeneration;
  m_scanFuture = QtConcurrent::run(scanDataset, generation, m_path, requested);
  m_scanWatcher.setFuture(m_scanFuture);
}

void DatasetPanel::onScanned() {
  if (m_scanWatcher.future().resultCount() == 0) return;
  DatasetScan scan = m_scanWatcher.result();
  if (scan.generation != m_scanGeneration) return;  // a newer file or format superseded it
  m_scan = std::move(scan);
  const bool ok = m_scan.error.isEmpty();
  m_formatCombo->setItemText(0, ok ? QString("auto: %1").arg(to_string(m_scan.format)) : "auto");
  if (ok) {
    m_statusLabel->setStyleSheet(QString());
    QString status =
        QString("%1 fields, previewing %2 rows").arg(m_scan.fields.size()).arg(m_scan.rows.size());
    if (m_scan.numBadRows > 0)
      status += QString(" (%1 malformed rows skipped)").arg(m_scan.numBadRows);
    m_statusLabel->setText(status);
  } else {
    m_statusLabel->setStyleSheet("color: #c0392b;");
    m_statusLabel->setText("Cannot read this file: " + m_scan.error);
    m_scan.rows.clear();
    m_scan.fields.clear();
  }
  // The default follows the file; a template the person wrote is kept.
  const QString previousDefault = m_defaultTemplate;
  m_defaultTemplate = QString::fromStdString(default_column_template(m_scan.format, m_scan.fields));
  const QString current = m_templateEdit->toPlainText();
  m_preview->setDataset(m_scan.format, m_scan.fields);
  fillPreviewTable();
  fillFieldChips();
  updateTemplateEnabled();
  if (current.isEmpty() || current == previousDefault) {
    m_templateEdit->setPlainText(m_defaultTemplate);  // re-renders and recounts
  } else {
    onOptionsEdited();
  }
  startCount();
  emit datasetLoaded(ok);
}

void DatasetPanel::fillPreviewTable() {
  m_previewModel->clear();
  QStringList headers;
  for (const FieldInfo& field : m_scan.fields) headers << QString::fromStdString(field.name);
  m_previewModel->setHorizontalHeaderLabels(headers);
  QStringList rowNames;
  for (const DatasetRow& row : m_scan.rows) {
    QList<QStandardItem*> items;
    for (const FieldInfo& field : m_scan.fields) {
      const auto value = row.fields.find(field.name);
      const QString text =
          value == row.fields.end() ? QString() : QString::fromStdString(field_value_text(*value));
      auto* item = new QStandardItem(elideCell(text, kCellChars));
      item->setToolTip(text.left(kTooltipChars));
      items << item;
    }
    m_previewModel->appendRow(items);
    rowNames << QString::number(row.row_index);
  }
  m_previewModel->setVerticalHeaderLabels(rowNames);
  if (m_scan.rows.empty()) {
    m_preview->clearRow();
  } else {
    m_table->selectRow(0);
    m_preview->setRow(m_scan.rows.front());
  }
}

void DatasetPanel::fillFieldChips() {
  while (QLayoutItem* item = m_chipsLayout->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  int index = 0;
  for (const FieldInfo& field : m_scan.fields) {
    const QString name = QString::fromStdString(field.name);
    if (name.contains('{') || name.contains('}')) continue;  // a template cannot spell it
    auto* chip = new QToolButton(m_chips);
    chip->setText(name);
    chip->setAutoRaise(false);
    chip->setToolTip(
        QString("Insert {%1}; e.g. %2").arg(name, QString::fromStdString(field.example)));
    connect(chip, &QToolButton::clicked, this, [this, name] { insertField(name); });
    m_chipsLayout->addWidget(chip, index / kChipColumns, index % kChipColumns);
    ++index;
  }
}

void DatasetPanel::insertField(const QString& name) {
  m_templateEdit->insertPlainText("{" + name + "}");
  m_templateEdit->setFocus();
}

void DatasetPanel::onSelectedRowChanged() {
  const int row = m_table->currentIndex().row();
  if (row >= 0 && row < static_cast<int>(m_scan.rows.size())) m_preview->setRow(m_scan.rows[row]);
}

void DatasetPanel::onOptionsEdited() {
  if (m_applyingOptions) return;
  m_preview->setOptions(promptOptions());
  emit promptOptionsChanged();
  scheduleCount();
}

void DatasetPanel::updateTemplateEnabled() {
  const bool isChat = is_chat_format(format());
  m_templateEdit->setEnabled(!isChat);
  m_chips->setEnabled(!isChat);
  m_defaultTemplateButton->setEnabled(!isChat);
  m_templateEdit->setPlaceholderText(isChat ? "Chat rows use their own messages"
                                            : "e.g. {instruction}[\\n\\n{input}]");
}

// Stops the count in progress at once (its numbers no longer describe the prompts) and starts
// a new one when the edits pause.
void DatasetPanel::scheduleCount() {
  m_lengthFuture.cancel();
  ++m_countGeneration;
  m_countTimer->start();
}

void DatasetPanel::startCount() {
  m_countTimer->stop();
  m_lengthFuture.cancel();
  const quint64 generation = ++m_countGeneration;
  if (m_scan.path.isEmpty() || !m_scan.error.isEmpty()) {
    m_histogram->showMessage("Open an instruction file to see prompt lengths.");
    return;
  }
  if (!m_hasModel) {
    m_histogram->showMessage("Load a model to count prompt tokens.");
    return;
  }
  CountRequest request{generation,    m_scan.path,     m_scan.format,
                       m_scan.fields, promptOptions(), m_model.session};
  m_histogram->showMessage("Counting prompt tokens…");
  m_lengthFuture = QtConcurrent::run(countPromptLengths, std::move(request));
  m_lengthWatcher.setFuture(m_lengthFuture);
}

void DatasetPanel::onCountProgress(int value) {
  if (m_lengthWatcher.isCanceled()) return;
  m_histogram->showMessage(QString("Counting prompt tokens… %1%").arg(value));
}

void DatasetPanel::onCounted() {
  if (m_lengthWatcher.isCanceled() || m_lengthWatcher.future().resultCount() == 0) return;
  const PromptLengthCount count = m_lengthWatcher.result();
  if (count.generation != m_countGeneration) return;  // options changed while it ran
  if (!count.error.isEmpty()) {
    m_histogram->showMessage("Cannot count prompt tokens: " + count.error);
    return;
  }
  QStringList notes;
  if (count.isTruncated) notes << QString("first %1 rows").arg(formatCount(kMaxCountedRows));
  if (count.numFailedRows > 0) {
    notes << QString("%1 rows failed (%2)")
                 .arg(formatCount(count.numFailedRows), count.firstRowError);
  }
  m_histogram->setLengths(count.lengths, notes.join("; "));
  emit promptLengthsReady(count.lengths);
}

}  // namespace sluice::ui
