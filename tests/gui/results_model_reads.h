// Waiting for the Results model, whose every read of a job runs on its reader (off the GUI
// thread): a test asks, then waits for the answer through the event loop, never by sleeping.
#pragma once

#include <QStringList>
#include <QTest>
#include <QVariant>
#include <memory>
#include <optional>

#include "engine/jobs/row_result.h"
#include "ui/results/results_model.h"

namespace sluice::gui_test {

inline constexpr int kReadTimeoutMs = 10000;

// Waits until every read the model asked for has come back; false on timeout.
inline bool settled(const ui::ResultsModel& model) {
  return QTest::qWaitFor([&] { return !model.isBusy(); }, kReadTimeoutMs);
}

// Shows the job at path and waits for its view to be read (its pages may still be on their
// way); true when it opened.
inline bool openJob(ui::ResultsModel& model, const QString& path) {
  model.setJobPath(path);
  (void)QTest::qWaitFor([&] { return model.isJobOpen() || !model.isBusy(); }, kReadTimeoutMs);
  return model.isJobOpen();
}

// Returns the cell's data once its row's page has been read (asking for it first).
inline QVariant readCell(const ui::ResultsModel& model, int row, int column,
                         int role = Qt::DisplayRole) {
  model.index(row, column).data(role);
  // On a timeout the cell is the placeholder, which the caller's comparison then reports.
  (void)QTest::qWaitFor([&] { return model.isRowRead(row); }, kReadTimeoutMs);
  return model.index(row, column).data(role);
}

inline QString cellText(const ui::ResultsModel& model, int row, int column) {
  return readCell(model, row, column).toString();
}

// Returns column's texts of the first numRows rows as they are the moment their page arrives (read
// in the model's dataChanged for the page), e.g. a Valid cell waiting for its row's own check:
// that check's answer is queued to this thread, so it cannot have landed yet.
inline QStringList textsAtPageArrival(const ui::ResultsModel& model, int column, int numRows) {
  QStringList texts;
  const QMetaObject::Connection connection = QObject::connect(
      &model, &QAbstractItemModel::dataChanged, &model, [&](const QModelIndex& first) {
        if (!texts.isEmpty() || first.row() != 0 || !model.isRowRead(0)) return;
        for (int row = 0; row < numRows; ++row) texts << model.index(row, column).data().toString();
      });
  model.index(0, column).data();  // asks for the page
  (void)QTest::qWaitFor([&] { return !texts.isEmpty(); }, kReadTimeoutMs);
  QObject::disconnect(connection);
  return texts;
}

// Returns job row rowIndex as the model's reader reads it in full (nullopt: not stored, or no
// answer in time).
inline std::optional<RowResult> readRowResult(ui::ResultsModel& model, qint64 rowIndex) {
  // Shared: an answer later than the timeout must not write into a finished call.
  const auto answer = std::make_shared<std::optional<std::optional<RowResult>>>();
  model.readRow(rowIndex, [answer](const std::optional<RowResult>& row) { *answer = row; });
  (void)QTest::qWaitFor([&] { return answer->has_value(); }, kReadTimeoutMs);
  return answer->value_or(std::nullopt);
}

}  // namespace sluice::gui_test
