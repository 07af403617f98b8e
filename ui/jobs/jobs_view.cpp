#include "ui/jobs/jobs_view.h"

#include <QDesktopServices>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "engine/jobs/job_lock.h"
#include "ui/jobs/job_compare_dialog.h"

namespace sluice::ui {

JobsView::JobsView(QWidget* parent) : QWidget(parent) {
  m_model = new JobsModel(this);
  m_table = new QTableView(this);
  m_table->setModel(m_model);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);  // two for Compare
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->verticalHeader()->hide();
  m_table->setWordWrap(false);
  m_table->setTextElideMode(Qt::ElideMiddle);  // the end of a job name is its date
  QHeaderView* header = m_table->horizontalHeader();
  header->setSectionResizeMode(QHeaderView::ResizeToContents);
  // The names share what the numbers leave (elided in the middle, whole on hover), so every
  // column is in sight at 1280 pixels.
  for (const int column :
       {JobsModel::NameColumn, JobsModel::ModelColumn, JobsModel::InstructionsColumn})
    header->setSectionResizeMode(column, QHeaderView::Stretch);

  m_folderLabel = new QLabel(this);
  m_folderLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* showFolder = new QPushButton(tr("Show folder"), this);
  showFolder->setToolTip(tr("Opens the folder where new jobs are saved."));
  m_open = new QPushButton(tr("Open"), this);
  m_open->setToolTip(tr("Shows the job's rows and restores its instructions and parameters."));
  m_resume = new QPushButton(tr("Resume"), this);
  m_resume->setToolTip(tr("Opens the job and runs its remaining rows."));
  m_export = new QPushButton(tr("Export…"), this);
  m_delete = new QPushButton(tr("Delete…"), this);
  m_compare = new QPushButton(tr("Compare…"), this);
  m_compare->setToolTip(
      tr("Select two jobs over the same instruction file (Ctrl+click) to see their rows side by "
         "side, with lengths and finish reasons."));
  auto* refreshButton = new QPushButton(tr("Refresh"), this);

  auto* top = new QHBoxLayout;
  top->addWidget(m_folderLabel, 1);
  top->addWidget(showFolder);
  auto* buttons = new QHBoxLayout;
  for (QPushButton* b : {m_open, m_resume, m_export, m_delete, m_compare}) buttons->addWidget(b);
  buttons->addStretch(1);
  buttons->addWidget(refreshButton);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(m_table, 1);
  layout->addLayout(buttons);

  m_confirmDelete = [this](const QString& path) {
    return QMessageBox::question(
               this, tr("Delete job"),
               tr("Delete the job %1 and every row it generated? This cannot be undone.")
                   .arg(QDir::toNativeSeparators(path))) == QMessageBox::Yes;
  };
  connect(&m_watcher, &QFutureWatcher<std::vector<JobsModel::Job>>::finished, this,
          &JobsView::onListed);
  connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &JobsView::updateButtons);
  connect(m_model, &QAbstractItemModel::modelReset, this, &JobsView::updateButtons);
  connect(m_model, &QAbstractItemModel::dataChanged, this, &JobsView::updateButtons);
  connect(m_table, &QAbstractItemView::doubleClicked, this,
          [this](const QModelIndex& index) { emit openRequested(m_model->pathAt(index.row())); });
  connect(m_open, &QPushButton::clicked, this, [this] { emit openRequested(selectedPath()); });
  connect(m_resume, &QPushButton::clicked, this, [this] { emit resumeRequested(selectedPath()); });
  connect(m_export, &QPushButton::clicked, this, [this] { emit exportRequested(selectedPath()); });
  connect(m_delete, &QPushButton::clicked, this, [this] { deleteJob(selectedPath()); });
  connect(m_compare, &QPushButton::clicked, this, [this] {
    const QStringList paths = selectedPaths();
    if (paths.size() == 2) compareJobs(paths[0], paths[1]);
  });
  connect(refreshButton, &QPushButton::clicked, this, &JobsView::refresh);
  connect(showFolder, &QPushButton::clicked, this, [this] {
    QDir().mkpath(m_directory);
    QDesktopServices::openUrl(QUrl::fromLocalFile(m_directory));
  });
  updateButtons();
}

