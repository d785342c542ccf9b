#pragma once
// One colour per class, so a class reads the same in the histogram bars and the filter's
// swatches. Ten distinct hues (after Tableau 10), repeated with a shift past ten classes.
#include <QColor>
#include <QIcon>

namespace plexus::widgets {

QColor classColour(int cls, bool dark);

// A small rounded swatch of the class colour for combo boxes and lists.
QIcon classSwatch(int cls, bool dark);

}  // namespace plexus::widgets
