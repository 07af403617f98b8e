#include "ui/setup/remote_servers_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QUrl>

#include "app/remote/remote_driver.h"
#include "engine/core/error.h"

namespace sluice::ui {

namespace {

QStringList endpointLines(const QString& text) {
  QStringList lines;
  for (const QString& line : text.split('\n')) {
    if (!line.trimmed().isEmpty()) lines << line.trimmed();
  }
  return lines;
}

// Returns why url is not an endpoint a job can use, or "".
QString urlProblem(const QString& url) {
  try {
    RemoteSpec one;
    one.endpoints = {url.toStdString()};
    check_remote_spec(one);
    parse_endpoint_url(url.toStdString());
  } catch (const Error& e) {
    return QString::fromUtf8(e.what());
  }
  const QUrl parsed(url, QUrl::StrictMode);
  if (!parsed.isValid() || parsed.host().isEmpty())
    return QString("--endpoint '%1' is not a valid URL").arg(url);
  return QString();
}

}  // namespace

RemoteServersPanel::RemoteServersPanel(QWidget* parent) : QWidget(parent) {
  m_updating = true;  // until setRemoteSpec below: the widgets' signals find a panel half built
  m_network = new QNetworkAccessManager(this);
  m_network->setProxy(QNetworkProxy::NoProxy);  // as the job's own HTTP client
  m_form = new QFormLayout(this);
  m_form->setContentsMargins(0, 0, 0, 0);
  m_endpoints = new QPlainTextEdit(this);
  m_endpoints->setTabChangesFocus(true);
  m_endpoints->setPlaceholderText("http://gpu1:8000/v1\none URL per line");
  m_endpoints->setToolTip(
      "OpenAI-compatible servers (vLLM, SGLang, llama.cpp's server, sluice serve), one base URL "
      "per line; requests go to the least busy one (--endpoint)");
  m_endpoints->setFixedHeight(m_endpoints->fontMetrics().lineSpacing() * 3 + 12);
  m_form->addRow("Endpoints", m_endpoints);
  connect(m_endpoints, &QPlainTextEdit::textChanged, this, &RemoteServersPanel::onEdited);

  m_model = new QComboBox(this);
  m_model->setEditable(true);
  m_model->lineEdit()->setPlaceholderText("the servers' only model");
  m_model->setToolTip("The model to ask the servers for (--remote-model); Check lists theirs");
  m_model->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  m_checkButton = new QPushButton("Check", this);
  m_checkButton->setToolTip("Ask every endpoint for its models (GET <url>/models)");
  auto* modelRow = new QHBoxLayout;
  modelRow->addWidget(m_model, 1);
  modelRow->addWidget(m_checkButton);
  m_form->addRow("Model", modelRow);
  connect(m_model, &QComboBox::currentTextChanged, this, &RemoteServersPanel::onEdited);
  connect(m_checkButton, &QPushButton::clicked, this, &RemoteServersPanel::check);
  m_checkLabel = new QLabel(this);
  m_checkLabel->setWordWrap(true);
  m_checkLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_checkLabel->hide();
  m_form->addRow(QString(), m_checkLabel);

  m_apiKeyEnv = new QLineEdit(this);
  m_apiKeyEnv->setPlaceholderText("none");
  m_apiKeyEnv->setToolTip(
      "The environment variable holding the API key (--api-key-env); the key is never stored");
  m_form->addRow("API key variable", m_apiKeyEnv);
  connect(m_apiKeyEnv, &QLineEdit::textEdited, this, &RemoteServersPanel::onEdited);
  m_concurrency = addInt("Concurrency", 1, 4096,
                         "Requests in flight at once, over all endpoints (--concurrency)");
  m_requestsPerMinute = addDouble("Requests/min", 1e9, 0,
                                  "Requests started per minute at most (--requests-per-minute)");
  m_tokensPerMinute = addDouble(
      "Tokens/min", 1e12, 0, "Prompt and output tokens per minute at most (--tokens-per-minute)");
  m_timeout = addDouble("Request timeout", 86400, 1,
                        "One attempt, from connecting to the last byte (--request-timeout)");
  m_timeout->setMinimum(0.1);  // never "no limit": a job must not wait forever on one request
  m_timeout->setSpecialValueText(QString());
  m_timeout->setToolTip("One attempt, from connecting to the last byte (--request-timeout)");
  m_timeout->setSuffix(" s");
  m_retries =
      addInt("Retries", 0, 100, "Further attempts of a failing request, with backoff (--retries)");
  m_problemLabel = new QLabel(this);
  m_problemLabel->setWordWrap(true);
  m_problemLabel->setStyleSheet("color: #c0392b;");
  m_problemLabel->hide();
  m_form->addRow(m_problemLabel);
  setRemoteSpec(RemoteSpec{});
}

QSpinBox* RemoteServersPanel::addInt(const QString& label, int low, int high, const QString& tip) {
  auto* spin = new QSpinBox(this);
  spin->setRange(low, high);
  spin->setToolTip(tip);
  spin->setKeyboardTracking(false);
  m_form->addRow(label, spin);
  connect(spin, &QSpinBox::valueChanged, this, &RemoteServersPanel::onEdited);
  return spin;
}

QDoubleSpinBox* RemoteServersPanel::addDouble(const QString& label, double high, int decimals,
                                              const QString& tip) {
  auto* spin = new QDoubleSpinBox(this);
  spin->setRange(0.0, high);
  spin->setDecimals(decimals);
  spin->setSpecialValueText("no limit");
  spin->setToolTip(tip + "; 0 = no limit");
  spin->setKeyboardTracking(false);
  m_form->addRow(label, spin);
  connect(spin, &QDoubleSpinBox::valueChanged, this, &RemoteServersPanel::onEdited);
  return spin;
}

sluice::RemoteSpec RemoteServersPanel::remoteSpec() const {
  RemoteSpec spec;
  for (const QString& url : endpointLines(m_endpoints->toPlainText()))
    spec.endpoints.push_back(url.toStdString());
  spec.model = m_model->currentText().trimmed().toStdString();
  spec.api_key_env = m_apiKeyEnv->text().trimmed().toStdString();
  spec.concurrency = m_concurrency->value();
  spec.requests_per_minute = m_requestsPerMinute->value();
  spec.tokens_per_minute = m_tokensPerMinute->value();
  spec.request_timeout_s = m_timeout->value();
  spec.retries = m_retries->value();
  return spec;
}

void RemoteServersPanel::setRemoteSpec(const sluice::RemoteSpec& spec) {
  m_updating = true;
  QStringList urls;
  for (const std::string& url : spec.endpoints) urls << QString::fromStdString(url);
  m_endpoints->setPlainText(urls.join('\n'));
  m_model->setCurrentText(QString::fromStdString(spec.model));
  m_apiKeyEnv->setText(QString::fromStdString(spec.api_key_env));
  m_concurrency->setValue(spec.concurrency);
  m_requestsPerMinute->setValue(spec.requests_per_minute);
  m_tokensPerMinute->setValue(spec.tokens_per_minute);
  m_timeout->setValue(spec.request_timeout_s);
  m_retries->setValue(spec.retries);
  m_updating = false;
  onEdited();
}

QString RemoteServersPanel::summary() const {
  const qsizetype count = endpointLines(m_endpoints->toPlainText()).size();
  const QString model = m_model->currentText().trimmed();
  return QString("%1 on %2 endpoint%3")
      .arg(model.isEmpty() ? QString("the servers' model") : model)
      .arg(count)
      .arg(count == 1 ? "" : "s");
}

QString RemoteServersPanel::checkText() const {
  return m_checkLines.join('\n');
}

void RemoteServersPanel::onEdited() {
  if (m_updating) return;
  validate();
  emit changed();
}

void RemoteServersPanel::validate() {
  m_problem = findProblem();
  m_problemLabel->setText(m_problem);
  m_problemLabel->setVisible(!m_problem.isEmpty());
}

QString RemoteServersPanel::findProblem() const {
  const QStringList lines = m_endpoints->toPlainText().split('\n');
  if (endpointLines(m_endpoints->toPlainText()).isEmpty())
    return "Remote servers: give at least one endpoint URL, e.g. http://gpu1:8000/v1";
  for (qsizetype i = 0; i < lines.size(); ++i) {
    const QString url = lines[i].trimmed();
    const QString problem = url.isEmpty() ? QString() : urlProblem(url);
    if (!problem.isEmpty()) return QString("Remote servers, line %1: %2").arg(i + 1).arg(problem);
  }
  try {
    check_remote_spec(remoteSpec());
  } catch (const Error& e) {
    return "Remote servers: " + QString::fromUtf8(e.what());
  }
  const QString keyEnv = m_apiKeyEnv->text().trimmed();
  if (!keyEnv.isEmpty() && qEnvironmentVariableIsEmpty(keyEnv.toLocal8Bit().constData()))
    return QString("Remote servers: --api-key-env %1: the environment variable is not set")
        .arg(keyEnv);
  return QString();
}

void RemoteServersPanel::check() {
  const QStringList urls = endpointLines(m_endpoints->toPlainText());
  const int generation = ++m_checkGeneration;
  m_checkLines.clear();
  m_checkedUrls = urls;
  m_servedModels = QVector<QStringList>(urls.size());
  m_numPending = 0;
  const QString keyEnv = m_apiKeyEnv->text().trimmed();
  const QByteArray key =
      keyEnv.isEmpty() ? QByteArray() : qgetenv(keyEnv.toLocal8Bit().constData());
  for (qsizetype i = 0; i < urls.size(); ++i) {
    const QString problem = urlProblem(urls[i]);
    if (!problem.isEmpty()) {
      m_checkLines << QString("✗ %1: %2").arg(urls[i], problem);
      continue;
    }
    m_checkLines << QString("… %1: asking").arg(urls[i]);
    QString base = urls[i];
    while (base.endsWith('/')) base.chop(1);
    QNetworkRequest request(QUrl(base + "/models"));
    request.setTransferTimeout(m_checkTimeoutMs);
    if (!key.isEmpty()) request.setRawHeader("Authorization", "Bearer " + key);
    QNetworkReply* reply = m_network->get(request);
    ++m_numPending;
    connect(reply, &QNetworkReply::finished, this, [this, reply, generation, i] {
      reply->deleteLater();
      if (generation != m_checkGeneration) return;
      const QByteArray body = reply->isOpen() ? reply->readAll() : QByteArray();
      const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
      QStringList models;
      QString error;
      const QJsonDocument json = QJsonDocument::fromJson(body);
      if (reply->error() == QNetworkReply::ConnectionRefusedError) {
        error = "connection refused";
      } else if (status >= 400) {
        const QString message = json.object()["error"].toObject()["message"].toString();
        error = QString("HTTP %1%2").arg(status).arg(message.isEmpty() ? "" : ": " + message);
      } else if (reply->error() != QNetworkReply::NoError) {
        error = reply->errorString();
      } else {
        for (const QJsonValue& model : json.object()["data"].toArray())
          models << model.toObject()["id"].toString();
        models.removeAll(QString());
        if (models.isEmpty()) error = "the answer lists no model";
      }
      onModelsAnswered(static_cast<int>(i), models, error);
    });
  }
  showCheck();
  if (m_numPending == 0) emit checkFinished();
}

void RemoteServersPanel::onModelsAnswered(int index, const QStringList& models,
                                          const QString& error) {
  const QString& url = m_checkedUrls[index];
  m_servedModels[index] = models;
  m_checkLines[index] = error.isEmpty() ? QString("✓ %1: serves %2").arg(url, models.join(", "))
                                        : QString("✗ %1: %2").arg(url, error);
  --m_numPending;
  if (m_numPending == 0) {
    // Offer every model served, keeping what was typed or chosen.
    const QString current = m_model->currentText();
    QStringList offered;
    for (const QStringList& served : m_servedModels) {
      for (const QString& model : served) {
        if (!offered.contains(model)) offered << model;
      }
    }
    m_updating = true;
    m_model->clear();
    m_model->addItems(offered);
    m_model->setCurrentText(current.isEmpty() && offered.size() == 1 ? offered.front() : current);
    m_updating = false;
    onEdited();
  }
  showCheck();
  if (m_numPending == 0) emit checkFinished();
}

void RemoteServersPanel::showCheck() {
  m_checkLabel->setText(m_checkLines.join('\n'));
  m_checkLabel->setVisible(!m_checkLines.isEmpty());
  m_checkButton->setEnabled(m_numPending == 0);
}

}  // namespace sluice::ui
