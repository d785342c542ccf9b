#include "common/panel_style.h"

#include <QComboBox>
#include <QEvent>
#include <QLabel>
#include <QLineEdit>

#include <algorithm>

#include "common/theme.h"

namespace plexus::widgets {
namespace {

class WheelGuard : public QObject {
 public:
  using QObject::QObject;
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() != QEvent::Wheel || static_cast<QWidget*>(watched)->hasFocus()) return false;
    event->ignore();
    return true;
  }
};

}  // namespace

void setColour(QWidget* widget, QPalette::ColorRole role, const QColor& colour) {
  QPalette palette = widget->palette();
  palette.setColor(role, colour);
  widget->setPalette(palette);
}

void setTextKeepingCursor(QLineEdit* edit, const QString& text) {
  if (edit->text() == text) return;
  const int cursor = edit->cursorPosition();
  edit->setText(text);
  edit->setCursorPosition(std::min(cursor, int(text.size())));
}

void guardWheel(QWidget* widget) {
  widget->setFocusPolicy(Qt::StrongFocus);
  widget->installEventFilter(new WheelGuard(widget));
}

bool replaceItemsKeepingChoice(QComboBox* box, const QStringList& items, int fallback) {
  QStringList now;
  for (int i = 0; i < box->count(); ++i) now << box->itemText(i);
  if (now == items) return false;
  const QString chosen = box->currentText();
  const QSignalBlocker quiet(box);
  box->clear();
  box->addItems(items);
  box->setCurrentIndex(items.contains(chosen) ? int(items.indexOf(chosen)) : fallback < 0 ? int(items.size()) - 1 : fallback);
  return true;
}

QLabel* sectionLabel(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  QFont font = label->font();
  font.setBold(true);
  label->setFont(font);
  return label;
}

void styleAsError(QLabel* label) {
  label->setStyleSheet(QStringLiteral("QLabel { background: %1; color: white; padding: 6px; border-radius: 4px; }")
                           .arg(ThemeManager::instance().theme().error.name()));
}

QLabel* errorLabel(const QString& object_name, QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setObjectName(object_name);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->hide();
  styleAsError(label);
  QObject::connect(&ThemeManager::instance(), &ThemeManager::changed, label, [label] { styleAsError(label); });
  return label;
}

}  // namespace plexus::widgets
