// How the GUI writes numbers: counts with a grouping separator ("1,278,183 tokens"), rates with
// one decimal ("412.3 tok/s") and byte sizes. The locale is the application's default QLocale
// (the system's), except that grouping is always on: the C locale (tests, LANG=C) omits the
// separator by default, and then gets "," — so a test under the C locale is deterministic.
// Identifiers (row indices, block ids) are names, not amounts: they stay ungrouped ("row 1234"),
// as in the results table's row header and the job file.
#pragma once

#include <QString>
#include <QtGlobal>

namespace sluice::ui {

// Returns count with the locale's grouping separator: formatCount(1278183) == "1,278,183".
QString formatCount(qint64 count);
// Returns a rate with one decimal and its unit: formatRate(412.31, "tok/s") == "412.3 tok/s";
// "—" when negative or not finite (unknown).
QString formatRate(double perSecond, const QString& unit);
// Returns a decimal number with the given decimals and grouping: formatDecimal(1234.5, 1) ==
// "1,234.5".
QString formatDecimal(double value, int decimals);

}  // namespace sluice::ui
