#include "editor/training_panel.h"

#include <QFormLayout>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <exception>
#include <string>

#include "common/panel_style.h"
#include "common/qt_text.h"
#include "common/theme.h"
#include "editor/device_selector.h"
#include "editor/model/graph_document.h"
#include "editor/param_editor.h"
#include "editor/settings_form.h"
#include "graph/training_params.h"

namespace plexus::widgets {

TrainingPanel::TrainingPanel(GraphDocument* document, QWidget* parent) : QWidget(parent), doc_(document) {
  auto* form = rows_ = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form_ = new SettingsForm(
      this, form,
      {.value = [this](const std::string& name) { return *graph::training_value(doc_->graph().training, name); },
       .applies = [this](const std::string& name) { return graph::training_value_applies(doc_->graph().training, name); },
       .store =
           [this](const std::string& name, const graph::ParamValue& value) {
             graph::TrainingSettings settings = doc_->graph().training;
             graph::set_training_value(settings, name, value);
             error_->clear();
             doc_->setTraining(settings);
           },
       .refused = [this](const QString& why) { error_->setText(why); }},
      SettingsForm::Inapplicable::Disabled);
  // The table's sections in order, each with its everyday settings; the advanced ones of every
  // section follow, in that order, in one collapsed part: the form stays short in a dock.
  for (const std::string& section : graph::training_sections()) {
    auto* heading = sectionLabel(qstr(section), this);
    heading->setObjectName(qstr("section:" + section));
    heading->setContentsMargins(0, 8, 0, 0);
    form->addRow(heading);
    for (const graph::TrainingSetting& row : graph::training_settings()) {
      if (row.section != section || row.advanced) continue;
      if (row.in_form) {
        form_->add(row.name(), row.spec);
        continue;
      }
      // The device: chosen from the devices found, not typed.
      device_ = new DeviceSelector(this);
      device_->setObjectName(QStringLiteral("deviceSelector"));
      form->addRow(qstr(row.spec.label), device_);
      device_note_ = new QLabel(this);
      device_note_->setWordWrap(true);
      form->addRow(QString(), device_note_);
    }
  }
  advanced_ = new QToolButton(this);
  advanced_->setObjectName(QStringLiteral("advancedToggle"));
  advanced_->setText(tr("Advanced"));
  advanced_->setCheckable(true);
  advanced_->setAutoRaise(true);
  advanced_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  advanced_->setToolTip(tr("Settings few runs change"));
  form->addRow(advanced_);
  for (const std::string& section : graph::training_sections())
    for (const graph::TrainingSetting& row : graph::training_settings())
      if (row.section == section && row.advanced) advanced_rows_.push_back(form_->add(row.name(), row.spec));
  connect(advanced_, &QToolButton::toggled, this, &TrainingPanel::showAdvanced);
  connect(device_, &DeviceSelector::deviceChanged, this, [this](Device device) {
    graph::TrainingSettings settings = doc_->graph().training;
    settings.device = device.str();
    doc_->setTraining(settings);
  });

  error_ = new QLabel(this);
  error_->setWordWrap(true);
  // The height scrolls: the settings outnumber the rows a short window has room for, and the
  // panel must not hold the window taller than the screen. The width stays what the fields need.
  auto* content = new QWidget;
  auto* layout = new QVBoxLayout(content);
  layout->addLayout(form);
  layout->addWidget(error_);
  layout->addStretch();
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setWidget(content);
  // As wide as the widest row, the advanced ones included, so that expanding cuts no label.
  setMinimumWidth(content->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width());
  showAdvanced(false);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(scroll);

  connect(doc_, &GraphDocument::settingsChanged, this, &TrainingPanel::refresh);
  connect(doc_, &GraphDocument::graphReset, this, &TrainingPanel::refresh);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, [this] {
    form_->applyTheme();
    refresh();
  });
  refresh();
}

void TrainingPanel::showAdvanced(bool shown) {
  advanced_->setArrowType(shown ? Qt::DownArrow : Qt::RightArrow);
  for (ParamEditor* editor : advanced_rows_) rows_->setRowVisible(editor, shown);
}

ParamEditor* TrainingPanel::editor(const std::string& name) const { return form_->editor(name); }

void TrainingPanel::setLocked(bool locked) {
  locked_ = locked;
  refresh();
}

void TrainingPanel::refresh() {
  const graph::TrainingSettings& settings = doc_->graph().training;
  form_->refresh(!locked_);
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

}  // namespace plexus::widgets
