#pragma once
// The training settings described the way layer parameters are (ParamSpec: type, default,
// range or choices, doc), so the editor's settings panel uses the same typed, range-checked
// fields as the property panel, and there is one description of what each setting accepts.
// The device is not among them: it is chosen from the devices found at run time.
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/registry.h"

namespace plexus::graph {

// In the order a settings form shows them; defaults are TrainingSettings{}'s.
const std::vector<ParamSpec>& training_param_specs();

// A setting's value by ParamSpec name (nullopt for an unknown name).
std::optional<ParamValue> training_value(const TrainingSettings& settings, const std::string& name);
// Sets one setting; throws ValueError for an unknown name, a wrong type or an out-of-range value
// (check_param_value's reason).
void set_training_value(TrainingSettings& settings, const std::string& name, const ParamValue& value);

// Whether a setting matters for these settings (momentum only for SGD and RMSprop, Nesterov
// only for SGD, step_size and gamma only for the step schedule), so a form can disable it.
bool training_value_applies(const TrainingSettings& settings, const std::string& name);

}  // namespace plexus::graph
