#pragma once
// TrainingPanel: the project's training settings (optimizer, learning rate and schedule, batch
// size, epochs, seed, device). Its fields are a SettingsForm of the property panel's
// ParamEditors, built from graph::training_settings(): under the table's sections (Optimizer,
// Schedule, Batches, Monitoring, Hardware), and the rows it marks advanced in a collapsed
// "Advanced" part at the end. Every change is one undo step of the document, so settings are
// saved with the project like the graph.
#include <QWidget>
#include <string>
#include <vector>

class QFormLayout;
class QLabel;
class QToolButton;

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
  // The toggle of the "Advanced" part; checked = expanded.
  QToolButton* advancedToggle() const { return advanced_; }

 private:
  void refresh();
  void showAdvanced(bool shown);

  GraphDocument* doc_;
  QFormLayout* rows_;  // the sections' rows, then the advanced ones
  SettingsForm* form_;
  DeviceSelector* device_;
  QLabel* device_note_;
  QLabel* error_;
  QToolButton* advanced_;
  std::vector<ParamEditor*> advanced_rows_;
  bool locked_ = false;
};

}  // namespace plexus::widgets
