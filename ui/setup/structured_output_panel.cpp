#include "ui/setup/structured_output_panel.h"

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <iterator>

#include "engine/core/error.h"
#include "engine/grammar/grammar_source.h"

namespace sluice::ui {

namespace {

using Mode = StructuredOutputPanel::Mode;

// The modes that are a grammar source, and its kind.
struct ModeKind {
  Mode mode;
  GrammarSourceKind kind;
};
constexpr ModeKind kModeKinds[] = {
    {Mode::JsonSchema, GrammarSourceKind::JsonSchema},
    {Mode::JsonObject, GrammarSourceKind::JsonObject},
    {Mode::Regex, GrammarSourceKind::Regex},
    {Mode::Choice, GrammarSourceKind::Choice},
    {Mode::Gbnf, GrammarSourceKind::Gbnf},
};

constexpr qint64 kMaxFileBytes = qint64{16} << 20;

bool hasEditor(Mode mode) {
  return mode == Mode::JsonSchema || mode == Mode::Regex || mode == Mode::Choice ||
         mode == Mode::Gbnf;
}

// What "✓ valid …" calls a mode's text.
QString modeNoun(Mode mode) {
  switch (mode) {
    case Mode::JsonSchema:
      return "JSON Schema";
    case Mode::Regex:
      return "regular expression";
    case Mode::Choice:
      return "list of choices";
    case Mode::Gbnf:
      return "GBNF grammar";
    case Mode::JsonObject:
    case Mode::FreeText:
    case Mode::SchemaColumn:
      break;
  }
  return {};
}

QString placeholder(Mode mode) {
  switch (mode) {
    case Mode::JsonSchema:
      return R"({"type": "object", "properties": {"answer": {"type": "string"}}})";
    case Mode::Regex:
      return "[A-Z][a-z]+ [0-9]{1,3}";
    case Mode::Choice:
      return "one choice per line";
    case Mode::Gbnf:
      return R"(root ::= "yes" | "no")";
    case Mode::JsonObject:
    case Mode::FreeText:
    case Mode::SchemaColumn:
      break;
  }
  return {};
}

std::vector<std::string> choiceLines(const QString& text) {
  std::vector<std::string> choices;
  for (const QString& line : text.split('\n')) {
    if (!line.isEmpty()) choices.push_back(line.toStdString());
  }
  return choices;
}

}  // namespace

StructuredOutputPanel::StructuredOutputPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* form = m_form = new QFormLayout;
  m_mode = new QComboBox(this);
  m_mode->addItem(tr("Free text"));
  m_mode->addItem(tr("JSON Schema"));
  m_mode->addItem(tr("Any JSON object"));
  m_mode->addItem(tr("Regular expression"));
  m_mode->addItem(tr("One of these choices (one per line)"));
  m_mode->addItem(tr("GBNF grammar"));
  m_mode->addItem(tr("Schema per row"));
  m_mode->setToolTip(
      tr("What every output must follow; decoding only ever picks tokens that keep "
         "it valid"));
  // The longest mode's name is wide; with "Schema column" beside it the form ran past the setup
  // column at 1280 px. The combo may shrink (its text elides; the list shows the whole names).
  m_mode->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_mode->setMinimumContentsLength(14);
  form->addRow(tr("Output"), m_mode);
  m_column = new QComboBox(this);
  m_column->setToolTip(tr("The dataset column holding each row's JSON Schema"));
  m_column->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_column->setMinimumContentsLength(10);
  form->addRow(tr("Schema column"), m_column);
  layout->addLayout(form);

  m_editor = new QPlainTextEdit(this);
  m_editor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_editor->setTabChangesFocus(true);
  m_editor->setLineWrapMode(QPlainTextEdit::NoWrap);
  // Eight lines: room to read a schema, and the verdict below stays in view at 1280x720.
  m_editor->setFixedHeight(m_editor->fontMetrics().lineSpacing() * 8 + 12);
  layout->addWidget(m_editor);
  auto* below = new QHBoxLayout;
  m_status = new QLabel(this);
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  below->addWidget(m_status, 1);
  m_loadButton = new QPushButton(tr("Load file…"), this);
  below->addWidget(m_loadButton, 0, Qt::AlignTop);
  layout->addLayout(below);

