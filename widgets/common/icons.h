#pragma once
// The app's icons: our own SVG line icons (resources/icons), drawn in black and tinted at run
// time with the theme's text colour, so they follow light and dark. They are rendered at the
// exact pixel size asked for, so they stay sharp at any size and device pixel ratio.
#include <QColor>
#include <QIcon>
#include <QString>

namespace plexus::widgets {

// Registers the compiled-in resources (:/icons/...). plexus_widgets is a static library, so
// this is not automatic; the functions below call it, and calling it again does nothing.
void initResources();

// resources/icons/<name>.svg ("save", "zoom-in"), tinted for the current theme. An unknown
// name gives a null icon (and one warning).
QIcon icon(const QString& name);

// The same in a colour of its own (a red "error", say) instead of the theme's text colour.
QIcon icon(const QString& name, const QColor& colour);

// A small rounded square of one colour: what stands for a run or a class in lists and legends.
// The same icon (the same cacheKey) for the same colour.
QIcon swatchIcon(const QColor& colour);

// The icon of a registry category ("Convolution": cat-convolution.svg) in the category's colour
// (lightened on the dark theme).
QIcon categoryIcon(const QString& category);

// The app logo, in its own colours.
QIcon appIcon();

}  // namespace plexus::widgets
