#include "property_panel.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFrame>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <functional>
#include <map>

#include "graph_document.h"
#include "icons.h"
#include "problems_panel.h"
#include "theme.h"

namespace plexus::widgets {
namespace {

using graph::ParamSpec;
using graph::ParamType;
using graph::ParamValue;

QString qstr(const std::string& s) { return QString::fromStdString(s); }

// The shortest text that reads back as the same double ("1e-05", "0.001"), so a value is shown
// exactly as it will be saved.
QString realText(double x) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, x).ptr;
  return QString::fromLatin1(buffer, end - buffer);
}

QString boundText(const ParamSpec& spec, double bound) {
  return spec.type == ParamType::Float ? realText(bound) : QString::number(qint64(bound));
}

QString between(const ParamSpec& spec) {
  return QObject::tr("between %1 and %2").arg(boundText(spec, spec.min), boundText(spec, spec.max));
}

bool inRange(const ParamSpec& spec, double x) { return x >= spec.min && x <= spec.max; }

std::optional<int64_t> wholeNumber(const QString& text) {
  bool ok = false;
  const qlonglong v = text.trimmed().toLongLong(&ok);
  return ok ? std::optional<int64_t>(v) : std::nullopt;
}

QString joined(const std::vector<std::string>& items) {
  QStringList out;
  for (const std::string& s : items) out << qstr(s);
  return out.join(QStringLiteral(", "));
}

// "1, 28, 28" or "[1, 28, 28]"; commas or spaces between entries.
ParsedParam parseList(const ParamSpec& spec, QString text) {
  if (text.startsWith(QLatin1Char('[')) && text.endsWith(QLatin1Char(']'))) text = text.mid(1, text.size() - 2);
  std::vector<int64_t> list;
  static const QRegularExpression separators(QStringLiteral("[,\\s]+"));
  for (const QString& entry : text.split(separators, Qt::SkipEmptyParts)) {
    const auto v = wholeNumber(entry);
    if (!v) return {QObject::tr("'%1' is not a whole number").arg(entry), {}};
    list.push_back(*v);
  }
  const QString problem = paramProblem(spec, list);
  return {problem, problem.isEmpty() ? std::optional<ParamValue>(list) : std::nullopt};
}

QColor mixed(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t), float(a.greenF() * (1 - t) + b.greenF() * t),
                          float(a.blueF() * (1 - t) + b.blueF() * t));
}

void setColour(QWidget* widget, QPalette::ColorRole role, const QColor& colour) {
  QPalette palette = widget->palette();
  palette.setColor(role, colour);
  widget->setPalette(palette);
}

QLabel* mutedLabel(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setWordWrap(true);
  label->setProperty("muted", true);
  return label;
}

QLabel* sectionLabel(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  QFont font = label->font();
  font.setBold(true);
  label->setFont(font);
  return label;
}

// Labels marked "muted" under `root` take the theme's muted text colour.
void applyMutedColour(QWidget* root) {
  const QColor muted = ThemeManager::instance().theme().mutedText;
  for (QLabel* label : root->findChildren<QLabel*>())
    if (label->property("muted").toBool()) setColour(label, QPalette::WindowText, muted);
}

// Text set from the document keeps the cursor where it was, so an undo while typing is calm.
void setTextKeepingCursor(QLineEdit* edit, const QString& text) {
  if (edit->text() == text) return;
  const int cursor = edit->cursorPosition();
  edit->setText(text);
  edit->setCursorPosition(std::min(cursor, int(text.size())));
}

// Rows rebuilt on every refresh may hold the button being clicked, hence deleteLater; hidden
// at once, so they do not linger on screen under their replacements.
void clearLayout(QLayout* layout) {
  while (QLayoutItem* item = layout->takeAt(0)) {
    if (QWidget* w = item->widget()) {
      w->hide();
      w->deleteLater();
    }
    delete item;
  }
}

// Scrolling the panel must not change the value under the pointer: the wheel only works on a
// spin or combo box that has focus.
class WheelGuard : public QObject {
 public:
  using QObject::QObject;
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() != QEvent::Wheel || static_cast<QWidget*>(watched)->hasFocus()) return false;
    event->ignore();
    return true;
  }
};

void guardWheel(QWidget* widget) {
  widget->setFocusPolicy(Qt::StrongFocus);
  widget->installEventFilter(new WheelGuard(widget));
}

