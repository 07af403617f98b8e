// A status-bar text that gives way: it asks for little width, shows as much of its text as
// fits with an ellipsis (the whole text in its tooltip), so a long job path or server address
// never pushes its neighbours over each other or the window wider than the screen.
#pragma once

#include <QLabel>

namespace sluice::ui {

class StatusLabel final : public QLabel {
  Q_OBJECT

 public:
  explicit StatusLabel(QWidget* parent = nullptr);

  // The size of the whole text (what the label asks for when there is room).
  QSize sizeHint() const override;
  // A few characters: what the label takes when there is no room.
  QSize minimumSizeHint() const override;
  // Returns the text as painted at the label's width (elided when it does not fit).
  QString shownText() const;

 protected:
  void paintEvent(QPaintEvent* event) override;
};

}  // namespace sluice::ui
