#pragma once
// The dataset settings beyond kind, path, target, task and features, each described once (see
// graph/settings_table.h): how an image folder's pictures become inputs, how bad files are
// treated, the loader's cache and threads, and the augmentation of training batches. The project
// reader and writer, the editor's dataset panel and the run's checks walk this table; adding a
// setting is a field in DatasetBinding plus a row in dataset_params.cpp.
#include <optional>
#include <string>
#include <vector>

#include "data/csv.h"
#include "graph/graph.h"
#include "graph/settings_table.h"

namespace plexus::graph {

using DatasetSetting = SettingRow<DatasetBinding>;
using ColumnSettingRow = SettingRow<ColumnSetting>;

// The kinds Plexus reads, in the order a form offers them.
const std::vector<std::string>& dataset_kinds();
// Kinds whose examples are pictures [C, H, W]: the IDX folders and image folders.
bool is_image_dataset(const std::string& kind);
// "mnist" and "fashion-mnist": folders of IDX files, described without reading them.
bool is_idx_dataset(const std::string& kind);

// Every setting, in the order of the project file and the form, groups ("augment") last; the
// form shows them under their sections: Images, Text, Augmentation.
const std::vector<DatasetSetting>& dataset_settings();

// A CSV column's settings (every key but its name), in the order of the project file and the
// editor's column table; the file holds a column's non-default ones, "columns": {"NAME": {...}}.
const std::vector<ColumnSettingRow>& column_settings();
// A column's settings against the table: ValueError "dataset: column 'island': unknown missing
// 'avg' (known: ...)".
void check_column_settings(const ColumnSetting& column);
// The data layer's policy for a column's settings.
data::ColumnPolicy column_policy(const ColumnSetting& column);
// The binding's CSV reading options (delimiter, missing values, features, column policies).
data::CsvOptions csv_options(const DatasetBinding& binding);

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
