#include "ui/common/run_view_palette.h"

#include <array>

namespace sluice::ui::run_view_palette {

namespace {

// Hues for owners skip 285..335 degrees: that band (magenta) is reserved for shared blocks.
constexpr int kNumOwnerColours = 30;
constexpr int kSharedGapStart = 285;
constexpr int kSharedGapWidth = 50;

std::array<QRgb, kNumOwnerColours> makeOwnerColours() {
  std::array<QRgb, kNumOwnerColours> colours{};
  const double step = (360.0 - kSharedGapWidth) / kNumOwnerColours;
  for (int i = 0; i < kNumOwnerColours; ++i) {
    int hue = static_cast<int>(i * step);
    if (hue >= kSharedGapStart) hue += kSharedGapWidth;
    // Three saturation/value levels so that similar hues still differ in lightness.
    const int saturation = 150 + 40 * (i % 3);
    const int value = 230 - 30 * ((i + 1) % 3);
    colours[i] = QColor::fromHsv(hue % 360, saturation, value).rgb();
  }
  return colours;
}

// splitmix64's finaliser: consecutive row indices land on unrelated palette entries.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

QColor series(int i) {
  // Tableau 10: designed to stay distinguishable and legible on white and on dark grey.
  static constexpr std::array<QRgb, 10> kSeries = {0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759,
                                                   0xb07aa1, 0x76b7b2, 0xedc948, 0xff9da7,
                                                   0x9c755f, 0xbab0ac};
  const int n = static_cast<int>(kSeries.size());
  return QColor::fromRgb(kSeries[((i % n) + n) % n]);
}

QColor blend(const QColor& a, const QColor& b, double t) {
  auto channel = [t](int x, int y) { return static_cast<int>(x + (y - x) * t + 0.5); };
  return QColor(channel(a.red(), b.red()), channel(a.green(), b.green()),
                channel(a.blue(), b.blue()), channel(a.alpha(), b.alpha()));
}

QRgb ownerColour(int64_t rowIndex) {
  static const std::array<QRgb, kNumOwnerColours> kOwners = makeOwnerColours();
  return kOwners[mix(static_cast<uint64_t>(rowIndex)) % kNumOwnerColours];
}

QColor sharedColour() {
  return QColor(0xb8, 0x2e, 0x9a);
}
QColor sharedHatchColour() {
  return QColor(0xf0, 0x9c, 0xde);
}

QColor cachedFreeColour(const QPalette& palette) {
  // The KV plot's "cached" teal, washed towards the background: pale on white, muted on black.
  return blend(palette.color(QPalette::Base), series(5), 0.45);
}

QColor queuedColour() {
  return QColor(0x9a, 0xa5, 0xb1);
}
QColor prefillColour() {
  return QColor(0xf2, 0x8e, 0x2b);
}
QColor decodeColour() {
  return QColor(0x4e, 0x8e, 0xd0);
}
QColor slowOutlineColour() {
  return QColor(0xe0, 0x31, 0x31);
}

QColor gridColour(const QPalette& palette) {
  return blend(palette.color(QPalette::Base), palette.color(QPalette::Text), 0.15);
}

}  // namespace sluice::ui::run_view_palette