// An Int parameter's spin box. Any text may be typed, so the editor can say what is wrong with
// it instead of refusing keys silently; its range is all of int, so an out-of-range value a
// file holds shows as it is, while steps stay within the parameter's range.
class IntSpinBox : public QSpinBox {
 public:
  IntSpinBox(const ParamSpec& spec, QWidget* parent) : QSpinBox(parent), spec_(spec) {
    setRange(INT_MIN, INT_MAX);
    setKeyboardTracking(false);  // the value changes on Enter, leaving or a step, not per key
    guardWheel(this);
  }
  QLineEdit* edit() const { return lineEdit(); }
  std::function<void()> onStep;

 protected:
  QValidator::State validate(QString& text, int&) const override {
    const ParsedParam parsed = parseParam(spec_, text);
    return parsed.error.isEmpty() && parsed.value ? QValidator::Acceptable : QValidator::Intermediate;
  }
  int valueFromText(const QString& text) const override { return int(wholeNumber(text).value_or(value())); }
  QString textFromValue(int value) const override { return QString::number(value); }  // as parseParam reads it
  void stepBy(int steps) override {
    QSpinBox::stepBy(steps);
    const int bounded = std::clamp(value(), int(spec_.min), int(spec_.max));
    if (bounded != value()) setValue(bounded);
    if (onStep) onStep();
  }
  StepEnabled stepEnabled() const override {
    StepEnabled enabled = StepNone;
    if (value() < spec_.max) enabled |= StepUpEnabled;
    if (value() > spec_.min) enabled |= StepDownEnabled;
    return enabled;
  }
  void keyPressEvent(QKeyEvent* event) override {
    // Enter on text that is no valid value keeps it to be fixed, where QSpinBox would revert it.
    const bool enter = event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter;
    if (enter && !parseParam(spec_, text()).error.isEmpty())
      event->accept();
    else
      QSpinBox::keyPressEvent(event);
  }

 private:
  const ParamSpec spec_;
};

// The default as an editor shows it; an empty list says so.
QString defaultText(const ParamSpec& spec) {
  const QString text = paramText(spec.default_value);
  return text.isEmpty() ? QObject::tr("empty") : text;
}

bool fitsInt(const ParamSpec& spec) { return spec.min >= INT_MIN && spec.max <= INT_MAX; }

}  // namespace

// ---- parameter text ---------------------------------------------------------------------------

QString paramText(const ParamValue& value) {
  return std::visit(
      [](const auto& x) -> QString {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return x ? QStringLiteral("true") : QStringLiteral("false");
        else if constexpr (std::is_same_v<T, int64_t>) return QString::number(x);
        else if constexpr (std::is_same_v<T, double>) return realText(x);
        else if constexpr (std::is_same_v<T, std::string>) return qstr(x);
        else {
          QStringList entries;
          for (int64_t d : x) entries << QString::number(d);
          return entries.join(QStringLiteral(", "));
        }
      },
      value);
}

QString paramProblem(const ParamSpec& spec, const ParamValue& value) {
  switch (spec.type) {
    case ParamType::Int: {
      const auto* x = std::get_if<int64_t>(&value);
      if (!x) return QObject::tr("not a whole number");
      return inRange(spec, double(*x)) ? QString() : QObject::tr("must be %1").arg(between(spec));
    }
    case ParamType::Float: {
      // A whole number is a real number too (Params::real takes it).
      const auto* real = std::get_if<double>(&value);
      const auto* whole = std::get_if<int64_t>(&value);
      const double x = real ? *real : whole ? double(*whole) : NAN;
      if (!std::isfinite(x)) return QObject::tr("not a number");
      return inRange(spec, x) ? QString() : QObject::tr("must be %1").arg(between(spec));
    }
    case ParamType::Bool:
      return std::holds_alternative<bool>(value) ? QString() : QObject::tr("must be true or false");
    case ParamType::Choice: {
      const auto* choice = std::get_if<std::string>(&value);
      const bool known = choice && std::find(spec.choices.begin(), spec.choices.end(), *choice) != spec.choices.end();
      return known ? QString() : QObject::tr("must be one of %1").arg(joined(spec.choices));
    }
    case ParamType::IntList: {
      const auto* list = std::get_if<std::vector<int64_t>>(&value);
      if (!list) return QObject::tr("not a list of whole numbers");
      for (int64_t x : *list)
        if (!inRange(spec, double(x))) return QObject::tr("each entry must be %1").arg(between(spec));
      return {};
    }
  }
  return {};
}