  m_debounce.setSingleShot(true);
  m_debounce.setInterval(kDebounceMs);
  connect(&m_debounce, &QTimer::timeout, this, [this] {
    validate();
    emit changed();
  });
  connect(m_mode, &QComboBox::currentIndexChanged, this, &StructuredOutputPanel::onModeChanged);
  connect(m_column, &QComboBox::currentIndexChanged, this, [this] {
    if (m_updating) return;
    validate();
    emit changed();
  });
  connect(m_editor, &QPlainTextEdit::textChanged, this, &StructuredOutputPanel::onTextEdited);
  connect(&m_checkWatcher, &QFutureWatcher<GrammarCheck>::finished, this,
          &StructuredOutputPanel::onChecked);
  connect(m_loadButton, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load a schema, regex or grammar"));
    if (!path.isEmpty()) loadFile(path);
  });
  onModeChanged();
}

StructuredOutputPanel::Mode StructuredOutputPanel::mode() const {
  return static_cast<Mode>(m_mode->currentIndex());
}

void StructuredOutputPanel::setMode(Mode mode) {
  m_mode->setCurrentIndex(static_cast<int>(mode));
}

QString StructuredOutputPanel::text() const {
  return m_editor->toPlainText();
}

void StructuredOutputPanel::setText(const QString& text) {
  m_loadedPath.clear();
  m_editor->setPlainText(text);
}

void StructuredOutputPanel::setColumns(const QStringList& columns) {
  const bool wasUpdating = m_updating;
  m_updating = true;
  const QString current = m_column->currentText();
  m_column->clear();
  m_column->addItems(columns);
  if (!current.isEmpty() && m_column->findText(current) < 0) m_column->addItem(current);
  m_column->setCurrentIndex(current.isEmpty() ? -1 : m_column->findText(current));
  m_updating = wasUpdating;
  validate();
}

bool StructuredOutputPanel::loadFile(const QString& path) {
  QFile file(path);
  QString problem;
  if (!file.open(QIODevice::ReadOnly))
    problem = tr("%1: cannot be read (%2)").arg(path, file.errorString());
  else if (file.size() > kMaxFileBytes)
    problem =
        tr("%1: %2 bytes, more than the 16 MiB a grammar may have").arg(path).arg(file.size());
  if (!problem.isEmpty()) {
    m_status->setText(problem);
    m_status->setStyleSheet("color: #c0392b;");
    return false;
  }
  m_editor->setPlainText(QString::fromUtf8(file.readAll()));
  m_loadedPath = path;  // after setPlainText, whose edit forgets the path
  validateNow();
  return true;
}

std::optional<sluice::GrammarSource> StructuredOutputPanel::grammarSource() const {
  const auto* entry = std::find_if(std::begin(kModeKinds), std::end(kModeKinds),
                                   [&](const ModeKind& e) { return e.mode == mode(); });
  if (entry == std::end(kModeKinds)) return std::nullopt;  // free text, a schema per row
  GrammarSource source;
  source.kind = entry->kind;
  source.name = sourceName().toStdString();
  if (source.kind == GrammarSourceKind::Choice)
    source.choices = choiceLines(text());
  else if (source.kind != GrammarSourceKind::JsonObject)
    source.text = text().toStdString();
  return source;
}

void StructuredOutputPanel::applyToSpec(sluice::GenerationSpec& spec) const {
  const std::optional<GrammarSource> source = grammarSource();
  spec.sampling.grammar = source ? std::make_shared<const GrammarSource>(*source) : nullptr;
  spec.schema_column = mode() == Mode::SchemaColumn ? m_column->currentText().toStdString() : "";
}

