#include "ui/setup/file_drop.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QMimeData>
#include <QUrl>
#include <QWidget>

namespace sluice::ui {

FileDrop::FileDrop(QWidget* target, bool acceptFolders)
    : QObject(target), m_acceptFolders(acceptFolders) {
  addTarget(target);
}

void FileDrop::addTarget(QWidget* widget) {
  widget->setAcceptDrops(true);
  widget->installEventFilter(this);
}

QString FileDrop::pathFrom(const QMimeData* mime) const {
  if (!mime || !mime->hasUrls() || mime->urls().size() != 1) return {};
  const QUrl url = mime->urls().front();
  if (!url.isLocalFile()) return {};
  const QFileInfo info(url.toLocalFile());
  if (!info.exists() || (info.isDir() && !m_acceptFolders)) return {};
  return info.absoluteFilePath();
}

bool FileDrop::eventFilter(QObject* watched, QEvent* event) {
  switch (event->type()) {
    case QEvent::DragEnter:
    case QEvent::DragMove: {
      // Accepting enter and move alike keeps the cursor honest over child widgets too.
      auto* drag = static_cast<QDragMoveEvent*>(event);
      if (pathFrom(drag->mimeData()).isEmpty()) return false;
      drag->acceptProposedAction();
      return true;
    }
    case QEvent::Drop: {
      auto* drop = static_cast<QDropEvent*>(event);
      const QString path = pathFrom(drop->mimeData());
      if (path.isEmpty()) return false;
      drop->acceptProposedAction();
      emit pathDropped(path);
      return true;
    }
    default:
      return QObject::eventFilter(watched, event);
  }
}

}  // namespace sluice::ui
