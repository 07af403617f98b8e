// The Results tab: a job's rows in a table that scales to 100k+ rows (ResultsModel), a status
// filter, a validity filter (All / Valid / Invalid, shown for a job with a grammar or schemas), a
// search box that waits for the typing to pause, header sorting, and the selected row
// in full below the table (RowDetailPane; it clears when the filter hides its row). Every read of
// the job runs on the model's reader, off the GUI thread: the selected row shows in the pane when
// its read comes back. Prompt and
// Output stretch to the table's width; the widths the user gives the other columns, and the
// table / detail split, are remembered (QSettings). The window calls refresh() on a timer while a
// job runs; new rows appear without losing the selection.
#pragma once

#include <QString>
#include <QTimer>
#include <QWidget>
#include <optional>

#include "engine/jobs/row_result.h"

class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QSplitter;
class QTableView;

namespace sluice::ui {

class ResultsModel;
class RowDetailPane;

class ResultsPanel final : public QWidget {
  Q_OBJECT

 public:
  // How long the search box waits after the last key before it filters (a search scans the job).
  static constexpr int kSearchDelayMs = 250;

  explicit ResultsPanel(QWidget* parent = nullptr);

  // Shows the job at jobPath (empty: nothing; the job already shown is refreshed). A file that
  // cannot be read shows its error.
  void setJobPath(const QString& jobPath);
  QString jobPath() const;

  ResultsModel* model() const { return m_model; }
  QTableView* tableView() const { return m_view; }
  RowDetailPane* detailPane() const { return m_detail; }
  QComboBox* statusFilter() const { return m_statusFilter; }
  QComboBox* validityFilter() const { return m_validityFilter; }
  QLineEdit* searchEdit() const { return m_search; }
  QSplitter* splitter() const { return m_splitter; }
  // The count above the table ("1,234 rows", "1 matching row"), and the last error reading the job
  // ("" if none).
  QString summaryText() const;
  QString errorText() const;

 public slots:
  // Shows rows committed since the last call (read on the model's reader; cheap when there are
  // none, and never more than one at a time).
  void refresh();
  // Forwards the worker's answer to rowAloneRequested to the detail pane.
  void showRowAloneResult(qint64 rowIndex, bool identical, const QString& details);

 signals:
  void rowAloneRequested(qint64 rowIndex);
  // The table now shows another job (or none): other views of the job follow it.
  void jobPathChanged(const QString& jobPath);

 private:
  QHBoxLayout* buildFilters();
  void buildTable();
  // Remembers the widths of the fixed-width columns after the user resized one (QSettings).
  void saveColumnWidths(int column);
  // Shows the rows the status and validity filters choose.
  void applyFilters();
  void applySearch();
  void showCurrentRow();
  // Reads job row rowIndex and shows it in the pane if it is still the current row then.
  void showRowRead(qint64 rowIndex);
  // After a refresh: the shown row again (it may have been replaced) and the count.
  void onRefreshed(bool hasChanged);
  // Shows or hides the Valid column and the validity filter for the job's kind (known once open).
  void showJobKind();
  // Shows rowResult in the detail pane unless it already shows exactly that (so a refresh does
  // not reset the pane's scroll position).
  void showInDetail(const std::optional<sluice::RowResult>& rowResult);
  // After a reset, selects the row the pane shows again when the new view has it.
  void reselectShownRow();
  void updateSummary();
  void showError(const QString& message);
  void clearError();

  ResultsModel* m_model = nullptr;
  QComboBox* m_statusFilter = nullptr;
  QComboBox* m_validityFilter = nullptr;
  QLineEdit* m_search = nullptr;
  QLabel* m_summary = nullptr;
  QLabel* m_error = nullptr;
  QTableView* m_view = nullptr;
  QSplitter* m_splitter = nullptr;
  RowDetailPane* m_detail = nullptr;
  QTimer m_searchDelay;
  std::optional<sluice::RowResult> m_shownRow;  // what the detail pane shows
};

}  // namespace sluice::ui
