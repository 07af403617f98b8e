// A pipeline run for the app: reads the description and runs its steps on the thread this object
// lives on (its own QThread, never the GUI's), with its own model host, and tells the window
// what happens as queued signals of plain values.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <atomic>

namespace sluice {

class PipelineWorker final : public QObject {
  Q_OBJECT

 public:
  explicit PipelineWorker(QObject* parent = nullptr);

  // Asks the running pipeline to stop at its next commit (any thread).
  void cancel() { m_cancel = true; }

 public slots:
  // Reads the description at file and runs it in dir ("" : beside the file, named after it).
  void run(const QString& file, const QString& dir);

 signals:
  // The description was read: its steps' names, in order, and the pipeline's folder.
  void loaded(const QStringList& steps, const QString& dir);
  void stepStarted(int index);
  // A model step's rows: done (this run and before) of total (-1 while unknown).
  void stepProgress(int index, qint64 done, qint64 total, double tokensPerSecond);
  void stepDone(int index, bool cached, qint64 rowsIn, qint64 rowsOut, qint64 modelCalls,
                qint64 generatedTokens, double seconds, const QString& note);
  void note(const QString& text);
  void finished(const QString& generateJob, const QString& exportDir, const QString& reportPath,
                qint64 rowsExported);
  void cancelled();
  void failed(const QString& error);

 private:
  std::atomic<bool> m_cancel{false};
};

}  // namespace sluice
