// The "Structured output" section of the parameters: the grammar text is checked as you type by
// the engine's own compile, off the GUI thread (its errors shown as the engine words them), Start
// waits while it is invalid, the spec a Start builds carries the grammar, and a job opened shows
// it again; a run on stories260K with a choice grammar gives outputs among the choices, marked
// valid.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "engine/core/error.h"
#include "engine/grammar/grammar_source.h"
#include "engine/jobs/job_store.h"
#include "tests/gui/results_model_reads.h"
#include "tests/support/test_paths.h"
#include "ui/live/run_controls.h"
#include "ui/results/results_model.h"
#include "ui/results/results_panel.h"
#include "ui/results/row_detail_pane.h"
#include "ui/setup/dataset_panel.h"
#include "ui/setup/parameters_panel.h"
#include "ui/setup/run_spec.h"
#include "ui/setup/structured_output_panel.h"
#include "ui/window/gui_main.h"
#include "ui/window/main_window.h"

using sluice::GrammarSource;
using sluice::GrammarSourceKind;
using sluice::ui::MainWindow;
using sluice::ui::ParametersPanel;
using sluice::ui::ResultsModel;
using sluice::ui::StructuredOutputPanel;
using Mode = sluice::ui::StructuredOutputPanel::Mode;

namespace {

constexpr char kMisspeltType[] = R"({"type":"object","properties":{"a":{"type":"strin"}}})";

QString shared(const char* relative) {
  return QString::fromStdString(sluice::test::shared_path(relative));
}

// The engine's own words for source's error ("" when it builds).
QString engineError(const GrammarSource& source) {
  try {
    sluice::build_grammar(source);
  } catch (const sluice::Error& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

bool statusBarSays(MainWindow& window, const QString& text) {
  for (const QLabel* label : window.statusBar()->findChildren<QLabel*>())
    if (label->text().contains(text)) return true;
  return false;
}

// Types text into the panel's editor key by key, as a person would.
void typeText(StructuredOutputPanel& panel, const QString& text) {
  panel.editor()->clear();
  panel.editor()->setFocus();
  QTest::keyClicks(panel.editor(), text);
}

sluice::RowResult doneRow(int64_t index, const std::string& output, const char* finishReason) {
  sluice::RowResult row;
  row.row_index = index;
  row.line = static_cast<size_t>(index) + 1;
  row.prompt = "prompt " + std::to_string(index);
  sluice::SampleResult sample;
  sample.output = output;
  sample.output_tokens = 5;
  sample.finish_reason = finishReason;
  row.samples = {sample};
  return row;
}

// Writes a job of spec with a valid output, one cut off by max_tokens, a failed row and an
// output that stopped early.
void writeGrammarJob(const QString& path, const sluice::GenerationSpec& spec) {
  sluice::JobInfo info;
  info.source_path = "/data/q.jsonl";
  info.source_format = "jsonl";
  info.model_path = "/models/tiny.gguf";
  info.params = sluice::spec_to_json(spec);
  auto store = sluice::JobStore::create(path.toStdString(), info);
  store->add_result(doneRow(0, "{\"a\": \"x\"}", "stop"));
  store->add_result(doneRow(1, "{\"a\": \"xy", "length"));
  sluice::RowResult failed;
  failed.row_index = 2;
  failed.status = sluice::RowStatus::Failed;
  failed.error = "row 2 failed: the prompt is too long";
  store->add_result(failed);
  store->add_result(doneRow(3, "{\"a\"", "abort"));
  store->flush();
}

QString validCell(const ResultsModel& model, int row) {
  return model.data(model.index(row, ResultsModel::ValidColumn)).toString();
}

}  // namespace

class StructuredOutputTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  // Typing a schema: after the debounce the editor says it is valid; a misspelt type shows the
  // engine's error word for word; an unsupported keyword is refused by name.
  void validatesAsYouType() {
    StructuredOutputPanel panel;
    panel.show();
    QCOMPARE(panel.mode(), Mode::FreeText);
    QVERIFY(panel.isValid());
    QVERIFY(!panel.grammarSource());
    panel.setMode(Mode::JsonSchema);
    typeText(panel, R"({"type":"object","properties":{"a":{"type":"string"}}})");
    QTRY_COMPARE_WITH_TIMEOUT(panel.statusText(), QString("✓ valid JSON Schema"), 3000);
    QVERIFY(panel.isValid());

    typeText(panel, kMisspeltType);
    QVERIFY(panel.isValid());  // not checked at every keystroke: the debounce has not run yet
    const QString expected =
        engineError({GrammarSourceKind::JsonSchema, "schema", kMisspeltType, {}});
    QVERIFY2(expected.contains("strin") && expected.contains("/properties/a"),
             qPrintable(expected));
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isValid(), 3000);
    QCOMPARE(panel.validationError(), expected);
    QCOMPARE(panel.statusText(), expected);

    panel.setText(R"({"type":"object","if":{"required":["a"]},"then":{"required":["b"]}})");
    QTRY_VERIFY_WITH_TIMEOUT(panel.validationError().contains("unsupported keyword 'if'"), 3000);

    panel.setMode(Mode::Regex);
    panel.setText("[a-z");
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isValid() && panel.statusText().startsWith("regex"), 3000);
    panel.setText("[a-z]+");
    QTRY_COMPARE_WITH_TIMEOUT(panel.statusText(), QString("✓ valid regular expression"), 3000);
  }

  // The check compiles on the pool, not on the GUI thread: right after validateNow() the status
  // says it is checking, and the answer comes through the event loop; an answer for text since
  // replaced is dropped. Catches a compile on the GUI thread, and a slow stale answer that would
  // mark a valid grammar invalid.
  void checksOffTheGuiThreadAndDropsStaleAnswers() {
    StructuredOutputPanel panel;
    panel.setMode(Mode::JsonSchema);
    panel.setText(kMisspeltType);
    panel.validateNow();
    QVERIFY2(panel.statusText().startsWith("Checking"), qPrintable(panel.statusText()));
    QVERIFY(panel.isValid());  // until the answer, as during the debounce
    panel.setText(R"({"type":"object","properties":{"a":{"type":"string"}}})");
    panel.validateNow();
    QTRY_COMPARE_WITH_TIMEOUT(panel.statusText(), QString("✓ valid JSON Schema"), 3000);
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isChecking(), 3000);
    QTest::qWait(50);  // any answer still queued for the misspelt text arrives and is dropped
    QVERIFY(panel.isValid());
    QCOMPARE(panel.statusText(), QString("✓ valid JSON Schema"));
  }

  // A schema per row needs a column; the dataset's columns are offered.
  void schemaPerRowNeedsAColumn() {
    StructuredOutputPanel panel;
    panel.setMode(Mode::SchemaColumn);
    QVERIFY(!panel.isValid());
    panel.setColumns({"instruction", "schema"});
    panel.findChildren<QComboBox*>().at(1)->setCurrentText("schema");
    QVERIFY(panel.isValid());
    sluice::GenerationSpec spec;
    panel.applyToSpec(spec);
    QCOMPARE(spec.schema_column, std::string("schema"));
    QVERIFY(!spec.sampling.grammar);
  }

  // A schema loaded from a file is named by its path in the engine's errors.
  void loadFileNamesThePath() {
    QTemporaryDir dir;
    const QString path = dir.filePath("bad.schema.json");
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(kMisspeltType);
    file.close();
    StructuredOutputPanel panel;
    panel.setMode(Mode::JsonSchema);
    QVERIFY(panel.loadFile(path));
    // Checked on the pool: the answer follows.
    QTRY_VERIFY2(panel.validationError().startsWith(path + ": "),
                 qPrintable(panel.validationError()));
    QVERIFY(!panel.loadFile(dir.filePath("missing.json")));
  }

  // The parameters' spec carries the grammar as shown; a spec with one shows it again.
  void specCarriesTheGrammar() {
    ParametersPanel parameters;
    StructuredOutputPanel* panel = parameters.structuredOutput();
    panel->setMode(Mode::Choice);
    panel->setText("yes\nno\n\nmaybe");
    panel->validateNow();
    QVERIFY(parameters.isValid());
    sluice::GenerationSpec spec;
    parameters.applyToSpec(spec);
    QVERIFY(spec.sampling.grammar);
    QCOMPARE(spec.sampling.grammar->kind, GrammarSourceKind::Choice);
    QCOMPARE(spec.sampling.grammar->choices, (std::vector<std::string>{"yes", "no", "maybe"}));
    QVERIFY(spec.schema_column.empty());

    ParametersPanel restored;
    sluice::GenerationSpec schema;
    schema.sampling.grammar = std::make_shared<const GrammarSource>(
        GrammarSource{GrammarSourceKind::Gbnf, "g.gbnf", "root ::= \"a\"", {}});
    restored.setFromSpec(schema);
    QCOMPARE(restored.structuredOutput()->mode(), Mode::Gbnf);
    QCOMPARE(restored.structuredOutput()->text(), QString("root ::= \"a\""));
    sluice::GenerationSpec again;
    restored.applyToSpec(again);
    QCOMPARE(*again.sampling.grammar, *schema.sampling.grammar);
    restored.setFromSpec(sluice::GenerationSpec{});
    QCOMPARE(restored.structuredOutput()->mode(), Mode::FreeText);
  }

  // The results say whether each output is valid for the job's schema: ✓, ✗ (cut off, or stopped
  // early), nothing for a row without output; the detail pane says why.
  void resultsShowValidity() {
    QTemporaryDir dir;
    const QString job = dir.filePath("schema.sluicejob");
    sluice::GenerationSpec spec;
    spec.sampling.grammar = std::make_shared<const GrammarSource>(
        GrammarSource{GrammarSourceKind::JsonSchema,
                      "s.json",
                      R"({"type":"object","properties":{"a":{"type":"string"}},)"
                      R"("required":["a"]})",
                      {}});
    writeGrammarJob(job, spec);
    ResultsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(sluice::gui_test::openJob(model, job));
    QVERIFY(model.hasGrammar());
    QCOMPARE(model.headerData(ResultsModel::ValidColumn, Qt::Horizontal).toString(),
             QString("Valid"));
    QCOMPARE(model.rowCount(), 4);
    // The whole outputs are read and checked on the pool, not in data() on the GUI thread: the
    // cells say so until the page's check arrives.
    QCOMPARE(sluice::gui_test::textsAtPageArrival(model, ResultsModel::ValidColumn, 1),
             QStringList{"…"});
    QVERIFY(model.isCheckingValidity());
    QTRY_VERIFY_WITH_TIMEOUT(!model.isCheckingValidity(), 10000);
    QCOMPARE(validCell(model, 0), QString("✓"));
    QCOMPARE(validCell(model, 1), QString("✗"));
    QCOMPARE(validCell(model, 2), QString());
    QCOMPARE(validCell(model, 3), QString("✗"));

    sluice::ui::ResultsPanel panel;
    panel.setJobPath(job);
    QVERIFY(sluice::gui_test::settled(*panel.model()));
    QVERIFY(!panel.tableView()->isColumnHidden(ResultsModel::ValidColumn));
    panel.tableView()->selectRow(0);
    QTRY_COMPARE(panel.detailPane()->validityText(), QString("Output: valid JSON for the schema"));
    panel.tableView()->selectRow(1);
    QTRY_COMPARE(panel.detailPane()->validityText(),
                 QString("Output: not valid: cut off by max tokens"));
    // These rows were written without a stored verdict (as before validity was kept): the
    // check above is shown only, so sorting by the column treats them all as having none and
    // keeps row order (reversed, descending); results_validity_test.cpp sorts stored verdicts.
    panel.tableView()->horizontalHeader()->setSortIndicator(ResultsModel::ValidColumn,
                                                            Qt::DescendingOrder);
    QCOMPARE(panel.tableView()->horizontalHeader()->sortIndicatorSection(),
             int{ResultsModel::ValidColumn});
    QVERIFY(sluice::gui_test::settled(*panel.model()));
    QCOMPARE(panel.model()->rowIndexAt(1), qint64{2});
    panel.tableView()->horizontalHeader()->setSortIndicator(ResultsModel::IdColumn,
                                                            Qt::AscendingOrder);
    QVERIFY(sluice::gui_test::settled(*panel.model()));
    panel.tableView()->selectRow(2);
    QTRY_COMPARE(panel.detailPane()->rowIndex(), qint64{2});
    QCOMPARE(panel.detailPane()->validityText(), QString());

    // Free text: nothing to check, and no Valid column.
    const QString freeJob = dir.filePath("free.sluicejob");
    writeGrammarJob(freeJob, sluice::GenerationSpec{});
    QVERIFY(sluice::gui_test::openJob(model, freeJob));
    QVERIFY(!model.hasGrammar());
    QCOMPARE(sluice::gui_test::cellText(model, 0, ResultsModel::ValidColumn), QString());
    panel.setJobPath(freeJob);
    QVERIFY(sluice::gui_test::settled(*panel.model()));
    QVERIFY(panel.tableView()->isColumnHidden(ResultsModel::ValidColumn));
  }

  // `sluice gui --choice A --choice B` and `--json-schema FILE` fill the section (the screenshot
  // script's way to show it); a schema file that cannot be read stops the launch.
  void guiOptionsSetTheStructuredOutput() {
    MainWindow window;
    QVERIFY(sluice::ui::applyGuiOptions({"sluice", "--choice", "yes", "--choice", "no"}, window));
    StructuredOutputPanel* panel = window.parametersPanel()->structuredOutput();
    QCOMPARE(panel->mode(), Mode::Choice);
    QCOMPARE(panel->text(), QString("yes\nno"));
    QVERIFY(panel->isValid());

    QTemporaryDir dir;
    MainWindow another;
    QVERIFY(!sluice::ui::applyGuiOptions({"sluice", "--json-schema", dir.filePath("none.json")},
                                         another));
  }

  // In the window: Start waits while the schema is invalid and the status bar says why; a valid
  // choice grammar runs, the job stores it, and opening the job shows it again.
  void startWaitsForAValidGrammarAndTheJobKeepsIt() {
    QTemporaryDir dir;
    MainWindow window;
    window.show();
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.preloadModel(shared("models/stories260K/gguf/stories260K-f32.gguf"));
    QVERIFY(ready.wait(60000));
    const QString input = dir.filePath("stories.jsonl");
    QFile file(input);
    QVERIFY(file.open(QIODevice::WriteOnly));
    for (int i = 0; i < 12; ++i)
      file.write(QByteArray("{\"instruction\": \"Tell story ") + QByteArray::number(i) + "\"}\n");
    file.close();
    window.preloadDataset(input);
    sluice::GenerationSpec base;
    base.sampling.max_tokens = 8;
    base.limit = 0;
    window.parametersPanel()->setFromSpec(base);
    QTRY_VERIFY_WITH_TIMEOUT(window.runControls()->startButton()->isEnabled(), 30000);

    StructuredOutputPanel* panel = window.parametersPanel()->structuredOutput();
    panel->setMode(Mode::JsonSchema);
    panel->setText(kMisspeltType);
    QTRY_VERIFY_WITH_TIMEOUT(statusBarSays(window, "unknown type 'strin'"), 3000);
    QVERIFY(!window.runControls()->startButton()->isEnabled());

    panel->setMode(Mode::Choice);
    panel->setText("Once\nTom\nLily");
    QTRY_VERIFY_WITH_TIMEOUT(window.runControls()->startButton()->isEnabled(), 3000);
    const sluice::GenerationSpec spec =
        sluice::ui::specFromPanels("m", "", *window.datasetPanel(), *window.parametersPanel());
    QVERIFY(spec.sampling.grammar);
    QCOMPARE(spec.sampling.grammar->choices, (std::vector<std::string>{"Once", "Tom", "Lily"}));

    const QString job = dir.filePath("choice.sluicejob");
    window.setNewJobPath(job);
    QSignalSpy finished(&window, &MainWindow::runFinished);
    QTest::mouseClick(window.runControls()->startButton(), Qt::LeftButton);
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.first().at(1).toString(), QString());
    const auto stored =
        sluice::spec_from_json(sluice::JobStore::open(job.toStdString())->info().params);
    QVERIFY(stored.sampling.grammar);
    QCOMPARE(stored.sampling.grammar->choices, (std::vector<std::string>{"Once", "Tom", "Lily"}));

    // Every output is one of the choices and marked valid.
    ResultsModel* results = window.resultsPanel()->model();
    QTRY_COMPARE_WITH_TIMEOUT(results->rowCount(), 12, 10000);
    for (int row = 0; row < results->rowCount(); ++row) {
      const auto result = sluice::gui_test::readRowResult(*results, results->rowIndexAt(row));
      QVERIFY(result && result->samples.size() == 1);
      const std::string& output = result->samples[0].output;
      QVERIFY2(output == "Once" || output == "Tom" || output == "Lily", output.c_str());
      QTRY_COMPARE(validCell(*results, row), QString("✓"));  // checked on the pool
    }

    MainWindow reopened;
    reopened.openJob(job);
    QCOMPARE(reopened.parametersPanel()->structuredOutput()->mode(), Mode::Choice);
    QCOMPARE(reopened.parametersPanel()->structuredOutput()->text(), QString("Once\nTom\nLily"));
  }
};

QTEST_MAIN(StructuredOutputTest)
#include "structured_output_test.moc"
