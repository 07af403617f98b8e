// The "Remote server(s)" section of the parameters, shown when the device is "Remote
// server(s)…": the OpenAI-compatible endpoints a job's requests go to (one URL per line), the
// model to ask for, the environment variable holding the API key, and how hard to push the
// servers (concurrency, requests and tokens per minute, request timeout, retries) — the
// RemoteSpec of `sluice generate --endpoint`. Values are checked as you type with the job's own
// check_remote_spec and parse_endpoint_url, so a run never starts on endpoints the job would
// refuse. Check asks every endpoint for its models (GET <url>/models) off the GUI thread,
// through QNetworkAccessManager, and shows each endpoint's answer.
#pragma once

#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include "app/remote/remote_spec.h"

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QNetworkAccessManager;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace sluice::ui {

class RemoteServersPanel final : public QWidget {
  Q_OBJECT

 public:
  // How long Check waits for an endpoint's answer, unless set.
  static constexpr int kCheckTimeoutMs = 10000;

  explicit RemoteServersPanel(QWidget* parent = nullptr);

  // Returns the settings as shown (the endpoints: the editor's non-empty lines, trimmed). May be
  // invalid: check validationError() before a run.
  sluice::RemoteSpec remoteSpec() const;
  void setRemoteSpec(const sluice::RemoteSpec& spec);
  // Returns why the settings would be refused (naming the line of a bad URL), or "" when valid.
  QString validationError() const { return m_problem; }
  // "stories on 2 endpoints" (the model as chosen, or "the servers' model").
  QString summary() const;
  // Returns the check's per-endpoint lines as shown ("✓ http://…: serves stories"), joined by
  // newlines; "" before a check.
  QString checkText() const;
  bool isChecking() const { return m_numPending > 0; }
  void setCheckTimeoutMs(int ms) { m_checkTimeoutMs = ms; }

  QPlainTextEdit* endpointsEditor() const { return m_endpoints; }
  QComboBox* modelSelector() const { return m_model; }
  QPushButton* checkButton() const { return m_checkButton; }

 public slots:
  // Asks every endpoint for its models; returns at once (checkFinished when all have answered).
  void check();

 signals:
  void changed();
  void checkFinished();

 private:
  QSpinBox* addInt(const QString& label, int low, int high, const QString& tip);
  QDoubleSpinBox* addDouble(const QString& label, double high, int decimals, const QString& tip);
  void onEdited();
  void validate();
  QString findProblem() const;
  void showCheck();
  void onModelsAnswered(int index, const QStringList& models, const QString& error);

  QString m_problem;
  bool m_updating = false;
  // One line per endpoint of the last check; a check still answering counts m_numPending.
  QStringList m_checkLines;
  QStringList m_checkedUrls;
  QVector<QStringList> m_servedModels;
  int m_numPending = 0;
  int m_checkTimeoutMs = kCheckTimeoutMs;
  int m_checkGeneration = 0;  // a new check drops the answers of the one before

  QNetworkAccessManager* m_network = nullptr;
  QPlainTextEdit* m_endpoints = nullptr;
  QComboBox* m_model = nullptr;
  QPushButton* m_checkButton = nullptr;
  QLabel* m_checkLabel = nullptr;
  QLineEdit* m_apiKeyEnv = nullptr;
  QSpinBox* m_concurrency = nullptr;
  QDoubleSpinBox* m_requestsPerMinute = nullptr;
  QDoubleSpinBox* m_tokensPerMinute = nullptr;
  QDoubleSpinBox* m_timeout = nullptr;
  QSpinBox* m_retries = nullptr;
  QLabel* m_problemLabel = nullptr;
  QFormLayout* m_form = nullptr;
};

}  // namespace sluice::ui