ParsedParam parseParam(const ParamSpec& spec, const QString& typed) {
  const QString text = typed.trimmed();
  if (text.isEmpty()) return {};
  ParamValue value;
  switch (spec.type) {
    case ParamType::Int: {
      const auto v = wholeNumber(text);
      if (!v) return {QObject::tr("not a whole number"), {}};
      value = *v;
      break;
    }
    case ParamType::Float: {
      bool ok = false;
      value = text.toDouble(&ok);  // C locale: "1e-5", "0.001"
      if (!ok) return {QObject::tr("not a number"), {}};
      break;
    }
    case ParamType::Bool:
      if (text != QLatin1String("true") && text != QLatin1String("false"))
        return {QObject::tr("must be true or false"), {}};
      value = text == QLatin1String("true");
      break;
    case ParamType::Choice: value = text.toStdString(); break;
    case ParamType::IntList: return parseList(spec, text);
  }
  const QString problem = paramProblem(spec, value);
  return {problem, problem.isEmpty() ? std::optional<ParamValue>(value) : std::nullopt};
}

QString paramToolTip(const ParamSpec& spec) {
  QString kind;
  switch (spec.type) {
    case ParamType::Int: kind = QObject::tr("Whole number %1").arg(between(spec)); break;
    case ParamType::Float: kind = QObject::tr("Number %1").arg(between(spec)); break;
    case ParamType::Bool: kind = QObject::tr("On or off"); break;
    case ParamType::Choice: kind = QObject::tr("One of %1").arg(joined(spec.choices)); break;
    case ParamType::IntList: kind = QObject::tr("Whole numbers such as 1, 28, 28, each %1").arg(between(spec)); break;
  }
  return QObject::tr("%1\n\n%2. Default: %3.").arg(qstr(spec.doc), kind, defaultText(spec));
}

// ---- ParamEditor --------------------------------------------------------------------------------

