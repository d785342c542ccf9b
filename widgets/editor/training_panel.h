#pragma once
// TrainingPanel: the project's training settings (optimizer, learning rate and schedule, batch
// size, epochs, seed, device). Its fields are a SettingsForm of the property panel's
// ParamEditors, built from graph::training_param_specs(); every change is one undo step of the
// document, so settings are saved with the project like the graph.
#include <QWidget>
#include <string>

class QLabel;

namespace plexus::widgets {

class DeviceSelector;
class GraphDocument;
class ParamEditor;
class SettingsForm;

class TrainingPanel : public QWidget {
  Q_OBJECT

 public:
  explicit TrainingPanel(GraphDocument* document, QWidget* parent = nullptr);

  ParamEditor* editor(const std::string& name) const;  // null for an unknown setting
  DeviceSelector* deviceSelector() const { return device_; }
  // While a run is going its settings are fixed; the panel shows them read-only.
  void setLocked(bool locked);

 private:
  void refresh();

  GraphDocument* doc_;
  SettingsForm* form_;
  DeviceSelector* device_;
  QLabel* device_note_;
  QLabel* error_;
  bool locked_ = false;
};

}  // namespace plexus::widgets
