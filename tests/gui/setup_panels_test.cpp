// The setup panels (model, memory plan, dataset with prompt preview, reasoning controls and length
// histogram, parameters) on the real stories260K model and the Alpaca sample in ../shared,
// offscreen.
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QMimeData>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <QUrl>
#include <algorithm>
#include <memory>

#include "app/run_snapshots.h"
#include "engine/input/dataset_reader.h"
#include "engine/input/field_discovery.h"
#include "engine/input/prompt_builder.h"
#include "engine/memory_plan.h"
#include "engine/model_session.h"
#include "tests/gui/gui_shots.h"
#include "tests/support/test_paths.h"
#include "ui/common/length_histogram.h"
#include "ui/setup/dataset_panel.h"
#include "ui/setup/file_drop.h"
#include "ui/setup/memory_plan_view.h"
#include "ui/setup/model_panel.h"
#include "ui/setup/parameters_panel.h"
#include "ui/setup/prompt_preview.h"
#include "ui/setup/reasoning_panel.h"
#include "ui/setup/run_spec.h"

using sluice::ui::DatasetPanel;
using sluice::ui::LengthHistogram;
using sluice::ui::MemoryPlanView;
using sluice::ui::ModelPanel;
using sluice::ui::ParametersPanel;
using sluice::ui::ReasoningPanel;

namespace {

constexpr int kWaitMs = 60000;

// The prompt PromptBuilder gives for the first row of path, built apart from any widget.
sluice::BuiltPrompt buildFirstRow(const std::string& path, const sluice::PromptOptions& options,
                                  const sluice::ModelSession& session) {
  const auto format = sluice::detect_dataset_format(path);
  const auto fields = sluice::discover_fields(path, format);
  const sluice::PromptBuilder builder(options, session.model->chat_template, *session.tokenizer,
                                      format, fields);
  const auto row = sluice::open_dataset(path, format)->next();
  return builder.build(*row);
}

}  // namespace

class SetupPanelsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void formatsParameterCountsAndSizes();
  void modelPanelShowsWhatWasLoaded();
  void modelPanelLoadingFailureAndDrop();
  void memoryPlanViewShowsAPlan();
  void datasetPanelPreviewsAndCountsAlpaca();
  void datasetPanelShowsTemplateErrorsInline();
  void datasetPanelWithoutModelShowsPlainText();
  void datasetPanelKeepsOnlyTheLatestCount();
  void reasoningControlsMapToTheSpecAndBack();
  void reasoningControlsShapeThePreview();
  void lengthHistogramStatistics();
  void parametersRoundTripASpec();
  void parametersRejectAnInvalidTemperature();
  void parametersOfferProbedDevicesAndKeepTheChoice();
  void modelPanelSaysWhereTheRunGoes();
  void modelPanelCountsTheActiveParametersOfAMixture();

 private:
  sluice::ModelSummary m_summary;
  std::string m_alpacaPath;
};

void SetupPanelsTest::initTestCase() {
  const std::string model =
      sluice::test::shared_path("models/stories260K/gguf/stories260K-f32.gguf");
  auto session = std::make_shared<sluice::ModelSession>(sluice::open_model_session(model, ""));
  m_summary = sluice::summarize_model(std::move(session));
  m_alpacaPath = sluice::test::shared_path("datasets/en/alpaca_5000.json");
}

