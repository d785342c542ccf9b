#include "common/theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QToolTip>

namespace plexus::widgets {

QString toString(ThemeMode mode) {
  switch (mode) {
    case ThemeMode::Light: return QStringLiteral("light");
    case ThemeMode::Dark: return QStringLiteral("dark");
    case ThemeMode::System: break;
  }
  return QStringLiteral("system");
}

std::optional<ThemeMode> themeModeFromString(const QString& text) {
  for (ThemeMode m : {ThemeMode::System, ThemeMode::Light, ThemeMode::Dark})
    if (text == toString(m)) return m;
  return std::nullopt;
}

namespace {

struct CategoryColours {
  const char* category;
  QColor light, dark;  // deeper in dark, so headers do not glare on a dark canvas
};

// One hue per category of the registry; all dark enough for white header text.
const CategoryColours kCategories[] = {
    {"Data", QColor(0x2F855A), QColor(0x276749)},           {"Layers", QColor(0x2563EB), QColor(0x1D4ED8)},
    {"Convolution", QColor(0x7C3AED), QColor(0x6D28D9)},    {"Normalization", QColor(0x0E7490), QColor(0x155E75)},
    {"Activation", QColor(0xC2410C), QColor(0x9A3412)},     {"Merge", QColor(0xBE185D), QColor(0x9D174D)},
    {"Recurrent", QColor(0x0F766E), QColor(0x115E59)},      {"Attention", QColor(0x4D7C0F), QColor(0x3F6212)},
    {"Loss", QColor(0xB91C1C), QColor(0x991B1B)},
};

QPalette paletteFor(const Theme& t) {
  const bool d = t.dark;
  QPalette p;
  p.setColor(QPalette::Window, d ? QColor(0x25282E) : QColor(0xEFF1F4));
  p.setColor(QPalette::WindowText, t.text);
  p.setColor(QPalette::Base, d ? QColor(0x1D1F24) : QColor(0xFFFFFF));
  p.setColor(QPalette::AlternateBase, d ? QColor(0x282B31) : QColor(0xF6F7F9));
  p.setColor(QPalette::Text, t.text);
  p.setColor(QPalette::PlaceholderText, t.mutedText);
  p.setColor(QPalette::Button, d ? QColor(0x2F333A) : QColor(0xF3F4F6));
  p.setColor(QPalette::ButtonText, t.text);
  p.setColor(QPalette::BrightText, QColor(0xFFFFFF));
  p.setColor(QPalette::Highlight, t.selection);
  p.setColor(QPalette::HighlightedText, QColor(0xFFFFFF));
  p.setColor(QPalette::Link, d ? QColor(0x60A5FA) : QColor(0x2563EB));
  p.setColor(QPalette::LinkVisited, d ? QColor(0xA78BFA) : QColor(0x7C3AED));
  p.setColor(QPalette::ToolTipBase, d ? QColor(0x2F333A) : QColor(0xFFFFFF));
  p.setColor(QPalette::ToolTipText, t.text);
  // Bevel shades, from lightest to darkest, as Fusion expects them.
  p.setColor(QPalette::Light, d ? QColor(0x3A3E46) : QColor(0xFFFFFF));
  p.setColor(QPalette::Midlight, d ? QColor(0x33363D) : QColor(0xE5E7EB));
  p.setColor(QPalette::Mid, d ? QColor(0x2A2D33) : QColor(0xC4C9D1));
  p.setColor(QPalette::Dark, d ? QColor(0x16181C) : QColor(0x9CA3AF));
  p.setColor(QPalette::Shadow, d ? QColor(0x0B0C0E) : QColor(0x6B7280));

  const QColor disabled_text = d ? QColor(0x6B7280) : QColor(0xA0A6B0);
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText, QPalette::PlaceholderText})
    p.setColor(QPalette::Disabled, role, disabled_text);
  p.setColor(QPalette::Disabled, QPalette::Highlight, d ? QColor(0x3A3E46) : QColor(0xC4C9D1));
  p.setColor(QPalette::Disabled, QPalette::HighlightedText, d ? QColor(0x9AA1AC) : QColor(0xF3F4F6));
  p.setColor(QPalette::Disabled, QPalette::Base, p.color(QPalette::Window));
  return p;
}

