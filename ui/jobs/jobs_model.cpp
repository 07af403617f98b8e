#include "ui/jobs/jobs_model.h"

#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <algorithm>
#include <set>

#include "ui/common/number_format.h"

namespace sluice::ui {

namespace {

QString fileNameOf(const std::string& path) {
  return QFileInfo(QString::fromStdString(path)).fileName();
}

QString nativePath(const std::string& path) {
  return QDir::toNativeSeparators(QString::fromStdString(path));
}

bool isNumberColumn(int column) {
  return column == JobsModel::SamplesColumn || column == JobsModel::TemperatureColumn ||
         column == JobsModel::MaxTokensColumn || column == JobsModel::RowsColumn ||
         column == JobsModel::FailedColumn;
}

// "0", "0.9", "0.75", "1.2": as a person typed it (a float read back has digits they did not).
QString formatTemperature(double temperature) {
  return QLocale().toString(temperature, 'g', 3);
}

}  // namespace

JobsModel::JobsModel(QObject* parent) : QAbstractTableModel(parent) {}

std::vector<JobsModel::Job> JobsModel::listJobFiles(const QString& directory,
                                                    const QStringList& extraPaths) {
  std::vector<JobListing> listings;
  std::set<QString> seen;
  if (QFileInfo(directory).isDir()) {
    try {
      listings = list_jobs(directory.toStdString());
    } catch (const std::exception&) {
      listings.clear();  // an unreadable folder lists nothing; the recent jobs still show
    }
  }
  for (const JobListing& job : listings)
    seen.insert(QFileInfo(QString::fromStdString(job.path)).absoluteFilePath());
  for (const QString& path : extraPaths) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    if (!QFileInfo(absolute).isFile() || !seen.insert(absolute).second) continue;
    listings.push_back(read_job_listing(path.toStdString()));
  }
  std::stable_sort(listings.begin(), listings.end(), [](const JobListing& a, const JobListing& b) {
    return a.info.created_at != b.info.created_at ? a.info.created_at > b.info.created_at
                                                  : a.path < b.path;
  });
  std::vector<Job> jobs;
  jobs.reserve(listings.size());
  for (JobListing& listing : listings) {
    JobSettings settings = listing.error.empty() ? jobSettingsOf(listing.info) : JobSettings{};
    jobs.push_back({std::move(listing), std::move(settings)});
  }
  return jobs;
}

QString JobsModel::stateName(JobState state) {
  switch (state) {
    case JobState::Running:
      return tr("running");
    case JobState::Paused:
      return tr("paused");
    case JobState::Done:
      return tr("done");
    case JobState::Failed:
      return tr("failed");
    case JobState::Cancelled:
      return tr("cancelled");
  }
  return {};
}

void JobsModel::setJobs(std::vector<Job> jobs) {
  beginResetModel();
  m_jobs = std::move(jobs);
  m_activeRow = rowOf(m_activePath);
  endResetModel();
}

void JobsModel::setActiveJob(const QString& path, JobState state, const JobCounts& counts) {
  const int oldRow = m_activeRow;
  if (path != m_activePath) m_activeRow = rowOf(path);
  m_activePath = path;
  m_activeState = state;
  m_activeCounts = counts;
  for (const int row : {oldRow, m_activeRow}) {
    if (row >= 0) emit dataChanged(index(row, 0), index(row, NumColumns - 1));
  }
}

QString JobsModel::pathAt(int row) const {
  if (row < 0 || row >= rowCount()) return {};
  return QString::fromStdString(m_jobs[static_cast<size_t>(row)].listing.path);
}

int JobsModel::rowOf(const QString& path) const {
  if (path.isEmpty()) return -1;
  const QString absolute = QFileInfo(path).absoluteFilePath();
  for (size_t i = 0; i < m_jobs.size(); ++i) {
    if (QFileInfo(QString::fromStdString(m_jobs[i].listing.path)).absoluteFilePath() == absolute)
      return static_cast<int>(i);
  }
  return -1;
}