void SetupPanelsTest::formatsParameterCountsAndSizes() {
  QCOMPARE(ModelPanel::formatParameterCount(999), QString("999"));
  QCOMPARE(ModelPanel::formatParameterCount(260'000), QString("260K"));
  QCOMPARE(ModelPanel::formatParameterCount(15'200'000), QString("15M"));
  QCOMPARE(ModelPanel::formatParameterCount(7'241'000'000), QString("7.2B"));
  QCOMPARE(ModelPanel::formatParameterCount(7'000'000'000), QString("7B"));
  QCOMPARE(ModelPanel::formatParameterCount(13'000'000'000), QString("13B"));
  QCOMPARE(MemoryPlanView::formatBytes(512), QString("512 B"));
  QCOMPARE(MemoryPlanView::formatBytes(1536), QString("1.5 KiB"));
  QCOMPARE(MemoryPlanView::formatBytes(qint64{128} << 20), QString("128 MiB"));
  QCOMPARE(MemoryPlanView::formatBytes(qint64{7} << 30), QString("7.0 GiB"));
}

void SetupPanelsTest::modelPanelShowsWhatWasLoaded() {
  ModelPanel panel;
  panel.resize(380, 600);
  panel.show();
  panel.setLoaded(m_summary);
  QVERIFY(m_summary.parameterCount > 0);
  QCOMPARE(panel.parameterText(), ModelPanel::formatParameterCount(m_summary.parameterCount));
  QCOMPARE(panel.modelPath(), m_summary.path);
  QVERIFY(panel.errorText().isEmpty());
  QVERIFY(!panel.isLoading());
  const auto& session = *m_summary.session;
  const sluice::MemoryPlan plan = sluice::plan_memory(
      session.model->config, session.model->weight_bytes(), {}, {10, 20, 30}, 64);
  panel.setMemoryPlan(plan);
  QVERIFY(panel.memoryPlanView()->hasPlan());
  QVERIFY(!panel.grab().isNull());  // paints without trouble
}

// tiny-arch qwen3moe: 2,231,808 parameters (its README), of which each token skips 2 of the 4
// experts in both layers: 2 x 2 x 3 x 256 x 256 = 786,432.
void SetupPanelsTest::modelPanelCountsTheActiveParametersOfAMixture() {
  const std::string path =
      sluice::test::shared_path("models/tiny-arch/qwen3moe/gguf/qwen3moe-F32.gguf");
  auto session = std::make_shared<sluice::ModelSession>(sluice::open_model_session(path, ""));
  const sluice::ModelSummary summary = sluice::summarize_model(std::move(session));
  QCOMPARE(summary.parameterCount, qint64{2'231'808});
  QCOMPARE(summary.activeParameterCount, qint64{2'231'808 - 786'432});
  ModelPanel panel;
  panel.setLoaded(summary);
  QCOMPARE(panel.parameterText(), QString("2.2M, 1.4M active"));
}

void SetupPanelsTest::modelPanelLoadingFailureAndDrop() {
  ModelPanel panel;
  panel.show();
  QSignalSpy chosen(&panel, &ModelPanel::modelPathChosen);
  QSignalSpy cancelled(&panel, &ModelPanel::cancelLoadRequested);
  panel.openModel("/models/missing.gguf");
  QCOMPARE(chosen.count(), 1);
  QCOMPARE(chosen.front().at(0).toString(), QString("/models/missing.gguf"));
  QCOMPARE(chosen.front().at(1).toString(), QString());

  panel.setLoading(0.25, "reading weights");
  QVERIFY(panel.isLoading());
  const QList<QPushButton*> buttons = panel.findChildren<QPushButton*>();
  const auto it = std::find_if(buttons.begin(), buttons.end(),
                               [](QPushButton* b) { return b->text() == "Cancel"; });
  QVERIFY(it != buttons.end());
  QPushButton* cancel = *it;
  QVERIFY(cancel->isVisible());
  QTest::mouseClick(cancel, Qt::LeftButton);
  QCOMPARE(cancelled.count(), 1);

  panel.setLoadCancelled();
  QVERIFY(!panel.isLoading());
  QVERIFY(panel.errorText().isEmpty());
  panel.setLoading(0.5, "reading weights");
  QVERIFY(cancel->isEnabled());  // a new load can be cancelled again
  panel.setLoadFailed("model file /models/missing.gguf: no such file");
  QVERIFY(!panel.isLoading());
  QVERIFY(!cancel->isVisible());
  QVERIFY(panel.errorText().contains("no such file"));

  // Dropping a folder (a Hugging Face model) asks for it to be loaded.
  const QString folder = QString::fromStdString(sluice::test::shared_path("models/stories260K/hf"));
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(folder)});
  // Qt delivers a drop to the widget that accepted the drag's entry, so both are sent.
  QDragEnterEvent enter(QPoint(5, 5), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(&panel, &enter);
  QVERIFY(enter.isAccepted());
  QDropEvent drop(QPointF(5, 5), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(&panel, &drop);
  QCOMPARE(chosen.count(), 2);
  QCOMPARE(chosen.back().at(0).toString(), folder);
  // Remote URLs and several files are not paths.
  mime.setUrls({QUrl("https://example.com/model.gguf")});
  QVERIFY(panel.findChild<sluice::ui::FileDrop*>()->pathFrom(&mime).isEmpty());
}

void SetupPanelsTest::memoryPlanViewShowsAPlan() {
  MemoryPlanView view;
  view.resize(360, 200);
  QVERIFY(!view.hasPlan());
  const auto& config = m_summary.session->model->config;
  sluice::EngineConfig engine;
  engine.max_num_seqs = 64;
  const sluice::MemoryPlan plan = sluice::plan_memory(config, 1 << 20, engine, {100, 200}, 56);
  view.setPlan(plan);
  QVERIFY(view.hasPlan());
  QCOMPARE(view.plan().num_blocks, plan.num_blocks);
  QVERIFY(!view.grab().isNull());
  const auto visibleTexts = [&view] {
    QStringList texts;
    for (const QLabel* label : view.findChildren<QLabel*>()) {
      if (label->isVisibleTo(&view)) texts << label->text();
    }
    return texts.join('\n');
  };
  QVERIFY(!visibleTexts().contains("Activations"));  // a CPU plan has none
  const sluice::GpuDevicePlan gpu{"cuda:0 Test GPU", size_t{24} << 30,
                                  static_cast<size_t>(m_summary.parameterCount) * 2};
  view.setPlan(sluice::plan_gpu_memory(config, gpu, engine, {100, 200}, 56));
  QVERIFY2(visibleTexts().contains("cuda:0 Test GPU: 22 GiB of 24 GiB"),
           qPrintable(visibleTexts()));
  QVERIFY(visibleTexts().contains("Activations"));
  QVERIFY(!visibleTexts().contains("State slots"));  // stories260K holds no recurrent state
  QVERIFY(!view.grab().isNull());
  // A hybrid model's plan shows its state slots beside the pool, capped by the budget here.
  sluice::MemoryPlan hybrid = plan;
  hybrid.state = sluice::StateSlotPlan{.slot_bytes = size_t{3} << 19,
                                       .num_slots = 20,
                                       .num_wanted = 68,
                                       .max_checkpoints = 4,
                                       .is_capped = true};
  view.setPlan(hybrid);
  QVERIFY2(visibleTexts().contains("State slots"), qPrintable(visibleTexts()));
  QVERIFY2(visibleTexts().contains("20 × 1.5 MiB = 30 MiB (16 running + 4 prefix checkpoints); "
                                   "capped by the budget (68 wanted)"),
           qPrintable(visibleTexts()));
  view.clear();
  QVERIFY(!view.hasPlan());
}

void SetupPanelsTest::datasetPanelPreviewsAndCountsAlpaca() {
  DatasetPanel panel;
  QAbstractItemModelTester tester(panel.previewModel(),
                                  QAbstractItemModelTester::FailureReportingMode::QtTest);
  QSignalSpy lengths(&panel, &DatasetPanel::promptLengthsReady);
  QSignalSpy loaded(&panel, &DatasetPanel::datasetLoaded);
  panel.resize(380, 760);
  panel.show();
  panel.setModel(m_summary);
  panel.setDatasetPath(QString::fromStdString(m_alpacaPath));
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kWaitMs);
  QCOMPARE(loaded.front().at(0).toBool(), true);
  QCOMPARE(panel.detectedFormat(), sluice::DatasetFormat::Json);
  QCOMPARE(panel.format(), sluice::DatasetFormat::Json);
  QAbstractItemModel* model = panel.previewModel();
  QCOMPARE(model->rowCount(), 20);
  QCOMPARE(model->columnCount(), 3);
  QCOMPARE(model->headerData(0, Qt::Horizontal).toString(), QString("instruction"));
  QCOMPARE(model->headerData(1, Qt::Horizontal).toString(), QString("input"));
  QCOMPARE(model->headerData(2, Qt::Horizontal).toString(), QString("output"));
  QCOMPARE(panel.columnTemplate(), QString("{instruction}[\n\n{input}]"));
  QCOMPARE(panel.promptOptions().column_template, std::string("{instruction}[\n\n{input}]"));

  sluice::PromptOptions options;
  options.column_template = "{instruction}[\n\n{input}]";
  const sluice::BuiltPrompt expected = buildFirstRow(m_alpacaPath, options, *m_summary.session);
  const auto* preview = panel.promptPreview();
  QVERIFY2(preview->errorText().isEmpty(), qPrintable(preview->errorText()));
  QCOMPARE(preview->text(), QString::fromStdString(expected.text));
  QCOMPARE(preview->tokenCount(), static_cast<int>(expected.token_ids.size()));

  QTRY_VERIFY_WITH_TIMEOUT(lengths.count() >= 1, kWaitMs);
  const auto counted = lengths.back().at(0).value<QVector<int>>();
  QCOMPARE(counted.size(), 5000);
  QCOMPARE(counted.front(), static_cast<int>(expected.token_ids.size()));
  QCOMPARE(panel.lengthHistogram()->stats().count, 5000);
  QVERIFY(panel.lengthHistogram()->summaryText().contains("p95"));

  // A system prompt and a chat template (the model has none of its own) render as the builder's.
  options.system_prompt = "You write short stories.";
  options.chat_template = sluice::test::read_file(sluice::test::shared_path(
      "chat-templates/chatml-teknium-OpenHermes-2.5-Mistral-7B/template.jinja"));
  panel.setPromptOptions(options);
  const sluice::BuiltPrompt chat = buildFirstRow(m_alpacaPath, options, *m_summary.session);
  QVERIFY(chat.text.find("<|im_start|>system") != std::string::npos);
  QCOMPARE(preview->text(), QString::fromStdString(chat.text));
  QCOMPARE(preview->tokenCount(), static_cast<int>(chat.token_ids.size()));
  QCOMPARE(panel.promptOptions().chat_template, options.chat_template);
  QTRY_VERIFY_WITH_TIMEOUT(lengths.count() >= 2, kWaitMs);
  QCOMPARE(lengths.back().at(0).value<QVector<int>>().front(),
           static_cast<int>(chat.token_ids.size()));
}

void SetupPanelsTest::datasetPanelShowsTemplateErrorsInline() {
  DatasetPanel panel;
  QAbstractItemModelTester tester(panel.previewModel(),
                                  QAbstractItemModelTester::FailureReportingMode::QtTest);
  QSignalSpy lengths(&panel, &DatasetPanel::promptLengthsReady);
  QSignalSpy loaded(&panel, &DatasetPanel::datasetLoaded);
  panel.setModel(m_summary);
  panel.setDatasetPath(QString::fromStdString(m_alpacaPath));
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kWaitMs);

  sluice::PromptOptions options = panel.promptOptions();
  options.column_template = "{instruction} {no_such_field}";
  panel.setPromptOptions(options);
  const auto* preview = panel.promptPreview();
  QVERIFY(preview->errorText().contains("no_such_field"));
  QVERIFY(preview->text().isEmpty());
  QCOMPARE(preview->tokenCount(), -1);
  // Every row fails the same way: the histogram says so instead of plotting.
  QTRY_VERIFY_WITH_TIMEOUT(!lengths.isEmpty(), kWaitMs);
  QVERIFY(lengths.back().at(0).value<QVector<int>>().isEmpty());
  QVERIFY(panel.lengthHistogram()->summaryText().contains("5,000 rows failed"));

  options.column_template = "{instruction";  // does not parse
  panel.setPromptOptions(options);
  QVERIFY(preview->errorText().startsWith("Cannot build prompts"));

  // A file that does not exist is reported in plain words, not thrown.
  QSignalSpy reloaded(&panel, &DatasetPanel::datasetLoaded);
  panel.setDatasetPath("/no/such/instructions.jsonl");
  QTRY_COMPARE_WITH_TIMEOUT(reloaded.count(), 1, kWaitMs);
  QCOMPARE(reloaded.front().at(0).toBool(), false);
  QVERIFY(!panel.errorText().isEmpty());
  QCOMPARE(panel.previewModel()->rowCount(), 0);
}

void SetupPanelsTest::datasetPanelWithoutModelShowsPlainText() {
  DatasetPanel panel;
  QAbstractItemModelTester tester(panel.previewModel(),
                                  QAbstractItemModelTester::FailureReportingMode::QtTest);
  QSignalSpy loaded(&panel, &DatasetPanel::datasetLoaded);
  panel.setDatasetPath(QString::fromStdString(m_alpacaPath));
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kWaitMs);
  const auto* preview = panel.promptPreview();
  QVERIFY(preview->text().startsWith("Are the two sentences below grammatically correct?"));
  QCOMPARE(preview->tokenCount(), -1);
  QVERIFY(!panel.isCountingLengths());
  // The bad-row policy round-trips.
  panel.setOnBadRow(sluice::BadRowPolicy::Skip);
  QCOMPARE(panel.onBadRow(), sluice::BadRowPolicy::Skip);
}

void SetupPanelsTest::datasetPanelKeepsOnlyTheLatestCount() {
  auto panel = std::make_unique<DatasetPanel>();
  QSignalSpy loaded(panel.get(), &DatasetPanel::datasetLoaded);
  panel->setModel(m_summary);
  panel->setDatasetPath(QString::fromStdString(m_alpacaPath));
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kWaitMs);
  // Edits faster than a count: only the count of the last template may be reported.
  QSignalSpy lengths(panel.get(), &DatasetPanel::promptLengthsReady);
  sluice::PromptOptions options;
  for (int i = 0; i < 20; ++i) {
    options.column_template = i % 2 == 0 ? "{output}" : "{instruction}";
    panel->setPromptOptions(options);
    QCoreApplication::processEvents();
  }
  options.column_template = "Q: {instruction}";
  panel->setPromptOptions(options);
  QTRY_VERIFY_WITH_TIMEOUT(!lengths.isEmpty(), kWaitMs);
  QTest::qWait(200);  // nothing stale arrives after it
  QCOMPARE(lengths.count(), 1);
  const sluice::BuiltPrompt expected = buildFirstRow(m_alpacaPath, options, *m_summary.session);
  QCOMPARE(lengths.front().at(0).value<QVector<int>>().front(),
           static_cast<int>(expected.token_ids.size()));
  // Destroying the panel while it counts waits for the count to stop.
  options.column_template = "{output}";
  panel->setPromptOptions(options);
  QTest::qWait(450);
  panel.reset();
}

// What the reasoning controls show is PromptOptions::reasoning: it reaches the run's spec, survives
// the job file's JSON, and shows again when the job is reopened.
void SetupPanelsTest::reasoningControlsMapToTheSpecAndBack() {
  DatasetPanel panel;
  QSignalSpy loaded(&panel, &DatasetPanel::datasetLoaded);
  panel.setModel(m_summary);
  panel.setDatasetPath(QString::fromStdString(m_alpacaPath));
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kWaitMs);
  ReasoningPanel* reasoning = panel.reasoningPanel();
  QVERIFY(panel.promptOptions().reasoning == sluice::ReasoningControls{});
  QCOMPARE(reasoning->thinkingCombo()->currentText(), QString("As the template renders it"));
  QCOMPARE(reasoning->effortCombo()->currentText(), QString("Template default"));
  QCOMPARE(reasoning->budgetSpin()->text(), QString("No limit"));
  // stories260K has no chat template: nothing to detect a format in.
  QCOMPARE(reasoning->formatCombo()->currentText(), QString("Auto (None)"));
  QVERIFY(reasoning->summary().isEmpty());

  QSignalSpy edited(&panel, &DatasetPanel::promptOptionsChanged);
  reasoning->thinkingCombo()->setCurrentIndex(reasoning->thinkingCombo()->findText("Off"));
  reasoning->effortCombo()->setCurrentIndex(reasoning->effortCombo()->findText("High"));
  reasoning->budgetSpin()->setValue(512);
  reasoning->formatCombo()->setCurrentIndex(reasoning->formatCombo()->findText("<think> tags"));
  QCOMPARE(edited.count(), 4);
  sluice::ReasoningControls expected;
  expected.thinking = false;
  expected.effort = "high";
  expected.budget = 512;
  expected.format = sluice::ReasoningFormat::ThinkTags;
  ParametersPanel parameters;
  const sluice::GenerationSpec spec = sluice::ui::specFromPanels("/m.gguf", "", panel, parameters);
  QVERIFY(spec.prompt.reasoning == expected);
  QCOMPARE(reasoning->summary(),
           QString("thinking off · effort high · reasoning ≤ 512 tokens · reasoning as <think> "
                   "tags"));

  // A reopened job: its spec, read back from the job file's JSON, shows in a fresh panel.
  const sluice::GenerationSpec stored = sluice::spec_from_json(sluice::spec_to_json(spec));
  QVERIFY(stored.prompt.reasoning == expected);
  DatasetPanel reopened;
  reopened.setPromptOptions(stored.prompt);
  ReasoningPanel* shown = reopened.reasoningPanel();
  QCOMPARE(shown->thinkingCombo()->currentText(), QString("Off"));
  QCOMPARE(shown->effortCombo()->currentText(), QString("High"));
  QCOMPARE(shown->budgetSpin()->value(), 512);
  QCOMPARE(shown->formatCombo()->currentText(), QString("<think> tags"));
  QVERIFY(reopened.promptOptions().reasoning == expected);

  // Thinking on, a budget of 0 (answer at once) and back to no limit, every format.
  sluice::PromptOptions options = stored.prompt;
  options.reasoning = {.thinking = true, .effort = "", .budget = 0, .format = std::nullopt};
  reopened.setPromptOptions(options);
  QCOMPARE(shown->thinkingCombo()->currentText(), QString("On"));
  QCOMPARE(shown->budgetSpin()->text(), QString("0 tokens"));
  QVERIFY(reopened.promptOptions().reasoning == options.reasoning);
  QCOMPARE(shown->summary(), QString("thinking on · reasoning ≤ 0 tokens"));
  for (const auto format :
       {sluice::ReasoningFormat::None, sluice::ReasoningFormat::ThinkTags,
        sluice::ReasoningFormat::ThoughtChannel, sluice::ReasoningFormat::Harmony}) {
    options.reasoning = {};
    options.reasoning.format = format;
    reopened.setPromptOptions(options);
    QVERIFY(reopened.promptOptions().reasoning == options.reasoning);
    QCOMPARE(shown->budgetSpin()->text(), QString("No limit"));
  }
}

// The preview renders with the controls, as a run's prompts are built: Qwen3's template with
// thinking off writes the empty reasoning block; the format's Auto entry names the template's.
void SetupPanelsTest::reasoningControlsShapeThePreview() {
  DatasetPanel panel;
  QSignalSpy loaded(&panel, &DatasetPanel::datasetLoaded);
  panel.resize(560, 820);
  panel.show();
  panel.setModel(m_summary);
  panel.setDatasetPath(QString::fromStdString(m_alpacaPath));
  QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kWaitMs);
  sluice::PromptOptions options = panel.promptOptions();
  options.chat_template = sluice::test::read_file(
      sluice::test::shared_path("chat-templates/Qwen-Qwen3-0.6B/template.jinja"));
  panel.setPromptOptions(options);
  ReasoningPanel* reasoning = panel.reasoningPanel();
  QCOMPARE(reasoning->formatCombo()->currentText(), QString("Auto (<think> tags)"));
  const auto* preview = panel.promptPreview();
  const sluice::BuiltPrompt thinking = buildFirstRow(m_alpacaPath, options, *m_summary.session);
  QCOMPARE(preview->text(), QString::fromStdString(thinking.text));
  QVERIFY(thinking.text.find("</think>") == std::string::npos);

  reasoning->thinkingCombo()->setCurrentIndex(reasoning->thinkingCombo()->findText("Off"));
  options.reasoning.thinking = false;
  const sluice::BuiltPrompt off = buildFirstRow(m_alpacaPath, options, *m_summary.session);
  QVERIFY2(off.text.find("<think>\n\n</think>") != std::string::npos, off.text.c_str());
  QVERIFY2(preview->errorText().isEmpty(), qPrintable(preview->errorText()));
  QCOMPARE(preview->text(), QString::fromStdString(off.text));
  QCOMPARE(preview->tokenCount(), static_cast<int>(off.token_ids.size()));
  QVERIFY(sluice::test::saveShot(panel, "setup-prompt-reasoning"));
  // The section does not widen the panel: the file row needs more.
  const int panelWidth = panel.minimumSizeHint().width();
  reasoning->hide();
  QVERIFY2(panel.minimumSizeHint().width() == panelWidth,
           qPrintable(QString("%1 px with the section, %2 without")
                          .arg(panelWidth)
                          .arg(panel.minimumSizeHint().width())));
}

void SetupPanelsTest::lengthHistogramStatistics() {
  QVector<int> lengths;
  for (int i = 1; i <= 100; ++i) lengths << i;
  const auto stats = LengthHistogram::computeStats(lengths);
  QCOMPARE(stats.count, 100);
  QCOMPARE(stats.mean, 50.5);
  QCOMPARE(stats.p50, 50);
  QCOMPARE(stats.p95, 95);
  QCOMPARE(stats.max, 100);
  LengthHistogram histogram;
  histogram.setLengths(lengths, "note");
  QVERIFY(histogram.summaryText().contains("max 100"));
  QVERIFY(histogram.summaryText().contains("note"));
  // One very long prompt goes to the last bar instead of stretching the axis.
  lengths << 10000;
  histogram.setLengths(lengths);
  QVERIFY2(histogram.summaryText().contains("1 longer prompts"),
           qPrintable(histogram.summaryText()));
  histogram.setLengths({});
  QCOMPARE(histogram.stats().count, 0);
}

void SetupPanelsTest::parametersRoundTripASpec() {
  sluice::GenerationSpec spec;
  spec.sampling.n = 3;
  spec.sampling.temperature = 0.7f;
  spec.sampling.top_p = 0.9f;
  spec.sampling.top_k = 40;
  spec.sampling.min_p = 0.05f;
  spec.sampling.repetition_penalty = 1.1f;
  spec.sampling.presence_penalty = 0.5f;
  spec.sampling.frequency_penalty = -0.25f;
  spec.sampling.seed = 12345678901234567890ULL;
  spec.sampling.max_tokens = 77;
  spec.sampling.stop = {"\n\n", "User:", "a\\b\tc"};
  spec.sampling.stop_token_ids = {5};
  spec.engine.max_num_seqs = 17;
  spec.engine.kv_cache_bytes = size_t{64} << 20;
  spec.engine.block_size = 8;
  spec.num_threads = 3;

  ParametersPanel panel;
  QSignalSpy changed(&panel, &ParametersPanel::changed);
  panel.setFromSpec(spec);
  QCOMPARE(changed.count(), 1);
  QVERIFY2(panel.isValid(), qPrintable(panel.validationError()));
  const sluice::SamplingParams s = panel.samplingParams();
  QCOMPARE(s.n, 3);
  QCOMPARE(s.temperature, 0.7f);
  QCOMPARE(s.top_p, 0.9f);
  QCOMPARE(s.top_k, 40);
  QCOMPARE(s.min_p, 0.05f);
  QCOMPARE(s.repetition_penalty, 1.1f);
  QCOMPARE(s.presence_penalty, 0.5f);
  QCOMPARE(s.frequency_penalty, -0.25f);
  QCOMPARE(s.seed, spec.sampling.seed);
  QCOMPARE(s.max_tokens, 77);
  QVERIFY(s.stop == spec.sampling.stop);
  QVERIFY(s.stop_token_ids == spec.sampling.stop_token_ids);
  const sluice::EngineConfig e = panel.engineConfig();
  QCOMPARE(e.max_num_seqs, 17);
  QCOMPARE(e.kv_cache_bytes, size_t{64} << 20);
  QCOMPARE(e.block_size, 8);
  QCOMPARE(panel.numThreads(), 3);
  sluice::GenerationSpec out;
  panel.applyToSpec(out);
  // QCOMPARE cannot print JSON values; the dump says what differs on failure.
  const auto outJson = sluice::spec_to_json(out);
  const auto specJson = sluice::spec_to_json(spec);
  QVERIFY2(outJson["sampling"] == specJson["sampling"], outJson.dump().c_str());
  QCOMPARE(
      ParametersPanel::parseStopStrings(ParametersPanel::formatStopStrings(spec.sampling.stop)),
      spec.sampling.stop);
}

// The device list is CPU, auto and what the probe found; a choice survives a new probe and a
// device from a job that this machine lacks stays visible instead of turning into the CPU.
void SetupPanelsTest::parametersOfferProbedDevicesAndKeepTheChoice() {
  ParametersPanel panel;
  QCOMPARE(panel.device(), std::string("cpu"));
  sluice::DeviceReport report;
  report.cuda_compiled = report.cuda_usable = true;
  report.devices = {{"cuda:0", "cuda:0 Test GPU A (sm_90, 81559 MiB)"},
                    {"cuda:1", "cuda:1 Test GPU B"}};
  report.summary = "two test GPUs";
  panel.setDevices(report);
  sluice::GenerationSpec spec;
  spec.device = "cuda:1";
  spec.engine.gpu_memory_utilization = 0.8;
  QSignalSpy changed(&panel, &ParametersPanel::changed);
  panel.setFromSpec(spec);
  QCOMPARE(panel.device(), std::string("cuda:1"));
  QCOMPARE(panel.engineConfig().gpu_memory_utilization, 0.8);
  report.devices.pop_back();  // a new probe without cuda:1
  panel.setDevices(report);
  QCOMPARE(panel.device(), std::string("cuda:1"));
  QCOMPARE(changed.count(), 1);  // probing is not an edit
  sluice::GenerationSpec out;
  panel.applyToSpec(out);
  QCOMPARE(out.device, std::string("cuda:1"));
  const auto json = sluice::spec_to_json(out);
  QCOMPARE(sluice::spec_from_json(json).device, std::string("cuda:1"));
  QCOMPARE(sluice::spec_from_json(json).engine.gpu_memory_utilization, 0.8);
  spec.device = "auto";
  panel.setFromSpec(spec);
  QCOMPARE(panel.device(), std::string("auto"));

  // The KV cache type: kept for a GPU, and the CPU's float32 cache whatever the box says.
  QCOMPARE(panel.engineConfig().kv_cache_dtype, sluice::KvCacheDType::Auto);
  spec.device = "cuda:0";
  spec.engine.kv_cache_dtype = sluice::KvCacheDType::Fp8;
  panel.setFromSpec(spec);
  QCOMPARE(panel.engineConfig().kv_cache_dtype, sluice::KvCacheDType::Fp8);
  sluice::GenerationSpec with_fp8;
  panel.applyToSpec(with_fp8);
  QCOMPARE(sluice::spec_from_json(sluice::spec_to_json(with_fp8)).engine.kv_cache_dtype,
           sluice::KvCacheDType::Fp8);
  spec.device = "cpu";
  panel.setFromSpec(spec);
  QCOMPARE(panel.engineConfig().kv_cache_dtype, sluice::KvCacheDType::Auto);
}

void SetupPanelsTest::modelPanelSaysWhereTheRunGoes() {
  ModelPanel panel;
  sluice::ModelSummary q8 = m_summary;
  q8.dtypes = "Q8_0+F32";
  panel.setLoaded(q8);
  QVERIFY2(panel.runsOnText().startsWith("CPU") &&
               panel.runsOnText().contains("Q8_0 weights stay quantized on the CPU"),
           qPrintable(panel.runsOnText()));
  panel.setDevice("cuda:0");
  QVERIFY2(panel.runsOnText().startsWith("cuda:0") &&
               panel.runsOnText().contains("Q8_0 weights stay quantized in VRAM"),
           qPrintable(panel.runsOnText()));
  panel.setLoaded(m_summary);  // F32: nothing to convert
  QVERIFY2(!panel.runsOnText().contains("Q8_0"), qPrintable(panel.runsOnText()));
  panel.setBackendDescription("cuda:0 Test GPU: bf16 activations and KV cache");
  QCOMPARE(panel.runsOnText(), QString("cuda:0 Test GPU: bf16 activations and KV cache"));
}

void SetupPanelsTest::parametersRejectAnInvalidTemperature() {
  ParametersPanel panel;
  QVERIFY(panel.isValid());
  sluice::GenerationSpec spec;
  spec.sampling.temperature = -0.5f;
  QSignalSpy changed(&panel, &ParametersPanel::changed);
  panel.setFromSpec(spec);
  QVERIFY(!panel.isValid());
  QVERIFY2(panel.validationError().contains("temperature"), qPrintable(panel.validationError()));
  spec.sampling.temperature = 0.8f;
  spec.sampling.top_p = 0.0f;  // top-p must be above zero
  panel.setFromSpec(spec);
  QVERIFY(panel.validationError().contains("top_p"));
  spec.sampling.top_p = 1.0f;
  panel.setFromSpec(spec);
  QVERIFY(panel.isValid());
  QCOMPARE(changed.count(), 3);
}

QTEST_MAIN(SetupPanelsTest)
#include "setup_panels_test.moc"
