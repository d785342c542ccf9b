#include "editor/training_panel.h"

#include <QFormLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <exception>

#include "common/panel_style.h"
#include "common/theme.h"
#include "editor/device_selector.h"
#include "editor/model/graph_document.h"
#include "editor/param_editor.h"
#include "graph/training_params.h"

namespace plexus::widgets {

TrainingPanel::TrainingPanel(GraphDocument* document, QWidget* parent) : QWidget(parent), doc_(document) {
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  for (const graph::ParamSpec& spec : graph::training_param_specs()) {
    auto* editor = new ParamEditor(spec, this);
    editors_[spec.name] = editor;
    auto* label = new QLabel(qstr(spec.name), this);
    label->setToolTip(paramToolTip(spec));
    form->addRow(label, editor);
    connect(editor, &ParamEditor::committed, this,
            [this, name = spec.name](const std::optional<graph::ParamValue>& value) { commit(name, value); });
  }
  device_ = new DeviceSelector(this);
  device_->setObjectName(QStringLiteral("deviceSelector"));
  form->addRow(tr("device"), device_);
  device_note_ = new QLabel(this);
  device_note_->setWordWrap(true);
  form->addRow(QString(), device_note_);
  connect(device_, &DeviceSelector::deviceChanged, this, [this](Device device) {
    graph::TrainingSettings settings = doc_->graph().training;
    settings.device = device.str();
    doc_->setTraining(settings);
  });

  error_ = new QLabel(this);
  error_->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(error_);
  layout->addStretch();

  connect(doc_, &GraphDocument::settingsChanged, this, &TrainingPanel::refresh);
  connect(doc_, &GraphDocument::graphReset, this, &TrainingPanel::refresh);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, [this] {
    for (auto& [name, editor] : editors_) editor->applyTheme();
    refresh();
  });
  refresh();
}

ParamEditor* TrainingPanel::editor(const std::string& name) const {
  const auto it = editors_.find(name);
  return it == editors_.end() ? nullptr : it->second;
}

void TrainingPanel::setLocked(bool locked) {
  locked_ = locked;
  refresh();
}

// A setting at its default shows as "not set" (greyed default, reset disabled), like a layer
// parameter left alone.
void TrainingPanel::refresh() {
  const graph::TrainingSettings& settings = doc_->graph().training;
  for (const graph::ParamSpec& spec : graph::training_param_specs()) {
    ParamEditor* editor = editors_.at(spec.name);
    const graph::ParamValue value = *graph::training_value(settings, spec.name);
    editor->setValue(value == spec.default_value ? std::nullopt : std::optional(value));
    editor->setEnabled(!locked_ && graph::training_value_applies(settings, spec.name));
  }
  device_->setEnabled(!locked_);
  QString note;
  try {
    const QSignalBlocker quiet(device_);
    if (!device_->setCurrentDevice(parse_device(settings.device)))
      note = tr("The project asks for %1, which this machine does not have.").arg(qstr(settings.device));
  } catch (const std::exception& e) {
    note = qstr(e.what());
  }
  device_note_->setText(note);
  device_note_->setVisible(!note.isEmpty());
  setColour(device_note_, QPalette::WindowText, ThemeManager::instance().theme().error);
}

void TrainingPanel::commit(const std::string& name, const std::optional<graph::ParamValue>& value) {
  graph::TrainingSettings settings = doc_->graph().training;
  const graph::ParamSpec& spec = editors_.at(name)->spec();
  try {
    graph::set_training_value(settings, name, value ? *value : spec.default_value);
  } catch (const std::exception& e) {  // the editor checked the value already; say so if not
    error_->setText(qstr(e.what()));
    return;
  }
  error_->clear();
  doc_->setTraining(settings);
}

}  // namespace plexus::widgets
