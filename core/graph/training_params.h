#pragma once
// The training settings, each described once: its key in the project file, where it lives in
// TrainingSettings, a ParamSpec (label, type, default, range or choices, doc) as layer
// parameters have, and the form's section it sits in. The project reader and writer, the
// editor's settings form and the run's checks all walk this one table: adding a setting is a
// field in TrainingSettings (or in the optim configs it extends) plus a row in
// training_params.cpp.
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/registry.h"
#include "graph/settings_table.h"

namespace plexus::graph {

// A row of the table (graph/settings_table.h); the device's row is not in the form: it is chosen
// from the devices found at run time.
using TrainingSetting = SettingRow<TrainingSettings>;

// Every setting, in the order of the project file and, within each section, of the form.
const std::vector<TrainingSetting>& training_settings();

// The sections of the form (SettingRow::section), in order: Optimizer, Schedule, Batches,
// Monitoring, Hardware.
const std::vector<std::string>& training_sections();

// The form's settings (in_form), in order; defaults are TrainingSettings{}'s.
const std::vector<ParamSpec>& training_param_specs();

// A form setting's value by ParamSpec name (nullopt for an unknown name).
std::optional<ParamValue> training_value(const TrainingSettings& settings, const std::string& name);
// Sets one form setting; throws ValueError for an unknown name, a wrong type or an out-of-range
// value (check_param_value's reason).
void set_training_value(TrainingSettings& settings, const std::string& name, const ParamValue& value);

// Whether a setting matters for these settings (its row's `applies`); true for unknown names.
bool training_value_applies(const TrainingSettings& settings, const std::string& name);

// The settings' values against the table: every number within its range where it applies, and
// every named choice (optimizer, schedule) a known one. Throws ValueError in the form's wording
// ("training: batch_size must be between 1 and 1048576, got 0", "training: unknown optimizer
// 'lbfgs' (known: sgd, ...)"). The device is checked where the machine is known (session/run.h).
void check_training_values(const TrainingSettings& settings);

}  // namespace plexus::graph
