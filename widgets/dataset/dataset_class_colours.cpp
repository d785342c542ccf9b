#include "dataset/dataset_class_colours.h"

#include <cstdlib>
#include <iterator>

#include "common/icons.h"

namespace plexus::widgets {

QColor classColour(int cls, bool dark) {
  static const QColor kHues[] = {QColor(0x4E79A7), QColor(0xF28E2B), QColor(0xE15759), QColor(0x76B7B2),
                                 QColor(0x59A14F), QColor(0xEDC948), QColor(0xB07AA1), QColor(0xFF9DA7),
                                 QColor(0x9C755F), QColor(0xBAB0AC)};
  constexpr int n = int(std::size(kHues));
  const int i = ((cls % n) + n) % n;
  QColor c = kHues[i];
  if (const int round = std::abs(cls) / n; round > 0) c = c.darker(100 + 18 * (round % 3));  // later rounds differ
  return dark ? c.lighter(112) : c;
}

QIcon classSwatch(int cls, bool dark) { return swatchIcon(classColour(cls, dark)); }

}  // namespace plexus::widgets