// The platform's palette before setMode() replaced it, read once.
bool platformPrefersDark() {
  static const bool dark = QGuiApplication::palette().color(QPalette::Window).lightness() < 128;
  return dark;
}

}  // namespace

QColor Theme::category(const QString& name) const {
  for (const CategoryColours& c : kCategories)
    if (name == QLatin1String(c.category)) return dark ? c.dark : c.light;
  return dark ? QColor(0x4B5563) : QColor(0x64748B);
}

Theme Theme::lightTheme() {
  Theme t;
  t.canvas = QColor(0xF4F5F7);
  t.gridMinor = QColor(0xE7E9ED);
  t.gridMajor = QColor(0xD6DAE0);
  t.nodeBody = QColor(0xFFFFFF);
  t.nodeBorder = QColor(0xC8CDD5);
  t.nodeText = QColor(0x1F2328);
  t.nodeSubtext = QColor(0x6B7280);
  t.nodeShadow = QColor(0, 0, 0, 40);
  t.portFill = QColor(0xFFFFFF);
  t.portBorder = QColor(0x6B7280);
  t.portDimmed = QColor(0xC8CDD5);
  t.wire = QColor(0x7A8594);
  t.wireSelected = QColor(0x2563EB);
  t.wireLabel = QColor(0x4B5563);
  t.wireLabelBackground = QColor(255, 255, 255, 220);
  t.wireDragging = QColor(0x2563EB);
  t.selection = QColor(0x2563EB);
  t.error = QColor(0xD92D20);
  t.warning = QColor(0xB54708);
  t.text = QColor(0x1F2328);
  t.mutedText = QColor(0x6B7280);
  t.block = QColor(0x3F4B5E);
  return t;
}

Theme Theme::darkTheme() {
  Theme t;
  t.dark = true;
  t.canvas = QColor(0x1B1D22);
  t.gridMinor = QColor(0x24272D);
  t.gridMajor = QColor(0x30343B);
  t.nodeBody = QColor(0x2A2D34);
  t.nodeBorder = QColor(0x40454E);
  t.nodeText = QColor(0xE6E8EB);
  t.nodeSubtext = QColor(0x9AA1AC);
  t.nodeShadow = QColor(0, 0, 0, 120);
  t.portFill = QColor(0x2A2D34);
  t.portBorder = QColor(0x9AA1AC);
  t.portDimmed = QColor(0x4A4F58);
  t.wire = QColor(0x8A93A0);
  t.wireSelected = QColor(0x60A5FA);
  t.wireLabel = QColor(0xC2C7CF);
  t.wireLabelBackground = QColor(27, 29, 34, 220);
  t.wireDragging = QColor(0x60A5FA);
  t.selection = QColor(0x3B82F6);
  t.error = QColor(0xF97066);
  t.warning = QColor(0xFDB022);
  t.text = QColor(0xE6E8EB);
  t.mutedText = QColor(0x9AA1AC);
  t.block = QColor(0x56657D);
  return t;
}

ThemeManager& ThemeManager::instance() {
  static ThemeManager manager;
  return manager;
}

ThemeManager::ThemeManager() {
  platformPrefersDark();  // capture the platform palette before any setMode() replaces it
  theme_ = systemPrefersDark() ? Theme::darkTheme() : Theme::lightTheme();
}

bool ThemeManager::systemPrefersDark() {
  const QByteArray forced = qgetenv("PLEXUS_THEME").trimmed().toLower();
  if (forced == "dark") return true;
  if (forced == "light") return false;
  return platformPrefersDark();
}

void ThemeManager::setMode(ThemeMode mode) {
  mode_ = mode;
  const bool dark = mode == ThemeMode::Dark || (mode == ThemeMode::System && systemPrefersDark());
  theme_ = dark ? Theme::darkTheme() : Theme::lightTheme();
  if (qobject_cast<QApplication*>(QCoreApplication::instance())) {
    // Fusion draws everything from the palette, so both themes look alike on every platform.
    if (QApplication::style()->name().compare(QLatin1String("fusion"), Qt::CaseInsensitive) != 0)
      QApplication::setStyle(QStringLiteral("Fusion"));
    const QPalette palette = paletteFor(theme_);
    QApplication::setPalette(palette);
    QToolTip::setPalette(palette);  // tool tips keep their own copy
  }
  emit changed();
}

}  // namespace plexus::widgets
