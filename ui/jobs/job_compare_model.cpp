#include "ui/jobs/job_compare_model.h"

#include <QBrush>
#include <QColor>
#include <QPalette>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "engine/core/error.h"

namespace sluice::ui {

namespace {

// Reads one page of both jobs on the thread pool, each job through a connection of its own.
JobCompareModel::Page readPage(const QString& pathA, const QString& pathB,
                               const std::vector<int64_t>& rowIndices) {
  JobCompareModel::Page page;
  page.rows.resize(rowIndices.size());
  try {
    for (const bool isA : {true, false}) {
      const auto table = JobTable::open((isA ? pathA : pathB).toStdString());
      size_t at = 0;  // summaries() keeps rowIndices' order and leaves out rows not stored
      for (RowSummary& summary : table->summaries(rowIndices)) {
        while (at < rowIndices.size() && rowIndices[at] != summary.row_index) ++at;
        if (at == rowIndices.size()) break;
        (isA ? page.rows[at].a : page.rows[at].b) = std::move(summary);
      }
    }
  } catch (const Error& e) {
    page.error = QString::fromUtf8(e.what());
  }
  return page;
}

QString finishText(const std::optional<RowSummary>& row) {
  if (!row) return QStringLiteral("(not run)");
  if (row->status != RowStatus::Done) return QString::fromUtf8(to_string(row->status));
  return QString("%1 · %2 tok")
      .arg(QString::fromStdString(row->finish_reason))
      .arg(row->output_tokens);
}

QString outputText(const std::optional<RowSummary>& row) {
  if (!row) return {};
  return QString::fromStdString(row->num_samples > 0 ? row->output_head : row->error_head);
}

}  // namespace

JobCompareModel::JobCompareModel(QObject* parent) : QAbstractTableModel(parent) {}

void JobCompareModel::setRows(const QString& pathA, const QString& pathB,
                              std::vector<int64_t> rowIndices, std::vector<int64_t> differing) {
  beginResetModel();
  ++m_generation;  // pages still being read belong to the old rows
  m_pathA = pathA;
  m_pathB = pathB;
  m_rowIndices = std::move(rowIndices);
  m_differing = std::move(differing);
  m_pages.clear();
  m_pending.clear();
  endResetModel();
}

int64_t JobCompareModel::rowIndexAt(int row) const {
  return row >= 0 && row < rowCount() ? m_rowIndices[static_cast<size_t>(row)] : -1;
}

bool JobCompareModel::isLoaded(int row) const {
  return m_pages.contains(row / kPageRows);
}

int JobCompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rowIndices.size());
}

int JobCompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : NumColumns;
}

QVariant JobCompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case RowColumn:
      return tr("Row");
    case PromptColumn:
      return tr("Prompt");
    case OutputAColumn:
      return tr("Output A");
    case OutputBColumn:
      return tr("Output B");
    case FinishAColumn:
      return tr("Finish A");
    case FinishBColumn:
      return tr("Finish B");
    default:
      return {};
  }
}

QVariant JobCompareModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const int64_t rowIndex = m_rowIndices[static_cast<size_t>(index.row())];
  if (role == Qt::BackgroundRole) {
    if (!isDiffering(rowIndex) || index.column() == RowColumn || index.column() == PromptColumn)
      return {};
    QColor tint = QPalette().color(QPalette::Highlight);
    tint.setAlpha(40);
    return QBrush(tint);
  }
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  if (index.column() == RowColumn) return QString::number(rowIndex);
  const QVariant text = cellText(index);
  if (role == Qt::ToolTipRole || text.typeId() != QMetaType::QString) return text;
  return QString(text.toString()).replace('\n', QStringLiteral(" \u23CE "));  // one line a row
}

QVariant JobCompareModel::cellText(const QModelIndex& index) const {
  const int page = index.row() / kPageRows;
  const auto found = m_pages.constFind(page);
  if (found == m_pages.constEnd()) {
    requestPage(page);
    return QStringLiteral("\u2026");
  }
  const RowPair& pair = found->rows[static_cast<size_t>(index.row() % kPageRows)];
  switch (index.column()) {
    case PromptColumn: {
      const std::optional<RowSummary>& either = pair.a ? pair.a : pair.b;
      return either ? QString::fromStdString(either->prompt_head) : QString();
    }
    case OutputAColumn:
      return outputText(pair.a);
    case OutputBColumn:
      return outputText(pair.b);
    case FinishAColumn:
      return finishText(pair.a);
    case FinishBColumn:
      return finishText(pair.b);
    default:
      return {};
  }
}

bool JobCompareModel::isDiffering(int64_t rowIndex) const {
  return std::binary_search(m_differing.begin(), m_differing.end(), rowIndex);
}

void JobCompareModel::requestPage(int page) const {
  if (m_pending.contains(page)) return;
  m_pending.insert(page);
  const size_t first = static_cast<size_t>(page) * kPageRows;
  const size_t last = std::min(m_rowIndices.size(), first + kPageRows);
  std::vector<int64_t> indices(m_rowIndices.begin() + static_cast<std::ptrdiff_t>(first),
                               m_rowIndices.begin() + static_cast<std::ptrdiff_t>(last));
  auto* self = const_cast<JobCompareModel*>(this);  // data() is const; the cache is not
  QtConcurrent::run(readPage, m_pathA, m_pathB, std::move(indices))
      .then(self, [self, generation = m_generation, page](const Page& read) {
        // A read that finished before .then() runs its continuation here and now, inside data():
        // queue it, so that a view never gets dataChanged while it asks for data.
        QMetaObject::invokeMethod(
            self, [self, generation, page, read] { self->onPageRead(generation, page, read); },
            Qt::QueuedConnection);
      });
}

void JobCompareModel::onPageRead(quint64 generation, int page, const Page& read) {
  if (generation != m_generation) return;  // the rows were replaced while it was read
  if (!read.error.isEmpty()) {
    emit loadFailed(read.error);  // the page stays pending: it is not read again on every paint
    return;
  }
  m_pending.remove(page);
  // Keep the cache bounded: drop the pages farthest from this one.
  while (m_pages.size() >= kMaxCachedPages) {
    auto farthest = m_pages.begin();
    for (auto it = m_pages.begin(); it != m_pages.end(); ++it) {
      if (std::abs(it.key() - page) > std::abs(farthest.key() - page)) farthest = it;
    }
    m_pages.erase(farthest);
  }
  m_pages.insert(page, read);
  const int firstRow = page * kPageRows;
  const int lastRow = std::min(rowCount(), firstRow + kPageRows) - 1;
  emit dataChanged(index(firstRow, 0), index(lastRow, NumColumns - 1));
  emit pageLoaded(page);
}

}  // namespace sluice::ui
