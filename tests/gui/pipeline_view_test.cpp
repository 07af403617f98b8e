// The Pipeline tab runs a description (generate n = 2, judge, dedup, export on stories260K) off
// the GUI thread and lists its steps with their states and figures; the same description again
// shows every step cached with no model call; "Review pairs" opens the generation job in the
// Pairs tab of the window.
#include <QFile>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTest>
#include <QTreeWidget>
#include <nlohmann/json.hpp>

#include "tests/gui/gui_shots.h"
#include "tests/support/test_paths.h"
#include "ui/pairs/pair_review_view.h"
#include "ui/pipeline/pipeline_view.h"
#include "ui/window/main_window.h"

using sluice::ui::MainWindow;
using sluice::ui::PipelineView;

namespace {

QString writeDescription(const std::string& dir) {
  std::string jsonl;
  const char* prompts[] = {"Tell a story about a cat.",  "Tell a story about a dog.",
                           "Tell a story about a cat.",  "Write about the sea.",
                           "Tell a story about a bird.", "Write about the moon."};
  for (const char* p : prompts) jsonl += nlohmann::json{{"prompt", p}}.dump() + "\n";
  sluice::test::write_file(dir + "/prompts.jsonl", jsonl);
  const nlohmann::json description = {
      {"name", "gui-pipeline"},
      {"steps",
       {{{"step", "generate"},
         {"options",
          {{"model", sluice::test::shared_path("models/stories260K/gguf/stories260K-f32.gguf")},
           {"input", "prompts.jsonl"},
           {"n", 2},
           {"temperature", 0.9},
           {"seed", 3},
           {"max-tokens", 24},
           {"threads", 1}}}},
        {{"step", "judge"},
         {"k", 3},
         {"rationale_chars", 20},
         {"options", {{"max-tokens", 48}, {"temperature", 1.0}, {"threads", 1}}}},
        {{"step", "dedup"}},
        {{"step", "export"}}}}};
  sluice::test::write_file(dir + "/pipeline.json", description.dump(2));
  return QString::fromStdString(dir + "/pipeline.json");
}

bool runToEnd(PipelineView& view) {
  QSignalSpy ended(&view, &PipelineView::runEnded);
  view.start();
  return ended.wait(300000);
}

}  // namespace

class PipelineViewTest : public QObject {
  Q_OBJECT

 private slots:
  void runsTheStepsOffTheGuiThreadAndShowsCachedOnesOnTheSecondRun();
};

void PipelineViewTest::runsTheStepsOffTheGuiThreadAndShowsCachedOnesOnTheSecondRun() {
  const std::string dir = sluice::test::make_temp_dir("pipeline-view");
  MainWindow window;
  window.resize(1280, 720);
  window.show();
  PipelineView& view = *window.pipelineView();
  view.setDescription(writeDescription(dir), QString::fromStdString(dir + "/run"));

  QVERIFY(runToEnd(view));
  QTreeWidget* steps = view.stepsList();
  QCOMPARE(steps->topLevelItemCount(), 4);
  const QStringList names = {"generate", "judge", "dedup", "export"};
  for (int i = 0; i < 4; ++i) {
    QCOMPARE(steps->topLevelItem(i)->text(PipelineView::Step), names[i]);
    QCOMPARE(view.stepState(i), QString("done"));
  }
  QCOMPARE(steps->topLevelItem(0)->text(PipelineView::Calls), QString("12"));  // 6 rows x 2
  QCOMPARE(steps->topLevelItem(1)->text(PipelineView::Calls), QString("36"));  // 3 per sample
  // The exact duplicate prompt (row 2 repeats row 0) is taken out.
  QCOMPARE(steps->topLevelItem(2)->text(PipelineView::Rows), QString("6 → 5"));
  QVERIFY(QFile::exists(view.reportPath()));
  window.centralWidget()->findChild<QTabWidget*>()->setCurrentWidget(&view);
  QVERIFY(sluice::test::saveShot(window, "pipeline-done"));

  // Again: every step's key is unchanged, nothing runs.
  QVERIFY(runToEnd(view));
  for (int i = 0; i < 3; ++i) QCOMPARE(view.stepState(i), QString("cached (unchanged)"));
  QCOMPARE(steps->topLevelItem(0)->text(PipelineView::Calls), QString("0"));
  QVERIFY(sluice::test::saveShot(window, "pipeline-cached"));

  // Review pairs: the Pairs tab shows the generation job.
  QPushButton* review = nullptr;
  for (QPushButton* button : view.findChildren<QPushButton*>())
    if (button->text() == "Review pairs") review = button;
  QVERIFY(review && review->isEnabled());
  QTest::mouseClick(review, Qt::LeftButton);
  QCOMPARE(window.pairReview()->jobPath(), view.generateJob());
}

QTEST_MAIN(PipelineViewTest)
#include "pipeline_view_test.moc"
