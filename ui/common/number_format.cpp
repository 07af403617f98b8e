#include "ui/common/number_format.h"

#include <QLocale>
#include <cmath>

namespace sluice::ui {

namespace {

QLocale groupingLocale() {
  QLocale locale;
  locale.setNumberOptions(locale.numberOptions() & ~QLocale::OmitGroupSeparator);
  return locale;
}

}  // namespace

QString formatCount(qint64 count) {
  return groupingLocale().toString(count);
}

QString formatDecimal(double value, int decimals) {
  return groupingLocale().toString(value, 'f', decimals);
}

QString formatRate(double perSecond, const QString& unit) {
  if (perSecond < 0 || !std::isfinite(perSecond)) return QStringLiteral("—");
  return formatDecimal(perSecond, 1) + ' ' + unit;
}

}  // namespace sluice::ui
