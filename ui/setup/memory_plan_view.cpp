#include "ui/setup/memory_plan_view.h"

#include <QFormLayout>
#include <QLabel>
#include <QPainter>
#include <algorithm>
#include <initializer_list>

#include "ui/common/number_format.h"

namespace sluice::ui {

namespace {

// Plain RGB values rather than QColor globals (no global objects of class type).
constexpr QRgb kWeightColor = 0x4e79a7;
constexpr QRgb kKvUsedColor = 0xf28e2b;
constexpr QRgb kKvFreeColor = 0xffbe7d;
constexpr QRgb kReservationColor = 0xbab0ac;
constexpr QRgb kActivationColor = 0x76b7b2;

constexpr int kBarHeight = 12;
constexpr int kBarGap = 4;
// Two bars and the gap below them; the labels' layout starts after this band.
constexpr int kBarsBand = 2 * kBarHeight + 3 * kBarGap;

struct BarSegment {
  qint64 bytes = 0;
  QRgb color = 0;
};

// Draws a caption, then the segments left to right on one scale (bytes per bar width).
void paintBar(QPainter& painter, const QPalette& colors, const QRect& rect, int captionWidth,
              double scale, const QString& caption, std::initializer_list<BarSegment> segments) {
  painter.setPen(colors.color(QPalette::WindowText));
  painter.drawText(QRect(rect.left(), rect.top(), captionWidth, rect.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, caption);
  const QRect bar = rect.adjusted(captionWidth, 0, 0, 0);
  double x = bar.left();
  for (const BarSegment& segment : segments) {
    if (segment.bytes <= 0) continue;
    // At least two pixels, so a small segment still shows that it exists.
    const double w = std::max(2.0, bar.width() * static_cast<double>(segment.bytes) / scale);
    painter.fillRect(QRectF(x, bar.top(), std::min(w, bar.right() + 1 - x), bar.height()),
                     QColor(segment.color));
    x += w;
  }
  painter.setPen(colors.color(QPalette::Mid));
  painter.drawRect(bar.adjusted(0, 0, -1, -1));
}

// A name with a coloured square matching its bar segment (color 0: no square).
QString swatchLabel(const QString& name, QRgb color) {
  if (color == 0) return name;
  return QString("<span style=\"color:%1\">&#9632;</span> %2").arg(QColor(color).name(), name);
}

}  // namespace

MemoryPlanView::MemoryPlanView(QWidget* parent) : QWidget(parent) {
  m_form = new QFormLayout(this);
  m_form->setContentsMargins(0, kBarsBand, 0, 0);
  m_form->setVerticalSpacing(2);
  m_empty = new QLabel("No plan yet: load a model (and a dataset for row lengths).", this);
  m_empty->setWordWrap(true);
  m_form->addRow(m_empty);
  m_device = addRow("Device", 0);
  m_weights = addRow("Weights", kWeightColor);
  m_activations = addRow("Activations", kActivationColor);
  m_activations->setToolTip(
      "Activations and workspaces of the largest step the engine may schedule");
  m_kvPerToken = addRow("KV per token", 0);
  m_pool = addRow("KV pool", kKvFreeColor);
  m_stateSlots = addRow("State slots", 0);
  m_stateSlots->setToolTip(
      "A hybrid model's recurrent state: one slot per running row and a few for prefix "
      "checkpoints, taken from the KV budget before the blocks.");
  m_meanRow = addRow("Mean row", 0);
  m_rowsAtOnce = addRow("Rows at once", kKvUsedColor);
  m_reservation = addRow("Max-length", kReservationColor);
  m_reservation->setToolTip(
      "What reserving every running row's maximum length up front would take; the paged pool "
      "holds only the blocks rows actually use.");
  setToolTip(
      "paged: weights (and on a GPU the activations) + the KV pool (dark: blocks the rows that "
      "fit at once use); reserved: the same + every running row's maximum length, as a non-paged "
      "cache would hold");
  clear();
}

QLabel* MemoryPlanView::addRow(const QString& name, QRgb swatch) {
  auto* value = new QLabel(this);
  value->setWordWrap(true);
  value->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* label = new QLabel(swatchLabel(name, swatch), this);
  m_form->addRow(label, value);
  return value;
}

QString MemoryPlanView::formatBytes(qint64 bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  // Three significant digits at most: "1.5 MiB", "128 MiB".
  const int decimals = (unit == 0 || value >= 10.0) ? 0 : 1;
  return QString("%1 %2").arg(value, 0, 'f', decimals).arg(kUnits[unit]);
}

void MemoryPlanView::setPlan(const sluice::MemoryPlan& plan) {
  m_plan = plan;
  m_hasPlan = true;
  m_empty->hide();
  m_weights->setText(formatBytes(static_cast<qint64>(plan.weight_bytes)) +
                     (plan.device_total_bytes > 0 ? " (BF16 on the GPU)" : ""));
  m_device->setText(plan.device_total_bytes > 0
                        ? QString("%1: %2 of %3 for this run")
                              .arg(QString::fromStdString(plan.device),
                                   formatBytes(static_cast<qint64>(plan.device_budget_bytes)),
                                   formatBytes(static_cast<qint64>(plan.device_total_bytes)))
                        : QString("CPU"));
  m_activations->setText(formatBytes(static_cast<qint64>(plan.activation_bytes)));
  m_kvPerToken->setText(formatBytes(static_cast<qint64>(plan.kv_bytes_per_token)));
  m_pool->setText(QString("%1 blocks × %2 tokens = %3")
                      .arg(formatCount(plan.num_blocks), formatCount(plan.block_size),
                           formatBytes(static_cast<qint64>(plan.kv_pool_bytes))));
  const sluice::StateSlotPlan& state = plan.state;
  m_stateSlots->setText(
      QString("%1 × %2 = %3 (%4 running + %5 prefix checkpoints)%6")
          .arg(
              formatCount(state.num_slots), formatBytes(static_cast<qint64>(state.slot_bytes)),
              formatBytes(static_cast<qint64>(state.pool_bytes())),
              formatCount(std::max(state.num_slots - state.max_checkpoints, 0)),
              formatCount(std::min(state.max_checkpoints, state.num_slots)),
              state.is_capped
                  ? QString("; capped by the budget (%1 wanted)").arg(formatCount(state.num_wanted))
                  : QString()));
  m_meanRow->setText(
      QString("%1 tokens (prompt + max tokens)").arg(formatDecimal(plan.mean_row_tokens, 0)));
  m_rowsAtOnce->setText(plan.num_blocks > 0
                            ? formatCount(plan.max_concurrent_rows)
                            : QString("none: weights and activations fill the GPU share"));
  const double ratio = plan.kv_pool_bytes > 0
                           ? static_cast<double>(plan.max_length_reservation_bytes) /
                                 static_cast<double>(plan.kv_pool_bytes)
                           : 0.0;
  const size_t rowReservation = static_cast<size_t>(plan.max_model_len) * plan.kv_bytes_per_token;
  const size_t reservedRows =
      rowReservation > 0 ? plan.max_length_reservation_bytes / rowReservation : 0;
  m_reservation->setText(
      QString("%1 to reserve %2 tokens for each of %3 rows (%4× the pool)")
          .arg(formatBytes(static_cast<qint64>(plan.max_length_reservation_bytes)),
               formatCount(plan.max_model_len), formatCount(static_cast<qint64>(reservedRows)),
               formatDecimal(ratio, ratio < 10.0 ? 1 : 0)));
  for (QLabel* label :
       {m_device, m_weights, m_kvPerToken, m_pool, m_meanRow, m_rowsAtOnce, m_reservation}) {
    m_form->setRowVisible(label, true);
  }
  m_form->setRowVisible(m_activations, plan.activation_bytes > 0);
  m_form->setRowVisible(m_stateSlots, state.slot_bytes > 0);
  update();
}

void MemoryPlanView::clear() {
  m_plan = {};
  m_hasPlan = false;
  m_empty->show();
  for (QLabel* label : {m_device, m_weights, m_activations, m_kvPerToken, m_pool, m_stateSlots,
                        m_meanRow, m_rowsAtOnce, m_reservation}) {
    label->clear();
    m_form->setRowVisible(label, false);
  }
  update();
}

void MemoryPlanView::paintEvent(QPaintEvent* event) {
  QWidget::paintEvent(event);
  if (!m_hasPlan) return;
  const auto weights = static_cast<qint64>(m_plan.weight_bytes);
  const auto activations = static_cast<qint64>(m_plan.activation_bytes);
  const auto pool = static_cast<qint64>(m_plan.kv_pool_bytes);
  const double rowBytes = m_plan.mean_row_tokens * static_cast<double>(m_plan.kv_bytes_per_token);
  const qint64 used = std::min(pool, static_cast<qint64>(m_plan.max_concurrent_rows * rowBytes));
  const auto reservation = static_cast<qint64>(m_plan.max_length_reservation_bytes);
  // One scale for both bars, so the lengths compare directly.
  const double scale = static_cast<double>(
      std::max<qint64>({weights + activations + pool, weights + activations + reservation, 1}));
  QPainter painter(this);
  const int width = this->width();
  const QPalette& colors = palette();
  const QString paged = "paged";
  const QString reserved = "reserved";
  const int captionWidth =
      std::max(fontMetrics().horizontalAdvance(paged), fontMetrics().horizontalAdvance(reserved)) +
      8;
  paintBar(painter, colors, QRect(0, kBarGap, width, kBarHeight), captionWidth, scale, paged,
           {{weights, kWeightColor},
            {activations, kActivationColor},
            {used, kKvUsedColor},
            {pool - used, kKvFreeColor}});
  paintBar(
      painter, colors, QRect(0, 2 * kBarGap + kBarHeight, width, kBarHeight), captionWidth, scale,
      reserved,
      {{weights, kWeightColor}, {activations, kActivationColor}, {reservation, kReservationColor}});
}

}  // namespace sluice::ui
