#include "ui/results/row_detail_pane.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTextDocumentFragment>
#include <QVBoxLayout>
#include <cmath>

#include "ui/common/number_format.h"
#include "ui/common/reasoning_fold.h"

namespace sluice::ui {
namespace {

QPlainTextEdit* make_text_view(QWidget* parent) {
  auto* view = new QPlainTextEdit(parent);
  view->setReadOnly(true);
  view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  // Outputs are prose: wrapped lines read better than a horizontal scroll.
  view->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  return view;
}

QString milliseconds(double ms) {
  if (!std::isfinite(ms)) return QStringLiteral("–");
  return QObject::tr("%1 ms").arg(formatDecimal(ms, 1));
}

}  // namespace

RowDetailPane::RowDetailPane(QWidget* parent) : QWidget(parent) {
  m_title = new QLabel(this);
  m_title->setTextFormat(Qt::PlainText);
  QFont titleFont = m_title->font();
  titleFont.setBold(true);
  m_title->setFont(titleFont);
  m_facts = new QLabel(this);
  m_facts->setWordWrap(true);
  m_facts->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_error = new QLabel(this);
  m_error->setWordWrap(true);
  m_error->setTextFormat(Qt::PlainText);
  m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_error->setStyleSheet(QStringLiteral("color: #c62828;"));

  m_validity = new QLabel(this);
  m_validity->setWordWrap(true);
  m_validity->setTextFormat(Qt::PlainText);
  m_validity->setTextInteractionFlags(Qt::TextSelectableByMouse);

  m_runAlone = new QPushButton(tr("Run this row alone"), this);
  m_runAlone->setToolTip(
      tr("Generate this row again on its own and check that the output is identical"));
  m_rowAloneLabel = new QLabel(this);
  m_rowAloneLabel->setWordWrap(true);
  m_rowAloneLabel->setTextFormat(Qt::RichText);
  auto* titleRow = new QHBoxLayout;
  titleRow->addWidget(m_title, 1);
  titleRow->addWidget(m_runAlone);

  // Prompt and output side by side: each gets the pane's full height (stacked, a short pane left
  // the output four lines).
  m_prompt = make_text_view(this);
  m_prompt->setPlaceholderText(tr("The rendered prompt"));
  m_samples = new QTabWidget(this);
  m_samples->setDocumentMode(true);
  auto* texts = new QSplitter(Qt::Horizontal, this);
  texts->addWidget(m_prompt);
  texts->addWidget(m_samples);
  texts->setStretchFactor(0, 2);
  texts->setStretchFactor(1, 3);
  texts->setChildrenCollapsible(false);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(titleRow);
  layout->addWidget(m_facts);
  layout->addWidget(m_error);
  layout->addWidget(m_validity);
  layout->addWidget(m_rowAloneLabel);
  layout->addWidget(texts, 1);

  connect(m_runAlone, &QPushButton::clicked, this, &RowDetailPane::requestRowAlone);
  clear();
}

void RowDetailPane::showRow(const sluice::RowResult& row, const QStringList& validity) {
  m_rowIndex = row.row_index;
  QString title = tr("Row %1 · line %2 · %3")
                      .arg(row.row_index)
                      .arg(row.line)
                      .arg(QString::fromUtf8(to_string(row.status)));
  if (row.input.is_object() && row.input.contains("id")) {
    const auto& id = row.input["id"];
    title += tr(" · id %1")
                 .arg(QString::fromStdString(id.is_string() ? id.get<std::string>() : id.dump()));
  }
  m_title->setText(title);
  m_facts->setText(factsFor(row));
  m_error->setText(QString::fromStdString(row.error));
  m_error->setVisible(!row.error.empty());
  setValidity(validity);
  m_prompt->setPlainText(QString::fromStdString(row.prompt));

  clearSamples();
  for (size_t i = 0; i < row.samples.size(); ++i) {
    const sluice::SampleResult& sample = row.samples[i];
    QWidget* page = nullptr;
    QPlainTextEdit* view = nullptr;
    ReasoningFold* fold = nullptr;
    if (sample.reasoning.empty()) {
      view = make_text_view(m_samples);  // the answer alone, the page it always was
      page = view;
    } else {
      page = new QWidget(m_samples);
      fold = new ReasoningFold(page);
      fold->setReasoning(QString::fromStdString(sample.reasoning), sample.reasoning_tokens);
      fold->textView()->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
      view = make_text_view(page);
      auto* pageLayout = new QVBoxLayout(page);
      pageLayout->setContentsMargins(0, 2, 0, 0);
      pageLayout->setSpacing(2);
      pageLayout->addWidget(fold);
      pageLayout->addWidget(view, 1);
      // Open, the reasoning and the answer share the page's height.
      connect(fold, &ReasoningFold::expandedChanged, page, [pageLayout, fold](bool isExpanded) {
        pageLayout->setStretchFactor(fold, isExpanded ? 1 : 0);
      });
    }
    view->setPlainText(QString::fromStdString(sample.output));
    m_sampleViews << view;
    m_reasoningFolds << fold;
    const QString tabTitle = tr("Sample %1 · %2 tokens · %3")
                                 .arg(i + 1)
                                 .arg(sample.output_tokens)
                                 .arg(QString::fromStdString(sample.finish_reason));
    m_samples->addTab(page, tabTitle);
  }
  m_samples->setVisible(!row.samples.empty());
  m_runAlone->setEnabled(true);
  showRowAloneState();
}

void RowDetailPane::setValidity(const QStringList& validity) {
  QStringList validityLines;
  for (qsizetype i = 0; i < validity.size(); ++i) {
    validityLines << (validity.size() == 1 ? tr("Output: %1").arg(validity[i])
                                           : tr("Sample %1: %2").arg(i + 1).arg(validity[i]));
  }
  m_validity->setText(validityLines.join('\n'));
  m_validity->setVisible(!validityLines.isEmpty());
}

void RowDetailPane::clear() {
  m_rowIndex = -1;
  m_title->setText(tr("No row selected"));
  m_facts->clear();
  m_error->clear();
  m_error->hide();
  m_validity->clear();
  m_validity->hide();
  m_prompt->clear();
  clearSamples();
  m_samples->hide();
  m_runAlone->setEnabled(false);
  m_rowAloneLabel->clear();
}

void RowDetailPane::clearSamples() {
  m_sampleViews.clear();
  m_reasoningFolds.clear();
  while (m_samples->count() > 0) {
    QWidget* page = m_samples->widget(0);
    m_samples->removeTab(0);
    delete page;  // removeTab leaves the page to its owner
  }
}

QString RowDetailPane::factsFor(const sluice::RowResult& row) {
  int outputTokens = 0;
  for (const sluice::SampleResult& sample : row.samples) outputTokens += sample.output_tokens;
  // Decoding starts at the first token; before it the row waited and ran its prefill.
  const double decodeMs = row.total_ms - row.ttft_ms;
  const QString speed = (std::isfinite(decodeMs) && decodeMs > 0.0 && outputTokens > 0)
                            ? formatRate(outputTokens / (decodeMs / 1000.0), tr("tokens/s"))
                            : QStringLiteral("–");
  return tr("Prompt tokens: %1 · output tokens: %2 · decode speed: %3\n"
            "Seed: %4 · queued: %5 · first token: %6 · total: %7")
      .arg(row.prompt_tokens)
      .arg(outputTokens)
      .arg(speed)
      .arg(row.seed)
      .arg(milliseconds(row.queue_ms), milliseconds(row.ttft_ms), milliseconds(row.total_ms));
}

void RowDetailPane::requestRowAlone() {
  if (m_rowIndex < 0) return;
  m_rowsRunningAlone.insert(m_rowIndex);
  m_rowAloneHtml.insert(m_rowIndex, tr("Running row %1 alone…").arg(m_rowIndex));
  showRowAloneState();
  emit rowAloneRequested(m_rowIndex);
}

void RowDetailPane::showRowAloneResult(qint64 rowIndex, bool identical, const QString& details) {
  m_rowsRunningAlone.remove(rowIndex);
  QString html;
  if (identical) {
    html = tr("<span style='color:#2e7d32'><b>✓ Identical</b>: row %1 run alone gave the same "
              "output.</span>")
               .arg(rowIndex);
  } else {
    html = tr("<span style='color:#c62828'><b>✗ Different</b>: row %1 run alone gave another "
              "output.</span>")
               .arg(rowIndex);
  }
  if (!details.isEmpty()) {
    const QString color = identical ? QStringLiteral("#2e7d32") : QStringLiteral("#c62828");
    html += QStringLiteral("<br><span style='color:%1; white-space:pre-wrap'>%2</span>")
                .arg(color, details.toHtmlEscaped());
  }
  m_rowAloneHtml.insert(rowIndex, html);
  if (rowIndex == m_rowIndex) showRowAloneState();
}

void RowDetailPane::showRowAloneState() {
  m_rowAloneLabel->setText(m_rowAloneHtml.value(m_rowIndex));
  m_rowAloneLabel->setVisible(!m_rowAloneLabel->text().isEmpty());
  m_runAlone->setEnabled(m_rowIndex >= 0 && !m_rowsRunningAlone.contains(m_rowIndex));
}

QPlainTextEdit* RowDetailPane::sampleView(int sampleIdx) const {
  return m_sampleViews.value(sampleIdx);
}

ReasoningFold* RowDetailPane::reasoningFold(int sampleIdx) const {
  return m_reasoningFolds.value(sampleIdx);
}

QString RowDetailPane::promptText() const {
  return m_prompt->toPlainText();
}

QStringList RowDetailPane::sampleTexts() const {
  QStringList texts;
  for (const QPlainTextEdit* view : m_sampleViews) texts << view->toPlainText();
  return texts;
}

QStringList RowDetailPane::sampleTitles() const {
  QStringList titles;
  for (int i = 0; i < m_samples->count(); ++i) titles << m_samples->tabText(i);
  return titles;
}

QString RowDetailPane::factsText() const {
  return m_facts->text();
}

QString RowDetailPane::errorText() const {
  return m_error->text();
}

QString RowDetailPane::validityText() const {
  return m_validity->text();
}

QString RowDetailPane::rowAloneText() const {
  // The label holds rich text; tests and screen readers want the words.
  return QTextDocumentFragment::fromHtml(m_rowAloneLabel->text()).toPlainText();
}

}  // namespace sluice::ui
