// Drag and drop of one local file or folder onto a widget, shared by the panels that open files
// so that dropping behaves the same everywhere (one path, local files only, folders optional).
#pragma once

#include <QObject>
#include <QString>

class QMimeData;
class QWidget;

namespace sluice::ui {

class FileDrop final : public QObject {
  Q_OBJECT

 public:
  // Makes target accept drops and filters its drag events; the filter is owned by target.
  // acceptFolders: whether a dropped directory counts as a path (a Hugging Face model folder).
  FileDrop(QWidget* target, bool acceptFolders);

  // Also takes drops on widget (a child that accepts text drops itself, such as a line edit,
  // would otherwise swallow them).
  void addTarget(QWidget* widget);

  // Returns the single local path mime data carries, or "" when it carries none, several, a
  // remote URL, or a folder that is not accepted.
  QString pathFrom(const QMimeData* mime) const;

 signals:
  void pathDropped(const QString& path);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  bool m_acceptFolders = false;
};

}  // namespace sluice::ui
