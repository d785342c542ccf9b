#pragma once
// SettingsForm: the fields of a settings table (graph/settings_table.h: the training settings,
// the dataset settings), one ParamEditor per setting in the owner's QFormLayout, labelled with
// the table's label and its doc and file key as tooltip (paramToolTip); the owner places the
// rows under the table's sections. The owner says how a setting reads, whether it applies and
// how an edit is stored (one undo step of the document); the form shows a value at its default
// as "not set", like a layer parameter left alone, and a setting that does not apply disabled
// or hidden.
#include <QObject>
#include <QString>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/registry.h"

class QFormLayout;
class QWidget;

namespace plexus::widgets {

class ParamEditor;

class SettingsForm : public QObject {
 public:
  struct Hooks {
    std::function<graph::ParamValue(const std::string& name)> value;
    std::function<bool(const std::string& name)> applies;
    // Stores an edit; throws (ValueError) when the settings refuse the value.
    std::function<void(const std::string& name, const graph::ParamValue& value)> store;
    std::function<void(const QString& why)> refused;
  };
  enum class Inapplicable { Disabled, Hidden };

  // The form lives as long as `owner`; rows go into `form`, which the owner places.
  SettingsForm(QWidget* owner, QFormLayout* form, Hooks hooks, Inapplicable inapplicable);

  // A row for the setting `name` (the name the hooks take: "lr", "augment.shift"), labelled
  // `spec.label`; the editor's objectName is `objectName`, by default `spec.name` (the key).
  ParamEditor* add(const std::string& name, const graph::ParamSpec& spec, const QString& objectName = {});
  ParamEditor* editor(const std::string& name) const;  // null for a name never added

  // Shows the current values; not `editable`: every field read-only (a run is going).
  void refresh(bool editable = true);
  void applyTheme();

 private:
  void commit(const std::string& name, const graph::ParamSpec& spec, const std::optional<graph::ParamValue>& value);

  QWidget* owner_;
  QFormLayout* form_;
  Hooks hooks_;
  Inapplicable inapplicable_;
  std::vector<std::pair<std::string, ParamEditor*>> rows_;  // in form order
};

}  // namespace plexus::widgets
