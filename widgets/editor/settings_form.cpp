#include "editor/settings_form.h"

#include <QFormLayout>
#include <QLabel>

#include <exception>

#include "common/qt_text.h"
#include "editor/param_editor.h"

namespace plexus::widgets {

SettingsForm::SettingsForm(QWidget* owner, QFormLayout* form, Hooks hooks, Inapplicable inapplicable)
    : QObject(owner), owner_(owner), form_(form), hooks_(std::move(hooks)), inapplicable_(inapplicable) {}

ParamEditor* SettingsForm::add(const std::string& name, const graph::ParamSpec& spec, const QString& objectName) {
  auto* editor = new ParamEditor(spec, owner_);
  if (!objectName.isEmpty()) editor->setObjectName(objectName);
  form_->addRow(paramLabel(editor, owner_), editor);
  // The form as context: no edit arrives once it is gone, e.g. focus leaving while the owner dies.
  connect(editor, &ParamEditor::committed, this,
          [this, name, spec](const std::optional<graph::ParamValue>& value) { commit(name, spec, value); });
  rows_.emplace_back(name, editor);
  return editor;
}

ParamEditor* SettingsForm::editor(const std::string& name) const {
  for (const auto& [row, editor] : rows_)
    if (row == name) return editor;
  return nullptr;
}

void SettingsForm::refresh(bool editable) {
  for (const auto& [name, editor] : rows_) {
    const graph::ParamValue value = hooks_.value(name);
    editor->setValue(value == editor->spec().default_value ? std::nullopt : std::optional(value));
    const bool applies = hooks_.applies(name);
    if (inapplicable_ == Inapplicable::Hidden) {
      form_->setRowVisible(editor, applies);
      editor->setEnabled(editable);
    } else {
      editor->setEnabled(editable && applies);
    }
  }
}

void SettingsForm::applyTheme() {
  for (const auto& [name, editor] : rows_) editor->applyTheme();
}

void SettingsForm::commit(const std::string& name, const graph::ParamSpec& spec,
                          const std::optional<graph::ParamValue>& value) {
  try {
    hooks_.store(name, value ? *value : spec.default_value);
  } catch (const std::exception& e) {  // the editor checked the value already; say so if not
    hooks_.refused(qstr(e.what()));
  }
}

}  // namespace plexus::widgets
