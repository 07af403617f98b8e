// What a run will take in memory, before it starts: the weights, the paged KV pool (and a hybrid
// model's state slots beside it) and how many rows of the dataset fit in it at once, against what reserving every row's maximum length
// would cost. A stacked bar on top, the numbers below.
#pragma once

#include <QColor>
#include <QWidget>

#include "app/run_snapshots.h"

class QFormLayout;
class QLabel;

namespace sluice::ui {

class MemoryPlanView final : public QWidget {
  Q_OBJECT

 public:
  explicit MemoryPlanView(QWidget* parent = nullptr);

  const sluice::MemoryPlan& plan() const { return m_plan; }
  bool hasPlan() const { return m_hasPlan; }

  // Returns bytes as a short IEC size ("512 B", "1.5 MiB", "7.2 GiB").
  static QString formatBytes(qint64 bytes);

 public slots:
  // Shows plan; the bar and every label follow it.
  void setPlan(const sluice::MemoryPlan& plan);
  // Back to the empty state ("no plan yet").
  void clear();

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QLabel* addRow(const QString& name, QRgb swatch);

  sluice::MemoryPlan m_plan;
  bool m_hasPlan = false;
  QFormLayout* m_form = nullptr;
  QLabel* m_empty = nullptr;
  QLabel* m_device = nullptr;       // GPU plans only
  QLabel* m_activations = nullptr;  // GPU plans only
  QLabel* m_weights = nullptr;
  QLabel* m_kvPerToken = nullptr;
  QLabel* m_pool = nullptr;
  QLabel* m_stateSlots = nullptr;  // hybrid models only
  QLabel* m_meanRow = nullptr;
  QLabel* m_rowsAtOnce = nullptr;
  QLabel* m_reservation = nullptr;
};

}  // namespace sluice::ui