JobsModel::JobState JobsModel::stateAt(int row) const {
  const JobListing& job = m_jobs.at(static_cast<size_t>(row)).listing;
  if (row == m_activeRow) return m_activeState;
  if (!job.error.empty()) return JobState::Failed;
  const JobCounts& c = job.counts;
  return c.total_rows >= 0 && c.finished() >= c.total_rows ? JobState::Done : JobState::Cancelled;
}

int JobsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_jobs.size());
}

int JobsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : NumColumns;
}

QVariant JobsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const JobListing& job = m_jobs[static_cast<size_t>(index.row())].listing;
  const JobSettings& settings = m_jobs[static_cast<size_t>(index.row())].settings;
  const bool isActive = index.row() == m_activeRow;
  const JobCounts& counts = isActive ? m_activeCounts : job.counts;
  const JobState state = stateAt(index.row());
  if (role == PathRole) return QString::fromStdString(job.path);
  if (role == StateRole) return static_cast<int>(state);
  if (role == Qt::TextAlignmentRole && isNumberColumn(index.column()))
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole) {
    switch (index.column()) {
      case NameColumn:
        return nativePath(job.path);
      case ModelColumn:
        if (settings.isRemote) return tr("%1 on %2").arg(settings.modelName, settings.endpoints);
        return nativePath(job.info.model_path);

      case InstructionsColumn:
        return nativePath(job.info.source_path);
      case StateColumn:
        if (!job.error.empty()) return QString::fromStdString(job.error);
        if (state == JobState::Cancelled)
          return tr("Stopped before the end of its file: Resume runs the remaining rows.");
        return {};
      default:
        return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  const QLocale locale;
  switch (index.column()) {
    case NameColumn:
      return fileNameOf(job.path);
    case ModelColumn:
      return settings.isRemote ? settings.modelName : fileNameOf(job.info.model_path);
    case InstructionsColumn:
      return fileNameOf(job.info.source_path);
    case SamplesColumn:
      return settings.isKnown ? QString::number(settings.numSamples) : QString();
    case TemperatureColumn:
      return settings.isKnown ? formatTemperature(settings.temperature) : QString();
    case MaxTokensColumn:
      return settings.isKnown ? formatCount(settings.maxTokens) : QString();
    case OutputModeColumn:
      return settings.outputMode;
    case RowsColumn:
      if (!job.error.empty()) return QString();
      return QString("%1 / %2").arg(
          formatCount(counts.finished()),
          counts.total_rows >= 0 ? formatCount(counts.total_rows) : QString("?"));
    case FailedColumn:
      return job.error.empty() ? formatCount(counts.failed) : QString();
    case StateColumn:
      return stateName(state);
    case CreatedColumn: {
      const QDateTime created =
          QDateTime::fromString(QString::fromStdString(job.info.created_at), Qt::ISODate);
      // Minutes are enough to tell runs apart, and the column stays narrow at 1280 pixels.
      return created.isValid()
                 ? locale.toString(created.toLocalTime(), QStringLiteral("yyyy-MM-dd HH:mm"))
                 : QString();
    }
    default:
      return {};
  }
}

QVariant JobsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case SamplesColumn:
        return tr("n: samples generated per prompt");
      case TemperatureColumn:
        return tr("Sampling temperature (0: greedy)");
      case MaxTokensColumn:
        return tr("The most tokens an output may have");
      case OutputModeColumn:
        return tr(
            "What the outputs were constrained to: free text, a JSON schema, JSON, a "
            "regex, a choice, a grammar, or each row's own schema");
      case RowsColumn:
        return tr("Rows done / rows in the instruction file (? until counted)");
      default:
        return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case NameColumn:
      return tr("Job");
    case ModelColumn:
      return tr("Model");
    case InstructionsColumn:
      return tr("Instructions");
    case SamplesColumn:
      return tr("n");
    case TemperatureColumn:
      return tr("Temp.");
    case MaxTokensColumn:
      return tr("Max tokens");
    case OutputModeColumn:
      return tr("Output");
    case RowsColumn:
      return tr("Rows");
    case FailedColumn:
      return tr("Failed");
    case StateColumn:
      return tr("State");
    case CreatedColumn:
      return tr("Created");
    default:
      return {};
  }
}

}  // namespace sluice::ui