void StructuredOutputPanel::setFromSpec(const sluice::GenerationSpec& spec) {
  m_updating = true;
  Mode shown = Mode::FreeText;
  QString shownText;
  if (!spec.schema_column.empty()) {
    shown = Mode::SchemaColumn;
    const QString column = QString::fromStdString(spec.schema_column);
    if (m_column->findText(column) < 0) m_column->addItem(column);
    m_column->setCurrentIndex(m_column->findText(column));
  } else if (spec.sampling.grammar) {
    for (const ModeKind& entry : kModeKinds) {
      if (entry.kind == spec.sampling.grammar->kind) shown = entry.mode;
    }
    QStringList lines;
    for (const std::string& choice : spec.sampling.grammar->choices)
      lines << QString::fromStdString(choice);
    shownText = spec.sampling.grammar->kind == GrammarSourceKind::Choice
                    ? lines.join('\n')
                    : QString::fromStdString(spec.sampling.grammar->text);
  }
  setMode(shown);
  m_editor->setPlainText(shownText);
  m_loadedPath =
      spec.sampling.grammar ? QString::fromStdString(spec.sampling.grammar->name) : QString();
  m_updating = false;
  onModeChanged();
}

QString StructuredOutputPanel::statusText() const {
  return m_status->text();
}

void StructuredOutputPanel::validateNow() {
  m_debounce.stop();
  validate();
  emit changed();
}

void StructuredOutputPanel::onModeChanged() {
  if (m_updating) return;
  const Mode shown = mode();
  m_editor->setVisible(hasEditor(shown));
  m_loadButton->setVisible(hasEditor(shown));
  m_editor->setPlaceholderText(placeholder(shown));
  m_form->setRowVisible(m_column, shown == Mode::SchemaColumn);
  validateNow();
}

void StructuredOutputPanel::onTextEdited() {
  if (m_updating) return;
  m_loadedPath.clear();  // the text is no longer the file's
  m_debounce.start();
}

void StructuredOutputPanel::validate() {
  m_problem.clear();
  const quint64 generation = ++m_checkGeneration;  // a check still running answers nothing now
  QString status;
  const Mode shown = mode();
  if (shown == Mode::SchemaColumn) {
    if (m_column->currentText().isEmpty())
      m_problem = tr("Schema per row: choose the column that holds each row's schema");
    else
      status = tr("Each row's output follows the JSON Schema in its column \"%1\"")
                   .arg(m_column->currentText());
  } else if (shown == Mode::JsonObject) {
    status = tr("Every output is a JSON object");
  } else if (hasEditor(shown)) {
    if (text().trimmed().isEmpty()) {
      m_problem = tr("%1: empty; write one or choose Free text").arg(m_mode->currentText());
    } else if (text().size() > kMaxCheckedBytes) {
      status = tr("Not checked as you type (over 100 KB): the run checks it when it starts");
    } else {
      status = tr("Checking the %1…").arg(modeNoun(shown));
      startCheck(generation, *grammarSource());
    }
  }
  showStatus(status);
}

void StructuredOutputPanel::startCheck(quint64 generation, GrammarSource source) {
  m_checkWatcher.setFuture(
      QtConcurrent::run([generation, source = std::move(source), checks = m_checks] {
        GrammarCheck check{generation, {}};
        try {
          checks->get(source);
        } catch (const Error& e) {
          check.error = QString::fromUtf8(e.what());
        }
        return check;
      }));
}

void StructuredOutputPanel::onChecked() {
  const GrammarCheck check = m_checkWatcher.result();
  if (check.generation != m_checkGeneration) return;  // the text or mode changed since
  m_problem = check.error;
  showStatus(tr("✓ valid %1").arg(modeNoun(mode())));
  emit changed();
}

void StructuredOutputPanel::showStatus(const QString& status) {
  m_status->setText(m_problem.isEmpty() ? status : m_problem);
  m_status->setStyleSheet(m_problem.isEmpty() ? "color: #1e8449;" : "color: #c0392b;");
  m_status->setVisible(!m_status->text().isEmpty());
}

QString StructuredOutputPanel::sourceName() const {
  if (!m_loadedPath.isEmpty()) return m_loadedPath;
  switch (mode()) {
    case Mode::JsonSchema:
      return "schema";
    case Mode::JsonObject:
      return "json object";
    case Mode::Regex:
      return "regex";
    case Mode::Choice:
      return "choices";
    case Mode::Gbnf:
      return "grammar";
    case Mode::FreeText:
    case Mode::SchemaColumn:
      break;
  }
  return {};
}

}  // namespace sluice::ui
