#include "editor/param_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>
#include <functional>

#include "common/icons.h"
#include "common/panel_style.h"
#include "common/theme.h"
#include "util/text.h"

namespace plexus::widgets {
namespace {

using graph::ParamSpec;
using graph::ParamType;
using graph::ParamValue;

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
// An IntList's entries are whole numbers, a FloatList's any numbers ("0.5, 2, 1e-3").
ParsedParam parseList(const ParamSpec& spec, QString text) {
  if (text.startsWith(QLatin1Char('[')) && text.endsWith(QLatin1Char(']'))) text = text.mid(1, text.size() - 2);
  std::vector<int64_t> whole;
  std::vector<double> reals;
  static const QRegularExpression separators(QStringLiteral("[,\\s]+"));
  for (const QString& entry : text.split(separators, Qt::SkipEmptyParts)) {
    if (spec.type == ParamType::FloatList) {
      bool ok = false;
      reals.push_back(entry.toDouble(&ok));  // C locale: "1e-5", "0.001"
      if (!ok) return {QObject::tr("'%1' is not a number").arg(entry), {}};
      continue;
    }
    const auto v = wholeNumber(entry);
    if (!v) return {QObject::tr("'%1' is not a whole number").arg(entry), {}};
    whole.push_back(*v);
  }
  // An empty list is an int list, as a project file reads "[]" back (a FloatList takes it).
  const ParamValue list = reals.empty() ? ParamValue(whole) : ParamValue(reals);
  const QString problem = paramProblem(spec, list);
  return {problem, problem.isEmpty() ? std::optional<ParamValue>(list) : std::nullopt};
}

// "age, fare, sex": names separated by commas (a name may hold spaces: a CSV header's may).
ParsedParam parseNames(const ParamSpec& spec, const QString& text) {
  std::vector<std::string> names;
  for (const QString& name : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
    if (!name.trimmed().isEmpty()) names.push_back(name.trimmed().toStdString());
  const ParamValue value = names;
  const QString problem = paramProblem(spec, value);
  return {problem, problem.isEmpty() ? std::optional<ParamValue>(value) : std::nullopt};
}

// An Int that also takes words, or an IntPair: "3", "5, 1", "[5, 1]" or a word ("same"). A word
// is read as one and left to the shared check, which names the words taken.
ParsedParam parseWhole(const ParamSpec& spec, const QString& text) {
  static const QRegularExpression listed(QStringLiteral("^\\[|[,\\s]"));
  ParamValue value;
  if (const auto v = wholeNumber(text)) value = *v;
  else if (spec.type == ParamType::IntPair && text.contains(listed)) return parseList(spec, text);
  else if (spec.type == ParamType::IntPair || !spec.choices.empty()) value = text.toStdString();
  else return {QObject::tr("not a whole number"), {}};
  const QString problem = paramProblem(spec, value);
  return {problem, problem.isEmpty() ? std::optional<ParamValue>(value) : std::nullopt};
}

QColor mixed(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t), float(a.greenF() * (1 - t) + b.greenF() * t),
                          float(a.blueF() * (1 - t) + b.blueF() * t));
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
  if (!spec.default_means.empty())
    return text.isEmpty() ? qstr(spec.default_means) : QStringLiteral("%1 (%2)").arg(text, qstr(spec.default_means));
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
        else if constexpr (std::is_same_v<T, double>) return QString::fromStdString(shortest_text(x));  // shown exactly as it will be saved
        else if constexpr (std::is_same_v<T, std::string>) return qstr(x);
        else if constexpr (std::is_same_v<T, std::vector<std::string>>) return joined(x);
        else if constexpr (std::is_same_v<T, std::vector<double>>) {
          QStringList entries;
          for (double d : x) entries << QString::fromStdString(shortest_text(d));
          return entries.join(QStringLiteral(", "));
        } else {
          QStringList entries;
          for (int64_t d : x) entries << QString::number(d);
          return entries.join(QStringLiteral(", "));
        }
      },
      value);
}

// The validator's own check: the editor and the Problems panel never disagree about a value.
QString paramProblem(const ParamSpec& spec, const ParamValue& value) {
  return qstr(graph::check_param_value(spec, value));
}

