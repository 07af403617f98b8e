#include "ui/common/plot_palette.h"

#include <qcustomplot.h>

#include "ui/common/run_view_palette.h"

namespace sluice::ui {

namespace {

void styleAxis(QCPAxis* axis, const QPalette& colours) {
  const QColor text = colours.color(QPalette::Text);
  axis->setBasePen(QPen(text, 1));
  axis->setTickPen(QPen(text, 1));
  axis->setSubTickPen(QPen(text, 1));
  axis->setTickLabelColor(text);
  axis->setLabelColor(text);
  axis->grid()->setPen(QPen(run_view_palette::gridColour(colours), 1, Qt::DotLine));
  axis->grid()->setZeroLinePen(Qt::NoPen);
}

}  // namespace

void applyPlotPalette(QCustomPlot* plot, const QPalette& colours) {
  plot->setBackground(colours.color(QPalette::Window));
  plot->axisRect()->setBackground(colours.color(QPalette::Base));
  for (QCPAxis* axis : {plot->xAxis, plot->yAxis, plot->yAxis2}) styleAxis(axis, colours);
  plot->legend->setBrush(Qt::NoBrush);
  plot->legend->setBorderPen(Qt::NoPen);
  plot->legend->setTextColor(colours.color(QPalette::WindowText));
}

}  // namespace sluice::ui
