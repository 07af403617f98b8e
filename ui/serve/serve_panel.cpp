#include "ui/serve/serve_panel.h"

#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace sluice::ui {

namespace {

constexpr const char* kLocalHost = "127.0.0.1";
constexpr const char* kAllInterfaces = "0.0.0.0";

}  // namespace

ServePanel::ServePanel(QWidget* parent) : QWidget(parent) {
  m_serve = new QPushButton(tr("Serve on port"), this);
  m_serve->setCheckable(true);
  m_serve->setEnabled(false);
  m_serve->setToolTip(
      tr("Serve the loaded model over an OpenAI-compatible API (/v1/models, "
         "/v1/completions, /v1/chat/completions), from the engine the jobs use"));
  m_port = new QSpinBox(this);
  m_port->setRange(0, 65535);
  m_port->setSpecialValueText(tr("any free port"));
  m_port->setValue(kDefaultPort);
  m_host = new QComboBox(this);
  m_host->addItem(tr("This computer only (127.0.0.1)"), QString(kLocalHost));
  m_host->addItem(tr("All interfaces (0.0.0.0)"), QString(kAllInterfaces));
  m_host->setItemData(1,
                      tr("Anyone who can reach this computer over the network can use the model: "
                         "set an API key, and only on a network you trust"),
                      Qt::ToolTipRole);
  m_host->setToolTip(m_host->itemData(0, Qt::ToolTipRole).toString());
  connect(m_host, &QComboBox::currentIndexChanged, this, [this](int index) {
    m_host->setToolTip(m_host->itemData(index, Qt::ToolTipRole).toString());
  });
  m_apiKey = new QLineEdit(this);
  m_apiKey->setPlaceholderText(tr("none: no key needed"));
  m_apiKey->setToolTip(tr("Clients then send 'Authorization: Bearer KEY'"));
  // `sluice serve` refuses such an address without a key unless told --allow-unauthenticated;
  // here the choice is the person's, made in front of this warning.
  m_openWarning = new QLabel(
      tr("⚠ Without an API key, anyone who can reach this computer over the network can use "
         "the model and read /metrics. Set a key, or serve on this computer only."),
      this);
  m_openWarning->setWordWrap(true);
  m_openWarning->setStyleSheet(
      "QLabel { color: palette(highlighted-text); background: #b3261e; "
      "padding: 4px; border-radius: 3px; }");
  connect(m_host, &QComboBox::currentIndexChanged, this, &ServePanel::updateOpenWarning);
  connect(m_apiKey, &QLineEdit::textChanged, this, &ServePanel::updateOpenWarning);
  m_status = new QLabel(this);
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* note = new QLabel(
      tr("Requests batch with a running job in one engine, and the live plots show all of it. "
         "The Parameters panel's sampling options are the defaults of requests. Loading another "
         "model stops serving."),
      this);
  note->setWordWrap(true);

  auto* portRow = new QHBoxLayout;
  portRow->addWidget(m_serve);
  portRow->addWidget(m_port, 1);
  auto* form = new QFormLayout;
  form->addRow(tr("Address"), m_host);
  form->addRow(tr("API key"), m_apiKey);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(portRow);
  layout->addLayout(form);
  layout->addWidget(m_openWarning);
  layout->addWidget(m_status);
  layout->addWidget(note);
  layout->addStretch(1);

  connect(m_serve, &QPushButton::toggled, this, [this](bool on) {
    setFieldsEnabled(!on);
    if (on) {
      m_status->setText(tr("Starting…"));
      emit serveRequested(options());
    } else {
      m_status->setText(tr("Stopping…"));
      emit stopRequested();
    }
  });
  setIdle(tr("Not serving. Open a model first."));
  updateOpenWarning();
}

bool ServePanel::isOpenToTheNetwork() const {
  return m_host->currentData().toString() == kAllInterfaces && m_apiKey->text().trimmed().isEmpty();
}

void ServePanel::updateOpenWarning() {
  m_openWarning->setVisible(isOpenToTheNetwork());
}

QString ServePanel::servedModelName(const QString& modelPath) {
  const QFileInfo info(modelPath);
  return info.isDir() ? info.fileName() : info.completeBaseName();
}

void ServePanel::setModel(const ModelSummary& model) {
  const bool isFirstModel = m_modelName.isEmpty();
  m_modelName = servedModelName(model.path);
  m_serve->setEnabled(true);
  // A later model keeps what the last stop said (loading it stopped serving).
  if (isFirstModel && !m_serve->isChecked())
    m_status->setText(tr("Not serving. Clients will ask for the model \"%1\".").arg(m_modelName));
}

ServerOptions ServePanel::options() const {
  ServerOptions options;
  options.host = m_host->currentData().toString().toStdString();
  options.port = m_port->value();
  options.api_key = m_apiKey->text().trimmed().toStdString();
  options.served_model_name = m_modelName.toStdString();
  return options;
}

QString ServePanel::statusText() const {
  return m_status->text();
}

void ServePanel::setServing(const QString& url, const QString& modelName, int port) {
  m_boundPort = port;
  {
    const QSignalBlocker block(m_serve);
    m_serve->setChecked(true);
  }
  setFieldsEnabled(false);
  QString status = tr("Serving %1 on %2").arg(modelName, url);
  if (isOpenToTheNetwork()) status += tr(" to anyone on the network (no API key)");
  m_status->setText(status);
  emit servingChanged(status);
}

void ServePanel::setStopped(const QString& reason) {
  setIdle(reason.isEmpty() ? tr("Not serving.") : reason);
}

void ServePanel::setFailed(const QString& message) {
  setIdle(message);
}

void ServePanel::setIdle(const QString& message) {
  m_boundPort = 0;
  {
    const QSignalBlocker block(m_serve);
    m_serve->setChecked(false);
  }
  setFieldsEnabled(true);
  m_status->setText(message);
  emit servingChanged(QString());
}

void ServePanel::setFieldsEnabled(bool enabled) {
  m_port->setEnabled(enabled);
  m_host->setEnabled(enabled);
  m_apiKey->setEnabled(enabled);
}

}  // namespace sluice::ui
