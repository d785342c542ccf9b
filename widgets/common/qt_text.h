#pragma once
// Text the widgets share. Core speaks std::string (UTF-8), Qt speaks QString: qstr is the one
// conversion the GUI uses. Shares read as percentages, and captions take a smaller font.
#include <QFont>
#include <QString>
#include <string>

namespace plexus::widgets {

inline QString qstr(const std::string& s) { return QString::fromStdString(s); }

// percentText(0.304) is "30.4%"; percentText(0.304, 0) is "30%".
inline QString percentText(double share, int decimals = 1) {
  return QString::number(100 * share, 'f', decimals) + QLatin1Char('%');
}

// The font of captions and axis labels beside text in `base`.
inline QFont smallerFont(const QFont& base, qreal factor = 0.85) {
  QFont f = base;
  f.setPointSizeF(base.pointSizeF() * factor);
  return f;
}

}  // namespace plexus::widgets
