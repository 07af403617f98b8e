// "Serve on port …": serves the loaded model over the OpenAI-compatible HTTP API of `sluice
// serve`, from the engine the jobs use (HTTP requests and a running job batch together). A
// checkable button with the port, the address (this computer only, or every interface as an
// opt-in, with a warning while it has no key) and an optional API key, and a line saying what is
// served where. The panel only shows
// and asks; the owner starts and stops the server off the GUI thread and calls the slots, which
// also turn the button back off when serving failed or stopped.
#pragma once

#include <QString>
#include <QWidget>

#include "app/run_snapshots.h"
#include "app/server/openai_server.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace sluice::ui {

class ServePanel final : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kDefaultPort = 8000;

  explicit ServePanel(QWidget* parent = nullptr);

  // The loaded model: its name is what clients ask for; the button waits for one.
  void setModel(const sluice::ModelSummary& model);
  // Returns the name clients use for a model path: the folder's or the file's base name.
  static QString servedModelName(const QString& modelPath);
  // Returns what a start asks for: address, port, key and the model's name.
  sluice::ServerOptions options() const;

  bool isServing() const { return m_boundPort > 0; }
  // The port being served (the chosen one for port 0, "any free port"), 0 when not serving.
  int boundPort() const { return m_boundPort; }
  // Returns "Serving <model> on http://HOST:PORT/v1", or what the last stop or failure said.
  QString statusText() const;
  QPushButton* serveButton() const { return m_serve; }
  QSpinBox* portBox() const { return m_port; }
  QComboBox* hostBox() const { return m_host; }
  QLineEdit* apiKeyEdit() const { return m_apiKey; }
  // Whether the address is every interface and no key is set: anyone on the network may use it
  // (a warning then shows under the fields, and the status line says so while serving).
  bool isOpenToTheNetwork() const;
  QLabel* openNetworkWarning() const { return m_openWarning; }

 public slots:
  void setServing(const QString& url, const QString& modelName, int port);
  // Serving stopped (reason may be empty): the button goes off.
  void setStopped(const QString& reason);
  // Serving could not start: the button goes off and the message shows.
  void setFailed(const QString& message);

 signals:
  void serveRequested(const sluice::ServerOptions& options);
  void stopRequested();
  // The one-line state for a status bar: "Serving … on …" while serving, else empty.
  void servingChanged(const QString& status);

 private:
  void setIdle(const QString& message);
  void setFieldsEnabled(bool enabled);
  void updateOpenWarning();

  QString m_modelName;
  int m_boundPort = 0;
  QPushButton* m_serve = nullptr;
  QSpinBox* m_port = nullptr;
  QComboBox* m_host = nullptr;
  QLineEdit* m_apiKey = nullptr;
  QLabel* m_status = nullptr;
  QLabel* m_openWarning = nullptr;
};

}  // namespace sluice::ui