ParamEditor::ParamEditor(const ParamSpec& spec, QWidget* parent)
    : QWidget(parent), spec_(spec), reset_(new QToolButton(this)), error_(new QLabel(this)) {
  setObjectName(qstr(spec.name));
  editor_ = makeEditor();
  editor_->setToolTip(paramToolTip(spec_));
  if (text_) {
    connect(text_, &QLineEdit::textEdited, this, [this](const QString& text) { typed_ = text; });
    connect(text_, &QLineEdit::textChanged, this, &ParamEditor::updateLook);
  }

  reset_->setAutoRaise(true);
  reset_->setToolTip(tr("Reset to the default (%1)").arg(defaultText(spec_)));
  connect(reset_, &QToolButton::clicked, this, [this] { commit(std::nullopt); });

  error_->setWordWrap(true);
  error_->setObjectName(QStringLiteral("error"));
  error_->hide();

  auto* row = new QHBoxLayout;
  row->setContentsMargins(0, 0, 0, 0);
  // A check box keeps its own size, so a click beside it does not toggle it.
  const bool grows = !qobject_cast<QCheckBox*>(editor_);
  row->addWidget(editor_, grows ? 1 : 0);
  if (!grows) row->addStretch(1);
  row->addWidget(reset_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(row);
  layout->addWidget(error_);
  applyTheme();
  display();
}

QWidget* ParamEditor::makeEditor() {
  switch (spec_.type) {
    case ParamType::Int:
      if (fitsInt(spec_)) {
        auto* spin = new IntSpinBox(spec_, this);
        text_ = spin->edit();
        spin->onStep = [this, spin] {
          typed_.reset();
          commit(ParamValue(int64_t(spin->value())));
        };
        connect(spin, &QSpinBox::editingFinished, this, &ParamEditor::finishEditing);
        return spin;
      }
      [[fallthrough]];  // a range beyond int: typed like a Float
    case ParamType::Float:
    case ParamType::IntList: {
      auto* edit = new QLineEdit(this);
      text_ = edit;
      edit->setPlaceholderText(defaultText(spec_));
      connect(edit, &QLineEdit::editingFinished, this, &ParamEditor::finishEditing);
      return edit;
    }
    case ParamType::Bool: {
      auto* box = new QCheckBox(this);
      connect(box, &QCheckBox::clicked, this, [this](bool on) { commit(ParamValue(on)); });
      return box;
    }
    case ParamType::Choice: {
      auto* combo = new QComboBox(this);
      for (const std::string& choice : spec_.choices) combo->addItem(qstr(choice));
      guardWheel(combo);
      connect(combo, &QComboBox::activated, this, [this](int i) { commit(ParamValue(spec_.choices.at(size_t(i)))); });
      return combo;
    }
  }
  return nullptr;
}

void ParamEditor::setValue(const std::optional<ParamValue>& value) {
  if (value == held_) return;
  held_ = value;
  display();
}

// Shows held_ (or the default), dropping whatever was typed.
void ParamEditor::display() {
  typed_.reset();
  const ParamValue& value = held_ ? *held_ : spec_.default_value;
  if (auto* spin = qobject_cast<QSpinBox*>(editor_)) {
    const auto* whole = std::get_if<int64_t>(&value);
    if (whole && *whole >= INT_MIN && *whole <= INT_MAX)
      spin->setValue(int(*whole));
    else
      setTextKeepingCursor(text_, paramText(value));  // no int to hold: shown as text, marked invalid
  } else if (text_) {
    setTextKeepingCursor(text_, held_ ? paramText(*held_) : QString());  // the default is the placeholder
  } else if (auto* box = qobject_cast<QCheckBox*>(editor_)) {
    const auto* on = std::get_if<bool>(&value);
    box->setChecked(on ? *on : std::get<bool>(spec_.default_value));
  } else if (auto* combo = qobject_cast<QComboBox*>(editor_)) {
    const int index = combo->findText(paramText(value));
    combo->setCurrentIndex(index);
    combo->setPlaceholderText(index < 0 ? paramText(value) : QString());  // a value not among the choices
  }
  reset_->setEnabled(held_.has_value());
  updateLook();
}

void ParamEditor::finishEditing() {
  if (!typed_) return;
  const ParsedParam parsed = parseParam(spec_, *typed_);
  if (!parsed.error.isEmpty()) {
    // Moving to another field gives the text up. Enter, or switching to another window, keeps
    // it to be fixed (a spin box reverted it on the switch: put it back).
    if (window()->focusWidget() == editor_)
      setTextKeepingCursor(text_, *typed_);
    else
      display();
    return;
  }
  typed_.reset();
  commit(parsed.value);
}

void ParamEditor::commit(const std::optional<ParamValue>& value) {
  if (value == held_)
    display();  // nothing to change; tidy the text ("  64" -> "64", empty -> the default)
  else
    emit committed(value);
}

QString ParamEditor::currentProblem() const {
  if (text_) return parseParam(spec_, text_->text()).error;
  return held_ ? paramProblem(spec_, *held_) : QString();
}

QString ParamEditor::error() const { return error_->isHidden() ? QString() : error_->text(); }

void ParamEditor::updateLook() {
  const Theme& theme = ThemeManager::instance().theme();
  const QString problem = currentProblem();
  error_->setText(problem);
  error_->setVisible(!problem.isEmpty());
  editor_->setProperty("invalid", !problem.isEmpty());

  // Invalid: a red tint. A default shown as a value (spin and combo boxes have no placeholder
  // for it): greyed, like the placeholders of the line edits.
  QPalette look;
  if (!problem.isEmpty()) {
    for (const auto role : {QPalette::Base, QPalette::Button})
      look.setColor(role, mixed(palette().color(role), theme.error, theme.dark ? 0.35 : 0.18));
  }
  if (!held_ && !typed_ && problem.isEmpty()) {
    look.setColor(QPalette::Text, theme.mutedText);
    look.setColor(QPalette::ButtonText, theme.mutedText);
  }
  editor_->setPalette(look);
}

void ParamEditor::applyTheme() {
  reset_->setIcon(icon(QStringLiteral("undo")));
  setColour(error_, QPalette::WindowText, ThemeManager::instance().theme().error);
  updateLook();
}

// ---- the page of one node -------------------------------------------------------------------

class PropertyPanel::NodePage : public QWidget {
 public:
  NodePage(GraphDocument* document, const graph::Node& node, QWidget* parent);

  const QString& id() const { return id_; }
  const std::string& type() const { return type_; }
  void refresh();
  void applyTheme();
  // Leaves for good: nothing it still holds (focus leaving an editor) may change the graph.
  void retire();

 private:
  QWidget* header();
  void addParamRows(QFormLayout* form);
  void showProblems(const graph::Node& node);

  GraphDocument* document_;
  const QString id_;
  const std::string type_;
  const graph::LayerType* layer_;  // null for a type the registry does not know
  QFrame* stripe_ = nullptr;
  QLabel* icon_ = nullptr;
  QLineEdit* name_;
  std::optional<std::string> shown_name_;
  std::vector<ParamEditor*> editors_;
  QVBoxLayout* extras_;    // parameters the type does not have (each can be removed)
  QVBoxLayout* problems_;  // the node's problems
};

PropertyPanel::NodePage::NodePage(GraphDocument* document, const graph::Node& node, QWidget* parent)
    : QWidget(parent),
      document_(document),
      id_(qstr(node.id)),
      type_(node.type),
      layer_(graph::Registry::instance().find(node.type)),
      name_(new QLineEdit(this)),
      extras_(new QVBoxLayout),
      problems_(new QVBoxLayout) {
  auto* layout = new QVBoxLayout(this);
  layout->setSpacing(10);
  layout->addWidget(header());

  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setLabelAlignment(Qt::AlignLeft);
  name_->setObjectName(QStringLiteral("name"));
  name_->setPlaceholderText(id_);
  connect(name_, &QLineEdit::editingFinished, this, [this] {
    document_->rename(id_, name_->text().trimmed());
    if (const graph::Node* node = document_->node(id_))
      setTextKeepingCursor(name_, qstr(node->name));  // tidy when nothing changed
  });
  form->addRow(tr("Name"), name_);
  if (layer_) addParamRows(form);
  layout->addLayout(form);
  layout->addLayout(extras_);
  layout->addLayout(problems_);
  layout->addStretch(1);
  applyTheme();
}

// One row per parameter of the registry type: the only list of parameters there is.
void PropertyPanel::NodePage::addParamRows(QFormLayout* form) {
  for (const graph::ParamSpec& spec : layer_->params) {
    auto* editor = new ParamEditor(spec, this);
    auto* label = new QLabel(qstr(spec.name), this);
    label->setToolTip(paramToolTip(spec));
    label->setBuddy(editor->editor());
    connect(editor, &ParamEditor::committed, this,
            [this, name = qstr(spec.name)](const std::optional<ParamValue>& value) {
              document_->setParam(id_, name, value);
            });
    form->addRow(label, editor);
    editors_.push_back(editor);
  }
}

QWidget* PropertyPanel::NodePage::header() {
  auto* header = new QWidget(this);
  stripe_ = new QFrame(header);
  stripe_->setFixedWidth(4);
  stripe_->setAutoFillBackground(true);
  icon_ = new QLabel(header);

  auto* title = new QLabel(layer_ ? qstr(layer_->display_name) : tr("Unknown layer type"), header);
  QFont font = title->font();
  font.setBold(true);
  font.setPointSizeF(font.pointSizeF() * 1.2);
  title->setFont(font);
  title->setWordWrap(true);
  auto* titleRow = new QHBoxLayout;
  titleRow->addWidget(icon_);
  titleRow->addWidget(title, 1);

  auto* text = new QVBoxLayout;
  text->setSpacing(2);
  text->addLayout(titleRow);
  if (layer_) {
    text->addWidget(mutedLabel(tr("%1 · %2").arg(qstr(layer_->name), qstr(layer_->category)), header));
    text->addWidget(mutedLabel(qstr(layer_->description), header));
  } else {
    text->addWidget(mutedLabel(tr("Plexus has no layer type '%1'. The node can be renamed or deleted; "
                                  "it keeps its parameters as they are.")
                                   .arg(qstr(type_)),
                               header));
  }
  auto* layout = new QHBoxLayout(header);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(8);
  layout->addWidget(stripe_);
  layout->addLayout(text, 1);
  return header;
}

void PropertyPanel::NodePage::refresh() {
  const graph::Node* node = document_->node(id_);
  if (!node) return;
  if (shown_name_ != node->name) {
    shown_name_ = node->name;
    setTextKeepingCursor(name_, qstr(node->name));
  }
  for (ParamEditor* editor : editors_) {
    const auto it = node->params.find(editor->spec().name);
    editor->setValue(it == node->params.end() ? std::nullopt : std::optional<ParamValue>(it->second));
  }
  showProblems(*node);
}

void PropertyPanel::NodePage::showProblems(const graph::Node& node) {
  // Parameters a file gave the node that its type does not take: shown, so they can be removed.
  clearLayout(extras_);
  for (const auto& [name, value] : node.params) {
    if (layer_ && layer_->param(name)) continue;
    auto* row = new QWidget(this);
    auto* line = new QHBoxLayout(row);
    line->setContentsMargins(0, 0, 0, 0);
    line->addWidget(new QLabel(tr("%1 = %2").arg(qstr(name), paramText(value)), row), 1);
    auto* remove = new QToolButton(row);
    remove->setIcon(icon(QStringLiteral("delete")));
    remove->setAutoRaise(true);
    remove->setToolTip(tr("Remove the parameter %1").arg(qstr(name)));
    connect(remove, &QToolButton::clicked, this, [this, name = qstr(name)] { document_->setParam(id_, name, {}); });
    line->addWidget(remove);
    extras_->addWidget(row);
  }

  clearLayout(problems_);
  const std::vector<graph::Problem> problems = document_->problemsFor(id_);
  if (problems.empty()) return;
  problems_->addWidget(sectionLabel(tr("Problems"), this));
  for (const graph::Problem& p : problems) {
    auto* row = new QWidget(this);
    auto* line = new QHBoxLayout(row);
    line->setContentsMargins(0, 0, 0, 0);
    auto* icon = new QLabel(row);
    const int size = style()->pixelMetric(QStyle::PM_SmallIconSize);
    icon->setPixmap(severityIcon(p.severity).pixmap(size, size));
    auto* message = new QLabel(qstr(p.message), row);
    message->setWordWrap(true);
    message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    line->addWidget(icon, 0, Qt::AlignTop);
    line->addWidget(message, 1);
    problems_->addWidget(row);
  }
}

void PropertyPanel::NodePage::applyTheme() {
  const Theme& theme = ThemeManager::instance().theme();
  const QString category = layer_ ? qstr(layer_->category) : QString();
  setColour(stripe_, QPalette::Window, theme.category(category));
  const int size = style()->pixelMetric(QStyle::PM_LargeIconSize) * 3 / 4;
  icon_->setPixmap((layer_ ? categoryIcon(category) : icon(QStringLiteral("warning"))).pixmap(size, size));
  applyMutedColour(this);
  for (ParamEditor* editor : editors_) editor->applyTheme();
  if (const graph::Node* node = document_->node(id_)) showProblems(*node);  // icons in the new colours
}

void PropertyPanel::NodePage::retire() {
  for (ParamEditor* editor : editors_) editor->blockSignals(true);
  name_->blockSignals(true);
  hide();
  deleteLater();
}

// ---- the project page (nothing selected) ----------------------------------------------------

class PropertyPanel::ProjectPage : public QWidget {
 public:
  ProjectPage(GraphDocument* document, QWidget* parent);
  void refresh();
  void applyTheme() { applyMutedColour(this); }

 private:
  void showBinding(const graph::DatasetBinding& binding);
  void commitKind(const QString& kind);
  void commitField(const std::function<void(graph::DatasetBinding&)>& change);
  void browse();

  GraphDocument* document_;
  QLabel* file_;
  QFormLayout* form_;
  QComboBox* kind_;
  QLineEdit* path_;
  QPushButton* browse_;
  QLineEdit* target_;
  QComboBox* task_;
  QLabel* status_;
  QLabel* examples_;
  QLabel* summary_;
  std::optional<graph::DatasetBinding> shown_;
};

namespace {

// Shows `text` as the combo's choice; one that is not among its items (a kind a file names
// that Plexus does not know) shows as a placeholder.
void chooseText(QComboBox* combo, const QString& text, int role = Qt::DisplayRole) {
  const int index = combo->findData(text, role);
  combo->setCurrentIndex(index);
  combo->setPlaceholderText(index < 0 ? text : QString());
}

// A path inside the project's folder is stored relative to it, so the project can move with
// its data (dataset paths are looked up next to the project file).
QString storedPath(const QString& chosen, const QString& projectFile) {
  if (projectFile.isEmpty()) return chosen;
  const QString relative = QFileInfo(projectFile).absoluteDir().relativeFilePath(chosen);
  return relative.startsWith(QLatin1String("..")) ? chosen : relative;
}

bool imageKind(const std::string& kind) { return kind == "mnist" || kind == "fashion-mnist"; }

}  // namespace

PropertyPanel::ProjectPage::ProjectPage(GraphDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      file_(mutedLabel({}, this)),
      form_(new QFormLayout),
      kind_(new QComboBox(this)),
      path_(new QLineEdit(this)),
      browse_(new QPushButton(tr("Browse…"), this)),
      target_(new QLineEdit(this)),
      task_(new QComboBox(this)),
      status_(mutedLabel({}, this)),
      examples_(mutedLabel({}, this)),
      summary_(new QLabel(this)) {
  kind_->setObjectName(QStringLiteral("datasetKind"));
  for (const char* kind : {"mnist", "fashion-mnist", "csv"}) kind_->addItem(QString::fromLatin1(kind), kind);
  kind_->addItem(tr("(none)"), QString());
  guardWheel(kind_);
  connect(kind_, &QComboBox::activated, this, [this](int i) { commitKind(kind_->itemData(i).toString()); });

  path_->setObjectName(QStringLiteral("datasetPath"));
  path_->setPlaceholderText(tr("folder or file"));
  connect(path_, &QLineEdit::editingFinished, this,
          [this] { commitField([this](auto& b) { b.path = path_->text().trimmed().toStdString(); }); });
  connect(browse_, &QPushButton::clicked, this, &ProjectPage::browse);
  auto* pathRow = new QHBoxLayout;
  pathRow->addWidget(path_, 1);
  pathRow->addWidget(browse_);

  target_->setObjectName(QStringLiteral("datasetTarget"));
  target_->setPlaceholderText(tr("label column"));
  connect(target_, &QLineEdit::editingFinished, this,
          [this] { commitField([this](auto& b) { b.target = target_->text().trimmed().toStdString(); }); });
  task_->setObjectName(QStringLiteral("datasetTask"));
  for (const char* task : {"classification", "regression"}) task_->addItem(QString::fromLatin1(task));
  guardWheel(task_);
  connect(task_, &QComboBox::activated, this,
          [this](int i) { commitField([this, i](auto& b) { b.task = task_->itemText(i).toStdString(); }); });

  form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form_->addRow(tr("Kind"), kind_);
  form_->addRow(tr("Path"), pathRow);
  form_->addRow(tr("Target column"), target_);
  form_->addRow(tr("Task"), task_);

  auto* title = sectionLabel(tr("Project"), this);
  QFont font = title->font();
  font.setPointSizeF(font.pointSizeF() * 1.2);
  title->setFont(font);
  status_->setObjectName(QStringLiteral("datasetStatus"));
  summary_->setObjectName(QStringLiteral("graphSummary"));
  summary_->setWordWrap(true);

  auto* layout = new QVBoxLayout(this);
  layout->setSpacing(6);
  layout->addWidget(title);
  layout->addWidget(file_);
  layout->addSpacing(6);
  layout->addWidget(sectionLabel(tr("Dataset"), this));
  layout->addLayout(form_);
  layout->addWidget(status_);
  layout->addWidget(examples_);
  layout->addSpacing(6);
  layout->addWidget(sectionLabel(tr("Graph"), this));
  layout->addWidget(summary_);
  layout->addStretch(1);
  applyTheme();
}

void PropertyPanel::ProjectPage::refresh() {
  if (shown_ != document_->graph().dataset) showBinding(document_->graph().dataset);
  file_->setText(document_->displayName());
  status_->setText(document_->datasetStatus());
  const auto& info = document_->datasetInfo();
  examples_->setVisible(info.has_value());
  if (info) {
    const QString labels = info->classes ? tr("%1 classes").arg(info->classes) : tr("regression");
    examples_->setText(tr("Each example: %1, %2").arg(qstr(to_string(info->input_shape)), labels));
  }
  const graph::Graph& g = document_->graph();
  const QString nodes = g.nodes.size() == 1 ? tr("1 node") : tr("%1 nodes").arg(g.nodes.size());
  const QString wires = g.edges.size() == 1 ? tr("1 wire") : tr("%1 wires").arg(g.edges.size());
  summary_->setText(tr("%1, %2\n%3").arg(nodes, wires, problemSummary(document_->validation().problems)));
}

// Fields the document changed are updated; the others keep what is being typed.
void PropertyPanel::ProjectPage::showBinding(const graph::DatasetBinding& b) {
  const auto changed = [&](auto field) { return !shown_ || (*shown_).*field != b.*field; };
  if (changed(&graph::DatasetBinding::kind)) chooseText(kind_, qstr(b.kind), Qt::UserRole);
  if (changed(&graph::DatasetBinding::path)) setTextKeepingCursor(path_, qstr(b.path));
  if (changed(&graph::DatasetBinding::target)) setTextKeepingCursor(target_, qstr(b.target));
  if (changed(&graph::DatasetBinding::task)) chooseText(task_, qstr(b.task));
  const bool bound = !b.kind.empty(), csv = b.kind == "csv";
  path_->setEnabled(bound);
  browse_->setEnabled(bound);
  form_->setRowVisible(target_, csv);
  form_->setRowVisible(task_, csv);
  shown_ = b;
}

void PropertyPanel::ProjectPage::commitKind(const QString& kind) {
  graph::DatasetBinding next = document_->graph().dataset;
  if (kind.isEmpty()) {
    next = {};  // no dataset: nothing else applies
  } else {
    next.kind = kind.toStdString();
    if (next.kind == "csv" && next.task.empty()) next.task = "classification";
    if (next.kind != "csv") next.target.clear(), next.task.clear();  // only a CSV file has columns
  }
  document_->setDataset(next);
}

void PropertyPanel::ProjectPage::commitField(const std::function<void(graph::DatasetBinding&)>& change) {
  graph::DatasetBinding next = document_->graph().dataset;
  change(next);
  document_->setDataset(next);
}

void PropertyPanel::ProjectPage::browse() {
  const graph::DatasetBinding& b = document_->graph().dataset;
  const QString project = document_->filePath();
  const QDir base = project.isEmpty() ? QDir::current() : QFileInfo(project).absoluteDir();
  const QString start = base.absoluteFilePath(qstr(b.path));
  const QString chosen = imageKind(b.kind)
                            ? QFileDialog::getExistingDirectory(this, tr("Dataset folder"), start)
                            : QFileDialog::getOpenFileName(this, tr("CSV file"), start,
                                                           tr("CSV files (*.csv);;All files (*)"));
  if (chosen.isEmpty()) return;
  const std::string stored = storedPath(chosen, project).toStdString();
  commitField([&](auto& binding) { binding.path = stored; });
}

// ---- the panel ----------------------------------------------------------------------------------

PropertyPanel::PropertyPanel(GraphDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      scroll_(new QScrollArea(this)),
      project_(new ProjectPage(document, this)),
      selection_(new QLabel(this)) {
  scroll_->setWidgetResizable(true);
  scroll_->setFrameShape(QFrame::NoFrame);
  selection_->setObjectName(QStringLiteral("selection"));
  selection_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  selection_->setMargin(9);
  selection_->setWordWrap(true);
  selection_->hide();
  project_->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(scroll_);

  connect(document_, &GraphDocument::nodeChanged, this, &PropertyPanel::refresh);
  connect(document_, &GraphDocument::validated, this, &PropertyPanel::refresh);
  connect(document_, &GraphDocument::settingsChanged, this, &PropertyPanel::refresh);
  connect(document_, &GraphDocument::filePathChanged, this, &PropertyPanel::refresh);
  // The document changed under the page: no pending edit is committed to what is there now.
  connect(document_, &GraphDocument::nodeRemoved, this, [this](const QString& id) {
    if (ids_.contains(id)) showSelection(ids_);
  });
  connect(document_, &GraphDocument::graphReset, this, [this] { showSelection(ids_); });
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, [this] {
    project_->applyTheme();
    if (node_) node_->applyTheme();
  });
  showSelection({});
}

void PropertyPanel::showNodes(const QStringList& ids) {
  if (!showsSameNode(ids)) commitPendingEdit();
  showSelection(ids);
}

bool PropertyPanel::showsSameNode(const QStringList& ids) const {
  const graph::Node* node = ids.size() == 1 ? document_->node(ids[0]) : nullptr;
  return node && node_ && node_->id() == ids[0] && node_->type() == node->type;
}

void PropertyPanel::showSelection(const QStringList& ids) {
  ids_.clear();
  std::map<std::string, int> types;  // type -> how many selected
  for (const QString& id : ids)
    if (const graph::Node* node = document_->node(id); node && !ids_.contains(id)) ids_ << id, ++types[node->type];

  if (!showsSameNode(ids_)) {
    if (node_) node_->retire();
    node_ = nullptr;
    if (ids_.isEmpty()) {
      setPage(project_);
    } else if (ids_.size() == 1) {
      node_ = new NodePage(document_, *document_->node(ids_[0]), this);
      setPage(node_);
    } else {
      QStringList lines{tr("<b>%1 nodes selected</b>").arg(ids_.size())};
      for (const auto& [type, count] : types) lines << tr("%1 × %2").arg(count).arg(qstr(type).toHtmlEscaped());
      lines << QString() << tr("Select a single node to edit its parameters.");
      selection_->setText(lines.join(QStringLiteral("<br>")));
      setPage(selection_);
    }
  }
  refresh();
}

void PropertyPanel::refresh() {
  if (node_)
    node_->refresh();
  else if (ids_.isEmpty())
    project_->refresh();
}

void PropertyPanel::setPage(QWidget* page) {
  if (scroll_->widget() == page) return;
  if (QWidget* old = scroll_->takeWidget()) {
    old->hide();
    old->setParent(this);  // kept for later
  }
  scroll_->setWidget(page);
  page->show();
}

// Typing not yet committed (no Enter, focus still there) would be lost with the page: leaving
// the field commits it, to the node it was typed for.
void PropertyPanel::commitPendingEdit() {
  QWidget* focus = QApplication::focusWidget();
  if (focus && scroll_->widget() && scroll_->widget()->isAncestorOf(focus)) focus->clearFocus();
}

}  // namespace plexus::widgets
