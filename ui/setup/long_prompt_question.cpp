#include "ui/setup/long_prompt_question.h"

#include <QMessageBox>
#include <QPushButton>

#include "ui/common/number_format.h"

namespace sluice::ui {

int countPromptsTooLong(const QVector<int>& promptLengths, int maxModelLen) {
  if (maxModelLen <= 0) return 0;
  return static_cast<int>(std::count_if(promptLengths.begin(), promptLengths.end(),
                                        [&](int length) { return length >= maxModelLen; }));
}

void askAboutLongPrompts(QWidget* parent, int numTooLong, int numCounted, int maxModelLen,
                         std::function<void(std::optional<sluice::LongPromptPolicy>)> done) {
  auto* box = new QMessageBox(
      QMessageBox::Warning, QObject::tr("Prompts longer than the context"),
      QObject::tr("%1 of the %2 prompts counted do not fit the model's context of %3 tokens: "
                  "as they are, those rows will fail.\n\nTruncate them (each keeps the end of "
                  "its prompt, where the question and the answer's turn are), skip them, or let "
                  "them fail?")
          .arg(formatCount(numTooLong), formatCount(numCounted), formatCount(maxModelLen)),
      QMessageBox::NoButton, parent);
  box->setObjectName("longPrompts");
  box->setAttribute(Qt::WA_DeleteOnClose);
  QPushButton* truncate = box->addButton(QObject::tr("Truncate"), QMessageBox::AcceptRole);
  QPushButton* skip = box->addButton(QObject::tr("Skip them"), QMessageBox::AcceptRole);
  QPushButton* letFail = box->addButton(QObject::tr("Let them fail"), QMessageBox::AcceptRole);
  QPushButton* notYet = box->addButton(QObject::tr("Don't start"), QMessageBox::RejectRole);
  truncate->setObjectName("truncate");
  skip->setObjectName("skip");
  letFail->setObjectName("fail");
  box->setDefaultButton(truncate);
  box->setEscapeButton(notYet);
  QObject::connect(box, &QMessageBox::finished, box, [=] {
    const QAbstractButton* clicked = box->clickedButton();
    if (clicked == truncate)
      done(sluice::LongPromptPolicy::Truncate);
    else if (clicked == skip)
      done(sluice::LongPromptPolicy::Skip);
    else if (clicked == letFail)
      done(sluice::LongPromptPolicy::Fail);
    else
      done(std::nullopt);
  });
  box->open();
}

}  // namespace sluice::ui
