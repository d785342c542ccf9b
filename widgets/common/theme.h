#pragma once
// The app's look: a light and a dark theme (colours for the node editor, the category colours
// of the registry, a complete QPalette for the standard widgets) and the one ThemeManager that
// applies the chosen one. Widgets that paint themselves read ThemeManager::instance().theme()
// and repaint on changed().
#include <QColor>
#include <QObject>
#include <QString>
#include <optional>

namespace plexus::widgets {

enum class ThemeMode { System, Light, Dark };
QString toString(ThemeMode mode);                                   // "system", "light", "dark"
std::optional<ThemeMode> themeModeFromString(const QString& text);  // the inverse; nullopt otherwise

struct Theme {
  bool dark = false;
  QColor canvas, gridMinor, gridMajor;  // node editor background and grid
  QColor nodeBody, nodeBorder, nodeText, nodeSubtext, nodeShadow;
  QColor portFill, portBorder, portDimmed;
  QColor wire, wireSelected, wireLabel, wireLabelBackground, wireDragging;
  QColor selection, error, warning, text, mutedText;
  QColor block;  // a block's card header and title bar (white text reads on it), its frame's tint

  // Header colour of a registry category (white text reads on it); a neutral one if unknown.
  QColor category(const QString& category) const;

  // Not light()/dark(): a static dark() would clash with the member `dark`.
  static Theme lightTheme();
  static Theme darkTheme();
};

class ThemeManager : public QObject {
  Q_OBJECT

 public:
  static ThemeManager& instance();

  ThemeMode mode() const { return mode_; }
  const Theme& theme() const { return theme_; }  // the effective theme (System resolved)

  // Applies the mode to qApp (Fusion style and a matching palette) and emits changed().
  void setMode(ThemeMode mode);

  // Qt 6.4 has no colour-scheme query: the platform palette seen at first use decides (a dark
  // window colour means dark). PLEXUS_THEME=dark|light overrides it, for tests and screenshots.
  static bool systemPrefersDark();

 signals:
  void changed();

 private:
  ThemeManager();

  ThemeMode mode_ = ThemeMode::System;
  Theme theme_;
};

}  // namespace plexus::widgets