ParsedParam parseParam(const ParamSpec& spec, const QString& typed) {
  const QString text = typed.trimmed();
  if (text.isEmpty()) return {};
  ParamValue value;
  switch (spec.type) {
    case ParamType::Int:
    case ParamType::IntPair: return parseWhole(spec, text);
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
    case ParamType::IntList:
    case ParamType::FloatList: return parseList(spec, text);
    case ParamType::Names: return parseNames(spec, text);
  }
  const QString problem = paramProblem(spec, value);
  return {problem, problem.isEmpty() ? std::optional<ParamValue>(value) : std::nullopt};
}

QString paramToolTip(const ParamSpec& spec) {
  const QString range = qstr(graph::param_range(spec));  // "between 1 and 64"
  QString kind;
  switch (spec.type) {
    case ParamType::Int: kind = QObject::tr("Whole number %1").arg(range); break;
    case ParamType::IntPair:
      kind = QObject::tr("A whole number for height and width, or a pair such as 5, 1 (height, width), each %1")
                 .arg(range);
      break;
    case ParamType::Float: kind = QObject::tr("Number %1").arg(range); break;
    case ParamType::Bool: kind = QObject::tr("On or off"); break;
    case ParamType::Choice:
      kind = spec.choices.empty() ? QObject::tr("Text") : QObject::tr("One of %1").arg(joined(spec.choices));
      break;
    case ParamType::IntList: kind = QObject::tr("Whole numbers such as 1, 28, 28, each %1").arg(range); break;
    case ParamType::FloatList: kind = QObject::tr("Numbers such as 0.5, 2, 1, each %1").arg(range); break;
    case ParamType::Names: kind = QObject::tr("Names separated by commas, such as age, fare"); break;
  }
  if (spec.type != ParamType::Choice && !spec.choices.empty())
    kind += QObject::tr(", or one of %1").arg(joined(spec.choices));
  // Rich text, so that Qt wraps a long doc instead of showing one screen-wide line.
  return QObject::tr("<qt><b>%1</b><br>%2<p>%3. Default: %4.<br>File key: <code>%5</code></p></qt>")
      .arg(qstr(spec.label).toHtmlEscaped(), qstr(spec.doc).toHtmlEscaped(), kind.toHtmlEscaped(),
           defaultText(spec).toHtmlEscaped(), qstr(spec.name).toHtmlEscaped());
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

QLineEdit* ParamEditor::typedField() {
  auto* edit = new QLineEdit(this);
  text_ = edit;
  edit->setPlaceholderText(defaultText(spec_));
  connect(edit, &QLineEdit::editingFinished, this, &ParamEditor::finishEditing);
  return edit;
}

QWidget* ParamEditor::makeEditor() {
  switch (spec_.type) {
    case ParamType::Int:
      if (fitsInt(spec_) && spec_.choices.empty()) {
        auto* spin = new IntSpinBox(spec_, this);
        text_ = spin->edit();
        spin->onStep = [this, spin] {
          typed_.reset();
          commit(std::optional<ParamValue>(std::in_place, int64_t(spin->value())));  // in place: GCC 12 misreads a temporary variant under ASan
        };
        connect(spin, &QSpinBox::editingFinished, this, &ParamEditor::finishEditing);
        return spin;
      }
      [[fallthrough]];  // a range beyond int, or words besides numbers: typed like a Float
    case ParamType::Float:
    case ParamType::IntPair:
    case ParamType::IntList:
    case ParamType::FloatList:
    case ParamType::Names: return typedField();
    case ParamType::Bool: {
      auto* box = new QCheckBox(this);
      connect(box, &QCheckBox::clicked, this, [this](bool on) { commit(std::optional<ParamValue>(std::in_place, on)); });
      return box;
    }
    case ParamType::Choice: {
      if (spec_.choices.empty()) return typedField();  // free text: a CSV file's missing values
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

QLabel* paramLabel(const ParamEditor* editor, QWidget* parent) {
  auto* label = new QLabel(qstr(editor->spec().label), parent);
  label->setToolTip(paramToolTip(editor->spec()));
  label->setBuddy(editor->editor());
  return label;
}

}  // namespace plexus::widgets