JobsView::~JobsView() {
  m_watcher.waitForFinished();
}

void JobsView::setSources(const QString& directory, const QStringList& extraPaths) {
  m_directory = directory;
  m_extraPaths = extraPaths;
  m_folderLabel->setText(tr("New jobs are saved in %1").arg(QDir::toNativeSeparators(directory)));
}

void JobsView::refresh() {
  if (m_watcher.isRunning()) {
    m_isRefreshWanted = true;
    return;
  }
  m_watcher.setFuture(QtConcurrent::run(JobsModel::listJobFiles, m_directory, m_extraPaths));
}

void JobsView::onListed() {
  const QString selected = selectedPath();
  m_model->setJobs(m_watcher.result());
  if (const int row = m_model->rowOf(selected); row >= 0) m_table->selectRow(row);
  emit listed();
  if (m_isRefreshWanted) {
    m_isRefreshWanted = false;
    refresh();
  }
}

void JobsView::setActiveJob(const QString& path, JobsModel::JobState state,
                            const JobCounts& counts) {
  m_model->setActiveJob(path, state, counts);
}

QString JobsView::selectedPath() const {
  const QStringList paths = selectedPaths();
  return paths.size() == 1 ? paths.front() : QString();
}

QStringList JobsView::selectedPaths() const {
  QModelIndexList rows = m_table->selectionModel()->selectedRows();
  std::sort(rows.begin(), rows.end());
  QStringList paths;
  for (const QModelIndex& row : rows) paths << m_model->pathAt(row.row());
  return paths;
}

JobCompareDialog* JobsView::compareJobs(const QString& pathA, const QString& pathB) {
  auto* dialog = new JobCompareDialog(pathA, pathB, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->show();
  return dialog;
}

bool JobsView::deleteJob(const QString& path) {
  const int row = m_model->rowOf(path);
  if (row < 0) return false;
  const JobsModel::JobState state = m_model->stateAt(row);
  if (state == JobsModel::JobState::Running || state == JobsModel::JobState::Paused) {
    QMessageBox::information(this, tr("Delete job"),
                             tr("The job is running: cancel it before deleting it."));
    return false;
  }
  // Another process (`sluice generate`, a second window) may run it: its lock file says so.
  const JobLockStatus lock = inspect_job_lock(path.toStdString());
  if (lock.state == JobLockStatus::State::Running || lock.state == JobLockStatus::State::Unknown) {
    QMessageBox::information(
        this, tr("Delete job"),
        tr("The job is in use by %1: stop that run before deleting the job.")
            .arg(QString::fromStdString(describe_job_lock_holder(lock.holder))));
    return false;
  }
  if (!m_confirmDelete(path)) return false;
  // SQLite's write-ahead log and its index go with the job, and so does the lock file a run that
  // was killed left behind.
  bool ok = QFile::remove(path);
  for (const char* suffix : {"-wal", "-shm", ".lock"}) {
    if (QFileInfo::exists(path + suffix)) ok = QFile::remove(path + suffix) && ok;
  }
  if (!ok)
    QMessageBox::warning(this, tr("Delete job"),
                         tr("%1 could not be deleted.").arg(QDir::toNativeSeparators(path)));
  refresh();
  return ok;
}

void JobsView::updateButtons() {
  const QString path = selectedPath();
  const int row = m_model->rowOf(path);
  const bool isActive = row >= 0 && (m_model->stateAt(row) == JobsModel::JobState::Running ||
                                     m_model->stateAt(row) == JobsModel::JobState::Paused);
  m_open->setEnabled(row >= 0);
  m_resume->setEnabled(row >= 0 && !isActive &&
                       m_model->stateAt(row) == JobsModel::JobState::Cancelled);
  m_export->setEnabled(row >= 0);
  m_delete->setEnabled(row >= 0 && !isActive);
  m_compare->setEnabled(selectedPaths().size() == 2);
}

}  // namespace sluice::ui
