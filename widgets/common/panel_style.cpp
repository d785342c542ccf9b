#include "common/panel_style.h"

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

}  // namespace plexus::widgets
