#pragma once
// SweepEditor: the project's sweep definition. Its settings (method, trials, parallel trials,
// threads, metric, seed) are a SettingsForm built from graph::sweep_settings(), as the training
// panel's are; below them the swept parameters, one row each: the target (chosen from the
// training settings, the dataset settings and the project's node parameters by Add Parameter),
// either the values to try ("0.001, 0.01, 0.1") or a range min..max, and whether the range is
// log-scaled. Every change is one undo step of the document (GraphDocument::setSweep); what
// graph::check_sweep finds wrong is shown under the list.
#include <QWidget>
#include <optional>
#include <string>

#include "graph/graph.h"
#include "graph/param_spec.h"

class QLabel;
class QMenu;
class QTableWidget;
class QToolButton;

namespace plexus::widgets {

class GraphDocument;
class SettingsForm;

class SweepEditor : public QWidget {
  Q_OBJECT

 public:
  enum Column { TargetColumn, ValuesColumn, MinColumn, MaxColumn, LogColumn };

  explicit SweepEditor(GraphDocument* document, QWidget* parent = nullptr);

  // The targets Add Parameter offers for the open project, grouped: "lr", "dataset.augment.shift",
  // "fc1.out_features" (numbers, choices and flags; lists are not swept).
  QStringList targets() const;
  // Adds a parameter sweeping `target` (a range around its current value, or its choices), one step.
  void addParameter(const QString& target);
  void removeParameter(int row);

  QTableWidget* parameterTable() const { return table_; }
  QString errorText() const;  // what check_sweep says, "" when the sweep can run (or none is defined)
  // While a sweep runs its definition is fixed.
  void setLocked(bool locked);

 private:
  void refresh();
  void fillAddMenu();
  void edited(int row, int column);
  void store(const graph::SweepSettings& sweep);
  void showError(const QString& text);  // "" hides it

  GraphDocument* doc_;
  SettingsForm* form_;
  QTableWidget* table_;
  QToolButton* add_;
  QToolButton* remove_;
  QMenu* add_menu_;
  QLabel* error_;
  bool refreshing_ = false;
  bool locked_ = false;
};

// A value typed for a target of `spec`: a number of its type, one of its choices, true/false.
// nullopt for text that is none of these.
std::optional<graph::ParamValue> parseSweepValue(const graph::ParamSpec& spec, const QString& text);

}  // namespace plexus::widgets
