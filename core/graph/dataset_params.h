#pragma once
// The dataset settings beyond kind, path, target, task and features, each described once (see
// graph/settings_table.h): how an image folder's pictures become inputs, how bad files are
// treated, the loader's cache and threads, and the augmentation of training batches. The project
// reader and writer, the editor's dataset panel and the run's checks walk this table; adding a
// setting is a field in DatasetBinding plus a row in dataset_params.cpp.
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/settings_table.h"

namespace plexus::graph {

using DatasetSetting = SettingRow<DatasetBinding>;

// The kinds Plexus reads, in the order a form offers them.
const std::vector<std::string>& dataset_kinds();
// Kinds whose examples are pictures [C, H, W]: the IDX folders and image folders.
bool is_image_dataset(const std::string& kind);
// "mnist" and "fashion-mnist": folders of IDX files, described without reading them.
bool is_idx_dataset(const std::string& kind);

// Every setting, in the order of the project file and the form, groups ("augment") last; the
// form shows them under their sections: Images, Text, Augmentation.
const std::vector<DatasetSetting>& dataset_settings();

// A setting's value by name ("height", "augment.shift"); nullopt for an unknown name.
std::optional<ParamValue> dataset_value(const DatasetBinding& binding, const std::string& name);
// Sets one setting; ValueError for an unknown name, a wrong type or an out-of-range value.
void set_dataset_value(DatasetBinding& binding, const std::string& name, const ParamValue& value);
// Whether a setting matters for this binding's kind (true for unknown names).
bool dataset_value_applies(const DatasetBinding& binding, const std::string& name);

// The applicable settings against the table: ValueError "dataset: height must be between 1 and
// 4096, got 0", "dataset: unknown fit 'zoom' (known: crop, pad, stretch)"; the kind must be known.
void check_dataset_values(const DatasetBinding& binding);

// The binding with every setting that does not apply to its kind back at its default, and no
// target, task or features unless it is a CSV file: what a form keeps when the kind changes.
DatasetBinding for_kind(DatasetBinding binding, const std::string& kind);

}  // namespace plexus::graph
