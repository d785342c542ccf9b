#pragma once
// Small helpers the panels and the parameter editors share: how their fields take colours, text
// and the mouse wheel, section headings, error messages.
#include <QPalette>
#include <QString>
#include <string>

#include "common/qt_text.h"

class QColor;
class QComboBox;
class QLabel;
class QLineEdit;
class QWidget;

namespace plexus::widgets {

// Sets one colour of the widget's palette, keeping the others.
void setColour(QWidget* widget, QPalette::ColorRole role, const QColor& colour);

// Text set from the document keeps the cursor where it was, so an undo while typing is calm.
void setTextKeepingCursor(QLineEdit* edit, const QString& text);

// Scrolling the panel must not change the value under the pointer: the wheel only works on a
// spin or combo box that has focus.
void guardWheel(QWidget* widget);

// Replaces a combo box's entries with `items` (quietly: no signal), keeping the chosen one where it
// is still there, else choosing `fallback` (an index; -1: the last). False when they were the same.
bool replaceItemsKeepingChoice(QComboBox* box, const QStringList& items, int fallback);

// A bold label that heads a section of a panel.
QLabel* sectionLabel(const QString& text, QWidget* parent);

// A label that shows an error: white text on the theme's error colour. Call again when the
// theme changes.
void styleAsError(QLabel* label);
// A hidden, word-wrapped, selectable label styled so, following the theme.
QLabel* errorLabel(const QString& object_name, QWidget* parent);

}  // namespace plexus::widgets
